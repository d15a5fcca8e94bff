"""The facts every layer reads about hosting modes and scenarios: data only.

One place for ids, display names, how a request travels (topology), colours, and
what each scenario requests and what a good response to it carries. The harness launches
and checks from these facts; the analysis orders, labels and colours by them. Adding a mode
or a scenario starts here; what a mode means to one article lives in that study's folder.
"""

import platform
import string
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from .errors import BadInput

# ------------------------------------------------------------------ scenarios


# The body of the `text` scenario: the Latin letters and the digits.
LETTERS_AND_DIGITS = string.ascii_lowercase + string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Body:
    """What a good response body of a scenario is: a rule (harness/measure/checks.py
    BODY_RULES applies it before every run) and, for `equals`, the exact body."""

    rule: str  # equals, nonempty, form, simple-class-json, simple-class-xml, page, test-and-stamp
    expected: str = ""


@dataclass(frozen=True)
class Scenario:
    id: str
    path: str  # what the load requests
    content_type: str
    stats_key: str  # the path the test app counts this endpoint under in /__stats
    label: str  # on figures and tables
    description: str
    body: Body  # what a good response carries


SCENARIOS: dict[str, Scenario] = {
    s.id: s
    for s in (
        Scenario("html", "/html", "text/html", "/html", "HTML",
                 "Razor view: 100 buttons, 10 selects of 10 options", Body("form")),
        Scenario("text", "/text", "text/plain", "/text", "text",
                 "plain text: the Latin letters and digits", Body("equals", LETTERS_AND_DIGITS)),
        Scenario("json", "/json", "application/json", "/json", "JSON",
                 "SimpleClass as JSON (Listing 2)", Body("simple-class-json")),
        Scenario("xml", "/xml", "application/xml", "/xml", "XML",
                 "SimpleClass through XmlSerializer (Listing 3)", Body("simple-class-xml")),
        Scenario("values", "/api/values/5", "text/plain", "/api/values", "api/values",
                 "Go vs .NET 2017: GET /api/values/{id}", Body("equals", "value")),
        Scenario("api-test", "/api/test", "text/plain", "/api/test", "api/test",
                 "Linux proxies 2021: 'Test {UTC now}', or its trace id (--api-test-body)",
                 Body("test-and-stamp")),
        Scenario("testapi", "/api/testapi", "application/json", "/api/testapi", "api/testapi",
                 "Web API self-host 2012: three Foo objects", Body("nonempty")),
        Scenario("plaintext", "/plaintext", "text/plain", "/plaintext", "plaintext",
                 "TechEmpower plaintext (middleware, no MVC)", Body("equals", "Hello, World!")),
        Scenario("hello-json", "/hello-json", "application/json", "/hello-json", "JSON (TE)",
                 "TechEmpower JSON (middleware, no MVC)", Body("nonempty")),
        Scenario("values-minimal", "/api/values-minimal/5", "text/plain", "/api/values-minimal",
                 "api/values (minimal API)",
                 "Go vs .NET 2017: the same endpoint as a minimal API, no MVC",
                 Body("equals", "value")),
        Scenario("templates", "/", "text/html", "/", "templates",
                 "Go vs .NET 2017: the home page at /, a static view in a layout, alike both sides",
                 Body("page")),
    )
}  # fmt: skip


def get_scenario(scenario_id: str) -> Scenario:
    try:
        return SCENARIOS[scenario_id]
    except KeyError:
        allowed = ", ".join(SCENARIOS)
        raise BadInput(f"unknown scenario {scenario_id!r}; allowed: {allowed}") from None


# ------------------------------------------------------------------ topology


@dataclass(frozen=True)
class Node:
    """A box on a topology drawing: a process, a kernel driver, the client."""

    title: str  # the process (or driver) name, bold
    detail: str  # what runs in it; may have line breaks
    kind: str = "process"  # client | process | kernel | external


CLIENT = Node("client", "load generator", "client")
APP = Node("TestApp", "Kestrel + app")
HTTP_SYS = Node("http.sys", "HTTP driver", "kernel")
NGINX = Node("nginx", "1 worker per core")
LOOPBACK = "TCP loopback"
TLS = "TLS (HTTPS)"  # a hop the client encrypts
# Every hop that opens a connection per request says so: that is the proxy's main cost.
NEW_CONNECTION = "new connection per request"

# ------------------------------------------------------------------ hosting modes


# Where a mode's programs can run (docs/hosts.md): this machine's loopback, a network
# namespace of it, or an ssh host.
TOPOLOGIES = ("local", "netns", "ssh")

# Where a mode terminates TLS (Mode.tls): in the server (Kestrel serving HTTPS itself) or at
# the proxy in front of it (HTTPS from the client, plain HTTP to the app); None: plain HTTP.
TLS_IN_SERVER, TLS_AT_PROXY = "server", "proxy"
TLS_PLACES = (TLS_IN_SERVER, TLS_AT_PROXY)


@dataclass(frozen=True)
class Mode:
    """A hosting mode, declared once: what the figures call it and what a request passes
    through, and what the harness starts for it: the `server` program, the `proxy` program in
    front of it if any (the names of hostbench/programs PROGRAMS, where each program is
    declared: its configs, command line, readiness and version probes, package, params keys
    and what it can front), how they connect, and where it can run. Local, netns and ssh
    launching read this one entry."""

    id: str
    label: str  # display name on figures and tables
    summary: str  # one line: what it is
    launch: str  # how the harness starts it: "app", "proxy" or "external"
    nodes: tuple[Node, ...]  # the processes a request passes through, client first
    hops: tuple[str, ...]  # hops[i] labels the arrow from nodes[i] to nodes[i + 1]
    color: str  # one colour per mode on every figure
    proxy: str | None = None  # the proxy program for launch == "proxy" (a PROGRAMS name)
    # The size of the proxy's upstream keep-alive pool, for a proxy that keeps one of a size
    # (Proxy.sized_pool: nginx); None: none.
    keepalive: int | None = None
    # The app listens on a Unix domain socket behind the proxy (one that can front one).
    unix_socket: bool = False
    server_args: tuple[str, ...] = ()  # extra options of the server program this mode needs
    server: str = "TestApp"  # the server program: TestApp, or goserver (testapp/go)
    topologies: tuple[str, ...] = TOPOLOGIES  # where it can run; a server you start: local
    serves: tuple[str, ...] = ()  # the scenarios it serves; () for TestApp: all of them
    windows_only: bool = False
    default_watch: tuple[str, ...] = ()  # external: process names sampled as "server"
    added: bool = False  # ours, not in the articles: labelled as an addition on figures
    tls: str | None = None  # where TLS terminates: TLS_IN_SERVER, TLS_AT_PROXY; None: plain
    tls_of: str | None = None  # the plain mode this one is on TLS (its twin: every hop alike)

    @property
    def scheme(self) -> str:
        """What the client speaks to it: https where it terminates TLS anywhere."""
        return "https" if self.tls else "http"


# An upstream keep-alive pool as the ASP.NET team's proxy benchmarks configure nginx
# (aspnet/Benchmarks docker/nginx/nginx-http.conf): idle connections per worker.
NGINX_KEEPALIVE = 1024

# The Linux mode that forwards a request as a Windows-only mode does (docs/hosting-modes.md,
# "How IIS out-of-process forwards"): the ASP.NET Core Module forwards over WinHTTP's pooled
# keep-alive HTTP/1.1 connections, as nginx with an upstream pool does. A study whose article
# measured IIS out-of-process takes this mode as its baseline; other proxies are sensitivity rows.
ANALOG_BY_MECHANISM = {"iis-outofprocess": "nginx-keepalive"}

# seaborn's "colorblind" palette, written out so the catalog stays data.
_COLORBLIND = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc",
               "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9"]  # fmt: skip
# The Go servers serve the 2017 article's two endpoints only.
GO_SCENARIOS = ("values", "templates")

MODES: dict[str, Mode] = {
    m.id: m
    for m in (
        Mode("kestrel", "Kestrel", "clients talk to Kestrel directly", "app",
             (CLIENT, APP), (LOOPBACK,), _COLORBLIND[0]),
        Mode("nginx", "Kestrel + nginx (TCP)",
             "nginx in front of Kestrel over loopback TCP, Microsoft's guide settings", "proxy",
             (CLIENT, NGINX, APP), (LOOPBACK, f"TCP loopback,\n{NEW_CONNECTION}"),
             _COLORBLIND[1], proxy="nginx"),
        Mode("nginx-keepalive", "Kestrel + nginx (TCP, keep-alive)",
             "nginx with an upstream keep-alive pool: the tuned reverse proxy", "proxy",
             (CLIENT, NGINX, APP), (LOOPBACK, "TCP loopback,\npooled keep-alive connections"),
             _COLORBLIND[2], proxy="nginx", keepalive=NGINX_KEEPALIVE, added=True),
        Mode("nginx-uds", "Kestrel + nginx (Unix socket)",
             "nginx to Kestrel over a Unix domain socket: the cheaper hop", "proxy",
             (CLIENT, NGINX, APP), (LOOPBACK, f"Unix domain socket,\n{NEW_CONNECTION}"),
             _COLORBLIND[3], proxy="nginx", unix_socket=True),
        Mode("caddy", "Kestrel + Caddy (TCP)",
             "Caddy's reverse_proxy with its defaults (keep-alive on)", "proxy",
             (CLIENT, Node("caddy", "reverse_proxy"), APP),
             (LOOPBACK, "TCP loopback,\nkeep-alive connections"), _COLORBLIND[4], proxy="caddy"),
        Mode("yarp", "Kestrel + YARP (TCP)",
             "YARP, .NET's reverse proxy library, on Kestrel with its defaults (keep-alive on)",
             "proxy", (CLIENT, Node("YarpProxy", "Kestrel + YARP"), APP),
             (LOOPBACK, "TCP loopback,\nkeep-alive connections"), "#7570b3", proxy="yarp",
             added=True),
        # TLS at the edge (docs/hosting-modes.md, "TLS"): each a plain mode's twin, the same
        # hops, the client speaking HTTPS (HTTP/1.1) to the front; the app behind a proxy
        # stays on plain HTTP, as in a deployment that terminates TLS at the proxy.
        Mode("kestrel-tls", "Kestrel (HTTPS)",
             "Kestrel serving HTTPS itself, a PEM certificate in its own options", "app",
             (CLIENT, Node("TestApp", "Kestrel + TLS + app")), (f"{TLS} over {LOOPBACK}",),
             "#08306b", tls=TLS_IN_SERVER, tls_of="kestrel", added=True),
        Mode("nginx-tls", "Kestrel + nginx (TLS at nginx)",
             "nginx terminating TLS in front of Kestrel, a new connection per request to it",
             "proxy", (CLIENT, Node("nginx", "TLS, 1 worker per core"), APP),
             (f"{TLS} over {LOOPBACK}", f"TCP loopback,\n{NEW_CONNECTION}"), "#7f2704",
             proxy="nginx", tls=TLS_AT_PROXY, tls_of="nginx", added=True),
        Mode("nginx-keepalive-tls", "Kestrel + nginx (TLS at nginx, keep-alive)",
             "nginx terminating TLS, pooled keep-alive connections to Kestrel", "proxy",
             (CLIENT, Node("nginx", "TLS, 1 worker per core"), APP),
             (f"{TLS} over {LOOPBACK}", "TCP loopback,\npooled keep-alive connections"),
             "#00441b", proxy="nginx", keepalive=NGINX_KEEPALIVE, tls=TLS_AT_PROXY,
             tls_of="nginx-keepalive", added=True),
        Mode("caddy-tls", "Kestrel + Caddy (TLS at Caddy)",
             "Caddy terminating TLS, reverse_proxy with its defaults (keep-alive on)", "proxy",
             (CLIENT, Node("caddy", "TLS + reverse_proxy"), APP),
             (f"{TLS} over {LOOPBACK}", "TCP loopback,\nkeep-alive connections"), "#7a0177",
             proxy="caddy", tls=TLS_AT_PROXY, tls_of="caddy", added=True),
        Mode("yarp-tls", "Kestrel + YARP (TLS at YARP)",
             "YARP's Kestrel terminating TLS, YARP's defaults to the app (keep-alive on)",
             "proxy", (CLIENT, Node("YarpProxy", "Kestrel + TLS + YARP"), APP),
             (f"{TLS} over {LOOPBACK}", "TCP loopback,\nkeep-alive connections"), "#3f007d",
             proxy="yarp", tls=TLS_AT_PROXY, tls_of="yarp", added=True),
        Mode("httpsys", "HTTP.sys", "HTTP.sys, the Windows kernel-mode HTTP driver", "app",
             (CLIENT, HTTP_SYS, Node("TestApp", "HTTP.sys server + app")),
             (LOOPBACK, "request queue"), _COLORBLIND[5], server_args=("--server", "httpsys"),
             windows_only=True, topologies=("local",)),
        Mode("iis-inprocess", "Kestrel + IIS (in-process)",
             "IIS with the app inside w3wp.exe (ASP.NET Core Module, in-process)", "external",
             (CLIENT, HTTP_SYS, Node("w3wp.exe", "IIS + ASP.NET Core Module\n+ app, one process")),
             (LOOPBACK, "request queue"), _COLORBLIND[6], windows_only=True,
             default_watch=("w3wp",), topologies=("local",)),
        Mode("iis-outofprocess", "Kestrel + IIS (out-of-process)",
             "IIS forwarding to Kestrel in a separate process (the paper's baseline)", "external",
             (CLIENT, HTTP_SYS, Node("w3wp.exe", "IIS + ASP.NET Core Module"),
              Node("dotnet", "Kestrel + app")),
             (LOOPBACK, "request queue", LOOPBACK), _COLORBLIND[7], windows_only=True,
             default_watch=("w3wp", "TestApp", "dotnet"), topologies=("local",)),
        Mode("external", "external server", "a server you started, at a URL you give",
             "external",
             (CLIENT, Node("your server", "started by you,\nany host:port", "external")),
             ("HTTP",), _COLORBLIND[9], topologies=("local",)),
        # The machinery checked against itself (docs/method.md, "Verdicts"): the same app as
        # `kestrel`, launched a second time beside it, so an A/A ratio should hold 100%.
        Mode("kestrel-twin", "Kestrel (second launch)",
             "the same Kestrel app launched a second time: the A/A check of the machinery",
             "app", (CLIENT, APP), (LOOPBACK,), "#1b1b1b", added=True),
        Mode("kestrel-mvccore", "Kestrel, AddMvcCore",
             "Kestrel with MVC registered by AddMvcCore (the 2017 article's .NET app)", "app",
             (CLIENT, Node("TestApp", "Kestrel + AddMvcCore")), (LOOPBACK,), "#17becf",
             server_args=("--mvc", "core"), added=True),
        # The same endpoint as a minimal API, in an app without MVC: a contender in the
        # values scenario's window (the values-minimal scenario asks kestrel's app for it).
        Mode("kestrel-minimal", "Kestrel, minimal API",
             "Kestrel with GET /api/values/{id} as a minimal API and no MVC registered", "app",
             (CLIENT, Node("TestApp", "Kestrel + minimal API")), (LOOPBACK,), "#bcbd22",
             server_args=("--mvc", "none"), serves=("values",), added=True),
        Mode("iris-mvc", "Iris (MVC controllers)", "Iris with controllers bound as in iris/mvc",
             "app", (CLIENT, Node("goserver", "Iris + controllers")), (LOOPBACK,), "#66a61e",
             server="goserver", server_args=("--framework", "iris-mvc"), serves=GO_SCENARIOS,
             added=True),
        Mode("iris", "Iris", "Go's Iris with plain handlers", "app",
             (CLIENT, Node("goserver", "Iris handlers")), (LOOPBACK,), "#a6761d",
             server="goserver", server_args=("--framework", "iris"), serves=GO_SCENARIOS,
             added=True),
        Mode("go-nethttp", "Go net/http", "Go's standard net/http with Go 1.22 route patterns",
             "app", (CLIENT, Node("goserver", "net/http ServeMux")), (LOOPBACK,), "#e7298a",
             server="goserver", server_args=("--framework", "nethttp"), serves=GO_SCENARIOS,
             added=True),
    )
}  # fmt: skip


def get_mode(mode_id: str) -> Mode:
    try:
        return MODES[mode_id]
    except KeyError:
        raise BadInput(f"unknown mode {mode_id!r}; allowed: {', '.join(MODES)}") from None


# Each plain mode's twin on TLS, read from the TLS modes' tls_of, declared once: tls_twin and
# plain_twin cross it each way, and everything that maps modes to and from TLS uses them.
TLS_TWINS: dict[str, str] = {m.tls_of: m.id for m in MODES.values() if m.tls_of}


def has_tls_twin(mode_id: str) -> bool:
    """Whether `mode_id` can run on TLS: a plain mode with a twin, or a TLS mode itself."""
    mode = MODES.get(str(mode_id))
    return mode is not None and (mode.tls is not None or mode.id in TLS_TWINS)


def tls_twin(mode_id: str) -> str:
    """The mode that is `mode_id` on TLS (itself, for a TLS mode); BadInput for a mode that
    cannot terminate TLS (no twin declared)."""
    mode = get_mode(mode_id)
    if not has_tls_twin(mode.id):
        raise BadInput(f"mode {mode.id!r} cannot terminate TLS (no TLS twin); modes that can: "
                       f"{', '.join(TLS_TWINS)}")  # fmt: skip
    return mode.id if mode.tls else TLS_TWINS[mode.id]


def plain_twin(mode_id: str) -> str:
    """The plain mode `mode_id` is on TLS (itself, for a plain mode or one unknown here)."""
    mode = MODES.get(str(mode_id))
    return (mode.tls_of or mode.id) if mode else str(mode_id)


def runnable_here() -> list[str]:
    """Mode ids that can run on this OS."""
    on_windows = platform.system() == "Windows"
    return [m.id for m in MODES.values() if on_windows or not m.windows_only]


def linux_modes() -> list[str]:
    """The modes that launch everything themselves on Linux (no user-started server)."""
    return [m.id for m in MODES.values() if not m.windows_only and m.launch != "external"]


class ModesIn(Collection):
    """The ids of the modes that can run in `topology`, read from MODES when asked (so a mode
    declared later is in it): params.SSH_MODES, the docs and the tests' lists derive from it."""

    def __init__(self, topology: str):
        self.topology = topology

    def __iter__(self) -> Iterator[str]:
        return (m.id for m in MODES.values() if self.topology in m.topologies)

    def __contains__(self, mode_id) -> bool:
        return any(m == mode_id for m in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"ModesIn({self.topology!r}): {', '.join(self)}"


def where_modes_run() -> str:
    """docs/hosting-modes.md's table of what each mode starts and where it can run, from the
    declarations (`python -m hostbench docs` keeps it fresh)."""
    lines = ["| mode | what the harness starts | topologies |", "|---|---|---|"]
    for m in MODES.values():
        starts = "`" + " ".join([m.server, *m.server_args]) + "`"
        if m.launch == "external":
            starts = "a server you started"
        elif m.proxy:
            hop = "Unix socket" if m.unix_socket else "upstream pool" if m.keepalive else "TCP"
            starts += f" behind `{m.proxy}` ({hop})"
        starts += " (Windows)" if m.windows_only else ""
        starts += {TLS_IN_SERVER: ", TLS in the app", TLS_AT_PROXY: ", TLS at the proxy"}.get(
            m.tls, ""
        )
        where = ", ".join(f"`{t}`" for t in m.topologies)
        lines.append(f"| `{m.id}` | {starts} | {where} |")
    return "\n".join(lines) + "\n"


def check_serves(mode: Mode, scenario: Scenario) -> None:
    """BadInput unless `mode`'s server has the scenario's endpoint."""
    if mode.serves and scenario.id not in mode.serves:
        raise BadInput(
            f"mode {mode.id!r} does not serve scenario {scenario.id!r}; "
            f"it serves {', '.join(mode.serves)}"
        )


def mode_label(mode_id: str) -> str:
    mode = MODES.get(str(mode_id))
    return mode.label if mode else str(mode_id)


def mode_color(mode_id, default: str = "0.5") -> str:
    """The mode's colour on every figure; `default` (a grey) for what is not a mode."""
    mode = MODES.get(str(mode_id))
    return mode.color if mode else default


def scenario_label(scenario_id: str) -> str:
    scenario = SCENARIOS.get(str(scenario_id))
    return scenario.label if scenario else str(scenario_id)
