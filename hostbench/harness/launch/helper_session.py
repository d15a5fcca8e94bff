"""The helper on an ssh host (remote_helper.py) serving one connection's calls: one JSON line
each way over one ssh session kept open, one call at a time (an ssh command and a python3
per call cost a few tenths of a second each; a study makes hundreds). Every call has a
deadline; past it the session is given up, so a late answer never answers the next question.
"""

import json
import os
import select
import shutil
import subprocess
import threading
import time


class HelperSession:
    """The serving helper of one connection (remote_helper serve), started by `start`."""

    def __init__(self):
        self._server: subprocess.Popen | None = None
        self._one_call = threading.Lock()

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self, argv: list[str]) -> None:
        """Start it (`argv`: the ssh command that runs it), its session in a group of its own
        (a Ctrl-C here leaves it to answer the stops that follow) that ends with the harness
        (setpriv)."""
        self._server = subprocess.Popen([*dies_with_us(), *argv], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        start_new_session=True)  # fmt: skip

    def ask(self, args: list[str], until: float) -> dict | None:
        """`args` asked of the serving helper; None when it has ended (or its pipe broke).
        Past `until` its session is given up (a late answer would answer the next question)
        and TimeoutExpired raised."""
        if not self._one_call.acquire(timeout=seconds_left(until)):
            raise subprocess.TimeoutExpired(["helper.py", *args], seconds_left(until))
        try:
            server = self._server
            if server is None:
                return None
            try:
                server.stdin.write(json.dumps(args).encode() + b"\n")
                server.stdin.flush()
                line = _line(server.stdout.fileno(), until)
            except subprocess.TimeoutExpired:
                self.end(patience_s=0)
                raise subprocess.TimeoutExpired(["helper.py", *args], seconds_left(until)) from None
            except OSError:
                line = b""
            if not line:
                self.end()
                return None
            return json.loads(line)
        finally:
            self._one_call.release()

    def end(self, patience_s: float = 1.0) -> None:
        """Its end of input ends it and its ssh session; killed after `patience_s`."""
        server, self._server = self._server, None
        if server is not None:
            try:
                server.stdin.close()
            except OSError:
                pass  # its pipe broke: it has ended
            wait_or_kill(server, patience_s)
            server.stdout.close()


def wait_or_kill(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _line(fd: int, until: float) -> bytes:
    """One line read from `fd` (b"" at its end); TimeoutExpired past `until`."""
    chunks = []
    while not chunks or not chunks[-1].endswith(b"\n"):
        if not select.select([fd], [], [], max(0.0, until - time.monotonic()))[0]:
            raise subprocess.TimeoutExpired("helper.py", 0)
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b""
        chunks.append(chunk)
    return b"".join(chunks)


def seconds_left(until: float) -> float:
    """The seconds left until `until` (a time.monotonic()), as a call's timeout."""
    return max(0.1, until - time.monotonic())


def dies_with_us() -> list[str]:
    """argv prefix: the parent-death signal, so an ssh client never outlives the harness."""
    return ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
