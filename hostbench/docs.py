"""docs/results.md and docs/params.md, generated from the two schemas (hostbench.results,
hostbench.params) so the reference never drifts from the code, and each study README's line
about its committed paper run, the README's list of them and the blocks a study writes from
its own runs (hostbench.readmes), the gallery of re-runs (docs/gallery/, hostbench.gallery)
and the artifact appendix (docs/artifact.md, hostbench.artifact): `python -m hostbench docs`."""

from functools import partial
from pathlib import Path

from . import artifact, gallery, params, readmes, results
from .paths import ROOT
from .studies import STUDIES

# Each generated file, relative to the repository, and what writes it. The gallery pages and
# the artifact appendix are written from the committed runs: regenerate after re-measuring.
GENERATED = {
    "docs/results.md": results.markdown,
    "docs/params.md": params.markdown,
    **{gallery.page_path(sid): partial(gallery.page, sid) for sid in STUDIES},
    "docs/artifact.md": artifact.markdown,
}


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
    paths = []
    for name, text in (pages or render()).items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    for path, text, fresh in _sections(root):
        if fresh != text:
            path.write_text(fresh)
            paths.append(path)
    return paths


def stale(root: Path = ROOT, pages: dict[str, str] | None = None) -> list[str]:
    """The generated files under `root` that differ from what `write` would write (pages:
    as for write)."""
    out = []
    for name, text in (pages or render()).items():
        path = Path(root) / name
        if not path.is_file() or path.read_text() != text:
            out.append(name)
    sections = _sections(root)
    out += [str(path.relative_to(Path(root))) for path, text, fresh in sections if text != fresh]
    return out
