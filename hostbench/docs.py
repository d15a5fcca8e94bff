"""docs/results.md and docs/params.md, generated from the two schemas (hostbench.results,
hostbench.params) so the reference never drifts from the code, and each study README's line
about its committed paper run, the README's list of them and the blocks a study writes from
its own runs (hostbench.readmes), the gallery of re-runs (docs/gallery/, hostbench.gallery)
with each study's verdict picture (hostbench.analysis.verdict_picture), the artifact
appendix (docs/artifact.md, hostbench.artifact) and the Debian packages every installer reads
(deploy/packages.yml, hostbench.packages): `python -m hostbench docs`.

A picture is no text to compare: its rows are (a sidecar CSV beside it, in GENERATED), and
the PNG is fresh when it was drawn from them (the key it carries, verdict_picture.png_key),
whatever bytes another processor's matplotlib would write for it."""

from functools import partial
from pathlib import Path

from . import artifact, gallery, packages, params, readmes, results
from .analysis import verdict_picture
from .paths import ROOT
from .studies import STUDIES

# Each generated file, relative to the repository, and what writes it. The gallery pages and
# the artifact appendix are written from the committed runs: regenerate after re-measuring.
GENERATED = {
    "docs/results.md": results.markdown,
    "docs/params.md": params.markdown,
    **{gallery.page_path(sid): partial(gallery.page, sid) for sid in STUDIES},
    **{gallery.picture_path(sid, "csv"): partial(gallery.picture_csv, sid) for sid in STUDIES},
    "docs/artifact.md": artifact.markdown,
    packages.FILE: packages.yaml_text,  # what every installer reads (not a doc, kept as one)
}
# Each picture, by the sidecar in GENERATED whose rows it draws.
PICTURES = {gallery.picture_path(sid): gallery.picture_path(sid, "csv") for sid in STUDIES}


def _stale_pictures(root: Path, pages: dict[str, str]) -> list[str]:
    """The pictures under `root` missing or drawn from rows other than their sidecar's now."""
    key = verdict_picture.picture_key
    return [png for png, csv in PICTURES.items()
            if verdict_picture.png_key(Path(root) / png) != key(pages[csv])]  # fmt: skip


def _sections(root: Path) -> list[tuple[Path, str, str]]:
    """(file, its text now, its text with the generated sections fresh) for the READMEs that
    exist under `root`."""
    texts: dict[Path, str] = {}
    for name, block, start, end in readmes.readme_sections(root):
        path = Path(root) / name
        if path.is_file():
            text = texts.get(path, path.read_text())
            texts[path] = readmes.replace_in(text, block, start, end)
    return [(path, path.read_text(), fresh) for path, fresh in texts.items()]


def render() -> dict[str, str]:
    """Each generated file's text, by its name in GENERATED. They are written from the
    checkout's schemas and committed runs, whatever `root` is written: a caller that writes or
    checks several roots renders them once and passes them on (`pages`)."""
    return {name: make() for name, make in GENERATED.items()}


def write(root: Path = ROOT, pages: dict[str, str] | None = None) -> list[Path]:
    """Write every generated file (and section) under `root`; returns their paths. pages:
    render()'s texts, rendered now if not given."""
    paths, pages = [], pages or render()
    for name, text in pages.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    for png in _stale_pictures(root, pages):  # a fresh one is left as it is: no churn
        path = Path(root) / png
        path.write_bytes(verdict_picture.png_bytes(pages[PICTURES[png]]))
        paths.append(path)
    for path, text, fresh in _sections(root):
        if fresh != text:
            path.write_text(fresh)
            paths.append(path)
    return paths


def stale(root: Path = ROOT, pages: dict[str, str] | None = None) -> list[str]:
    """The generated files under `root` that differ from what `write` would write (pages:
    as for write)."""
    out, pages = [], pages or render()
    for name, text in pages.items():
        path = Path(root) / name
        if not path.is_file() or path.read_text() != text:
            out.append(name)
    out += _stale_pictures(root, pages)
    sections = _sections(root)
    out += [str(path.relative_to(Path(root))) for path, text, fresh in sections if text != fresh]
    return out
