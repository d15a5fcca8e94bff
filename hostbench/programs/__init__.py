"""The programs a hosting mode starts, each declared once, one class each: the test app and the
Go servers (servers.py), and the reverse proxies nginx, caddy and YARP (a module each), on
what every program is (program.py).

A mode (hostbench/catalog.py) names its programs: `server` always, `proxy` when a request
passes through one. A program's declaration is all that is known of it: what it runs and
what provides it (its Debian package, or `make setup`'s build, and how an ssh host gets it),
its configs, command line, readiness and version probes, the params keys it owns and, a
proxy, what it can front. Every list of programs derives from PROGRAMS, as every list of load
tools from load.TOOLS: the params' keys (params/keys.py declared), the harness's launch, tool
lookup and environment record, the reports' proxy versions, and the Debian packages the
install script, the Ansible playbook and the Dockerfile install (deploy/packages.yml, written
by hostbench/packages.py; tests/test_programs.py). Adding a program is its class, in a module
here, and an instance of it in PROGRAMS.

Nothing here imports the harness (the params and the analysis read these declarations); the
harness launches a program through a place it hands in, on this machine, in a namespace or
on an ssh host alike.
"""

from ..catalog import TLS_AT_PROXY, TLS_IN_SERVER, TLS_PLACES, Mode
from ..errors import BadInput
from .caddy import Caddy
from .nginx import Nginx
from .program import Certificate, LaunchSettings, Program, Proxy, Setting, Setup
from .servers import GoServer, TestApp
from .yarp import Yarp

__all__ = [
    "PROGRAMS",
    "Certificate",
    "LaunchSettings",
    "Program",
    "Proxy",
    "Setting",
    "Setup",
    "get_program",
    "programs_of",
    "proxies",
]

# Every program a mode can name, by that name; the proxies in the order reports list them.
PROGRAMS: dict[str, Program] = {
    p.name: p for p in (TestApp(), GoServer(), Nginx(), Caddy(), Yarp())
}


def get_program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise BadInput(f"unknown program {name!r}; allowed: {', '.join(PROGRAMS)}") from None


def programs_of(mode: Mode) -> list[Program]:
    """The programs `mode` starts, the app first; BadInput when it asks its proxy for a hop the
    proxy cannot make (a Unix socket, a pool's size)."""
    names = [mode.server] + ([mode.proxy] if mode.proxy else [])
    programs = [get_program(n) for n in names]
    proxy = programs[-1] if mode.proxy else None
    if proxy and not (isinstance(proxy, Proxy) and proxy.fronts(mode)):
        hop = "over a Unix socket" if mode.unix_socket else "with an upstream pool"
        raise BadInput(f"mode {mode.id!r}: {mode.proxy} cannot front the app {hop}")
    check_tls(mode, programs[-1] if mode.tls == TLS_AT_PROXY else programs[0])
    return programs


def check_tls(mode: Mode, terminating: Program) -> None:
    """BadInput unless `mode` asks TLS of a program that can terminate it: its server
    (TLS_IN_SERVER) or its proxy (TLS_AT_PROXY), which must be there and serve HTTPS."""
    if mode.tls is None:
        return
    if mode.tls not in TLS_PLACES:
        raise BadInput(f"mode {mode.id!r}: tls {mode.tls!r}; allowed: {', '.join(TLS_PLACES)} "
                       "or none")  # fmt: skip
    if mode.tls == TLS_AT_PROXY and not mode.proxy:
        raise BadInput(f"mode {mode.id!r} asks for TLS at the proxy but has none; "
                       f"tls {TLS_IN_SERVER!r} terminates it in the server")  # fmt: skip
    if not terminating.terminates_tls:
        can = [p.name for p in PROGRAMS.values() if p.terminates_tls]
        raise BadInput(f"mode {mode.id!r}: {terminating.name} cannot terminate TLS; "
                       f"programs that can: {', '.join(can)}")  # fmt: skip


def proxies() -> list[Proxy]:
    """The reverse proxies, in PROGRAMS' order (nginx, caddy, yarp): every list of proxy
    programs reads them here."""
    return [p for p in PROGRAMS.values() if isinstance(p, Proxy)]
