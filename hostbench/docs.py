"""docs/results.md and docs/params.md, generated from the two schemas (hostbench.results,
hostbench.params) so the reference never drifts from the code, and each study README's line
about its committed paper run and the README's list of them (analysis.example.readme_sections):
`python -m hostbench docs`."""

from pathlib import Path

from . import params, results
from .paths import ROOT

# Each generated file, relative to the repository, and what writes it.
GENERATED = {
    "docs/results.md": results.markdown,
    "docs/params.md": params.markdown,
}


def _sections(root: Path) -> list[tuple[Path, str, str]]:
    """(file, its text now, its text with the generated sections fresh) for the READMEs that
    exist under `root`."""
    from .analysis import example

    texts: dict[Path, str] = {}
    for name, block, start, end in example.readme_sections(root):
        path = Path(root) / name
        if path.is_file():
            text = texts.get(path, path.read_text())
            texts[path] = example.replace_in(text, block, start, end)
    return [(path, path.read_text(), fresh) for path, fresh in texts.items()]


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file (and section) under `root`; returns their paths."""
    paths = []
    for name, render in GENERATED.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render())
        paths.append(path)
    for path, text, fresh in _sections(root):
        if fresh != text:
            path.write_text(fresh)
            paths.append(path)
    return paths


def stale(root: Path = ROOT) -> list[str]:
    """The generated files under `root` that differ from what `write` would write."""
    out = []
    for name, render in GENERATED.items():
        path = Path(root) / name
        if not path.is_file() or path.read_text() != render():
            out.append(name)
    sections = _sections(root)
    out += [str(path.relative_to(Path(root))) for path, text, fresh in sections if text != fresh]
    return out
