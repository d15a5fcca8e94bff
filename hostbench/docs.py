"""docs/results.md and docs/params.md, generated from the two schemas (hostbench.results,
hostbench.params) so the reference never drifts from the code: `python -m hostbench docs`."""

from pathlib import Path

from . import params, results
from .paths import ROOT

# Each generated file, relative to the repository, and what writes it.
GENERATED = {
    "docs/results.md": results.markdown,
    "docs/params.md": params.markdown,
}


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file under `root`; returns their paths."""
    paths = []
    for name, render in GENERATED.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render())
        paths.append(path)
    return paths


def stale(root: Path = ROOT) -> list[str]:
    """The generated files under `root` that differ from what `write` would write."""
    out = []
    for name, render in GENERATED.items():
        path = Path(root) / name
        if not path.is_file() or path.read_text() != render():
            out.append(name)
    return out
