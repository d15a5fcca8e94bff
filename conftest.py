"""Shared test helpers."""

import itertools
import os
import time

import numpy as np
import pandas as pd
import psutil
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer

# Params for the tests' tiny studies, whose point is not the measurement: runs of a second or
# two count, the machine's other load is recorded but does not hold them, and a warm-up too
# short to be steady does not invalidate them. (The gate and the checks have their own tests.)
SHORT_RUNS = {"min_duration_s": 1, "quiet_max_cores": None, "require_steady": False}


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
    return reproduce_all("quick", batch_id="ci-quick", runs_dir=runs).parent


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
