"""The hosting lab: a class on what each hop costs a request (notebooks/hosting-lab.ipynb).

Its params are profiles beside the notebook (notebooks/lab/<profile>.yaml: `quick`, a few
minutes, and `class`, tighter intervals), plus the what-ifs a student sets in the notebook's
parameters cell (the nginx pool size and worker count, the app's log level, the scenario,
the modes), plus any params key `--set` on the command line (`settings`: KEY=VALUE texts, as
`run` and `reproduce` take them).

`make lab` / `python -m hostbench lab` runs the notebook with papermill into
data/runs/lab-<profile>-<time>/ and exports report.html, with the functions `make
reproduce` uses (hostbench.reproduce).
"""

import json
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from .catalog import NGINX_KEEPALIVE, get_mode, has_tls_twin, scenario_label, tls_twin
from .errors import BadInput
from .harness.notebook import StudyRun
from .harness.preflight import check_runnable
from .params import (
    StudyParams,
    check_run_id,
    fingerprint,
    load_yaml,
    parse_assignment,
    parse_settings,
    settings_text,
    with_settings,
)
from .paths import NOTEBOOKS, RUNS
from .plan import OVERHEAD_S, params_estimate_s  # noqa: F401 - OVERHEAD_S: the lab's per run
from .runtime_variants import AOT_SCENARIOS, GC_SETTINGS, get_variant

NOTEBOOK = NOTEBOOKS / "hosting-lab.ipynb"
PARAMS_DIR = NOTEBOOKS / "lab"
LOG_LEVELS = ("Trace", "Debug", "Information", "Warning", "Error", "Critical", "None")
# Where TLS terminates (the `tls` what-if), each with what the run then compares. On "edge"
# Kestrel alone serves HTTPS itself, so the baseline is encrypted as every hop measured
# against it is (like with like); "kestrel" keeps Kestrel alone, plain beside HTTPS.
TLS_CHOICES = {
    "none": "plain HTTP, as the profile has it",
    "edge": "every mode on its TLS twin: each proxy terminates TLS, Kestrel alone serves HTTPS",
    "kestrel": "Kestrel alone on HTTPS beside Kestrel alone on plain HTTP",
}
# The test app's garbage collector (the `gc` what-if): runtime_variants.py's settings.
GC_CHOICES = tuple(name for name in GC_SETTINGS if name)
# How the test app is compiled (the `build` what-if), as runtime variants: testapp/aot's
# minimal APIs JIT-compiled or Native AOT, the same source, so AOT is compared with like (the
# profile's MVC test app, build left out, is another app). Both serve AOT_SCENARIOS only.
BUILD_CHOICES = ("jit", "aot")


def profiles() -> list[str]:
    return sorted(p.stem for p in PARAMS_DIR.glob("*.yaml"))


def _profile_path(profile: str) -> Path:
    path = PARAMS_DIR / f"{profile}.yaml"
    if not path.is_file():
        raise BadInput(f"the lab has no profile {profile!r}; allowed: {', '.join(profiles())}")
    return path


def lab_params(
    profile: str = "quick",
    *,
    modes: list[str] | None = None,
    scenario: str | None = None,
    nginx_keepalive_pool: int | None = None,
    nginx_workers: int | None = None,
    log_level: str | None = None,
    blocks: int | None = None,
    tls: str | None = None,
    gc: str | None = None,
    build: str | None = None,
    settings: Sequence[str] = (),
) -> StudyParams:
    """The lab's validated params for a profile with the student's what-ifs.

    None leaves a setting as the profile has it. modes: a subset to re-run faster (Kestrel
    alone, the baseline, is always kept); scenario: one scenario id instead of the profile's;
    log_level: the test app's --log-level; blocks: the repetitions; tls: where TLS
    terminates (TLS_CHOICES); gc: the test app's GC setting (GC_CHOICES); build: how it is
    compiled (BUILD_CHOICES; None: the profile's test app). settings: `--set KEY=VALUE`
    texts, any params key, applied last (and recorded in the params).
    """
    raw = load_yaml(_profile_path(profile))
    planned = [str(m) for m in raw["modes"]]
    listed = [str(m) for m in (modes if modes is not None else planned)]
    baseline = raw.get("baseline") or planned[0]
    if baseline not in listed:
        listed.insert(0, baseline)  # every hop is measured against Kestrel alone
    raw["modes"], raw["baseline"] = on_tls(tls or "none", listed, baseline, modes is not None)
    if scenario is not None:
        raw["scenarios"] = [scenario]
    _with_build(raw, build, gc)
    if nginx_keepalive_pool is not None:
        raw["nginx_keepalive_pool"] = nginx_keepalive_pool
    if nginx_workers is not None:
        raw["nginx_workers"] = nginx_workers
    if blocks is not None:
        raw["repetitions"] = blocks
    if log_level is not None:
        if log_level not in LOG_LEVELS:
            raise BadInput(f"log_level {log_level!r}: allowed: {', '.join(LOG_LEVELS)}")
        raw["app_args"] = [*raw.get("app_args", []), "--log-level", log_level]
    params = check_runnable(StudyParams.from_dict(with_settings(raw, parse_settings(settings))))
    if len(params.scenarios) * len(params.tools) * len(params.concurrency) != 1:
        raise BadInput(
            f"the lab compares modes under one load: profile {profile!r} must name one "
            "scenario, one tool and one concurrency"
        )
    return params


def on_tls(tls: str, modes: list[str], baseline: str, named: bool) -> tuple[list[str], str]:
    """The modes and baseline a `tls` what-if runs. "edge": each mode's TLS twin, the
    profile's modes that have none (nginx-uds: a Unix socket behind nginx) left out, a mode
    the student named refused; "kestrel": Kestrel alone plain (the baseline) and on HTTPS."""
    if tls not in TLS_CHOICES:
        raise BadInput(f"tls {tls!r}: allowed: {', '.join(TLS_CHOICES)}")
    if tls == "none":
        return modes, baseline  # an unknown name (a typo in the what-if) is refused later
    if tls == "kestrel":
        stray = [m for m in modes if m not in (baseline, tls_twin(baseline))]
        if named and stray:
            raise BadInput(f"tls 'kestrel' measures Kestrel alone on HTTPS against it on plain "
                           f"HTTP, not mode {stray[0]!r}; leave modes out, or put the proxies "
                           "on TLS with tls 'edge'")  # fmt: skip
        return [baseline, tls_twin(baseline)], baseline
    if not named:
        modes = [m for m in modes if has_tls_twin(m)]
    try:
        return [tls_twin(m) for m in modes], tls_twin(baseline)
    except BadInput as e:
        raise BadInput(f"tls 'edge': {e}") from None


def _with_build(raw: dict, build: str | None, gc: str | None) -> None:
    """The `build` and `gc` what-ifs in the params: without a build, the profile's test app
    gets the GC setting's environment (app_env); a build runs its runtime variant (jit, aot),
    the GC setting in its name (aot-datas), for a scenario testapp/aot serves."""
    if build is not None and build not in BUILD_CHOICES:
        raise BadInput(f"build {build!r}: allowed: {', '.join(BUILD_CHOICES)}")
    if gc is not None and gc not in GC_CHOICES:
        raise BadInput(f"gc {gc!r}: allowed: {', '.join(GC_CHOICES)}")
    if build is not None:
        stray = [sc for sc in raw["scenarios"] if sc not in AOT_SCENARIOS]
        if stray:
            serves = ", ".join(AOT_SCENARIOS)
            raise BadInput(f"build {build!r}: testapp/aot (no MVC, as Native AOT needs) cannot "
                           f"serve scenario {stray[0]!r}; it serves {serves}")  # fmt: skip
        raw["runtime_variants"] = ["-".join(p for p in (build, gc) if p)]
    elif gc is not None:
        raw["app_env"] = {**raw.get("app_env", {}), **GC_SETTINGS[gc].env}


def settings_run_id(profile: str, params: StudyParams) -> str:
    """A run id from the settings: each what-if measures into a folder of its own, and
    running the same settings again resumes (completed runs are kept)."""
    settings = {**params.to_dict(), "description": "", "seed": None}
    return f"lab-{profile}-{fingerprint(settings)[:8]}"


def open_lab(
    profile: str = "quick",
    run_id: str = "",
    runs_dir: str | Path = "",
    **what_ifs,
) -> StudyRun:
    """The notebook's run: its params and run folder."""
    params = lab_params(profile, **what_ifs)
    run_id = check_run_id(run_id or settings_run_id(profile, params))
    return StudyRun("lab", profile, run_id, Path(runs_dir or RUNS), params)


def estimate_s(params: StudyParams) -> float:
    """About how long the measurement takes, as `make reproduce` plans a study by its params
    (plan.params_estimate_s: every run's warm-up at most, its load and OVERHEAD_S)."""
    return params_estimate_s(params)


def plan_note(params: StudyParams) -> str:
    """What the measurement will do, in one sentence (Markdown)."""
    runs = len(params.cells()) * params.repetitions
    return (
        f"{runs} runs: {len(params.modes)} modes x {params.repetitions} blocks, "
        f"{params.duration_s:g} s of load each after up to {params.warmup_s:g} s of warm-up; "
        f"about {estimate_s(params) / 60:.0f} min on a quiet machine."
    )


# The notebook's parameters a student changes; `python -m hostbench lab --what-if` sets them.
WHAT_IFS = (
    "modes",
    "scenario",
    "blocks",
    "nginx_keepalive_pool",
    "nginx_workers",
    "log_level",
    "tls",
    "gc",
    "build",
)


def parse_what_if(text: str) -> tuple[str, object]:
    """NAME=VALUE from the command line, the value read as YAML (1, Debug, [kestrel, nginx])."""
    return parse_assignment(text, WHAT_IFS, "what-if")


def reproduce_lab(
    profile: str = "quick",
    run_id: str | None = None,
    runs_dir: Path = RUNS,
    what_ifs: dict | None = None,
    settings: Sequence[str] = (),
) -> Path:
    """Run the lab notebook for a profile, what-ifs (the notebook's parameters, WHAT_IFS) and
    `--set` settings with papermill and export report.html; returns the run folder
    (data/runs/lab-<profile>-<UTC time>/ unless run_id says otherwise)."""
    from . import reproduce as rp

    what_ifs = dict(what_ifs or {})
    unknown = sorted(set(what_ifs) - set(WHAT_IFS))
    if unknown:
        raise BadInput(f"unknown what-if(s) {', '.join(unknown)}; allowed: {', '.join(WHAT_IFS)}")
    settings = list(settings)
    params = lab_params(profile, settings=settings, **what_ifs)  # validated before anything starts
    run_id = check_run_id(run_id or f"lab-{profile}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    out = Path(runs_dir).resolve() / run_id
    out.mkdir(parents=True, exist_ok=True)
    (out / rp.DONE_FILE).unlink(missing_ok=True)
    rp.prepare_environment()
    print(plan_note(params), flush=True)
    t0 = time.monotonic()
    parameters = {"profile": profile, "run_id": run_id, "runs_dir": str(out.parent),
                  "progress": False, **({"settings": settings} if settings else {}),
                  **what_ifs}  # fmt: skip
    with rp.FollowProgress(out):
        rp.execute_notebook(NOTEBOOK, out / NOTEBOOK.name, parameters, "python3",
                            rp.notebook_budget_s(params))  # fmt: skip
    rp.export_html(out / NOTEBOOK.name, out / "report.html")
    wall_s = time.monotonic() - t0
    record = {"study": "lab", "profile": profile, "wall_s": round(wall_s)}
    (out / rp.DONE_FILE).write_text(json.dumps(record, indent=2))
    print(f"lab ({profile}): {wall_s:.0f} s; everything is in {out}", flush=True)
    return out


def settings_note(params: StudyParams) -> str:
    """The settings this run measures with, the what-ifs among them (Markdown)."""
    opts = params.options
    programs = opts.program_settings  # nginx's keys among them (hostbench/programs/nginx.py)
    pool = programs["nginx_keepalive_pool"] or NGINX_KEEPALIVE
    workers = nginx_workers(params)
    args = opts.app_args
    level = "Warning (the test app's default)"
    if "--log-level" in args[:-1]:  # the last one given is the one the app uses
        level = args[len(args) - args[::-1].index("--log-level")]
    load = f"{params.tools[0]} with {params.concurrency[0]} connections"
    typed = params.set_on_command_line
    return (
        f"Settings: scenario **{scenario_label(params.scenarios[0])}**, {load}; nginx: "
        f"**{workers}** worker{'s' if workers != 1 else ''}"
        f"{' (one per core)' if programs['nginx_workers'] is None else ''}, a keep-alive pool of "
        f"**{pool}** idle connections per worker (`nginx-keepalive`); the app logs at "
        f"**{level}**. {deployment_note(params)}"
        + (f" Set on the command line: `{settings_text(typed)}`." if typed else "")
    )


def tls_of(params: StudyParams) -> str:
    """Which `tls` what-if (TLS_CHOICES) the params' modes are: none, edge (every mode on
    TLS) or kestrel (some)."""
    on_tls = [get_mode(m).tls is not None for m in params.modes]
    return "edge" if all(on_tls) else "kestrel" if any(on_tls) else "none"


def deployment_note(params: StudyParams) -> str:
    """Where TLS terminates, how the test app is compiled and its GC, and what every hop is
    measured against, in words (Markdown)."""
    tls = tls_of(params)
    if params.runtime_variants:
        app, gc = app_words(params), ""
    else:
        app, gc = "the test app (JIT)", app_words(params) or "the runtime's default GC"
    return (
        f"TLS: **{tls}** ({TLS_CHOICES[tls]}); the app: **{app}**"
        + (f", **{gc}**." if gc else ".")
        + f" Every hop is measured against **{baseline_words(params)}**."
    )


def app_words(params: StudyParams) -> str:
    """How the test app runs where the `build` or `gc` what-if changed it: its runtime
    variant's label ("minimal APIs, Native AOT, DATAS, .NET 10"), or the GC setting's
    ("DATAS"); "" as the profile has it."""
    if params.runtime_variants:
        return get_variant(params.runtime_variants[0]).label
    env = params.options.app_env.items()
    return next((g.label for g in GC_SETTINGS.values() if g.env and g.env.items() <= env), "")


def baseline_words(params: StudyParams) -> str:
    """The baseline as this run's sentences name it (hops.hop_costs' `alone`): "Kestrel
    alone", ", on HTTPS" where it serves HTTPS itself (tls "edge"), the app named where a
    what-if changed it ("Kestrel alone (minimal APIs, Native AOT, .NET 10)")."""
    from .analysis.hops import ALONE

    words = ALONE + (", on HTTPS" if get_mode(params.baseline_mode).tls else "")
    app = app_words(params)
    return f"{words} ({app})" if app else words


def nginx_workers(params: StudyParams) -> int:
    """nginx's worker processes in this run: the params' nginx_workers, else one per core."""
    return params.options.program_settings["nginx_workers"] or os.cpu_count() or 1


def quick_note(params: StudyParams) -> str:
    """What a quick run's numbers are worth, in one line (Markdown)."""
    return (
        f"*A quick run: {params.repetitions} blocks of {params.duration_s:g} s runs. Its "
        "intervals are wide, so many comparisons come out indistinguishable at this "
        'precision; `profile = "class"` measures longer and narrows them.*'
    )


def shown_mode(params: StudyParams, mode: str) -> str:
    """The mode the notebook's section on `mode` shows: its TLS twin when the run has that
    one (the `tls` what-if), else `mode` itself."""
    if not has_tls_twin(mode) or mode in params.modes:
        return mode
    return twin if (twin := tls_twin(mode)) in params.modes else mode
