"""What a program a mode starts is (Program), and what a reverse proxy adds (Proxy): the parts
each program's declaration fills in, the params keys a program owns (Setting), and one launch
of it (Setup).

A program is set up on a place (harness/launch/places.py: this machine, or a namespace of it;
harness/launch/remote.py: an ssh host), which the harness hands in: both answer the same
calls, so nothing here imports the harness, and the params and the analysis read these
declarations too.
"""

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from ..catalog import Mode
from ..errors import BadInput
from ..params.rules import Key


class LaunchSettings(Protocol):
    """What a launch's programs read of the params (params.LaunchOptions is one). Declared
    here, so the programs import of the params only the Key they declare their own keys with,
    and the params, which read the programs' keys, import no module that imports them back."""

    app_args: list[str]  # the test app's extra options
    app_env: dict[str, str]  # the test app's extra environment
    access_log: bool  # a proxy's access log
    program_settings: dict[str, object]  # the keys the programs own, by name
    runtime: str | None  # the test app's runtime; None: make setup's build


@dataclass(frozen=True)
class Certificate:
    """A launch's TLS certificate as the program reads it, where it runs: the PEM files of a
    throwaway self-signed certificate and its key (harness/launch/certificate.py makes them)."""

    cert: str
    key: str


@dataclass(frozen=True)
class Setup:
    """One program's part in one launch: where it listens, what it forwards to."""

    mode: Mode
    opts: LaunchSettings
    listen: str  # "host:port", or "unix:/path" (the app behind a proxy over a Unix socket)
    upstream: str = ""  # a proxy's app: "127.0.0.1:port" or "unix:/path"
    cpus: list[int] | None = None  # pinned to these CPU ids; None: any
    tls: Certificate | None = None  # this program terminates TLS with it; None: plain HTTP

    @property
    def url(self) -> str:
        """The URL this program answers at: http(s)://host:port, or http://localhost over a
        socket."""
        if self.listen.startswith("unix:"):
            return "http://localhost"
        return f"{'https' if self.tls else 'http'}://{self.listen}"

    @property
    def socket(self) -> str | None:
        return self.listen.removeprefix("unix:") if self.listen.startswith("unix:") else None


@dataclass(frozen=True)
class Setting:
    """A params key a program owns, declared with the program; the params collect it with the
    others (params/keys.py declared). It has a default (never required) and, set, it must shape
    a mode the study runs, or it would change nothing. It is part of a run's settings only when
    set (not null), so the fingerprints of runs measured before it stay as they were."""

    key: Key
    shapes: str  # the modes it changes, in words, as the params' error names them: "nginx"
    pooled_only: bool = False  # only the modes that keep an upstream pool (Mode.keepalive)


class Program:
    """One program a mode starts. Each subclass is one program's whole declaration."""

    name = ""  # the name a Mode gives (Mode.server, Mode.proxy)
    tool = ""  # its executable, as tools.find_tool looks for it
    # The Debian package it comes from ("": not one); deploy/packages.yml lists it
    # (hostbench/packages.py), which scripts/install-system-packages.sh, deploy/provision.yml
    # (the server host) and the Dockerfile install, as a test checks.
    debian_package = ""
    built_by = ""  # what provides it when it is no Debian package
    # What an ssh host is given: this machine's build (a file, or a published folder whose
    # program it is), or None: the host's own, installed by deploy/provision.yml.
    ships: Path | None = None
    log = ""  # its console log in the run folder
    in_folder = True  # runs in its folder (the app runs where the harness does, as always)
    settings: tuple[Setting, ...] = ()  # the params keys it owns
    terminates_tls = False  # can serve HTTPS itself with a PEM certificate (Setup.tls)

    @property
    def package(self) -> str:
        """What provides it here (tools.find_tool says it when it is missing)."""
        if self.debian_package:
            return f"apt-get install {self.debian_package} (done by `make setup` as root)"
        return self.built_by

    def configs(self, setup: Setup, folder: PurePosixPath, place) -> dict[str, str]:
        """The files it reads (name: text), written into the run folder (and onto an ssh host)."""
        return {}

    def dirs(self, folder: PurePosixPath) -> list[str]:
        """Folders it writes into, made before it starts."""
        return []

    def argv(self, exe: str, setup: Setup, folder: PurePosixPath) -> list[str]:
        raise NotImplementedError

    def env(self, setup: Setup, folder: PurePosixPath) -> dict[str, str]:
        """Variables added to its environment."""
        return {}

    def version(self, place) -> str | None:
        """Its version as the environment record names it; None for the harness's own
        programs (their build is recorded otherwise)."""
        return None

    def ready(self, place, setup: Setup) -> bool:
        """Whether it serves: GET /health through it answers 200 (through a proxy: the app
        behind it is up already)."""
        return place.answers_ok(setup.url + "/health", setup.socket)

    def shapes(self, setting: Setting, mode: Mode) -> bool:
        """Whether one of its own settings changes how `mode` runs: the mode starts it (and
        keeps an upstream pool, for a setting of the pool)."""
        starts = self.name in (mode.server, mode.proxy)
        return starts and (not setting.pooled_only or mode.keepalive is not None)

    def executable(self, place, setup: Setup) -> str:
        """Its path on `place`."""
        return place.tool(self.tool, self.ships)

    def process(self, place, run_dir: Path, setup: Setup):
        """The program set up on `place` for `setup` (configs written, kept in run_dir); not
        started yet."""
        folder = PurePosixPath(place.folder(run_dir))
        files = self.configs(setup, folder, place)
        place.put(run_dir, str(folder), files, self.dirs(folder))
        exe = self.executable(place, setup)
        return place.process(
            self.name,
            self.argv(exe, setup, folder),
            Path(run_dir) / self.log,
            env=self.env(setup, folder),
            cpus=setup.cpus,
            cwd=folder if self.in_folder else None,
            ready=lambda: self.ready(place, setup),
            ready_timeout_s=60,
        )


class Proxy(Program):
    """A reverse proxy in front of the app (a mode's `proxy`), forwarding every request to it
    over loopback TCP, or over what else it can front.

    Its configs are generated for each launch, and everything it writes (config, pid file,
    logs, temp files, caddy's data dirs) lives in the run folder; nothing under /etc, /var or
    the user's home. It listens on 127.0.0.1 only (or, with two hosts on one machine, on the
    server namespace's own address: harness/launch/netns.py) and runs as the current user.
    """

    unix_socket = False  # can forward to an app on a Unix domain socket (Mode.unix_socket)
    # Keeps an upstream keep-alive pool of the size a mode gives (Mode.keepalive) and opens a
    # new connection per request without one; False: it keeps connections alive its own way.
    sized_pool = False

    def fronts(self, mode: Mode) -> bool:
        """Whether it can make the hop `mode` asks of it (a Unix socket, a pool's size)."""
        return (self.unix_socket or not mode.unix_socket) and (
            self.sized_pool or mode.keepalive is None
        )


def front(setup: Setup) -> dict:
    """What every proxy's config is written from: where it listens, what it forwards to,
    whether it logs each request, and the certificate it terminates TLS with (or None)."""
    host, _, port = setup.listen.rpartition(":")
    return {"listen_host": host, "listen_port": int(port), "upstream": setup.upstream,
            "access_log": setup.opts.access_log, "tls": setup.tls}  # fmt: skip


def quoted(path: Path) -> str:
    """A path as a double-quoted token (both nginx and caddy accept these), so spaces work."""
    text = str(path)
    if any(c in text for c in '"\\\n$'):
        raise BadInput(f"path {text!r}: quotes, backslashes, '$' and newlines are not allowed")
    return f'"{text}"'


def check_upstream(upstream: str) -> None:
    """BadInput unless `upstream` is written "127.0.0.1:5001" (TCP) or "unix:/path/app.sock"
    (a Unix domain socket): the spelling every proxy's config is made from (nginx's)."""
    if not upstream or any(c.isspace() or c in '";{}$' for c in upstream):
        raise BadInput(f"upstream {upstream!r}: no spaces, quotes, braces or '$' allowed")
    if upstream.startswith("unix:"):
        if not upstream[len("unix:") :].startswith("/"):
            raise BadInput(f"upstream {upstream!r}: a Unix socket needs an absolute path")
        return
    host, _, port = upstream.rpartition(":")
    if not host or "/" in host or not port.isdigit():
        raise BadInput(
            f"upstream {upstream!r}: expected host:port (127.0.0.1:5001) or unix:/path.sock"
        )
