"""ManagedProcess: bounded readiness, the log tail in errors, and always stopped."""

import signal
import subprocess
import sys
import time

import psutil
import pytest

from hostbench.errors import LaunchFailed
from hostbench.harness.launch.processes import ManagedProcess, finished, running_in_group
from hostbench.harness.launch.tools import find_tool

pytestmark = pytest.mark.live  # every test here starts real processes


def test_a_server_that_dies_reports_its_exit_code_and_log_tail(tmp_path):
    app = ManagedProcess(
        "TestApp", [find_tool("TestApp"), "--bogus", "1"], tmp_path / "app.log", ready=lambda: False
    )
    with pytest.raises(LaunchFailed) as err:
        app.start()
    message = str(err.value)
    assert "TestApp exited with code 2 before it was ready" in message
    assert "unknown option '--bogus'" in message and "\n" not in message


def test_readiness_is_bounded_and_the_process_is_stopped(tmp_path):
    proc = ManagedProcess(
        "sleeper",
        [sys.executable, "-c", "print('starting', flush=True); import time; time.sleep(60)"],
        tmp_path / "sleeper.log",
        ready=lambda: False,
        ready_timeout_s=1,
    )
    t0 = time.monotonic()
    with pytest.raises(LaunchFailed, match=r"sleeper not ready after 1 s; log .*: starting"):
        proc.start()
    assert time.monotonic() - t0 < 10
    assert not proc.running()


def test_interrupt_inside_the_block_stops_the_whole_group_even_if_it_ignores_sigterm(tmp_path):
    # A parent that ignores SIGTERM, with a child: both must be gone after the block.
    code = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    )
    proc = ManagedProcess("stubborn", [sys.executable, "-c", code], tmp_path / "s.log", grace_s=1)
    with pytest.raises(KeyboardInterrupt):
        with proc:
            time.sleep(0.5)
            tree = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
            assert len(tree) == 2
            raise KeyboardInterrupt
    # At once: the grandchild is no child of ours, and the group's SIGKILL only starts its end.
    alive = [p for p in tree if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    assert alive == [] and running_in_group(tree[0]) == []


def test_a_ctrl_c_during_a_short_command_returns_once_the_command_is_gone(tmp_path):
    # subprocess.run kills a Ctrl-C'd child but returns without reaping it.
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"

    def ctrl_c_once_started(signum, frame):
        if pid_file.is_file() and pid_file.read_text():
            raise KeyboardInterrupt
        signal.setitimer(signal.ITIMER_REAL, 0.05)  # not started yet: look again

    previous = signal.signal(signal.SIGALRM, ctrl_c_once_started)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(KeyboardInterrupt):
            finished([sys.executable, "-c", code], timeout=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not psutil.pid_exists(int(pid_file.read_text()))  # killed and reaped


def test_children_die_with_a_harness_that_is_killed_outright(tmp_path):
    # SIGKILL leaves no chance to clean up: the kernel's parent-death signal must.
    harness = (
        "import sys, time; from pathlib import Path; "
        "from hostbench.harness.launch.processes import ManagedProcess; "
        "p = ManagedProcess('sleeper', [sys.executable, '-c', 'import time; time.sleep(60)'], "
        f"Path({str(tmp_path)!r}) / 's.log').start(); "
        f"Path({str(tmp_path)!r}, 'pid').write_text(str(p.pid)); time.sleep(60)"
    )
    parent = subprocess.Popen([sys.executable, "-c", harness])
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    child = int(pid_file.read_text())
    assert psutil.pid_exists(child)
    parent.kill()
    parent.wait()
    gone = False
    while time.monotonic() < deadline and not gone:
        gone = not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie"
        time.sleep(0.1)
    assert gone


def test_starting_twice_is_refused(tmp_path):
    proc = ManagedProcess(
        "sleeper", [sys.executable, "-c", "import time; time.sleep(5)"], tmp_path / "l"
    )
    with proc:
        with pytest.raises(RuntimeError, match="already running"):
            proc.start()
