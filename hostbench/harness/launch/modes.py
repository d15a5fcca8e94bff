"""Launching a hosting mode: the test app, alone or behind a proxy, or a server you started.

What each mode is comes from hostbench.catalog; here it becomes processes.
`launch` is a context manager that yields a Target (the URL the load goes to
and the process trees the CPU monitor watches), so whatever it started is
stopped on success, on error and on Ctrl-C.
"""

import json
import platform
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from ...catalog import TLS_AT_PROXY, TLS_IN_SERVER, Mode, get_mode, runnable_here
from ...errors import BadInput, HostbenchError
from ...params import LaunchOptions  # data: the params' launch keys
from ...programs import Certificate, Setup, programs_of
from ...runtime_variants import check_env, check_mode, get_variant
from . import certificate, web
from .netns import TwoHosts
from .places import Local, Place
from .processes import HarnessProcess, tail

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass
class Target:
    """A running system under test."""

    mode: str
    url: str  # base URL the load goes to
    groups: dict[str, list[int]]  # process trees to sample: "server", "proxy"
    app_url: str | None = None  # direct URL of the test app, for /__stats
    app_socket: str | None = None  # when the app listens on a Unix socket
    processes: list[HarnessProcess] = field(default_factory=list)  # what we started
    # Where its programs run, and the harness's own probes go: places.Local (this machine or
    # its server namespace) or, under topology ssh, the server host's remote.Connection.
    place: Place = field(default_factory=Local)
    # The server's RSS at rest (MiB): read by measure.run.prepare once, before the launch's
    # first load, and kept for every cell the launch serves after it.
    rss_at_rest_mb: float | None = None
    # A TLS mode's certificate for this launch, as its programs read it (gone when it ends).
    certificate: Certificate | None = None

    def exited(self) -> str:
        """ "" while every process we started runs; else which one ended, with its log tail."""
        for proc in self.processes:
            code = proc.exit_code()
            if code is not None:
                log = f"log {proc.log_path}: {tail(proc.log_path, 3)}"
                return f"{proc.name} exited with code {code} ({log})"
        return ""

    def get(self, path: str) -> web.Response:
        return self.place.request("GET", self.url + path)

    def _app_request(self, method: str, path: str) -> web.Response:
        # The harness's own requests to the app go where the app is (its namespace, its host).
        return self.place.request(method, self.app_url + path, self.app_socket)

    def server_stats(self) -> dict | None:
        """The app's served-request counters, or None for a server that has none."""
        if self.app_url is None:
            return None
        r = self._app_request("GET", "/__stats")
        return json.loads(r.body) if r.status == 200 else None

    def transport_info(self) -> dict | None:
        """The test app's socket-transport settings as Kestrel runs with them (GET /__transport),
        or None for a server that does not report them."""
        if self.app_url is None:
            return None
        r = self._app_request("GET", "/__transport")
        return json.loads(r.body) if r.status == 200 else None

    @property
    def startup_s(self) -> float | None:
        """The app's startup: seconds from its process's start to its first 200 to GET /health
        (processes.wait_until_ready); None for a server we did not start."""
        if self.app_url is None or not self.processes:
            return None
        return getattr(self.processes[0], "startup_s", None)

    def reset_server_stats(self):
        if self.app_url is not None:
            self._app_request("POST", "/__stats/reset")


def check(mode: Mode, opts: LaunchOptions) -> None:
    """Raise BadInput (one line) when `mode` can't run here with these options."""
    if mode.windows_only and platform.system() != "Windows":
        raise BadInput(
            f"mode {mode.id!r} runs only on Windows ({mode.summary}); "
            f"modes that run here: {', '.join(runnable_here())}"
        )
    if opts.runtime_variant is not None:
        variant = get_variant(opts.runtime_variant)
        check_mode(variant, mode)
        check_env(variant, opts.app_env)
        if opts.runtime is not None:
            raise BadInput(f"runtime variant {variant.name!r} runs on {variant.runtime}; give a "
                           f"runtime ({opts.runtime}) or a runtime variant, not both")  # fmt: skip
    if mode.launch == "external":
        if not opts.url:
            raise BadInput(f"mode {mode.id!r} needs a URL (params key `url`, or --url)")
        parts = urlsplit(opts.url)
        if parts.scheme != "http":
            raise BadInput(
                f"url {opts.url!r}: only http:// URLs are measured (the checks speak plain HTTP)"
            )
        if (parts.hostname or "") not in LOOPBACK_HOSTS and not opts.allow_remote:
            raise BadInput(
                f"target {opts.url} is not loopback; load goes to 127.0.0.1 unless you pass "
                "--allow-remote (params key allow_remote: true)"
            )


def launch(
    mode: Mode | str,
    run_dir: Path,
    opts: LaunchOptions,
    cpus: list[int] | None = None,
    hosts: TwoHosts | None = None,
    ssh=None,
):
    """A context manager that starts `mode`'s processes in `run_dir` and yields its Target.

    cpus: pin what it starts (app, proxy) to these CPU ids; None: any CPU.
    hosts: start them in the server namespace of these two hosts, the front (app or proxy)
    on the server's address; None: on this machine's loopback.
    ssh: topology ssh's remote.SshHosts: start them on its server host, on its address.
    """
    mode = get_mode(mode) if isinstance(mode, str) else mode
    check(mode, opts)
    if hosts is not None and mode.launch == "external":
        raise BadInput(f"mode {mode.id!r}: a server you started runs where you started it; "
                       "topology netns is for the modes the harness launches")  # fmt: skip
    if mode.launch == "external":
        return _launch_external(mode, Path(run_dir), opts, cpus)
    if ssh is not None:  # on the server host, the front on its inventory address
        return _launch(mode, Path(run_dir), opts, cpus, ssh.server, ssh.server_address)
    if hosts is not None:  # in the server namespace, the front on its address
        return _launch(mode, Path(run_dir), opts, cpus, Local(hosts.server), hosts.server_address)
    return _launch(mode, Path(run_dir), opts, cpus, Local(), "127.0.0.1")


# Linux's limit on a Unix socket path (sun_path is 108 bytes with the terminating NUL).
MAX_SOCKET_PATH = 107


def check_socket_path(mode: Mode, run_dir: Path) -> str | None:
    """The app's Unix socket path for `mode` in `run_dir`; BadInput if Linux can't bind it."""
    if not mode.unix_socket:
        return None
    path = str(Path(run_dir).resolve() / "app.sock")
    if len(path.encode()) > MAX_SOCKET_PATH:
        raise BadInput(
            f"mode {mode.id!r}: the socket path {path} is {len(path.encode())} bytes, over "
            f"Linux's {MAX_SOCKET_PATH}; use a shorter runs folder or run id"
        )
    return path


@contextmanager
def _launch(
    mode: Mode, run_dir: Path, opts: LaunchOptions, cpus, place: Place, front_host: str
) -> Iterator[Target]:
    """`mode`'s programs (hostbench/programs) on `place`, the app first: alone, the app listens on
    front_host; behind a proxy, on the place's loopback (or a Unix socket in the launch's
    folder there) and the proxy on front_host."""
    server, *proxy = programs_of(mode)
    with ExitStack() as stack:
        cert = None  # made first, so it is removed last, after the programs that read it
        if mode.tls:
            cert = stack.enter_context(certificate.per_launch(place, front_host))
        if not proxy:
            listen = front = f"{front_host}:{place.free_port(front_host)}"
        elif mode.unix_socket:
            listen = f"unix:{place.folder(run_dir)}/app.sock"
        else:
            listen = f"127.0.0.1:{place.free_port('127.0.0.1')}"
        app_tls = cert if mode.tls == TLS_IN_SERVER else None
        app_setup = Setup(mode, opts, listen, cpus=cpus, tls=app_tls)
        app = stack.enter_context(server.process(place, run_dir, app_setup))
        started, groups = [app], {"server": [app.pid]}
        if proxy:  # its port taken once the app is up, so the two never get the same
            front = f"{front_host}:{place.free_port(front_host)}"
            proxy_tls = cert if mode.tls == TLS_AT_PROXY else None
            proxy_setup = Setup(mode, opts, front, upstream=listen, cpus=cpus, tls=proxy_tls)
            started.append(stack.enter_context(proxy[0].process(place, run_dir, proxy_setup)))
            groups["proxy"] = [started[-1].pid]
        yield Target(mode.id, f"{mode.scheme}://{front}", groups, app_url=app_setup.url,
                     app_socket=app_setup.socket, processes=started, place=place,
                     certificate=cert)  # fmt: skip


@contextmanager
def _launch_external(mode: Mode, run_dir: Path, opts: LaunchOptions, cpus) -> Iterator[Target]:
    """A server the user started; we only load it and watch the processes they name."""
    url = opts.url.rstrip("/")
    names = set(opts.watch or mode.default_watch)
    pids = [
        p.pid
        for p in psutil.process_iter(["name"])
        if p.info["name"] and Path(p.info["name"]).stem in names
    ]
    if names and not pids:
        raise HostbenchError(f"no running process named {', '.join(sorted(names))} to watch")
    target = Target(mode.id, url, {"server": pids}, app_url=url)
    try:
        target.server_stats()
    except (OSError, ValueError):
        target.app_url = None  # not our test app: no request counter to cross-check
    yield target
