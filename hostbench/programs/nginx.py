"""nginx, declared once: the Debian package it comes from, the params keys it owns (its worker
count, the upstream pool's size), what it can front (loopback TCP, a Unix socket, with or
without an upstream keep-alive pool), its config (nginx.conf, written for each launch into
the run folder), command line and version probe.

The config follows Microsoft's "Host ASP.NET Core on Linux with Nginx"; a mode with a pool
(nginx-keepalive) adds an upstream block that keeps connections to the app alive.
"""

import resource
from pathlib import Path

from ..errors import BadInput
from ..params.rules import Key, Rule
from .program import Certificate, Proxy, Setting, check_upstream, front, quoted

# Per worker; each proxied request holds two (client side and upstream side).
# nginx's default of 512 runs out at a few hundred load connections.
NGINX_WORKER_CONNECTIONS = 4096
# File descriptors a worker needs besides its connections (listen socket, logs, temp files).
NGINX_SPARE_FILES = 64

# The nginx release from which an explicit upstream block keeps connections alive by
# default (nginx/nginx PR #1080); a proxy_pass straight to an address still does not.
NGINX_KEEPALIVE_DEFAULT_SINCE = "1.29.7"

NGINX_TEMP_KINDS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")

# A TLS mode's protocols: nginx's default since 1.23.4 (Debian 12's 1.22 would leave TLS 1.3
# out and offer 1.0 and 1.1), as Caddy and Kestrel offer them.
NGINX_SSL_PROTOCOLS = "TLSv1.2 TLSv1.3"

# Its params keys, by the names params.json has recorded them since they were added.
POOL_KEY, WORKERS_KEY = "nginx_keepalive_pool", "nginx_workers"


def _open_files() -> int:
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
    tls: Certificate | None = None,
) -> str:
    """nginx.conf text: one server on listen_host:listen_port proxying everything to upstream.

    keepalive=None: a new upstream connection per request (nginx's behaviour before
    1.29.7, and the Microsoft guide's config); keepalive=N: an upstream block that
    keeps up to N idle connections per worker and reuses them.
    Temp paths are run_dir/nginx-temp/* (Nginx.dirs makes run_dir/nginx-temp).
    user: "user group" when the master runs as root (places' root_user): a root master
    switches its workers to `nobody`, who could neither use the temp dirs in the run folder
    nor connect to the app's Unix socket, so they keep the harness's user instead. Non-root
    nginx ignores (and warns about) the directive, so it is written only for root.
    tls: terminate TLS with this certificate on the listen port (nginx's TLS defaults,
    HTTP/1.1: no http2), and forward plain HTTP; None: plain HTTP.
    """
    check_upstream(upstream)
    run_dir = Path(run_dir).resolve()
    temp = run_dir / "nginx-temp"
    temp_paths = "".join(
        f"    {kind}_temp_path {quoted(temp / kind)};\n" for kind in NGINX_TEMP_KINDS
    )
    log_line = (
        f"access_log {quoted(run_dir / 'nginx-access.log')};" if access_log else "access_log off;"
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

    listen = f"{listen_host}:{listen_port}"
    tls_lines = ""
    if tls is not None:
        listen += " ssl"
        tls_lines = (f"        ssl_certificate     {quoted(Path(tls.cert))};\n"
                     f"        ssl_certificate_key {quoted(Path(tls.key))};\n"
                     f"        ssl_protocols       {NGINX_SSL_PROTOCOLS};\n")  # fmt: skip
    open_files = _open_files()
    user_line = f"user {user};\n" if user else ""
    return f"""# Generated by hostbench.proxies; runs in the foreground under hostbench's control.
{user_line}daemon off;
master_process on;
worker_processes {workers};
worker_rlimit_nofile {open_files};
pid {quoted(run_dir / "nginx.pid")};
# stderr is the process log, run_dir/nginx.log.
error_log stderr notice;

events {{
    worker_connections {open_files - NGINX_SPARE_FILES};
}}

http {{
    {log_line}
{temp_paths}{upstream_block}
    server {{
        listen {listen};
        server_name _;
{tls_lines}
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


class Nginx(Proxy):
    name = tool = "nginx"
    debian_package = "nginx"
    log = "nginx.log"
    unix_socket = True
    sized_pool = True
    terminates_tls = True
    settings = (
        Setting(
            Key(POOL_KEY, None, "connections",
                "nginx's upstream keep-alive pool in the modes that have one (nginx-keepalive): "
                "idle connections kept per worker; null: the catalog's NGINX_KEEPALIVE.",
                Rule("int", minimum=1), null="", also="with an nginx mode that has a pool"),
            shapes="an nginx mode with an upstream pool (nginx-keepalive)",
            pooled_only=True,
        ),
        Setting(
            Key(WORKERS_KEY, None, "processes",
                "nginx's worker processes; null: one per core nginx may run on.",
                Rule("int", minimum=1), null="", also="with an nginx mode"),
            shapes="nginx",
        ),
    )  # fmt: skip

    def configs(self, setup, folder, place):
        mode, own = setup.mode, setup.opts.program_settings
        text = nginx_config(
            **front(setup),
            # The pool's size, where the mode has a pool (a mode without one keeps none).
            keepalive=mode.keepalive and (own.get(POOL_KEY) or mode.keepalive),
            workers=own.get(WORKERS_KEY) or place.cores(setup.cpus),  # one per core it may use
            run_dir=Path(folder),
            user=place.root_user(),
        )
        return {"nginx.conf": text}

    def dirs(self, folder):
        return [str(folder / "nginx-temp")]

    def argv(self, exe, setup, folder):
        # -p and -e keep nginx away from its compiled-in prefix and /var/log/nginx.
        return [exe, "-p", str(folder), "-e", "stderr", "-c", str(folder / "nginx.conf")]

    def version(self, place):
        """E.g. "nginx/1.22.1" (nginx -v prints "nginx version: nginx/1.22.1" on stderr)."""
        out = place.output(place.tool(self.tool), "-v")
        return out.rpartition("version:")[2].split()[0]
