"""Shared test helpers."""

import gc
import itertools
import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer

from hostbench import __version__
from hostbench.harness.launch import web
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.params import StudyParams, fingerprint
from hostbench.paths import ROOT, tracked_files
from hostbench.studies import STUDIES

# Params for the tests' tiny studies, whose point is not the measurement: runs of a second or
# two count, the machine's other load is recorded but does not hold them, and a warm-up too
# short to be steady does not invalidate them. (The gate and the checks have their own tests.)
SHORT_RUNS = {"min_duration_s": 1, "quiet_max_cores": None, "require_steady": False}

# Python's default collects its youngest objects every 700 allocations: with the many small
# pandas frames the tests make, 1.7-3.0 s of a `make check` lane went to it (docs/testing.md).
gc.set_threshold(20_000, 50, 100)

# The committed runs are what git tracks (paths.committed): listed here, once, before any test,
# since a test of `make check` may start no process (git included).
tracked_files()


@pytest.fixture(autouse=True)
def _check_lane_starts_no_process(request, monkeypatch):
    """In `make check` (-m "not live") a test that starts a process fails, naming the fix:
    the fast lane stays fast, and a test's marker cannot drift from what it does."""
    if "not live" not in (request.config.getoption("markexpr") or ""):
        return
    import subprocess

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"{request.node.nodeid} starts a process: mark it @pytest.mark.live")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture(scope="session")
def batch(tmp_path_factory):
    """`make reproduce-all PROFILE=quick`: every available study's notebook, once per session.

    The end-to-end tests of every study read their reports from this one batch.
    """
    from hostbench.reproduce import reproduce_all

    runs = tmp_path_factory.mktemp("runs")
    return reproduce_all("quick", batch_id="ci-quick", runs_dir=runs, settings=QUICK_SHORTER).parent


# The batch's windows shortened, as `make reproduce-all PROFILE=quick SET="..."` would: what
# its tests check is every notebook, figure and page, which 1 s windows make as 5 s ones do
# (docs/testing.md; a sub-study keeps a duration it sets itself), and selfhost-2012's
# request-bound runs a tenth of its quick profile's 60,000 requests (about a second each, so
# half a second is long enough). Only WARMS_UP warms up (1 s, its modes together, as its
# page tells); the others' warm-ups run the same code as a mode's alone (tests/test_run.py
# tests it), and their pages draw none. The main study's quick profile as the README runs
# it, unshortened, runs in scripts/fresh-machine-check.sh.
WARMS_UP = "jcsi2018"
QUICK_SHORTER = ("duration_s=1", "min_duration_s=0.5", "selfhost-2012:requests=6000",
                 *(f"{s}:warmup_s={1 if s == WARMS_UP else 0}" for s in STUDIES))  # fmt: skip


# The runtime variants the live tests launch (tests/test_runtime_variants_live.py, _hosts.py):
# Native AOT and JIT builds of testapp/aot, and the MVC test app for a GC setting.
VARIANT_BUILDS = ("jit", "aot", "workstationgc")


@pytest.fixture(scope="session")
def variant_builds() -> dict[str, Path]:
    """{variant: its executable} in build/, published as a study publishes them
    (notebook.ensure_variant: when missing or older than the sources; a fresh clone about 20 s
    and 90 s), once a session; their tests share one lane, so no other publishes them at once."""
    import shutil

    from hostbench.harness.notebook import ensure_variant

    if shutil.which("clang") is None:
        pytest.skip("Native AOT links with clang, which is missing: apt-get install clang lld "
                    "zlib1g-dev")  # fmt: skip
    return {name: ensure_variant(name) for name in VARIANT_BUILDS}


@pytest.fixture(scope="session")
def generated_pages() -> dict[str, str]:
    """The generated docs pages (docs.render()), rendered once: they read the checkout's
    committed runs whatever root a test writes them into."""
    from hostbench import docs

    return docs.render()


@pytest.fixture
def committed_pictures():
    """committed_pictures(root, leaving_out=()): the checkout's verdict pictures (docs.PICTURES)
    but those named copied under root, so a docs.write there draws only those missing or not
    fresh: drawing all five, as a write into an empty folder does, took 4-5 s of CPU a test."""
    from hostbench import docs

    def copy(root: Path, leaving_out=()) -> None:
        for png in docs.PICTURES:
            if (ROOT / png).is_file() and png not in leaving_out:
                (Path(root) / png).parent.mkdir(parents=True, exist_ok=True)
                (Path(root) / png).write_bytes((ROOT / png).read_bytes())

    return copy


@pytest.fixture(scope="session")
def stale_docs(generated_pages) -> list[str]:
    """What `python -m hostbench docs` would change in this checkout (docs.stale()): rendered
    once for every test of the generated docs' freshness."""
    from hostbench import docs

    return docs.stale(pages=generated_pages)


@pytest.fixture
def group_gone():
    """group_gone(pid) -> True once no live process is left in process group `pid`."""
    return _group_gone


def _live_members(pgid: int) -> list[int]:
    members = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    return members


def _group_gone(pid: int) -> bool:
    # A killed process can stay a zombie until its new parent (init, or a subreaper)
    # reaps it, which takes its own time: it runs no more, so it is not a survivor.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not _live_members(pid):
            return True
        time.sleep(0.05)
    return False


def interruptible(argv: list, **kwargs) -> subprocess.Popen:
    """`argv` started as a harness a test will Ctrl-C (SIGINT), with SIGINT at its default
    disposition: a background job's children inherit SIGINT ignored, and Python then never
    raises KeyboardInterrupt, so the test would test the shell that runs it, not the harness."""
    return subprocess.Popen(
        argv, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kwargs
    )


def descendants_named(pid: int) -> dict[psutil.Process, str]:
    """The processes below `pid` that still run, with their names: a short-lived child (a
    probe, a config check) may end between the listing and the read of its name."""
    named = {}
    for child in psutil.Process(pid).children(recursive=True):
        try:
            named[child] = child.name()
        except psutil.NoSuchProcess:
            pass
    return named


def params_record(params: StudyParams, seed: int) -> dict:
    """params.json as the harness writes it for `params` drawn with `seed`: the keys, the
    seed, the version that ran and the measured settings' fingerprint."""
    return {**params.to_dict(), "seed": seed, "hostbench_version": __version__,
            "fingerprint": fingerprint(params.measured_settings())}  # fmt: skip


def record_params(folder: Path, **changes) -> StudyParams:
    """A run folder's params.json as the harness records it: a small study, with `changes`."""
    raw = {"modes": ["kestrel", "nginx"], "scenarios": ["text"], "tools": ["k6"],
           "concurrency": [8], "duration_s": 5, "warmup_s": 0, "repetitions": 3, "seed": 1,
           **changes}  # fmt: skip
    params = StudyParams.from_dict(raw)
    recorded = {**params.to_dict(), "hostbench_version": "test", "fingerprint": "0" * 12}
    (Path(folder) / "params.json").write_text(json.dumps(recorded, indent=2))
    return params


# ------------------------------------------------------------- a study's tests


def committed_run(study, name: str = "") -> Path:
    """data/runs/<name> (default: the study's paper run), for a study's tests of its committed
    runs; the test skips where that folder is not there: a study folder copied under a new id
    has no run until it is measured, and `make check` passes it all the same. A committed run
    that goes missing is still caught: the study's README says which run it states, and the
    docs freshness test finds the README stale (tests/test_docs.py)."""
    name = name or study.paper_run
    run = ROOT / "data" / "runs" / name
    if not run.is_dir():
        pytest.skip(f"{study.id} has no committed run data/runs/{name}/ yet (not measured)")
    return run


def measured_studies() -> list:
    """The studies whose paper run is committed (its results.csv), as the README's list of runs
    reads them: a study folder not measured yet (one just copied under a new id) is listed
    there as "not measured yet", and the tests of every committed run leave it out."""
    return [
        s
        for s in STUDIES.values()
        if (ROOT / "data" / "runs" / s.paper_run / "results.csv").is_file()
    ]


def stated(study: str, item: str) -> str:
    """What an article's setup.csv states for `item`, as written there."""
    from hostbench.analysis.reference import load_setup

    return load_setup(study).set_index("item").loc[item, "value"]


def published(study: str, mode: str, scenario: str, metric: str, where: str) -> float:
    """An article's published value (its reference/published.csv), found by the place in
    the article it was read from (`where`, the start of that column)."""
    from hostbench.analysis.reference import load_reference

    ref = load_reference(study)
    row = ref[(ref["mode"] == mode) & (ref["scenario"] == scenario) & (ref["metric"] == metric)
              & ref["where"].str.startswith(where)]  # fmt: skip
    return float(row["value"].iloc[0])


def stated_rounds(study: str) -> int:
    # "warm-up, then mean of 3 rounds", "best of 3": the number the article states
    return int(re.search(r"(\d+)", stated(study, "rounds")).group(1))


def profile_params(study: str, profile: str, **overrides):
    """A study's profile, validated, with `overrides` applied last."""
    from hostbench.studies import get_study

    return StudyParams.from_file(get_study(study).params_path(profile), overrides)


def run_command(run_dir: Path, run_key: str) -> list[str]:
    """The load tool's command line of one run, as the harness recorded it."""
    return shlex.split((run_dir / run_key / "load" / "command.txt").read_text())


# ------------------------------------------------------------- servers the tests start


def built(binary: Path) -> Path:
    """`binary`, which `make setup` builds; the test fails naming the make target if absent."""
    if not binary.exists():
        target = binary.relative_to(ROOT) if binary.is_relative_to(ROOT) else binary
        pytest.fail(f"{binary} is missing: run `make setup` (or `make {target}`)")
    return binary


def run_cli(binary: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """`binary` with `args`, for the cases where it must exit by itself."""
    return subprocess.run(
        [str(built(binary)), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def start_server(
    name: str, binary: Path, args: list, log_dir: Path, url: str, unix_socket: str | None = None
) -> ManagedProcess:
    """`binary` with `args` serving `url` (over `unix_socket` if given), its output in
    log_dir/<name>.log; use it in a `with`: started once GET /health answers, stopped after."""
    return ManagedProcess(
        name,
        [built(binary), *args],
        log_dir / f"{name}.log",
        ready=lambda: web.answers_ok(url + "/health", unix_socket=unix_socket),
        ready_timeout_s=30,
    )


def get_ok(url: str, content_type: str) -> web.Response:
    """GET `url`, which must answer 200 with `content_type`."""
    resp = web.get(url)
    assert resp.status == 200, (url, resp.status, resp.text[:200])
    assert resp.content_type.split(";")[0].strip() == content_type, (url, resp.content_type)
    return resp


def one_line(text: str) -> str:
    """The only line of `text` (a program's answer to bad input)."""
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ------------------------------------------------------------------ figures' test data
# Tidy runs with known answers, and what to read off a drawn figure (tests of figures).

FACTORS = {"kestrel": 2.0, "nginx": 1.0, "nginx-uds": 1.2, "caddy": 0.9}
BASE_RPS = {"html": 1000.0, "text": 4000.0, "json": 3000.0, "xml": 2000.0}


def runs(modes=FACTORS, repetitions=3, cpu_total_pct=97.0, concurrency=8) -> pd.DataFrame:
    rows = []
    for (mode, factor), (scenario, rps), rep in itertools.product(
        modes.items(), BASE_RPS.items(), range(repetitions)
    ):
        rows.append(
            {
                "run_key": f"{mode}-{scenario}-{rep}",
                "mode": mode,
                "scenario": scenario,
                "tool": "k6",
                "concurrency": concurrency,
                "repetition": rep,
                "rps": rps * factor + 10.0 * (rep - 1),  # mean rps * factor, sd 10
                "latency_p50_ms": 1.0,
                "latency_p99_ms": 5.0,
                "cpu_total_pct": cpu_total_pct,
                "cpu_server_cores": 3.0,
                "cpu_proxy_cores": np.nan if mode == "kestrel" else 2.0,
                "cpu_loadgen_cores": 2.0,
                "machine_cores": 8,
            }
        )
    return pd.DataFrame(rows)


def bars(ax) -> list:
    """Drawn bars (legend-only dummies have NaN height)."""
    return [p for c in bar_containers(ax) for p in c.patches if np.isfinite(p.get_height())]


def bars_in(container) -> list:
    return [p for p in container.patches if np.isfinite(p.get_height())]


def bar_containers(ax) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def overlapping(artists) -> list[tuple[str, str]]:
    """Pairs of visible texts whose rendered boxes intersect."""
    fig = artists[0].figure
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(a.get_text(), a.get_window_extent(renderer)) for a in artists if a.get_text()]
    return [(t1, t2) for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2) if b1.overlaps(b2)]


def assert_whiskers_inside(fig, axis: int) -> None:
    """Every axes of `fig` draws error bars, and each ends inside its limits on x (axis 0)
    or y (axis 1): nothing is drawn cut off."""
    for ax in fig.axes:
        ends = whisker_ends(ax, axis)
        low, high = ax.get_xlim() if axis == 0 else ax.get_ylim()
        assert ends and min(ends) >= low and max(ends) <= high, (min(ends), max(ends), low, high)


def whisker_ends(ax, axis: int) -> list[float]:
    """Both ends of every error bar drawn in `ax` (bars' and errorbar()'s), on x (axis 0) or
    y (axis 1): to check that each ends inside the axes."""
    ends = []
    for container in ax.containers:
        bars = getattr(container, "errorbar", None) or container
        lines = getattr(bars, "lines", None)
        if not lines or len(lines) < 3:
            continue
        for collection in lines[2]:
            for segment in collection.get_segments():
                ends += list(np.asarray(segment)[:, axis])
    return ends
