"""Child processes the harness starts, and always stops.

Every server, proxy and load generator runs in its own session (process
group), so stopping it stops its workers too, and a Ctrl-C in the terminal
reaches only the harness, which then stops its children in order.
"""

import atexit
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from subprocess import STDOUT
from typing import Protocol

from ...errors import LaunchFailed
from .netns import exec_prefix

_live: set["ManagedProcess"] = set()

# How long a SIGKILLed group may take to be gone: the kernel tears each process down when it is
# next scheduled, which on a machine busy with other work (make test's parallel lanes) is not
# at once. Past it, stop() returns and leaves the process to the atexit handler.
GONE_WITHIN_S = 10.0
POLL_S = 0.02


class HarnessProcess(Protocol):
    """A program the harness started, here (ManagedProcess) or on an ssh host
    (remote.RemoteProcess): what a launch, a load generator and a Target ask of it."""

    name: str
    argv: list[str]
    log_path: Path  # its stdout (and stderr unless stderr_path), here once it ran
    stderr_path: Path | None
    # Once ready, wait_until_ready gives it startup_s: seconds from its start to the readiness
    # probe that said yes (read with getattr: a process started without a probe has none).

    @property
    def pid(self) -> int: ...  # where it runs (its host's pid under ssh)

    def start(self) -> "HarnessProcess": ...  # returns once it is ready

    def running(self) -> bool: ...

    def exit_code(self) -> int | None: ...  # None while it runs

    def wait(self, timeout: float) -> int: ...  # TimeoutExpired after `timeout`

    def stop(self) -> None: ...  # its whole group; safe to call twice

    def __enter__(self) -> "HarnessProcess": ...  # start()

    def __exit__(self, *exc) -> bool: ...  # stop()


def _stop_all_live():
    for proc in list(_live):
        proc.stop()


atexit.register(_stop_all_live)


def _wrapped(argv: list[str], cpus: Sequence[int] | None, netns: str | None = None) -> list[str]:
    """argv behind wrappers: the parent-death signal, the network namespace, CPU pinning.

    setpriv --pdeathsig: if the harness itself is killed (SIGKILL, a crash), Linux
    sends the child SIGTERM, so no server or load tool outlives it; the normal
    paths (success, error, Ctrl-C) stop children in stop(). Both wrappers exec the
    program, so the pid stays the program's. No preexec_fn: that is unsafe while
    the CPU monitor's thread runs.
    """
    prefix = []
    if sys.platform == "linux" and shutil.which("setpriv"):
        prefix += ["setpriv", "--pdeathsig", "TERM", "--"]
    prefix += exec_prefix(netns)  # a network namespace (launch/netns.py): joins it and execs
    if cpus:
        prefix += ["taskset", "--cpu-list", ",".join(str(c) for c in cpus)]
    return prefix + argv


def running_in_group(group: int) -> list[int]:
    """The pids of process group `group` that have not ended: a zombie has (only its exit
    status is left for its parent to read), and a worker orphaned by its group's leader
    (nginx's) is no child of ours, so only the kernel's process table can say it is gone."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass  # a member we may not signal still counts
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # ended while we looked
        # After the name, which may hold spaces and parentheses: state, ppid, pgrp.
        state, _, pgrp = stat.rpartition(")")[2].split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def finished(argv: Sequence[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """`argv` run to its end, as subprocess.run (output captured as text); on a timeout, an
    error or Ctrl-C it is killed and reaped before the exception goes on. subprocess.run
    kills a Ctrl-C'd child but returns without waiting for it: it would outlive the harness's
    last line."""
    proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        _reap(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _reap(proc: subprocess.Popen) -> None:
    """Wait for a killed child to end, at most GONE_WITHIN_S; a further Ctrl-C while it
    ends is raised once it has."""
    interrupted = None
    deadline = time.monotonic() + GONE_WITHIN_S
    while proc.returncode is None and time.monotonic() < deadline:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            break
        except KeyboardInterrupt as e:
            interrupted = e
    if interrupted is not None:
        raise interrupted


def tail(path: Path, lines: int = 15) -> str:
    """Last lines of a log file, joined with ' | ' so errors stay one line."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(line for line in text.splitlines()[-lines:] if line.strip())


# The readiness probe polls this often for the first FAST_POLL_FOR_S, so the time from start to
# the first 200 (a process's startup_s) is read to a few ms: Native AOT starts in tens of ms.
FAST_POLL_S = 0.005
FAST_POLL_FOR_S = 2.0


def wait_until_ready(proc, failed: Callable[[str], str], poll_s: float) -> None:
    """Poll proc.ready (a ManagedProcess here, a RemoteProcess on an ssh host) until it says
    yes, and set proc.startup_s: the seconds from its start (just after it was spawned) to the
    probe that said yes (for the app, its first 200 to GET /health), to within the probes'
    spacing (FAST_POLL_S, then poll_s) and one probe's round trip. When the process ends first,
    proc.ready_timeout_s passes or Ctrl-C comes, stop it and raise (LaunchFailed worded by
    `failed`, given what went wrong)."""
    if proc.ready is None:
        return
    started = time.monotonic()
    deadline = started + proc.ready_timeout_s
    try:
        while True:
            code = proc.exit_code()
            if code is not None:
                raise LaunchFailed(failed(f"exited with code {code} before it was ready"))
            if proc.ready():
                proc.startup_s = time.monotonic() - started
                return
            now = time.monotonic()
            if now > deadline:
                raise LaunchFailed(failed(f"not ready after {proc.ready_timeout_s:.0f} s"))
            time.sleep(min(poll_s, FAST_POLL_S) if now - started < FAST_POLL_FOR_S else poll_s)
    except BaseException:
        proc.stop()
        raise


def wait_for_exit(
    exit_code: Callable[[], int | None], timeout_s: float, argv, poll_s: float
) -> int:
    """Poll `exit_code` until the process has one and return it; TimeoutExpired (naming
    `argv`) after `timeout_s`. Here and on an ssh host."""
    deadline = time.monotonic() + timeout_s
    while (code := exit_code()) is None:
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(argv, timeout_s)
        time.sleep(poll_s)
    return code


class ManagedProcess:
    """A child process as a context manager: started, waited on until ready, stopped.

    `ready` is polled until it returns True (bounded by `ready_timeout_s`); the
    process dying first, or the timeout, raises LaunchFailed with its log tail.
    On exit: SIGTERM to the whole group, SIGKILL after `grace_s`.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        *,
        stderr_path: Path | None = None,
        ready: Callable[[], bool] | None = None,
        ready_timeout_s: float = 30.0,
        grace_s: float = 5.0,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        cpus: Sequence[int] | None = None,
        netns: str | None = None,
    ):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log_path = Path(log_path)  # stdout, and stderr unless stderr_path is given
        self.stderr_path = Path(stderr_path) if stderr_path else None
        self.ready = ready
        self.ready_timeout_s = ready_timeout_s
        self.grace_s = grace_s
        self.env = env
        self.cwd = cwd
        self.cpus = list(cpus) if cpus else None  # pinned to these CPU ids
        self.netns = netns  # runs in this network namespace (harness/launch/netns.py); None: ours
        self.popen: subprocess.Popen | None = None
        self.startup_s: float | None = None  # set by wait_until_ready

    @property
    def pid(self) -> int:
        assert self.popen is not None, f"{self.name} is not running"
        return self.popen.pid

    def start(self) -> "ManagedProcess":
        if self.running():
            raise RuntimeError(f"{self.name} is already running")  # `with p.start()` twice
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with (
            open(self.log_path, "wb") as log,
            open(self.stderr_path, "wb") if self.stderr_path else nullcontext(STDOUT) as err,
        ):
            try:
                self.popen = subprocess.Popen(
                    _wrapped(self.argv, self.cpus, self.netns),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=err,
                    start_new_session=True,
                    env=self.env,  # None: the harness's own environment
                    cwd=self.cwd,
                )
            except OSError as e:
                raise LaunchFailed(
                    f"cannot start {self.name} ({self.argv[0]}): {e.strerror}"
                ) from None
        _live.add(self)
        wait_until_ready(self, self._not_ready, poll_s=0.1)
        return self

    def _not_ready(self, what: str) -> str:
        return f"{self.name} {what}; log {self.log_path}: {tail(self.log_path)}"

    def running(self) -> bool:
        return self.popen is not None and self.exit_code() is None

    def exit_code(self) -> int | None:
        """The exit code once the process has ended; None while it runs.

        It does not reap the process: until stop() does, the ended process keeps its
        pid, so signalling its group can never reach a stranger who got the pid anew.
        """
        if self.popen is None:
            return None
        if self.popen.returncode is not None:
            return self.popen.returncode
        try:
            info = os.waitid(os.P_PID, self.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return self.popen.poll()
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def wait(self, timeout: float) -> int:
        """Wait for the process to end, without reaping it; TimeoutExpired after `timeout`."""
        return wait_for_exit(self.exit_code, timeout, self.argv, poll_s=0.02)

    def stop(self):
        """SIGTERM the group, then SIGKILL after the grace period; return once every process
        of the group is gone (at most GONE_WITHIN_S after the SIGKILL). Safe to call twice.

        A second Ctrl-C while it waits skips the rest of the grace period, never the SIGKILL
        nor the wait for the group to be gone: it is raised after. The process is reaped last,
        so its pid (and group id) is still ours whenever a signal goes out.
        """
        if self.popen is None or self.popen.returncode is not None:
            return
        interrupted = None
        try:
            if self.exit_code() is None:
                self._signal_group(signal.SIGTERM)
                self.wait(self.grace_s)
        except subprocess.TimeoutExpired:
            pass
        except KeyboardInterrupt as e:
            interrupted = e
        # Workers of the group may outlive their parent (nginx's do on SIGTERM).
        interrupted = self._kill_group() or interrupted
        if interrupted is not None:
            raise interrupted

    def _kill_group(self) -> KeyboardInterrupt | None:
        """SIGKILL the group until none of it runs, then reap the process; forgotten once
        reaped (else atexit tries again). Returns a Ctrl-C that came meanwhile."""
        interrupted = None
        deadline = time.monotonic() + GONE_WITHIN_S
        while time.monotonic() < deadline:
            try:
                self._signal_group(signal.SIGKILL)
                if not running_in_group(self.popen.pid):
                    break
                time.sleep(POLL_S)
            except KeyboardInterrupt as e:
                interrupted = e
        try:
            _reap(self.popen)  # a zombie by now: at once
        except KeyboardInterrupt as e:
            interrupted = e
        if self.popen.returncode is not None:
            _live.discard(self)
        return interrupted

    def _signal_group(self, sig: int):
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "ManagedProcess":
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
