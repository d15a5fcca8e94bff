"""Shared test helpers."""

import os
import time

import psutil
import pytest

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
