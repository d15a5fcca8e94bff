"""Launching a hosting mode: the test app, alone or behind a proxy, or a server you started.

What each mode is comes from hostbench.catalog; here it becomes processes.
`launch` is a context manager that yields a Target (the URL the load goes to
and the process trees the CPU monitor watches), so whatever it started is
stopped on success, on error and on Ctrl-C.
"""

import json
import os
import platform
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from ...catalog import Mode, get_mode, runnable_here
from ...errors import BadInput, HostbenchError
from ...params import LaunchOptions  # data: the params' launch keys
from . import proxies, remote, web
from .netns import TwoHosts, call_in
from .processes import ManagedProcess, tail
from .tools import find_tool

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass
class Target:
    """A running system under test."""

    mode: str
    url: str  # base URL the load goes to
    groups: dict[str, list[int]]  # process trees to sample: "server", "proxy"
    app_url: str | None = None  # direct URL of the test app, for /__stats
    app_socket: str | None = None  # when the app listens on a Unix socket
    processes: list[ManagedProcess] = field(default_factory=list)  # what we started
    netns: str | None = None  # the server's network namespace; None: the harness's own
    host: object = None  # topology ssh: the server host's remote.Connection, probes go there

    def exited(self) -> str:
        """ "" while every process we started runs; else which one ended, with its log tail."""
        for proc in self.processes:
            code = proc.exit_code()
            if code is not None:
                log = f"log {proc.log_path}: {tail(proc.log_path, 3)}"
                return f"{proc.name} exited with code {code} ({log})"
        return ""

    def get(self, path: str) -> web.Response:
        if self.host is not None:
            return self.host.request("GET", self.url + path)
        return call_in(self.netns, web.get, self.url + path)

    def _app_request(self, method: str, path: str) -> web.Response:
        # The harness's own requests to the app go where the app is (its namespace, its host).
        if self.host is not None:
            return self.host.request(method, self.app_url + path, self.app_socket)
        return call_in(self.netns, web.request, method, self.app_url + path,
                       unix_socket=self.app_socket)  # fmt: skip

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

    def reset_server_stats(self):
        if self.app_url is not None:
            self._app_request("POST", "/__stats/reset")


def _app_process(
    run_dir: Path,
    listen: str,
    opts: LaunchOptions,
    extra=(),
    cpus=None,
    server="TestApp",
    netns: str | None = None,
    host=None,
) -> ManagedProcess:
    """The server program (the test app, or goserver) listening on `listen` (a URL or
    http://unix:/path), in network namespace `netns` if given; the params' app_args and
    app_env go to the test app only."""
    if host is not None:  # topology ssh: on the server host, the test app copied there
        env_argv = ["env", *(f"{k}={v}" for k, v in opts.app_env.items())] if opts.app_env else []
        return host.process(server, [*env_argv, host.app(), "--urls", listen, *extra,
                            *opts.app_args], run_dir / "app.log",
                            ready=lambda: host.answers_ok(listen + "/health"))  # fmt: skip
    if listen.startswith("http://unix:"):
        socket_path = listen.removeprefix("http://unix:")

        def ready():
            return web.answers_ok("http://localhost/health", unix_socket=socket_path)
    else:

        def ready():
            return call_in(netns, web.answers_ok, listen + "/health")

    app_args = opts.app_args if server == "TestApp" else []
    argv = [find_tool(server), "--urls", listen, *extra, *app_args]
    # None: the harness's own environment; else that plus the app's variables.
    env = {**os.environ, **opts.app_env} if server == "TestApp" and opts.app_env else None
    return ManagedProcess(
        server, argv, run_dir / "app.log", ready=ready, ready_timeout_s=60, cpus=cpus, env=env,
        netns=netns,
    )  # fmt: skip


def check(mode: Mode, opts: LaunchOptions) -> None:
    """Raise BadInput (one line) when `mode` can't run here with these options."""
    if mode.windows_only and platform.system() != "Windows":
        raise BadInput(
            f"mode {mode.id!r} runs only on Windows ({mode.summary}); "
            f"modes that run here: {', '.join(runnable_here())}"
        )
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
    launcher = _launch_proxy if mode.launch == "proxy" else _launch_app
    where = _Where.of(hosts) if ssh is None else _Where(None, ssh.server_address, ssh.server)
    return launcher(mode, Path(run_dir), opts, cpus, where)


@dataclass(frozen=True)
class _Where:
    """Where a launched system runs: its namespace and the address its front listens on."""

    netns: str | None = None
    front_host: str = "127.0.0.1"
    host: object = None  # topology ssh: the server host's remote.Connection

    @classmethod
    def of(cls, hosts: TwoHosts | None) -> "_Where":
        return cls() if hosts is None else cls(hosts.server, hosts.server_address)

    def free_port(self) -> int:
        if self.host is not None:
            return self.host.free_port(self.front_host)
        return call_in(self.netns, web.free_port)


@contextmanager
def _launch_app(
    mode: Mode, run_dir: Path, opts: LaunchOptions, cpus, where: _Where
) -> Iterator[Target]:
    url = f"http://{where.front_host}:{where.free_port()}"
    app = _app_process(run_dir, url, opts, mode.server_args, cpus, mode.server, where.netns,
                       where.host)  # fmt: skip
    with app:
        yield Target(mode.id, url, {"server": [app.pid]}, app_url=url, processes=[app],
                     netns=where.netns, host=where.host)  # fmt: skip


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
def _launch_proxy(
    mode: Mode, run_dir: Path, opts: LaunchOptions, cpus, where: _Where
) -> Iterator[Target]:
    """The app on loopback TCP (or a Unix socket) behind nginx, caddy or YARP; with two
    hosts,
    both in the server namespace, the app on that namespace's loopback."""
    with ExitStack() as stack:
        if mode.unix_socket:
            socket_path = check_socket_path(mode, run_dir)
            app_url, listen = "http://localhost", f"http://unix:{socket_path}"
            upstream = f"unix:{socket_path}"
        else:
            socket_path = None
            port = where.free_port()
            app_url = listen = f"http://127.0.0.1:{port}"
            upstream = f"127.0.0.1:{port}"
        app = stack.enter_context(
            _app_process(
                run_dir, listen, opts, mode.server_args, cpus, netns=where.netns, host=where.host
            )  # fmt: skip
        )
        proxy_port = where.free_port()
        if where.host is not None and mode.proxy == "caddy":  # topology ssh: on the server host
            proc = remote.caddy_process(
                where.host,
                run_dir,
                listen_port=proxy_port,
                upstream=upstream,
                access_log=opts.access_log,
                listen_host=where.front_host,
            )
        elif where.host is not None:  # topology ssh: nginx (params allow no other proxy there)
            proc = remote.nginx_process(
                where.host,
                run_dir,
                listen_port=proxy_port,
                upstream=upstream,
                keepalive=mode.keepalive and (opts.nginx_keepalive_pool or mode.keepalive),
                access_log=opts.access_log,
                listen_host=where.front_host,
                workers=opts.nginx_workers,
            )
        elif mode.proxy == "nginx":
            proc = proxies.nginx_process(
                listen_port=proxy_port,
                upstream=upstream,
                # The pool's size, where the mode has a pool (a mode without one keeps none).
                keepalive=mode.keepalive and (opts.nginx_keepalive_pool or mode.keepalive),
                run_dir=run_dir,
                access_log=opts.access_log,
                cpus=cpus,
                listen_host=where.front_host,
                netns=where.netns,
                workers=opts.nginx_workers,
            )
        else:
            proc = proxies.proxy_process(
                mode.proxy,
                listen_port=proxy_port,
                upstream=upstream,
                run_dir=run_dir,
                access_log=opts.access_log,
                cpus=cpus,
                listen_host=where.front_host,
                netns=where.netns,
            )
        proxy = stack.enter_context(proc)
        yield Target(
            mode.id,
            f"http://{where.front_host}:{proxy_port}",
            {"server": [app.pid], "proxy": [proxy.pid]},
            app_url=app_url,
            app_socket=socket_path,
            processes=[app, proxy],
            netns=where.netns,
            host=where.host,
        )


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
