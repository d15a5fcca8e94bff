"""`make reproduce`: run the notebooks with papermill and export the report.

A profile is a params file (params/<profile>.yaml); its values become the
notebooks' scalar parameters. Everything lands in data/runs/<run-id>/: the
executed notebooks, report.html, figures/ (PNG and SVG) and results.csv.
"""

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from . import tour
from .errors import BadInput, HostbenchError
from .paths import NOTEBOOKS, PARAMS, RUNS
from .study import StudyParams, check_run_id

PAPER_NOTEBOOK = "01-jcsi2018-hosting-models.ipynb"
TOUR_NOTEBOOK = "00-testapp-tour.ipynb"
TOUR_KERNEL = ".net-csharp"


def profiles() -> list[str]:
    return sorted(p.stem for p in PARAMS.glob("*.yaml"))


def notebook_parameters(params: StudyParams, run_id: str, runs_dir: Path) -> dict:
    """The paper notebook's scalar parameters from a study's params."""
    if len(params.tools) != 1 or len(params.concurrency) != 1:
        raise BadInput("a reproduce profile takes one tool and one concurrency value")
    return {
        "modes": ",".join(params.modes),
        "scenarios": ",".join(params.scenarios),
        "tool": params.tools[0],
        "vus": params.concurrency[0],
        "duration_s": params.duration_s,
        "warmup_s": params.warmup_s,
        "repetitions": params.repetitions,
        "run_id": run_id,
        "runs_dir": str(runs_dir),
    }


def _budget_s(params: StudyParams) -> int:
    """A generous bound on the study cell: runs x (warm-up + load + launch), doubled."""
    per_run = params.duration_s + params.warmup_s + 10
    return int(2 * len(params.runs()) * per_run + 600)


def _kernel_available(name: str) -> bool:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return False
    return True


def _execute(src: Path, dst: Path, parameters: dict, kernel: str, timeout_s: int):
    import papermill

    print(f"running {src.name} -> {dst}", flush=True)
    t0 = time.monotonic()
    papermill.execute_notebook(
        str(src),
        str(dst),
        parameters=parameters,
        kernel_name=kernel,
        log_output=True,
        progress_bar=False,
        start_timeout=120,
        execution_timeout=timeout_s,
        cwd=str(NOTEBOOKS),
    )
    print(f"{src.name}: done in {time.monotonic() - t0:.0f} s", flush=True)


def reproduce(profile: str = "paper", run_id: str | None = None, runs_dir: Path = RUNS) -> Path:
    params_path = PARAMS / f"{profile}.yaml"
    if not params_path.exists():
        raise BadInput(f"unknown profile {profile!r}; allowed: {', '.join(profiles())}")
    params = StudyParams.from_file(params_path)  # validated before anything starts
    run_id = check_run_id(run_id or f"{profile}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    out = Path(runs_dir).resolve() / run_id
    out.mkdir(parents=True, exist_ok=True)
    # The python3 kernel must be this interpreter (the venv), whatever PATH says.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.setdefault("MPLBACKEND", "Agg")

    t0 = time.monotonic()
    nb_params = notebook_parameters(params, run_id, out.parent)
    _execute(NOTEBOOKS / PAPER_NOTEBOOK, out / PAPER_NOTEBOOK, nb_params, "python3",
             _budget_s(params))  # fmt: skip
    export_html(out / PAPER_NOTEBOOK, out / "report.html")
    # The C# tour: papermill on the .net-csharp kernel if installed, else a file-based app.
    tour.run_in_batch(out, _execute, _kernel_available)
    print(f"reproduce ({profile}): {time.monotonic() - t0:.0f} s; everything is in {out}")
    return out


# A button that shows or hides every code cell: readers see the narrative and
# figures first, and the code that made them one click away.
_TOGGLE = """
<style>body.hide-code .jp-Cell.jp-CodeCell .jp-Cell-inputWrapper{display:none}</style>
<button onclick="document.body.classList.toggle('hide-code')"
 style="position:fixed;top:8px;right:8px;z-index:10">show/hide code</button>
<script>document.body.classList.add('hide-code')</script>
"""


def export_html(notebook: Path, html_path: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    if not notebook.exists():
        raise HostbenchError(f"no executed notebook at {notebook}")
    body, _ = HTMLExporter().from_notebook_node(nbformat.read(notebook, as_version=4))
    body = body.replace("</body>", _TOGGLE + "</body>", 1)
    tmp = html_path.with_suffix(".html.tmp")
    tmp.write_text(body)
    os.replace(tmp, html_path)
    return html_path
