"""Where a launch's programs run: this machine (its loopback, or a network namespace of it).

A place is what a program needs from the machine it runs on (Place): a folder for its
configs, the path of its executable, a free port, a way to start it and to ask it for
/health. This machine and its network namespaces are Local; an ssh host is
remote.Connection, which answers the same calls; the programs (hostbench/programs) and
modes.py launch through either without asking which (tests/test_places.py holds both to it).
"""

import grp
import os
import pwd
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from . import web
from .netns import call_in
from .processes import ManagedProcess, finished
from .tools import find_tool


class Place(Protocol):
    """What a launch asks of the machine its programs run on."""

    def folder(self, run_dir: Path) -> str:
        """Where a launch's files are on this place, for the local run folder `run_dir`."""

    def put(self, run_dir: Path, folder: str, files: dict[str, str], dirs=()) -> None:
        """Write `files` (name: text) where the launch reads them, and make `dirs` there."""

    def secrets(self, paths: list[Path]):
        """A context manager: local files nothing may keep (a launch's TLS key), as paths
        there, for the block it wraps; any copy made of them is removed when it ends."""

    def tool(self, name: str, ships: Path | None = None) -> str:
        """The path of program `name` on this place (`ships`: this machine's build of it)."""

    def output(self, *argv) -> str:
        """What `argv` prints there (stdout and stderr), for a version probe."""

    def cores(self, cpus=None) -> int:
        """The cores a program pinned to `cpus` (None: any) may run on there."""

    def root_user(self) -> str | None:
        """The "user group" the harness runs as there when it is root; None otherwise."""

    def free_port(self, address: str) -> int:
        """A port free at `address` there."""

    def request(self, method: str, url: str, unix_socket: str | None = None):
        """One HTTP request made from there (a web.Response); OSError when nothing answers."""

    def answers_ok(self, url: str, unix_socket: str | None = None) -> bool:
        """Whether `url` answers 200 from there."""

    def process(self, name, argv, log_path, *, env=None, cpus=None, cwd=None, **kw):
        """A process there, not started (ManagedProcess here, RemoteProcess on a host)."""


class Local:
    """This machine, or network namespace `netns` of it: programs run as children of the
    harness, their configs in the run folder itself."""

    def __init__(self, netns: str | None = None):
        self.netns = netns

    def folder(self, run_dir: Path) -> str:
        """Where a launch's files are on this place: the run folder itself."""
        run_dir = Path(run_dir).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        return str(run_dir)

    def put(self, run_dir: Path, folder: str, files: dict[str, str], dirs=()) -> None:
        """Write `files` (name: text) into the run folder and make `dirs` (paths) there."""
        for name, text in files.items():
            (Path(run_dir) / name).write_text(text)
        for path in dirs:
            Path(path).mkdir(parents=True, exist_ok=True)

    @contextmanager
    def secrets(self, paths: list[Path]) -> Iterator[list[str]]:
        """The files as they are: this machine and its namespaces share one filesystem."""
        yield [str(Path(p).resolve()) for p in paths]

    def tool(self, name: str, ships: Path | None = None) -> str:
        """The path of program `name` here: in `ships` when that is a published folder holding
        it (what an ssh host would be given: the test app's build for a runtime), else where
        find_tool finds it."""
        if ships is not None and ships.is_dir() and os.access(ships / name, os.X_OK):
            return str(ships / name)
        return str(find_tool(name))

    def output(self, *argv) -> str:
        """What `argv` prints here (stdout and stderr), for a version probe."""
        done = finished(argv, timeout=30)
        return (done.stdout + done.stderr).strip()

    def cores(self, cpus=None) -> int:
        return len(cpus) if cpus else os.cpu_count() or 1

    def root_user(self) -> str | None:
        """The "user group" of the harness when it runs as root (nginx's workers keep it); None
        otherwise."""
        if os.geteuid() != 0:
            return None
        return f"{pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name}"

    def free_port(self, address: str) -> int:
        return call_in(self.netns, web.free_port)

    def request(self, method: str, url: str, unix_socket: str | None = None):
        return call_in(self.netns, web.request, method, url, unix_socket=unix_socket)

    def answers_ok(self, url: str, unix_socket: str | None = None) -> bool:
        return call_in(self.netns, web.answers_ok, url, unix_socket=unix_socket)

    def process(self, name, argv, log_path, *, env=None, cpus=None, cwd=None, **kw):
        """A ManagedProcess here (not started); `env`: variables added to the harness's."""
        return ManagedProcess(name, argv, log_path, env={**os.environ, **env} if env else None,
                              cpus=cpus, cwd=cwd, netns=self.netns, **kw)  # fmt: skip
