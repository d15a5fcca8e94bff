"""Shared test helpers."""

import json
import os
import time
from pathlib import Path

import psutil
import pytest

from hostbench.params import StudyParams

# Params for the tests' tiny studies, whose point is not the measurement: runs of a second or
# two count, the machine's other load is recorded but does not hold them, and a warm-up too
# short to be steady does not invalidate them. (The gate and the checks have their own tests.)
SHORT_RUNS = {"min_duration_s": 1, "quiet_max_cores": None, "require_steady": False}


def record_params(folder: Path, **changes) -> StudyParams:
    """A run folder's params.json as the harness records it: a small study, with `changes`."""
    raw = {"modes": ["kestrel", "nginx"], "scenarios": ["text"], "tools": ["k6"],
           "concurrency": [8], "duration_s": 5, "warmup_s": 0, "repetitions": 3, "seed": 1,
           **changes}  # fmt: skip
    params = StudyParams.from_dict(raw)
    recorded = {**params.to_dict(), "hostbench_version": "test", "fingerprint": "0" * 12}
    (Path(folder) / "params.json").write_text(json.dumps(recorded, indent=2))
    return params


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
