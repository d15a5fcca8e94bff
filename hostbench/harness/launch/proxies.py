"""The reverse proxies' configs (nginx, caddy, YARP), generated for each launch; programs.py
starts the proxies from them.

Everything a proxy writes (config, pid file, logs, temp files, caddy's data
dirs) lives in the run folder; nothing under /etc, /var or the user's home.
Proxies listen on 127.0.0.1 only (or, with two hosts on one machine, on the server
namespace's own address: harness/launch/netns.py) and run as the current user.

Upstream addresses are written as "127.0.0.1:5001" (TCP) or
"unix:/path/app.sock" (Unix domain socket), the nginx spelling.
"""

import json
import resource
from pathlib import Path, PurePath

from ...errors import BadInput

# Per worker; each proxied request holds two (client side and upstream side).
# nginx's default of 512 runs out at a few hundred load connections.
NGINX_WORKER_CONNECTIONS = 4096
# File descriptors a worker needs besides its connections (listen socket, logs, temp files).
NGINX_SPARE_FILES = 64

# The nginx release from which an explicit upstream block keeps connections alive by
# default (nginx/nginx PR #1080); a proxy_pass straight to an address still does not.
NGINX_KEEPALIVE_DEFAULT_SINCE = "1.29.7"

NGINX_TEMP_KINDS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def _q(path: Path) -> str:
    """A path as a double-quoted token (both nginx and caddy accept these), so spaces work."""
    text = str(path)
    if any(c in text for c in '"\\\n$'):
        raise BadInput(f"path {text!r}: quotes, backslashes, '$' and newlines are not allowed")
    return f'"{text}"'


def _check_upstream(upstream: str):
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


def _nginx_open_files() -> int:
    """Open-file limit for the workers: enough for NGINX_WORKER_CONNECTIONS, within the hard limit.

    Without worker_rlimit_nofile nginx warns under a 1024 soft limit; a value above
    the hard limit fails for non-root users.
    """
    want = NGINX_WORKER_CONNECTIONS + NGINX_SPARE_FILES
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return want if hard == resource.RLIM_INFINITY else min(want, hard)


def nginx_config(
    *,
    listen_port: int,
    upstream: str,
    keepalive: int | None,
    workers: int,
    run_dir: Path,
    access_log: bool = False,
    listen_host: str = "127.0.0.1",
    user: str | None = None,
) -> str:
    """nginx.conf text: one server on listen_host:listen_port proxying everything to upstream.

    keepalive=None: a new upstream connection per request (nginx's behaviour before
    1.29.7, and the Microsoft guide's config); keepalive=N: an upstream block that
    keeps up to N idle connections per worker and reuses them.
    Temp paths are run_dir/nginx-temp/* (programs.Nginx makes run_dir/nginx-temp).
    user: "user group" when the master runs as root (places' root_user): a root master
    switches its workers to `nobody`, who could neither use the temp dirs in the run folder
    nor connect to the app's Unix socket, so they keep the harness's user instead. Non-root
    nginx ignores (and warns about) the directive, so it is written only for root.
    """
    _check_upstream(upstream)
    run_dir = Path(run_dir).resolve()
    temp = run_dir / "nginx-temp"
    temp_paths = "".join(f"    {kind}_temp_path {_q(temp / kind)};\n" for kind in NGINX_TEMP_KINDS)
    log_line = (
        f"access_log {_q(run_dir / 'nginx-access.log')};" if access_log else "access_log off;"
    )

    if keepalive is None:
        # No upstream block: proxy_pass to an address is an implicit upstream, which
        # never caches connections, also in nginx >= 1.29.7 where explicit upstream
        # blocks keep connections alive by default (nginx/nginx PR #1080).
        target = f"http://{upstream}:" if upstream.startswith("unix:") else f"http://{upstream}"
        upstream_block = ""
        # As in Microsoft's "Host ASP.NET Core on Linux with Nginx"; nginx still
        # closes the upstream connection after each response without a pool.
        connection = "keep-alive"
    else:
        if keepalive < 1:
            raise BadInput(f"keepalive {keepalive}: must be >= 1, or None for no pool")
        target = "http://app"
        upstream_block = f"""
    upstream app {{
        server {upstream};
        # Before nginx 1.29.7 upstream keepalive is off unless this is set.
        keepalive {keepalive};
    }}
"""
        # An empty Connection header is what lets nginx reuse the upstream
        # connection (nginx docs, upstream keepalive).
        connection = '""'

    open_files = _nginx_open_files()
    user_line = f"user {user};\n" if user else ""
    return f"""# Generated by hostbench.proxies; runs in the foreground under hostbench's control.
{user_line}daemon off;
master_process on;
worker_processes {workers};
worker_rlimit_nofile {open_files};
pid {_q(run_dir / "nginx.pid")};
# stderr is the process log, run_dir/nginx.log.
error_log stderr notice;

events {{
    worker_connections {open_files - NGINX_SPARE_FILES};
}}

http {{
    {log_line}
{temp_paths}{upstream_block}
    server {{
        listen {listen_host}:{listen_port};
        server_name _;

        location / {{
            proxy_pass         {target};
            proxy_http_version 1.1;
            proxy_set_header   Upgrade $http_upgrade;
            proxy_set_header   Connection {connection};
            # The guide has $host, which drops the port; $http_host passes the
            # Host header as the client sent it (host:port), as caddy does.
            proxy_set_header   Host $http_host;
            proxy_cache_bypass $http_upgrade;
            proxy_set_header   X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header   X-Forwarded-Proto $scheme;
        }}
    }}
}}
"""


def _caddy_upstream(upstream: str) -> str:
    # Caddy spells a Unix socket upstream "unix//path".
    if upstream.startswith("unix:"):
        return "unix/" + upstream[len("unix:") :]
    return upstream


def caddy_config(
    *,
    listen_port: int,
    upstream: str,
    run_dir: Path,
    access_log: bool = False,
    listen_host: str = "127.0.0.1",
) -> str:
    """Caddyfile text: plain HTTP on listen_host:listen_port, reverse_proxy with its defaults.

    Caddy's defaults already keep upstream connections alive and set
    X-Forwarded-For/-Proto/-Host (passing Host through unchanged). GOMAXPROCS is
    left to Go's default, one thread per core, as nginx gets one worker per core.
    """
    _check_upstream(upstream)
    run_dir = Path(run_dir).resolve()
    # Tabs and layout as `caddy fmt` writes them, or caddy warns on every start.
    log_block = (
        f"\n\tlog {{\n\t\toutput file {_q(run_dir / 'caddy-access.log')}\n\t}}\n"
        if access_log
        else ""
    )
    data = _q(run_dir / "caddy-home" / "data")
    return (
        "# Generated by hostbench.proxies.\n"
        "{\n"
        "\t# No admin endpoint: the proxy binds nothing but the site port.\n"
        "\tadmin off\n"
        "\tauto_https off\n"
        f"\tstorage file_system {data}\n"
        "}\n"
        "\n"
        f"http://:{listen_port} {{\n"
        f"\tbind {listen_host}\n"
        f"\treverse_proxy {_caddy_upstream(upstream)}\n"
        f"{log_block}"
        "}\n"
    )


# Written above yarp.json's settings (.NET's JSON configuration reader skips // comments):
# what the proxy does that the file does not spell out, since it is YARP's defaults.
YARP_NOTES = """\
// Generated by hostbench.proxies; the whole configuration of build/yarp/YarpProxy (testapp/yarp).
// One catch-all route to one cluster whose one destination is the test app over loopback TCP.
// HttpClient: YARP's defaults (no "HttpClient" section), the handler the ASP.NET team's YARP
// benchmark also forwards with (aspnet/Benchmarks, scenarios/proxy.benchmarks.yml, job yarp):
// a pooled SocketsHttpHandler that keeps upstream connections alive and reuses them (as caddy
// does), no limit on connections per server, no proxy, redirects, decompression or cookies,
// 15 s connect timeout. HttpRequest: YARP's defaults, HTTP/2 preferred "or lower", which over
// plain http:// is HTTP/1.1; 100 s activity timeout. Transforms: YARP's defaults (sets
// X-Forwarded-For/-Proto/-Host/-Prefix), as nginx and caddy here send X-Forwarded headers too
// (the benchmark app switches them off). Logging at Warning: nothing is written per request.
"""


def yarp_config(
    *, listen_port: int, upstream: str, access_log: bool = False, listen_host: str = "127.0.0.1"
) -> str:
    """yarp.json text: Kestrel on listen_host:listen_port, YARP forwarding everything to upstream.

    access_log=True logs each request (ASP.NET Core's "Request starting/finished" lines, at
    Information) to the proxy's console log, yarp.log in the run folder.
    """
    _check_upstream(upstream)
    if upstream.startswith("unix:"):
        raise BadInput(f"upstream {upstream!r}: the yarp mode forwards over TCP only (host:port)")
    levels = {"Default": "Warning"}
    if access_log:
        levels["Microsoft.AspNetCore.Hosting.Diagnostics"] = "Information"
    settings = {
        "Logging": {"LogLevel": levels},
        "Kestrel": {"Endpoints": {"http": {"Url": f"http://{listen_host}:{listen_port}"}}},
        "ReverseProxy": {
            "Routes": {"all": {"ClusterId": "testapp", "Match": {"Path": "{**catch-all}"}}},
            "Clusters": {"testapp": {"Destinations": {"app": {"Address": f"http://{upstream}/"}}}},
        },
    }
    return YARP_NOTES + json.dumps(settings, indent=2) + "\n"


def caddy_home_env(home: PurePath) -> dict[str, str]:
    """Caddy keeps certificates, autosave.json and locks under these: `home` points them into
    the run folder, so a run never touches the user's home (here or on a remote host)."""
    return {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
