"""Hosting modes: how the test app is put in front of clients.

Each mode launches a target (the app, plus a proxy for the reverse-proxy
modes) and yields a Target: the URL the load goes to and the process trees the
CPU monitor watches. Launch is a context manager, so whatever it started is
stopped on success, on error and on Ctrl-C.

The paper's models on Windows and their Linux analogs (shared/DESIGN.md):
Kestrel + IIS out-of-process (the 100% baseline) ~ nginx/caddy over loopback
TCP; IIS in-process has no Linux analog (nginx over a Unix socket is the
cheaper-hop analog); Kestrel is kestrel; HTTP.sys is Windows only.
"""

import json
import platform
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from . import httpclient, proxies
from .errors import BadInput, HostbenchError
from .processes import ManagedProcess
from .tools import find_tool

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass
class LaunchOptions:
    app_args: list[str] = field(default_factory=list)  # extra TestApp options
    access_log: bool = False  # proxy access logs (off, as in a tuned setup)
    url: str | None = None  # external / IIS modes: where the user's server answers
    watch: list[str] = field(default_factory=list)  # external: process names to sample
    allow_remote: bool = False  # external: permit a non-loopback URL


@dataclass
class Target:
    """A running system under test."""

    mode: str
    url: str  # base URL the load goes to
    groups: dict[str, list[int]]  # process trees to sample: "server", "proxy"
    app_url: str | None = None  # direct URL of the test app, for /__stats
    app_socket: str | None = None  # when the app listens on a Unix socket

    def get(self, path: str) -> httpclient.Response:
        return httpclient.get(self.url + path)

    def server_stats(self) -> dict | None:
        """The app's served-request counters, or None for a server that has none."""
        if self.app_url is None:
            return None
        r = httpclient.get(self.app_url + "/__stats", unix_socket=self.app_socket)
        return json.loads(r.body) if r.status == 200 else None

    def reset_server_stats(self):
        if self.app_url is not None:
            httpclient.request("POST", self.app_url + "/__stats/reset", unix_socket=self.app_socket)


def _app_process(run_dir: Path, listen: str, opts: LaunchOptions, extra=()) -> ManagedProcess:
    """The published test app listening on `listen` (a URL or http://unix:/path)."""
    if listen.startswith("http://unix:"):
        socket_path = listen.removeprefix("http://unix:")

        def ready():
            return httpclient.answers_ok("http://localhost/health", unix_socket=socket_path)
    else:

        def ready():
            return httpclient.answers_ok(listen + "/health")

    argv = [find_tool("TestApp"), "--urls", listen, *extra, *opts.app_args]
    return ManagedProcess("TestApp", argv, run_dir / "app.log", ready=ready, ready_timeout_s=60)


class HostingMode:
    name: str = ""
    summary: str = ""
    windows_only = False

    def check(self, opts: LaunchOptions):
        """Raise BadInput (one line) when this mode can't run here with these options."""
        if self.windows_only and platform.system() != "Windows":
            raise BadInput(
                f"mode {self.name!r} runs only on Windows ({self.summary}); "
                f"modes that run here: {', '.join(runnable_here())}"
            )

    @contextmanager
    def launch(self, run_dir: Path, opts: LaunchOptions) -> Iterator[Target]:
        raise NotImplementedError


class Kestrel(HostingMode):
    name = "kestrel"
    summary = "clients talk to Kestrel directly"
    server_args: tuple[str, ...] = ()

    @contextmanager
    def launch(self, run_dir, opts):
        url = f"http://127.0.0.1:{httpclient.free_port()}"
        with _app_process(run_dir, url, opts, self.server_args) as app:
            yield Target(self.name, url, {"server": [app.pid]}, app_url=url)


class HttpSys(Kestrel):
    name = "httpsys"
    summary = "HTTP.sys, the Windows kernel-mode HTTP driver"
    windows_only = True
    server_args = ("--server", "httpsys")


class ReverseProxy(HostingMode):
    """The app on loopback TCP (or a Unix socket) behind nginx or caddy."""

    proxy = "nginx"
    keepalive: int | None = None
    unix_socket = False

    @contextmanager
    def launch(self, run_dir, opts):
        with ExitStack() as stack:
            if self.unix_socket:
                socket_path = str(run_dir / "app.sock")
                app_url, listen = "http://localhost", f"http://unix:{socket_path}"
                upstream = f"unix:{socket_path}"
            else:
                socket_path = None
                port = httpclient.free_port()
                app_url = listen = f"http://127.0.0.1:{port}"
                upstream = f"127.0.0.1:{port}"
            app = stack.enter_context(_app_process(run_dir, listen, opts))
            proxy_port = httpclient.free_port()
            if self.proxy == "nginx":
                proc = proxies.nginx_process(
                    listen_port=proxy_port,
                    upstream=upstream,
                    keepalive=self.keepalive,
                    run_dir=run_dir,
                    access_log=opts.access_log,
                )
            else:
                proc = proxies.caddy_process(
                    listen_port=proxy_port,
                    upstream=upstream,
                    run_dir=run_dir,
                    access_log=opts.access_log,
                )
            proxy = stack.enter_context(proc)
            yield Target(
                self.name,
                f"http://127.0.0.1:{proxy_port}",
                {"server": [app.pid], "proxy": [proxy.pid]},
                app_url=app_url,
                app_socket=socket_path,
            )


class Nginx(ReverseProxy):
    name = "nginx"
    summary = "nginx in front of Kestrel over loopback TCP, Microsoft's guide settings"


class NginxKeepalive(ReverseProxy):
    name = "nginx-keepalive"
    summary = "nginx with an upstream keep-alive pool: the tuned reverse proxy"
    keepalive = proxies.NGINX_KEEPALIVE  # as the ASP.NET team's proxy benchmarks


class NginxUds(ReverseProxy):
    name = "nginx-uds"
    summary = "nginx to Kestrel over a Unix domain socket: the cheaper hop"
    unix_socket = True


class Caddy(ReverseProxy):
    name = "caddy"
    summary = "Caddy's reverse_proxy with its defaults (keep-alive on)"
    proxy = "caddy"


class External(HostingMode):
    """A server the user started; we only load it and watch the processes they name."""

    name = "external"
    summary = "a server you started, at a URL you give"
    default_watch: tuple[str, ...] = ()

    def check(self, opts):
        super().check(opts)
        if not opts.url:
            raise BadInput(f"mode {self.name!r} needs a URL (params key `url`, or --url)")
        host = urlsplit(opts.url).hostname or ""
        if host not in LOOPBACK_HOSTS and not opts.allow_remote:
            raise BadInput(
                f"target {opts.url} is not loopback; load goes to 127.0.0.1 unless you pass "
                "--allow-remote (params key allow_remote: true)"
            )

    @contextmanager
    def launch(self, run_dir, opts):
        self.check(opts)
        url = opts.url.rstrip("/")
        names = set(opts.watch or self.default_watch)
        pids = [
            p.pid
            for p in psutil.process_iter(["name"])
            if p.info["name"] and Path(p.info["name"]).stem in names
        ]
        if names and not pids:
            raise HostbenchError(f"no running process named {', '.join(sorted(names))} to watch")
        target = Target(self.name, url, {"server": pids}, app_url=url)
        try:
            target.server_stats()
        except (OSError, ValueError):
            target.app_url = None  # not our test app: no request counter to cross-check
        yield target


class IisInProcess(External):
    name = "iis-inprocess"
    summary = "IIS with the app inside w3wp.exe (ASP.NET Core Module, in-process)"
    windows_only = True
    default_watch = ("w3wp",)


class IisOutOfProcess(External):
    name = "iis-outofprocess"
    summary = "IIS forwarding to Kestrel in a separate process (the paper's baseline)"
    windows_only = True
    default_watch = ("w3wp", "TestApp", "dotnet")


MODES: dict[str, HostingMode] = {
    m.name: m
    for m in (
        Kestrel(),
        Nginx(),
        NginxKeepalive(),
        NginxUds(),
        Caddy(),
        HttpSys(),
        IisInProcess(),
        IisOutOfProcess(),
        External(),
    )
}


def get_mode(name: str) -> HostingMode:
    try:
        return MODES[name]
    except KeyError:
        raise BadInput(f"unknown mode {name!r}; allowed: {', '.join(MODES)}") from None


def runnable_here() -> list[str]:
    on_windows = platform.system() == "Windows"
    return [n for n, m in MODES.items() if on_windows or not m.windows_only]


def linux_modes() -> list[str]:
    """The modes that launch everything themselves on Linux (no user-started server)."""
    return [n for n, m in MODES.items() if not m.windows_only and not isinstance(m, External)]
