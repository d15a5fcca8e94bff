"""The Go peers of the Go-vs-.NET study (build/bin/goserver), started for real on loopback.

Each framework (Iris controllers, plain Iris, net/http) answers /api/values/{id} and
/templates, counts both in /__stats like TestApp, and answers bad input like TestApp
(exit 2 with the usage, exit 3 naming a busy port). The Go /templates page carries the
same data as TestApp's Razor /templates (in fact the same bytes), and TestApp's
`--mvc core` and minimal-API endpoint answer the same "value".
"""

import json
import signal
import socket
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import get_ok, one_line, run_cli, start_server
from hostbench.harness import web
from hostbench.paths import BIN, TESTAPP

pytestmark = pytest.mark.live  # every test here starts real processes

GOSERVER = BIN / "goserver"
FRAMEWORKS = ["iris-mvc", "iris", "nethttp"]

# The page's data (testapp/go/cmd/goserver/page.go, TemplatePage.Menu in Payloads.cs).
MENU_TITLE = "Menu"
MENU = [
    (1, "Espresso", "2.20"),
    (2, "Cappuccino", "3.10"),
    (3, "Flat white", "3.40"),
    (4, "Green tea", "2.50"),
    (5, "Hot chocolate", "3.00"),
    (6, "Croissant", "2.75"),
    (7, "Pain au chocolat", "2.95"),
    (8, "Bagel & cream cheese", "4.50"),
    (9, "Lemon tart", "5.25"),
    (10, "Apple pie", "4.10"),
    (11, "Cheesecake", "4.80"),
    (12, "Fish & chips", "9.90"),
    (13, "Soup of the day", "5.60"),
    (14, "Caesar salad", "7.30"),
    (15, "Club sandwich", "6.90"),
    (16, "Sparkling water", "1.80"),
]


@pytest.fixture(scope="module", params=FRAMEWORKS)
def server(request, tmp_path_factory):
    """Each framework on a free loopback port; yields its base URL."""
    url = f"http://127.0.0.1:{web.free_port()}"
    tmp = tmp_path_factory.mktemp(request.param)
    args = ["--framework", request.param, "--urls", url]
    with start_server(request.param, GOSERVER, args, tmp, url):
        yield url


@pytest.fixture(scope="module")
def razor_app(tmp_path_factory):
    """TestApp with its defaults (--mvc full); yields its base URL."""
    url = f"http://127.0.0.1:{web.free_port()}"
    tmp = tmp_path_factory.mktemp("testapp")
    with start_server("testapp", TESTAPP, ["--urls", url], tmp, url):
        yield url


class _MenuPage(HTMLParser):
    """The /templates page's title, heading, message and (id, name, price) items."""

    def __init__(self):
        super().__init__()
        self.title = self.h1 = self.message = ""
        self.items: list[tuple[int, str, str]] = []
        self._in: str | None = None  # the element whose text is being read
        self._item: dict = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        cls = attrs.get("class")
        if tag in ("title", "h1"):
            self._in = tag
        elif tag == "p" and cls == "message":
            self._in = "message"
        elif tag == "li" and cls == "item":
            self._item = {"id": int(attrs["data-id"]), "name": "", "price": ""}
        elif tag == "span" and cls in ("name", "price"):
            self._in = cls

    def handle_endtag(self, tag):
        if tag == "li" and self._item:
            self.items.append((self._item["id"], self._item["name"], self._item["price"]))
            self._item = {}
        elif tag in ("title", "h1", "p", "span"):
            self._in = None

    def handle_data(self, data):
        if self._in in ("name", "price"):
            self._item[self._in] += data
        elif self._in == "title":
            self.title += data
        elif self._in == "h1":
            self.h1 += data
        elif self._in == "message":
            self.message += data


def menu_page(html: str) -> _MenuPage:
    page = _MenuPage()
    page.feed(html)
    page.close()
    return page


# --- what each framework serves -------------------------------------------------------------


def test_api_values_returns_value(server):
    assert get_ok(server + "/api/values/7", "text/plain").text == "value"
    assert get_ok(server + "/api/values/abc", "text/plain").text == "value"  # id unused


def test_templates_renders_the_menu_through_the_layout(server):
    page = menu_page(get_ok(server + "/templates", "text/html").text)
    assert page.title == f"{MENU_TITLE} - hostbench"  # from the layout
    assert page.h1 == MENU_TITLE
    assert page.message.startswith("The menu of the day")
    assert page.items == MENU


def test_health_and_unknown_path(server):
    assert get_ok(server + "/health", "text/plain").text == "ok"
    assert web.get(server + "/nope").status == 404
    assert web.get(server + "/api/values/1/2").status == 404


def stats(base: str) -> dict:
    return json.loads(get_ok(base + "/__stats", "application/json").body)


def test_stats_count_what_was_sent_and_reset(server):
    reset = web.request("POST", server + "/__stats/reset")
    assert reset.status == 200
    assert json.loads(reset.body) == {"total": 0, "endpoints": {"/api/values": 0, "/templates": 0}}
    for path in ["/api/values/1", "/api/values/2", "/api/values/3", "/templates", "/templates"]:
        assert web.get(server + path).status == 200
    # Not counted: the harness's own endpoints, and unknown paths.
    web.get(server + "/health")
    web.get(server + "/nope")
    assert stats(server) == {"total": 5, "endpoints": {"/api/values": 3, "/templates": 2}}
    web.request("POST", server + "/__stats/reset")
    assert stats(server) == {"total": 0, "endpoints": {"/api/values": 0, "/templates": 0}}


# --- the same page on both sides ------------------------------------------------------------


def test_razor_templates_carry_the_same_data_as_go(server, razor_app):
    go = get_ok(server + "/templates", "text/html").text
    razor = get_ok(razor_app + "/templates", "text/html").text
    go_page, razor_page = menu_page(go), menu_page(razor)
    assert razor_page.items == go_page.items == MENU
    assert (razor_page.title, razor_page.h1, razor_page.message) == (
        go_page.title,
        go_page.h1,
        go_page.message,
    )
    assert razor == go  # the same markup too: equal bytes on the wire


def test_testapp_counts_templates(razor_app):
    web.request("POST", razor_app + "/__stats/reset")
    assert web.get(razor_app + "/templates").status == 200
    assert stats(razor_app)["endpoints"]["/templates"] == 1


def test_testapp_mvc_core_and_minimal_api_answer_value(tmp_path):
    url = f"http://127.0.0.1:{web.free_port()}"
    with start_server("testapp-core", TESTAPP, ["--urls", url, "--mvc", "core"], tmp_path, url):
        assert get_ok(url + "/api/values/7", "text/plain").text == "value"
        assert get_ok(url + "/api/values-minimal/7", "text/plain").text == "value"
        # core still serves the views (AddRazorViewEngine): the same page as full.
        assert menu_page(get_ok(url + "/templates", "text/html").text).items == MENU
        got = stats(url)["endpoints"]
        assert (got["/api/values"], got["/api/values-minimal"], got["/templates"]) == (1, 1, 1)


# --- process behaviour ----------------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_port_taken_exits_3_naming_the_port(framework):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        r = run_cli(GOSERVER, "--framework", framework, "--urls", url, timeout=10)
    assert r.returncode == 3, r
    line = one_line(r.stderr)
    assert line == f"goserver: cannot listen on {url}: port {port} is already in use"
    assert r.stdout == ""


@pytest.mark.parametrize(
    "args, says",
    [
        ([], "--framework is required"),
        (["--framework", "gin"], "bad --framework 'gin'"),
        (["--framework=iris", "--port", "5000"], "unknown option '--port'"),
        (["--framework", "iris", "stray"], "unexpected argument 'stray'"),
        (
            ["--framework", "nethttp", "--urls", "ftp://127.0.0.1:1"],
            "bad --urls 'ftp://127.0.0.1:1'",
        ),
        (["--framework", "nethttp", "--urls", "http://127.0.0.1"], "bad --urls 'http://127.0.0.1'"),
        (["--framework", "iris", "--urls"], "'--urls' needs a value"),
    ],
)
def test_bad_command_line_exits_2_with_usage(args, says):
    r = run_cli(GOSERVER, *args, timeout=10)
    assert r.returncode == 2, r
    line = one_line(r.stderr)
    assert says in line
    assert "usage: goserver --framework iris-mvc|iris|nethttp" in line
    assert r.stdout == ""


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_sigterm_stops_promptly_with_exit_0_and_logs_nothing(framework, tmp_path):
    url = f"http://127.0.0.1:{web.free_port()}"
    proc = start_server(
        framework, GOSERVER, ["--framework", framework, "--urls", url], tmp_path, url
    )
    with proc:
        for path in ["/api/values/1", "/templates", "/nope"]:
            web.get(url + path)
        t0 = time.monotonic()
        proc.popen.send_signal(signal.SIGTERM)
        code = proc.popen.wait(timeout=5)
        elapsed = time.monotonic() - t0
    assert code == 0
    assert elapsed < 2, elapsed
    assert (tmp_path / f"{framework}.log").read_text() == ""  # no banner, no request log


@pytest.mark.parametrize("framework", ["iris", "nethttp"])
def test_unix_socket(framework, tmp_path):
    sock = str(tmp_path / "go.sock")
    args = ["--framework", framework, "--urls", f"http://unix:{sock}"]
    with start_server(framework, GOSERVER, args, tmp_path, "http://localhost", unix_socket=sock):
        resp = web.get("http://localhost/api/values/1", unix_socket=sock)
        assert (resp.status, resp.text) == (200, "value")
    assert not Path(sock).exists()  # removed on a clean shutdown
