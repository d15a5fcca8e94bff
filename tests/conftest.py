"""Shared test helpers."""

import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from hostbench.harness import httpclient
from hostbench.harness.processes import ManagedProcess
from hostbench.paths import ROOT

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
        ready=lambda: httpclient.answers_ok(url + "/health", unix_socket=unix_socket),
        ready_timeout_s=30,
    )


def get_ok(url: str, content_type: str) -> httpclient.Response:
    """GET `url`, which must answer 200 with `content_type`."""
    resp = httpclient.get(url)
    assert resp.status == 200, (url, resp.status, resp.text[:200])
    assert resp.content_type.split(";")[0].strip() == content_type, (url, resp.content_type)
    return resp


def one_line(text: str) -> str:
    """The only line of `text` (a program's answer to bad input)."""
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]
