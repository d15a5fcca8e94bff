"""A program on an ssh host, in its own process group there (what ManagedProcess is locally):
started, probed and stopped through its host's Connection (remote.py), its logs brought back
with its stop."""

import math
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

from ...errors import HostbenchError, LaunchFailed
from .processes import tail, wait_for_exit, wait_until_ready

# A stop's deadline beyond the processes' grace period: its round trip, the SIGKILL's effect
# (remote_helper.KILLED_WITHIN_S) and bringing back their logs, whatever the host does.
STOP_MARGIN_S = 5.0


class RemoteProcess:
    """A program on a host in its own process group: what ManagedProcess is locally."""

    def __init__(
        self,
        conn,  # its host's Connection (remote.py)
        key: str,
        name: str,
        argv: list[str],
        log_path: Path,
        *,
        stderr_path: Path | None = None,
        ready: Callable[[], bool] | None = None,
        ready_timeout_s: float = 60.0,
        grace_s: float = 5.0,
        fetch: dict[str, Path] | None = None,
    ):
        self.conn, self.key, self.name, self.argv = conn, key, name, [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.fetch = fetch or {}  # files it writes on the host: brought here with its logs
        self.stderr_path = Path(stderr_path) if stderr_path else None
        self.ready, self.ready_timeout_s, self.grace_s = ready, ready_timeout_s, grace_s
        self.group: int | None = None
        self._pid: int | None = None
        self._ended: dict | None = None

    @property
    def pid(self) -> int:
        assert self._pid is not None, f"{self.name} is not running"
        return self._pid

    def started_as(self, group: int, pid: int) -> None:
        """Record what the host answered to `start`: the process group and pid it runs as
        there, which the stops name."""
        self.group, self._pid = group, pid

    def ended_as(self, ended: dict) -> None:
        """Record what the host answered about its end: the exit code and its rusage."""
        self._ended = ended

    @property
    def cpu_s(self) -> float:
        """The program's CPU seconds, from its rusage on the host once it ended."""
        return (self._ended or {}).get("cpu_s", math.nan)

    def start(self) -> "RemoteProcess":
        started = self.conn.helper("start", self.conn.folder_root, self.key, *self.argv)
        if "error" in started:
            raise LaunchFailed(
                f"cannot start {self.name} on {self.conn.host.label()}: {started['error']}"
            )
        self.started_as(started["group"], started["pid"])
        wait_until_ready(self, self._not_ready, poll_s=0.05)  # a probe: a round trip, ms
        return self

    def _not_ready(self, what: str) -> str:
        try:  # the log is on the host
            self.conn.fetch_all(self.logs(), timeout=STOP_MARGIN_S)
        except (subprocess.TimeoutExpired, HostbenchError, tarfile.TarError):
            pass  # the stop that follows says what the host did not answer
        return f"{self.name} on {self.conn.host.label()} {what}: {tail(self.log_path)}"

    def exit_code(self) -> int | None:
        if self._ended is None and self.group is not None:
            self._status()
        return None if self._ended is None else self._ended["code"]

    def running(self) -> bool:
        return self.group is not None and self.exit_code() is None

    def wait(self, timeout: float) -> int:
        return wait_for_exit(self.exit_code, timeout, self.argv, poll_s=0.2)

    def stop(self):
        """SIGTERM the group on the host, SIGKILL after the grace period, bring back the logs:
        Connection.stop_all, one round trip and a deadline; held while its host's launches
        stop together (StopTogether)."""
        if self.conn.deferred is not None:
            self.conn.deferred.append(self)
        else:
            self.conn.stop_all([self])

    def _status(self) -> int | None:
        ended = self.conn.helper("status", self.conn.folder_root, self.key)
        if ended["code"] is not None:
            self.ended_as(ended)
        return ended["code"]

    def logs(self) -> dict[str, Path]:
        """What it writes on the host (its output, and the files named in `fetch`), each with
        where it is kept here."""
        base = f"{self.conn.folder_root}/{self.key}"
        logs = {f"{base}.out": self.log_path, **self.fetch}
        if self.stderr_path:
            logs[f"{base}.err"] = self.stderr_path
        return logs

    def __enter__(self) -> "RemoteProcess":
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
