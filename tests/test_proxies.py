"""nginx, caddy and YARP configs (unit) and the real proxies in front of the real test app."""

import json
import os
import re
import resource
import subprocess
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from hostbench.catalog import MODES, get_mode
from hostbench.errors import BadInput
from hostbench.harness.launch.places import Local
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.harness.launch.tools import find_tool, have_tool
from hostbench.harness.launch.web import answers_ok, free_port, get
from hostbench.params import LaunchOptions
from hostbench.paths import ROOT
from hostbench.programs import PROGRAMS, Setup, proxies
from hostbench.programs.caddy import caddy_config
from hostbench.programs.nginx import Nginx, nginx_config
from hostbench.programs.yarp import yarp_config

RUN = Path("/srv/run 1")  # a space, to check paths are quoted


def _nginx(**overrides) -> str:
    args = dict(listen_port=8081, upstream="127.0.0.1:5001", keepalive=None, workers=3, run_dir=RUN)
    return nginx_config(**{**args, **overrides})


def proxy_process(mode, *, listen_port, upstream, run_dir, access_log=False):
    """The proxy of mode `mode` (hostbench/programs) on loopback in front of `upstream`, as
    that mode launches it (its pool, if it keeps one); not started yet."""
    mode = get_mode(mode)
    setup = Setup(mode, LaunchOptions(access_log=access_log), f"127.0.0.1:{listen_port}",
                  upstream=upstream)  # fmt: skip
    return PROGRAMS[mode.proxy].process(Local(), run_dir, setup)


def _directives(config: str) -> list[str]:
    """Lines without comments and surrounding blanks."""
    lines = (line.split("#", 1)[0].strip() for line in config.splitlines())
    return [line for line in lines if line]


# --- nginx config ------------------------------------------------------------------


@pytest.mark.live
def test_nginx_plain_follows_the_microsoft_guide():
    lines = _directives(_nginx())
    for directive in [
        "daemon off;",
        "master_process on;",
        "worker_processes 3;",
        "listen 127.0.0.1:8081;",
        "proxy_pass         http://127.0.0.1:5001;",
        "proxy_http_version 1.1;",
        "proxy_set_header   Upgrade $http_upgrade;",
        "proxy_set_header   Connection keep-alive;",
        "proxy_set_header   Host $http_host;",
        "proxy_cache_bypass $http_upgrade;",
        "proxy_set_header   X-Forwarded-For $proxy_add_x_forwarded_for;",
        "proxy_set_header   X-Forwarded-Proto $scheme;",
        "access_log off;",
    ]:
        assert directive in lines
    # No pool: no upstream block at all (an explicit one keeps connections from 1.29.7).
    assert not any(line.startswith(("upstream", "keepalive")) for line in lines)


def test_nginx_keepalive_adds_a_pool_and_clears_connection():
    lines = _directives(_nginx(keepalive=32))
    assert "upstream app {" in lines
    assert "server 127.0.0.1:5001;" in lines
    assert "keepalive 32;" in lines
    assert "proxy_pass         http://app;" in lines
    assert 'proxy_set_header   Connection "";' in lines
    assert "proxy_set_header   Connection keep-alive;" not in lines


def test_nginx_unix_socket_upstream():
    plain = _directives(_nginx(upstream="unix:/run/app.sock"))
    assert "proxy_pass         http://unix:/run/app.sock:;" in plain
    pooled = _directives(_nginx(upstream="unix:/run/app.sock", keepalive=8))
    assert "server unix:/run/app.sock;" in pooled


def test_nginx_paths_all_inside_run_dir():
    config = _nginx(access_log=True)
    lines = _directives(config)
    assert f'pid "{RUN}/nginx.pid";' in lines
    assert f'access_log "{RUN}/nginx-access.log";' in lines
    assert "error_log stderr notice;" in lines
    for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]:
        assert f'{kind}_temp_path "{RUN}/nginx-temp/{kind}";' in lines
    # Every absolute path in the file is quoted and under the run folder.
    quoted = [part for part in config.split('"')[1::2] if part.startswith("/")]
    assert len(quoted) == 7
    assert all(p.startswith(f"{RUN}/") for p in quoted)


def test_nginx_user_directive_only_as_root():
    has_user = any(line.startswith("user ") for line in _directives(_nginx()))
    assert not has_user
    as_root = _directives(_nginx(user="root root"))
    assert "user root root;" in as_root
    assert (Local().root_user() is not None) == (os.geteuid() == 0)


@pytest.mark.parametrize(
    "upstream", ["127.0.0.1", "unix:relative.sock", "127.0.0.1:5001; evil", "http://x:1"]
)
def test_bad_upstream_is_refused(upstream):
    with pytest.raises(BadInput, match="upstream"):
        _nginx(upstream=upstream)


def test_nginx_file_limit_follows_the_hard_limit(monkeypatch):
    # Enough descriptors for 4096 connections where allowed, else what the hard limit gives.
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, resource.RLIM_INFINITY))
    lines = _directives(_nginx())
    assert "worker_rlimit_nofile 4160;" in lines
    assert "worker_connections 4096;" in lines
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, 1024))
    lines = _directives(_nginx())
    assert "worker_rlimit_nofile 1024;" in lines
    assert "worker_connections 960;" in lines


def test_run_dir_with_a_quote_is_refused():
    with pytest.raises(BadInput, match="path"):
        _nginx(run_dir=Path('/srv/a"b'))


def test_bad_keepalive_is_refused():
    with pytest.raises(BadInput, match="keepalive"):
        _nginx(keepalive=0)


# --- caddy config ------------------------------------------------------------------


def test_caddy_config():
    lines = _directives(caddy_config(listen_port=8082, upstream="127.0.0.1:5001", run_dir=RUN))
    for directive in [
        "admin off",
        "auto_https off",
        f'storage file_system "{RUN}/caddy-home/data"',
        "http://:8082 {",
        "bind 127.0.0.1",
        "reverse_proxy 127.0.0.1:5001",
    ]:
        assert directive in lines
    assert not any(line.startswith(("log", "output")) for line in lines)


def test_caddy_unix_socket_and_access_log():
    config = caddy_config(
        listen_port=8082, upstream="unix:/run/app.sock", run_dir=RUN, access_log=True
    )
    lines = _directives(config)
    assert "reverse_proxy unix//run/app.sock" in lines
    assert f'output file "{RUN}/caddy-access.log"' in lines


@pytest.mark.live
@pytest.mark.skipif(not have_tool("caddy"), reason="caddy not installed")
@pytest.mark.parametrize("access_log", [False, True])
def test_caddy_config_is_formatted(access_log, tmp_path):
    # An unformatted Caddyfile makes caddy log a warning on every start.
    config = caddy_config(
        listen_port=8082, upstream="127.0.0.1:5001", run_dir=RUN, access_log=access_log
    )
    path = tmp_path / "Caddyfile"
    path.write_text(config)
    formatted = subprocess.run(
        [find_tool("caddy"), "fmt", path], capture_output=True, text=True, check=True
    ).stdout
    assert formatted == config


# --- YARP config ------------------------------------------------------------------


def _yarp_settings(config: str) -> dict:
    """yarp.json's settings: the JSON below its // comment lines (which .NET's reader skips)."""
    return json.loads("\n".join(line for line in config.splitlines() if not line.startswith("//")))


def test_yarp_config_is_one_catch_all_route_to_the_app_with_yarps_defaults():
    config = yarp_config(listen_port=8083, upstream="127.0.0.1:5001")
    settings = _yarp_settings(config)
    assert settings["Kestrel"] == {"Endpoints": {"http": {"Url": "http://127.0.0.1:8083"}}}
    assert settings["Logging"] == {"LogLevel": {"Default": "Warning"}}
    (route,) = settings["ReverseProxy"]["Routes"].values()
    assert route["Match"] == {"Path": "{**catch-all}"} and "Transforms" not in route
    # No HttpClient or HttpRequest section: YARP's defaults, which the comments spell out.
    cluster = settings["ReverseProxy"]["Clusters"][route["ClusterId"]]
    assert cluster == {"Destinations": {"app": {"Address": "http://127.0.0.1:5001/"}}}
    assert "keeps upstream connections alive" in config and "HTTP/1.1" in config


def test_yarp_access_log_is_the_request_log_and_unix_sockets_are_refused():
    config = yarp_config(listen_port=8083, upstream="127.0.0.1:5001", access_log=True)
    levels = _yarp_settings(config)["Logging"]["LogLevel"]
    assert levels == {
        "Default": "Warning",
        "Microsoft.AspNetCore.Hosting.Diagnostics": "Information",
    }
    with pytest.raises(BadInput, match="TCP only"):
        yarp_config(listen_port=8083, upstream="unix:/run/app.sock")


@pytest.mark.skipif(not have_tool("nginx"), reason="nginx not installed")
@pytest.mark.live
def test_nginx_version():
    assert PROGRAMS["nginx"].version(Local()).startswith("nginx/1.")


@pytest.mark.skipif(not have_tool("caddy"), reason="caddy not installed")
@pytest.mark.live
def test_caddy_version():
    version = PROGRAMS["caddy"].version(Local())
    assert version.startswith("caddy/2.")
    assert " " not in version


@pytest.mark.skipif(not have_tool("YarpProxy"), reason="YarpProxy not built")
@pytest.mark.live
def test_yarp_version_is_the_one_the_project_pins():
    project = (ROOT / "testapp" / "yarp" / "YarpProxy.csproj").read_text()
    pinned = re.search(r'Include="Yarp\.ReverseProxy" Version="([^"]+)"', project).group(1)
    assert PROGRAMS["yarp"].version(Local()) == f"yarp/{pinned}"


# --- real proxies in front of the real app -----------------------------------------

needs_app = pytest.mark.skipif(not have_tool("TestApp"), reason="TestApp not built")
SCENARIOS = ["/text", "/json", "/xml", "/html"]


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("app")


@pytest.fixture(scope="module")
def app_tcp(app_dir):
    """The test app on a loopback port; yields its base URL."""
    url = f"http://127.0.0.1:{free_port()}"
    argv = [find_tool("TestApp"), "--urls", url]
    with ManagedProcess("TestApp", argv, app_dir / "app-tcp.log", ready=_answers(url)):
        yield url


@pytest.fixture(scope="module")
def app_uds(app_dir):
    """The test app on a Unix socket; yields the socket path."""
    sock = str(app_dir / "app.sock")
    argv = [find_tool("TestApp"), "--urls", f"http://unix:{sock}"]
    ready = _answers("http://localhost", unix_socket=sock)
    with ManagedProcess("TestApp-uds", argv, app_dir / "app-uds.log", ready=ready):
        yield sock


def _answers(url, **kwargs):
    return lambda: answers_ok(url + "/health", **kwargs)


def proxy_modes() -> list:
    """Every plain (not TLS) mode with a proxy in front of the app, one case each: every way
    each proxy of the declarations (programs.proxies) fronts the app, a new one included."""
    declared = {p.name: p for p in proxies()}
    return [m for m in MODES.values() if m.proxy in declared and not m.tls]


def _proxy_cases():
    return [
        pytest.param(m.id, marks=pytest.mark.skipif(
            not have_tool(PROGRAMS[m.proxy].tool), reason=f"{PROGRAMS[m.proxy].tool} not found"
        ), id=m.id)
        for m in proxy_modes()
    ]  # fmt: skip


def test_every_declared_proxy_is_tested_in_front_of_the_app_a_new_one_too(monkeypatch):
    assert {m.proxy for m in proxy_modes()} == {p.name for p in proxies()}
    assert not any(m.tls for m in proxy_modes())  # a TLS twin fronts the app as its plain mode

    class Haproxy(Nginx):  # a new proxy: its program and its mode, declared; no test edited
        name = tool = "haproxy"

    monkeypatch.setitem(PROGRAMS, "haproxy", Haproxy())
    monkeypatch.setitem(MODES, "haproxy", replace(get_mode("caddy"), id="haproxy", proxy="haproxy"))
    assert [p.id for p in _proxy_cases()][-1] == "haproxy"


@pytest.mark.live
@needs_app
@pytest.mark.parametrize("mode", _proxy_cases())
def test_proxy_in_front_of_app(mode, request, tmp_path):
    proxy, keepalive = get_mode(mode).proxy, get_mode(mode).keepalive
    if get_mode(mode).unix_socket:
        sock = request.getfixturevalue("app_uds")
        upstream = f"unix:{sock}"

        def direct(path):
            return get("http://localhost" + path, unix_socket=sock)
    else:
        app_url = request.getfixturevalue("app_tcp")
        upstream = app_url.removeprefix("http://")

        def direct(path):
            return get(app_url + path)

    run_dir = tmp_path / "run"
    port = free_port()
    managed = proxy_process(mode, listen_port=port, upstream=upstream, run_dir=run_dir)

    with managed:
        group = _process_group(managed.pid)
        assert len(group) >= (1 + os.cpu_count() if proxy == "nginx" else 1)
        base = f"http://127.0.0.1:{port}"
        for path in SCENARIOS:
            through, straight = get(base + path), direct(path)
            assert through.status == 200, path
            assert through.content_type == straight.content_type, path

        info = json.loads(get(base + "/__request-info").body)
        assert info["remoteIp"] == "127.0.0.1"
        assert info["host"] == f"127.0.0.1:{port}"
        assert info["scheme"] == "http"
        assert info["path"] == "/__request-info"
        assert info["protocol"] == "HTTP/1.1"  # to the app: YARP's HTTP/2 preference falls back
        # The proxy listens on loopback only.
        assert _listening(group) == [("127.0.0.1", port)]

        if not get_mode(mode).unix_socket:
            # Plain nginx closes each upstream connection; the pooled ones stay open, as do
            # those of a proxy that keeps connections alive its own way (no sized pool).
            idle = _upstream_connections(group, int(upstream.rpartition(":")[2]))
            assert (idle > 0) == (not PROGRAMS[proxy].sized_pool or keepalive is not None)

    # The master and its workers are gone, and nothing else of this run is left.
    assert not [pid for pid in group if psutil.pid_exists(pid)]
    # Access logs are off by default; all files are in the run folder (tmp_path).
    assert not list(run_dir.glob("*access*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    if proxy == "caddy":
        # What caddy would otherwise write under ~/.config and ~/.local/share.
        assert (run_dir / "caddy-home/config/caddy/autosave.json").is_file()


def _listening(pids: list[int]) -> list[tuple[str, int]]:
    """The addresses these processes listen on (TCP), each once."""
    return sorted(
        {
            (c.laddr.ip, c.laddr.port)
            for c in psutil.net_connections(kind="tcp")
            if c.pid in pids and c.status == psutil.CONN_LISTEN
        }
    )


def _upstream_connections(pids: list[int], app_port: int) -> int:
    """Established connections from these processes to the app's port."""
    return sum(
        1
        for c in psutil.net_connections(kind="tcp")
        if c.pid in pids
        and c.raddr
        and c.raddr.port == app_port
        and c.status == psutil.CONN_ESTABLISHED
    )


def _process_group(pid: int) -> list[int]:
    """The proxy's own process and every process in its group (nginx workers)."""
    pgid = os.getpgid(pid)
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid:
                members.append(proc.pid)
        except (ProcessLookupError, psutil.Error):
            pass
    return members


@pytest.mark.live
@needs_app
@pytest.mark.skipif(not have_tool("nginx"), reason="nginx not installed")
def test_nginx_access_log_on_request(app_tcp, tmp_path):
    port = free_port()
    upstream = app_tcp.removeprefix("http://")
    with proxy_process(
        "nginx", listen_port=port, upstream=upstream, run_dir=tmp_path, access_log=True
    ):
        get(f"http://127.0.0.1:{port}/text")
    assert "GET /text" in (tmp_path / "nginx-access.log").read_text()


@pytest.mark.live
@needs_app
@pytest.mark.skipif(not have_tool("caddy"), reason="caddy not installed")
def test_caddy_access_log_on_request(app_tcp, tmp_path):
    port = free_port()
    upstream = app_tcp.removeprefix("http://")
    with proxy_process(
        "caddy", listen_port=port, upstream=upstream, run_dir=tmp_path, access_log=True
    ):
        get(f"http://127.0.0.1:{port}/text")
    assert '"uri":"/text"' in (tmp_path / "caddy-access.log").read_text()


@pytest.mark.live
@needs_app
@pytest.mark.skipif(not have_tool("YarpProxy"), reason="YarpProxy not built")
def test_yarp_access_log_on_request(app_tcp, tmp_path):
    port = free_port()
    upstream = app_tcp.removeprefix("http://")
    with proxy_process(
        "yarp", listen_port=port, upstream=upstream, run_dir=tmp_path, access_log=True
    ):
        get(f"http://127.0.0.1:{port}/text")
    log = (tmp_path / "yarp.log").read_text()
    assert f"Request finished HTTP/1.1 GET http://127.0.0.1:{port}/text - 200" in log
    assert sorted(p.name for p in tmp_path.iterdir()) == ["yarp.json", "yarp.log"]
