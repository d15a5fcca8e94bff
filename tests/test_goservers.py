"""The Go peers of the Go-vs-.NET study (build/bin/goserver), started for real on loopback.

Each framework (Iris controllers, plain Iris, net/http) answers /api/values/{id} and the
templates page at /, counts both in /__stats like TestApp, and answers bad input like
TestApp (exit 2 with the usage, exit 3 naming a busy port). The Go page shows the same
content as TestApp's Razor / (in fact the same bytes), and TestApp's `--mvc core` and
minimal-API endpoint answer the same "value".
"""

import json
import signal
import socket
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import get_ok, one_line, run_cli, start_server
from hostbench.harness.launch import web
from hostbench.paths import BIN, TESTAPP

pytestmark = pytest.mark.live  # every test here starts real processes

GOSERVER = BIN / "goserver"
FRAMEWORKS = ["iris-mvc", "iris", "nethttp"]

# The templates page (testapp/go/cmd/goserver/views, testapp/dotnet/Views/Templates): the
# article's MVC template home page in shape, a carousel of four slides and four columns.
HOME_TITLE = "Home Page - hostbench"
HOME_COLUMNS = ["This page shows", "How to", "Overview", "Run & Deploy"]
HOME_SLIDES = 4
HOME_LINKS = 3 + 6 + 7 + 3  # the columns' list items, as the article's page


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


class _HomePage(HTMLParser):
    """What a reader of the templates page sees: its title, the slides' captions, the
    columns' headings and list items, the navigation and the footer, in order."""

    def __init__(self):
        super().__init__()
        self.title = ""
        self.captions: list[str] = []
        self.headings: list[str] = []
        self.items: list[str] = []
        self.nav: list[str] = []
        self.footer = ""
        self._stack: list[tuple[str, str]] = []  # open (tag, class) pairs

    def handle_starttag(self, tag, attrs):
        if tag not in ("img", "meta", "link", "hr", "br"):
            self._stack.append((tag, dict(attrs).get("class") or ""))
        if tag == "p" and any(cls == "carousel-caption" for _, cls in self._stack):
            self.captions.append("")
        elif tag == "h2":
            self.headings.append("")
        elif tag == "li" and any("col-md-3" in cls for _, cls in self._stack):
            self.items.append("")
        elif tag == "li" and any("navbar-nav" in cls for _, cls in self._stack):
            self.nav.append("")

    def handle_endtag(self, tag):
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        tags = [t for t, _ in self._stack]
        classes = " ".join(cls for _, cls in self._stack)
        if tags and tags[-1] == "title":
            self.title += data
        elif "footer" in tags:
            self.footer += data.strip()
        elif "carousel-caption" in classes and "p" in tags:
            self.captions[-1] += " ".join(data.split()) + " "
        elif "h2" in tags:
            self.headings[-1] += data
        elif "col-md-3" in classes and "li" in tags:
            self.items[-1] += data
        elif "navbar-nav" in classes and "li" in tags:
            self.nav[-1] += data


def home_page(html: str) -> _HomePage:
    page = _HomePage()
    page.feed(html)
    page.close()
    return page


def assert_home_page(html: str) -> _HomePage:
    page = home_page(html)
    assert page.title == HOME_TITLE  # the layout's, from the page's data
    assert len(page.captions) == HOME_SLIDES and all(c.strip() for c in page.captions)
    assert page.headings == HOME_COLUMNS
    assert len(page.items) == HOME_LINKS and all(page.items)
    assert page.nav == ["Home", "About", "Contact"] and page.footer
    return page


# --- what each framework serves -------------------------------------------------------------


def test_api_values_returns_value(server):
    assert get_ok(server + "/api/values/7", "text/plain").text == "value"
    assert get_ok(server + "/api/values/abc", "text/plain").text == "value"  # id unused


def test_the_home_page_renders_through_the_layout(server):
    assert_home_page(get_ok(server + "/", "text/html").text)


def test_health_and_unknown_path(server):
    assert get_ok(server + "/health", "text/plain").text == "ok"
    assert web.get(server + "/nope").status == 404
    assert web.get(server + "/api/values/1/2").status == 404


def stats(base: str) -> dict:
    return json.loads(get_ok(base + "/__stats", "application/json").body)


def test_stats_count_what_was_sent_and_reset(server):
    reset = web.request("POST", server + "/__stats/reset")
    assert reset.status == 200
    assert json.loads(reset.body) == {"total": 0, "endpoints": {"/api/values": 0, "/": 0}}
    for path in ["/api/values/1", "/api/values/2", "/api/values/3", "/", "/"]:
        assert web.get(server + path).status == 200
    # Not counted: the harness's own endpoints, and unknown paths.
    web.get(server + "/health")
    web.get(server + "/nope")
    assert stats(server) == {"total": 5, "endpoints": {"/api/values": 3, "/": 2}}
    web.request("POST", server + "/__stats/reset")
    assert stats(server) == {"total": 0, "endpoints": {"/api/values": 0, "/": 0}}


# --- the same page on both sides ------------------------------------------------------------


def test_razor_and_go_serve_the_same_home_page(server, razor_app):
    go = get_ok(server + "/", "text/html").text
    razor = get_ok(razor_app + "/", "text/html").text
    go_page, razor_page = assert_home_page(go), assert_home_page(razor)
    seen = ("title", "captions", "headings", "items", "nav", "footer")
    assert [getattr(razor_page, k) for k in seen] == [getattr(go_page, k) for k in seen]
    assert razor == go  # the same markup too: equal bytes on the wire


def test_testapp_counts_the_home_page(razor_app):
    web.request("POST", razor_app + "/__stats/reset")
    assert web.get(razor_app + "/").status == 200
    assert stats(razor_app)["endpoints"]["/"] == 1


def test_testapp_mvc_core_and_minimal_api_answer_value(tmp_path):
    url = f"http://127.0.0.1:{web.free_port()}"
    with start_server("testapp-core", TESTAPP, ["--urls", url, "--mvc", "core"], tmp_path, url):
        assert get_ok(url + "/api/values/7", "text/plain").text == "value"
        assert get_ok(url + "/api/values-minimal/7", "text/plain").text == "value"
        # core still serves the views (AddRazorViewEngine): the same page as full.
        assert_home_page(get_ok(url + "/", "text/html").text)
        got = stats(url)["endpoints"]
        assert (got["/api/values"], got["/api/values-minimal"], got["/"]) == (1, 1, 1)


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
        for path in ["/api/values/1", "/", "/nope"]:
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
