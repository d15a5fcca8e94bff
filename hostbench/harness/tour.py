"""The C# tour (notebooks/00-testapp-tour.ipynb) on the .NET Interactive kernel.

papermill executes the notebook on the `.net-csharp` kernel (installed into the venv by
`make setup`: hostbench/harness/dotnet_kernel.py), parameters injected by papermill's C#
translator, in the notebook's own folder (its `#r "../build/testapp/TestApp.dll"` is
relative); `runDir` says where app_work.csv goes.
"""

import json
import logging
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, ToolMissing
from ..paths import NOTEBOOKS
from .dotnet_kernel import KERNEL

NOTEBOOK = NOTEBOOKS / "00-testapp-tour.ipynb"
CSV_NAME = "app_work.csv"
TIMEOUT_S = 600
_DECLARATION = re.compile(r"^\s*var\s+(\w+)\s*=", re.M)  # `var iterations = 3000;`


def parameter_names(notebook: Path = NOTEBOOK) -> list[str]:
    """The names the notebook's `parameters` cell declares (`var name = value;`)."""
    for cell in json.loads(Path(notebook).read_text())["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            return _DECLARATION.findall(source)
    raise BadInput(f"{notebook} has no code cell tagged `parameters`")


class _CSharpIntrospection(logging.Filter):
    """papermill cannot read a C# parameters cell: on every run it warns so and calls each
    parameter unknown. run() checks the names itself, so these lines are only noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not message.startswith(("Translator for 'C#'", "Passed unknown parameter"))


@contextmanager
def _papermill_quiet_about_csharp():
    log = logging.getLogger("papermill")
    quiet = _CSharpIntrospection()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


@dataclass
class TourRun:
    notebook: Path  # the executed notebook
    csv: Path
    wall_s: float


def run(
    out_dir: Path,
    execute: Callable[[Path, Path, dict, str, int], None],
    kernel_available: Callable[[str], bool],
    parameters: dict | None = None,
) -> TourRun:
    """Execute the tour into `out_dir` (the executed notebook; app_work.csv in runDir,
    relative to `out_dir`, default `out_dir` itself). Prints one line when done.

    `execute(src, dst, parameters, kernel, timeout_s)` and `kernel_available(name)` are
    reproduce.py's, as for the study notebooks.
    """
    parameters = dict(parameters or {})
    allowed = parameter_names()
    unknown = sorted(set(parameters) - set(allowed))
    if unknown:
        raise BadInput(f"unknown tour parameter(s) {', '.join(unknown)}; allowed: "
                       f"{', '.join(allowed)}")  # fmt: skip
    if not kernel_available(KERNEL):
        raise ToolMissing(f"no {KERNEL} Jupyter kernel: `make setup` installs it "
                          "(docs/dotnet-interactive.md)")  # fmt: skip
    out_dir = Path(out_dir).resolve()
    run_dir = out_dir / str(parameters.get("runDir", ""))
    executed = out_dir / NOTEBOOK.name
    t0 = time.monotonic()
    with _papermill_quiet_about_csharp():
        execute(NOTEBOOK, executed, {**parameters, "runDir": str(run_dir)}, KERNEL, TIMEOUT_S)
    tour = TourRun(executed, run_dir / CSV_NAME, time.monotonic() - t0)
    print(f"{NOTEBOOK.name}: ran on the {KERNEL} kernel; {CSV_NAME} in {tour.wall_s:.0f} s",
          flush=True)  # fmt: skip
    return tour
