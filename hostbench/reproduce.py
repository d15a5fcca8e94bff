"""`make reproduce` and `make reproduce-all`: run study notebooks with papermill, export reports.

One study: its notebook runs with the study id, the profile and the validated
params passed whole, into data/runs/<run-id>/ (executed notebook, report.html and its
printed report.pdf, figures/, results.csv). The batch runs every available study into
data/runs/<batch-id>/<study>/ and writes index.html linking each report with
its headline and wall time; re-running the same batch id resumes it.
"""

import functools
import html
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from .analysis import findings
from .analysis.compare import RATIOS_FILE, write_ratios_file
from .analysis.prose import SMOKE_HEADLINE
from .analysis.tables import is_smoke
from .errors import BadInput, HostbenchError
from .harness import tour
from .harness.environment import processor
from .harness.preflight import check_runnable
from .harness.run_folder import PROGRESS_FILE
from .harness.study import RENDER_ONLY
from .params import PARAMS_FILE, StudyParams, check_run_id, params_with_settings
from .paths import RUNS
from .plan import Plan, batch_text
from .studies import DEFAULT_STUDY, STUDIES, available, get_study, is_params_file, profile_name

HEADLINE_FILE = "headline.txt"  # one line a study notebook writes: its main result
DONE_FILE = "reproduce.json"  # written when a study's notebook and report are complete
BATCH_FILE = "batch.json"  # a batch folder's profile: resuming it with another is refused


def notebook_budget_s(params: StudyParams) -> int:
    """A generous bound on the notebook: runs x (longest warm-up + load + launch), doubled,
    for the study and the sub-studies that run beside it."""
    studies = [params, *(params.sub_study(name) for name in params.sub_studies_run)]
    seconds = 0.0
    for p in studies:
        seconds += len(p.cells()) * p.repetitions * (p.duration_s + p.warmup_s + 15)
    return int(2 * seconds + 900)


def kernel_available(name: str) -> bool:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return False
    return True


@functools.cache
def _kernel_manager_class():
    """jupyter_client's AsyncKernelManager, but for the interrupt it sends a kernel before every
    shutdown. A SIGINT that lands while ipykernel is still finishing its last message prints
    "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on the reader's terminal (seen
    on a busy machine). papermill shuts a kernel down once every cell has ended, so there is
    nothing to interrupt then; a cell that runs out of time nbclient interrupts itself first
    (through interrupt_kernel, not this method)."""
    from jupyter_client.manager import AsyncKernelManager

    class NoInterruptOnShutdown(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return NoInterruptOnShutdown


def execute_notebook(src: Path, dst: Path, parameters: dict, kernel: str, timeout_s: int):
    """Run the notebook `src` with `parameters` on `kernel` into `dst` (papermill); its own
    error in one line."""
    import papermill
    from papermill.exceptions import PapermillExecutionError
    from traitlets.config import Config

    print(f"running {src.name} -> {dst}", flush=True)
    try:
        papermill.execute_notebook(
            str(src),
            str(dst),
            parameters=parameters,
            kernel_name=kernel,
            log_output=False,  # the notebook's outputs are for the page; progress comes below
            progress_bar=False,
            start_timeout=120,
            execution_timeout=timeout_s,
            cwd=str(src.parent),  # the notebook's own folder, as when a reader opens it
            # CurveZMQ between papermill and a kernel that declares it (ipykernel): without
            # it ipykernel warns on every start that it runs over TCP unencrypted.
            config=Config({"KernelManager": {"transport_encryption": "auto"}}),
            kernel_manager_class=_kernel_manager_class(),
        )
    except PapermillExecutionError as e:
        # The notebook's own error, in one line; the executed notebook shows where.
        message = str(e.evalue).strip().splitlines()[-1:] or [e.ename]
        raise HostbenchError(
            f"{src.name}, cell {e.cell_index}: {e.ename}: {message[0]} (see {dst})"
        ) from None


class FollowProgress:
    """Prints the lines a study's progress logs gain while its notebook runs, in the terminal.

    The study's own folder and its sub-studies' (<run-id>-<name>) are followed.
    """

    def __init__(self, out: Path):
        self.out, self._stop = out, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._offsets = {path: path.stat().st_size for path in self._logs()}

    def _logs(self) -> list[Path]:
        folders = [self.out, *self.out.parent.glob(f"{self.out.name}-*")]
        return [f / PROGRESS_FILE for f in folders if (f / PROGRESS_FILE).exists()]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        return False

    def _loop(self):
        while True:
            stopping = self._stop.wait(1.0)
            for path in self._logs():
                with open(path) as f:
                    f.seek(self._offsets.get(path, 0))
                    text = f.read()
                    self._offsets[path] = f.tell()
                prefix = "" if path.parent == self.out else f"{path.parent.name}: "
                for line in text.splitlines():
                    print(prefix + line, flush=True)
            if stopping:
                return


def prepare_environment():
    """This process's environment as a notebook's kernel must inherit it."""
    # The python3 kernel must be this interpreter (the venv), whatever PATH says.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # Figures show inline: the kernel's own inline backend, never a global Agg.
    os.environ.pop("MPLBACKEND", None)


def run_tour(out: Path, discard_old: bool = False) -> None:
    """The C# tour first, so the study notebook can split server CPU into the app's own work
    (app_work.csv) and the rest. On the .net-csharp kernel under papermill; if it is missing
    or the notebook fails, the study still runs, without that split. A resumed run keeps the
    app_work.csv its tour measured, as it keeps its finished windows: a resume measures only
    what the run lacks (discard_old: measured again)."""
    if (out / tour.CSV_NAME).is_file() and not discard_old:
        print(f"{tour.CSV_NAME}: kept, as this run's tour measured it", flush=True)
        return
    try:
        tour.run(out, execute_notebook, kernel_available)
    except HostbenchError as e:
        print(f"{tour.NOTEBOOK.name} did not run, so the CPU split is left out: {e}", flush=True)


def reproduce(
    study_id: str = DEFAULT_STUDY,
    profile: str = "paper",
    run_id: str | None = None,
    runs_dir: Path = RUNS,
    discard_old: bool = False,
    render_only: bool = False,
    settings: Sequence[str] = (),
) -> Path:
    """Run one study's notebook for a profile; returns its run folder. render_only: re-render
    a complete run from its own data (its notebook, report and ratios), measuring nothing:
    a window still to measure is refused in one line (harness.study.RENDER_ONLY). settings:
    `--set KEY=VALUE` texts applied over the profile (params.command_line)."""
    study = get_study(study_id)
    if not study.notebook_path.is_file():
        raise HostbenchError(f"study {study_id!r} has no notebook yet ({study.notebook_path})")
    profile_file = study.params_path(profile)
    profile = profile_name(profile)  # a params file of the reader's: its name from here on
    run_id = check_run_id(run_id or f"{study_id}-{profile}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    out = Path(runs_dir).resolve() / run_id
    if render_only:
        if discard_old:
            raise BadInput("--render-only keeps what was measured; it takes no --discard-old")
        if settings:
            raise BadInput("--render-only re-renders with the settings the run was measured "
                           "with; it takes no --set")  # fmt: skip
        # A re-render takes the settings the run was measured with, which an older run's
        # profile may no longer have; nothing is launched, so nothing need be runnable here.
        params = StudyParams.from_run(out)
        os.environ[RENDER_ONLY] = "1"  # the notebook's kernel inherits it
    else:
        # Validated, and checked runnable here, once, before anything starts; the notebook
        # gets them whole (to_dict) and does not check them again.
        params = check_runnable(params_with_settings(profile_file, settings))
        # How long it will take, before anything starts (plan.py): the runs on record of this
        # study that measured the same, cut by this profile's budget, and the budget.
        print(Plan.for_params(study_id, profile, params, here=processor()).text(), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    # What the folder measured before counts, unless it is discarded.
    earlier_s = 0.0 if discard_old else recorded_wall_s(out, study_id)
    if not render_only:  # a re-render that fails leaves the run as complete as it was
        (out / DONE_FILE).unlink(missing_ok=True)
    prepare_environment()
    if discard_old:
        from .harness.run_folder import discard

        discard(out)
    t0, started = time.monotonic(), time.time()
    parameters = {
        "study": study_id,
        "profile": profile,
        "params": params.to_dict(),
        "run_id": run_id,
        "runs_dir": str(out.parent),
    }
    if study.runs_tour and not render_only:
        run_tour(out, discard_old)
    # A re-render writes beside the run's notebook and replaces it only once it ran through:
    # one that fails leaves the executed notebook as it was, and its own copy to look at.
    notebook = out / study.notebook
    executed = notebook.with_suffix(".rendering.ipynb") if render_only else notebook
    with FollowProgress(out):
        execute_notebook(study.notebook_path, executed, parameters, "python3",
                         notebook_budget_s(params))  # fmt: skip
    executed.replace(notebook)
    for folder in [out, *(out.parent / f"{run_id}-{name}" for name in params.sub_studies)]:
        write_ratios(folder, study_id, started)
    export_html(out / study.notebook, out / "report.html")
    _print_pdf(out)
    wall_s = time.monotonic() - t0
    # A re-run of a complete folder (only the notebook re-executed) adds its seconds to the
    # measured wall time instead of replacing it.
    # A re-render measured nothing: the wall time stays the measurement's.
    took = earlier_s if render_only else earlier_s + wall_s
    record = {"study": study_id, "profile": profile, "wall_s": round(took)}
    (out / DONE_FILE).write_text(json.dumps(record, indent=2))
    print(f"{study_id} ({profile}): {wall_s:.0f} s; everything is in {out}", flush=True)
    return out


def write_ratios(folder: Path, study_id: str, started: float) -> None:
    """ratios.csv in a run folder with results: today's analysis of all its data, unless the
    study's notebook wrote it since `started`. One written before is replaced: a re-render's
    analysis may have changed, a resumed run measured more blocks."""
    if not (folder / "results.csv").is_file():
        return
    stale = _written_before(folder / RATIOS_FILE, started)
    try:
        write_ratios_file(folder, study_id, replace=stale)  # where the notebook wrote none
    except BadInput as e:  # a run without ratios still gets its report
        print(f"ratios.csv not written in {folder.name}: {e}", flush=True)


def _written_before(path: Path, since: float) -> bool:
    return path.is_file() and path.stat().st_mtime < since


def _print_pdf(out: Path) -> None:
    """report.pdf beside report.html; a report that cannot be printed is said, not fatal (the
    measurements and report.html are complete)."""
    from .printable import write_pdf

    try:
        write_pdf(out)
    except HostbenchError as e:
        print(f"report.pdf not written: {e}", flush=True)


def recorded_wall_s(out: Path, study_id: str) -> float:
    """The wall time an earlier `reproduce` of this study recorded in `out`, whatever its
    profile (a run resumed under another profile, as the scope profile resumes the claims
    one, measured the same settings: the harness refuses it otherwise); 0 when there is none
    (or it was another study's)."""
    try:
        record = json.loads((out / DONE_FILE).read_text())
    except (OSError, ValueError):
        return 0.0
    return float(record.get("wall_s", 0)) if record.get("study") == study_id else 0.0


def reproduce_all(
    profile: str = "paper",
    batch_id: str | None = None,
    runs_dir: Path = RUNS,
    only: list[str] | None = None,
    settings: Sequence[str] = (),
):
    """Every available study's notebook in one batch (`only`: these studies); returns the
    batch folder with index.html.

    The same batch id resumes: a study whose report is complete is kept, an interrupted one
    resumes in its own folder (its completed runs kept, as `make reproduce` does), and a batch
    started with another profile is refused, so one batch never mixes profiles. settings:
    `--set KEY=VALUE` texts applied over every study's profile, `STUDY:KEY=VALUE` over that
    study's alone (settings_of; a resume must give the same)."""
    studies = batch_studies(profile, only)
    own = {s.id: settings_of(s.id, settings) for s in studies}
    plans = []
    for study in studies:  # every profile exists, and takes the settings, before anything starts
        try:
            plans.append(Plan.of(study.id, profile, own[study.id], here=processor()))
        except BadInput as e:
            raise BadInput(f"{study.id}: {e}") from None
    print(batch_text(plans), flush=True)  # the batch's time, before anything starts
    batch_id = check_run_id(batch_id or f"all-{profile}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    batch = Path(runs_dir).resolve() / batch_id
    _claim_batch(batch, profile, list(settings))
    missing = [s.id for s in STUDIES.values() if not s.available]
    if missing:
        print(f"not in this batch (no notebook yet): {', '.join(missing)}", flush=True)
    for study in studies:
        done = batch / study.id / DONE_FILE
        if done.exists():
            print(f"{study.id}: done earlier, kept", flush=True)
            continue
        reproduce(study.id, profile, run_id=study.id, runs_dir=batch, settings=own[study.id])
        write_index(batch, profile, settings)
    return write_index(batch, profile, settings)


def batch_studies(profile: str, only: Sequence[str] | None = None) -> list:
    """The studies a batch of `profile` runs: every available study that has the profile (a
    profile only some have, such as `scope`, runs on those, and the others are named), or
    those in `only`. A params file, an unknown study, a named study without the profile or a
    profile no study has is refused in one line."""
    studies = available()
    if is_params_file(profile):
        raise BadInput(
            f"a batch runs a profile by name (paper, quick, ...), not a params file "
            f"({profile}): a params file is one study's (make reproduce STUDY=...)"
        )
    if only:
        for name in only:
            if name not in {s.id for s in studies}:
                allowed = ", ".join(s.id for s in studies)
                raise BadInput(f"no study {name!r} to run in a batch; allowed: {allowed}")
        for study in (s for s in studies if s.id in only):
            study.params_path(profile)  # refused in one line where it lacks the profile
        return [s for s in studies if s.id in only]
    having = [s for s in studies if profile in s.profiles()]
    if not having:
        allowed = sorted({name for s in studies for name in s.profiles()})
        raise BadInput(f"no study has a profile {profile!r}; allowed: {', '.join(allowed)}")
    lacking = [s.id for s in studies if s not in having]
    if lacking:
        print(f"not in this batch (no {profile} profile): {', '.join(lacking)}", flush=True)
    return having


def plan_text(study_id: str, profile: str, settings: Sequence[str] = ()) -> str:
    """`reproduce --plan`: how long the run would take on this machine (plan.py), measuring
    nothing."""
    return Plan.of(study_id, profile, settings, here=processor()).text()


def batch_plan_text(profile: str, only: Sequence[str] | None = None,
                    settings: Sequence[str] = ()) -> str:  # fmt: skip
    """`reproduce-all --plan`: each study's plan, then the batch's, measuring nothing."""
    plans = []
    for study in batch_studies(profile, only):
        try:
            plans.append(Plan.of(study.id, profile, settings_of(study.id, settings),
                                 here=processor()))  # fmt: skip
        except BadInput as e:
            raise BadInput(f"{study.id}: {e}") from None
    return "\n".join([*(p.text() for p in plans), batch_text(plans)])


def settings_of(study_id: str, settings: Sequence[str]) -> list[str]:
    """The --set texts a batch applies to one study: KEY=VALUE to every study, STUDY:KEY=VALUE
    to that study alone (a key only some studies take, such as selfhost-2012's requests); a
    prefix that names no study is refused in one line."""
    mine = []
    for text in settings:
        key = text.split("=", 1)[0]
        if ":" not in key:
            mine.append(text)
            continue
        study, _, rest = text.partition(":")
        if study not in STUDIES:
            raise BadInput(f"--set {text}: no study {study!r}; STUDY:KEY=VALUE takes one of "
                           f"{', '.join(STUDIES)}")  # fmt: skip
        if study == study_id:
            mine.append(rest)
    return mine


def _claim_batch(batch: Path, profile: str, settings: list[str]) -> None:
    """The batch folder, made or resumed; BATCH_FILE records its profile (and --set settings,
    when given) so a resume with others stops here, before anything runs."""
    record = batch / BATCH_FILE
    if record.exists():
        recorded = json.loads(record.read_text())
        earlier = recorded["profile"]
        if earlier != profile:
            raise BadInput(
                f"batch {batch.name} runs profile {earlier!r}, not {profile!r}: resume it with "
                f"PROFILE={earlier}, or start a new batch (another BATCH_ID)"
            )
        if sorted(recorded.get("set", [])) != sorted(settings):
            given = " ".join(recorded.get("set", [])) or "none"
            raise BadInput(
                f"batch {batch.name} runs with --set {given}, not {' '.join(settings) or 'none'}: "
                "resume it with the same, or start a new batch (another BATCH_ID)"
            )
        print(f"resuming batch {batch.name}: finished studies are kept", flush=True)
        return
    batch.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"profile": profile, **({"set": settings} if settings else {})},
                                 indent=2))  # fmt: skip


def write_index(batch: Path, profile: str, settings: Sequence[str] = ()) -> Path:
    """index.html: each study's report, headline and wall time; studies not run say so."""
    rows = []
    for study in STUDIES.values():
        folder = batch / study.id
        done = folder / DONE_FILE
        if done.exists():
            record = json.loads(done.read_text())
            headline = _headline(folder)
            link = f'<a href="{study.id}/report.html">{html.escape(study.title)}</a>'
            rows.append((link, html.escape(headline), f"{record['wall_s']} s"))
        else:
            reason = "no notebook yet" if not study.available else "not run (yet)"
            rows.append((html.escape(study.title), reason, ""))
    body = "\n".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>" for a, b, c in rows)
    smoke = any(b == SMOKE_HEADLINE for _, b, _ in rows)
    # The first screen says it before anything else: as each report's findings box does.
    smoke = (
        '<p class="smoke-banner" style="border-left:.4em solid #c33;background:#fbeaea;'
        'padding:.5em 1em;font-weight:bold">Smoke runs: they check the pipeline, not evidence; '
        "no headline below is a finding.</p>"
        if smoke
        else ""
    )
    set_text = (
        f"; set on the command line: <code>{html.escape(', '.join(settings))}</code>"
        if settings
        else ""
    )
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>hostbench: {html.escape(batch.name)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
td,th{{padding:.4em .8em;border-bottom:1px solid #ddd;text-align:left}}</style></head>
<body><h1>hostbench batch {html.escape(batch.name)}</h1>
{smoke}
<section class="findings"><h2>Findings</h2>
<p>Each study's headline, from its report; the report opens with the article's claims, ours
and the verdicts. Profile <code>{html.escape(profile)}</code>{set_text}.</p>
<table><thead><tr><th>study</th><th>headline</th><th>wall time</th></tr></thead>
<tbody>
{body}
</tbody></table></section></body></html>
"""
    path = batch / "index.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page)
    os.replace(tmp, path)
    return path


def _headline(folder: Path) -> str:
    """A study's headline for the index: its headline.txt, but never a finding from a smoke
    run (params.json `smoke`), whatever its notebook wrote."""
    if (folder / PARAMS_FILE).exists() and is_smoke(folder):
        return SMOKE_HEADLINE
    path = folder / HEADLINE_FILE
    return path.read_text().strip() if path.exists() else ""


# The page's look: an nbconvert template (the lab template's cells, one small stylesheet).
REPORT_TEMPLATE = Path(__file__).parent / "report_template"


def export_html(notebook: Path, html_path: Path) -> Path:
    """The executed notebook as a page for readers: narrative, tables and figures, no code.

    The code is one click away in the executed notebook beside it. The page carries one small
    stylesheet (report_template/report.css) and nothing it loads from elsewhere.
    """
    import nbformat
    from nbconvert import HTMLExporter

    if not notebook.exists():
        raise HostbenchError(f"no executed notebook at {notebook}")
    exporter = HTMLExporter(template_name=REPORT_TEMPLATE.name,
                            extra_template_basedirs=[str(REPORT_TEMPLATE.parent)],
                            exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)  # fmt: skip
    nb = first_screen(nbformat.read(notebook, as_version=4))
    resources = {
        "metadata": {"name": page_title(nb, notebook.stem)},
        "report_css": (REPORT_TEMPLATE / "report.css").read_text(),
    }
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    tmp = html_path.with_suffix(".html.tmp")
    tmp.write_text(body)
    os.replace(tmp, html_path)
    return html_path


def first_screen(nb):
    """The notebook in the order a reader of the page needs: its title, then the findings box
    (analysis/findings.py), then the introduction and the rest.

    The notebook computes the box after the measurement, below the introduction; the page
    moves the box's output up beside the title, so the first screen answers. The executed
    notebook keeps its own order. A notebook without a box is returned as it is."""
    import copy

    import nbformat

    def has_box(cell) -> bool:
        return any(findings.MARK in "".join(out.get("data", {}).get("text/html", ""))
                   for out in cell.get("outputs", []))  # fmt: skip

    box = next((i for i, cell in enumerate(nb.cells) if has_box(cell)), None)
    title = next((i for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"), None)
    if box is None or title is None or box < title:
        return nb
    heading, _, intro = nb.cells[title].source.partition("\n")
    if not heading.startswith("# "):
        return nb
    nb = copy.deepcopy(nb)
    cells = list(nb.cells)
    moved = cells.pop(box)
    first = [nbformat.v4.new_markdown_cell(heading), moved]
    if intro.strip():
        first.append(nbformat.v4.new_markdown_cell(intro.strip()))
    nb.cells = cells[:title] + first + cells[title + 1 :]
    return nb


def page_title(nb, default: str) -> str:
    """A page's title: its notebook's first top-level heading, else `default`."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return default
