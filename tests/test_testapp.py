"""The published test app (build/testapp/TestApp), started for real on loopback.

Checks each endpoint's status, content type and body shape against the paper's
section 2.2 (100 buttons and 10 select lists of 10 options; Listing 2's JSON;
Listing 3's XML), the request counter, forwarded headers, Unix-socket listening,
and the command line's answers to bad input.
"""

import json
import re
import socket
import uuid
import xml.etree.ElementTree as ET
from datetime import datetime
from html.parser import HTMLParser

import pytest

from conftest import get_ok, one_line, run_cli, start_server
from hostbench.catalog import get_scenario
from hostbench.harness.launch import web
from hostbench.harness.measure import checks
from hostbench.paths import TESTAPP

pytestmark = pytest.mark.live  # every test here starts real processes

LETTERS_AND_DIGITS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """One app on a free loopback port for the whole module; yields its base URL."""
    port = web.free_port()
    url = f"http://127.0.0.1:{port}"
    tmp = tmp_path_factory.mktemp("testapp")
    with start_server("testapp", TESTAPP, ["--urls", url], tmp, url):
        yield url


# --- the paper's four scenarios -------------------------------------------------------------


class _FormCounter(HTMLParser):
    def __init__(self):
        super().__init__()
        self.buttons = 0
        self.selects: list[int] = []  # options per select list
        self._in_select = False

    def handle_starttag(self, tag, attrs):
        if tag == "button":
            self.buttons += 1
        elif tag == "select":
            self.selects.append(0)
            self._in_select = True
        elif tag == "option":
            assert self._in_select, "an <option> outside a <select>"
            self.selects[-1] += 1

    def handle_endtag(self, tag):
        if tag == "select":
            self._in_select = False


def test_html_has_100_buttons_and_10_selects_of_10_options(app):
    resp = get_ok(app + "/html", "text/html")
    parser = _FormCounter()
    parser.feed(resp.text)
    parser.close()
    assert parser.buttons == 100
    assert parser.selects == [10] * 10


def test_text_is_latin_letters_then_digits(app):
    resp = get_ok(app + "/text", "text/plain")
    assert resp.text == LETTERS_AND_DIGITS


def check_simple_class_json(doc: dict):
    assert list(doc) == ["id", "stringValue", "intValue", "listOfInts"]  # Listing 2, camelCase
    assert str(uuid.UUID(doc["id"])) == doc["id"]
    assert doc["stringValue"] == doc["id"][:8]
    assert type(doc["intValue"]) is int
    assert len(doc["listOfInts"]) == 10
    assert all(type(v) is int for v in doc["listOfInts"])


def test_json_matches_listing_2(app):
    resp = get_ok(app + "/json", "application/json")
    check_simple_class_json(json.loads(resp.body))


def test_xml_matches_listing_3(app):
    resp = get_ok(app + "/xml", "application/xml")
    # Listing 3 declares both namespaces on the root, xsi first.
    assert re.match(
        rf'<SimpleClass xmlns:xsi="{XSI}" xmlns:xsd="{XSD}">', resp.text.lstrip("\ufeff")
    ), resp.text[:200]
    root = ET.fromstring(resp.body)
    assert root.tag == "SimpleClass"
    assert [child.tag for child in root] == ["Id", "StringValue", "IntValue", "ListOfInts"]
    values = {child.tag: child for child in root}
    ident = values["Id"].text
    assert str(uuid.UUID(ident)) == ident
    assert values["StringValue"].text == ident[:8]
    int(values["IntValue"].text)
    ints = list(values["ListOfInts"])
    assert [i.tag for i in ints] == ["int"] * 10
    for i in ints:
        int(i.text)


def test_random_values_differ_between_requests(app):
    first, second = (json.loads(get_ok(app + "/json", "application/json").body) for _ in "12")
    assert first["id"] != second["id"]
    assert (first["intValue"], first["listOfInts"]) != (second["intValue"], second["listOfInts"])
    xml_ids = {ET.fromstring(web.get(app + "/xml").body).findtext("Id") for _ in "12"}
    assert len(xml_ids) == 2


# --- the companion articles' endpoints ------------------------------------------------------


def test_api_values_returns_value(app):
    assert get_ok(app + "/api/values/5", "text/plain").text == "value"


def test_api_values_minimal_returns_value(app):
    assert get_ok(app + "/api/values-minimal/5", "text/plain").text == "value"
    assert web.get(app + "/api/values-minimal/five").status == 400  # {id} is an int


def test_without_mvc_the_values_endpoint_is_the_minimal_api_and_nothing_of_mvc_is_there(tmp_path):
    # --mvc none: the kestrel-minimal mode's app, answering the values scenario's own path.
    port = web.free_port()
    url = f"http://127.0.0.1:{port}"
    with start_server("testapp", TESTAPP, ["--urls", url, "--mvc", "none"], tmp_path, url):
        assert get_ok(url + "/api/values/5", "text/plain").text == "value"
        assert web.get(url + "/api/values/five").status == 400  # the minimal API's {id}: int
        for path in ("/html", "/json", "/api/testapi", "/"):
            assert web.get(url + path).status == 404, path  # MVC's endpoints are not there
        assert stats(url)["endpoints"]["/api/values"] == 2  # counted as the values scenario


def test_templates_is_a_razor_page_with_a_layout(app):
    html = get_ok(app + "/", "text/html").text
    assert "<title>Home Page - hostbench</title>" in html  # the layout's, from the view's data
    assert html.count('<div class="item') == 4  # tests/test_goservers.py checks the rest


def test_api_test_returns_test_and_utc_time_as_dotnets_default_text(app):
    # The 2021 article's `$"Test {DateTime.UtcNow}"`: .NET's default DateTime text.
    response = get_ok(app + "/api/test", "text/plain")
    assert re.fullmatch(r"Test \d\d/\d\d/\d{4} \d\d:\d\d:\d\d", response.text)
    datetime.strptime(response.text.removeprefix("Test "), checks.DOTNET_DEFAULT_DATETIME)
    checks.validate(get_scenario("api-test"), response)  # what every run checks


def test_api_test_returns_the_requests_trace_id_with_api_test_body_trace_id(tmp_path):
    # The 2021 article's postscript: `Activity.Current?.Id ?? HttpContext.TraceIdentifier`. With
    # logging on (the study's Information), ASP.NET Core starts an Activity per request: its W3C
    # id; with none, Kestrel's connection id and request number.
    url = f"http://127.0.0.1:{web.free_port()}"
    shapes = {"Information": r"00-[0-9a-f]{32}-[0-9a-f]{16}-00", "None": r"[0-9A-Z]{13}:0000000\d"}
    for level, shape in shapes.items():
        argv = ["--urls", url, "--api-test-body", "trace-id", "--log-level", level]
        with start_server("testapp", TESTAPP, argv, tmp_path, url):
            first, second = (get_ok(url + "/api/test", "text/plain") for _ in range(2))
        assert re.fullmatch(shape, first.text.removeprefix("Test ")), (level, first.text)
        assert first.text != second.text  # one a request
        checks.validate(get_scenario("api-test"), first)  # what every run checks


def test_api_testapi_returns_three_foos(app):
    foos = json.loads(get_ok(app + "/api/testapi", "application/json").body)
    assert [(f["id"], f["name"]) for f in foos] == [(1, "Foo 1"), (2, "Foo 2"), (3, "Foo 3")]
    assert all(set(f) == {"id", "name", "createdOn"} for f in foos)


def test_techempower_plaintext_and_json(app):
    assert get_ok(app + "/plaintext", "text/plain").text == "Hello, World!"
    assert json.loads(get_ok(app + "/hello-json", "application/json").body) == {
        "message": "Hello, World!"
    }


def test_health(app):
    assert get_ok(app + "/health", "text/plain").text == "ok"


def test_unknown_path_is_404(app):
    assert web.get(app + "/nope").status == 404


# --- harness endpoints ----------------------------------------------------------------------


def stats(app: str) -> dict:
    return json.loads(get_ok(app + "/__stats", "application/json").body)


def test_stats_count_what_was_sent_and_reset(app):
    reset = web.request("POST", app + "/__stats/reset")
    assert reset.status == 200
    assert stats(app)["total"] == 0
    sent = {
        "/html": 1,
        "/text": 2,
        "/json": 3,
        "/xml": 1,
        "/api/values/1": 2,
        "/api/test": 1,
        "/api/testapi": 1,
        "/plaintext": 4,
        "/hello-json": 2,
        "/": 1,
        "/api/values-minimal/3": 2,
    }
    for path, n in sent.items():
        for _ in range(n):
            assert web.get(app + path).status == 200
    # Not counted: the harness's own endpoints, and unknown paths.
    web.get(app + "/health")
    web.get(app + "/__request-info")
    web.get(app + "/nope")
    got = stats(app)
    expected = {path.removesuffix("/1").removesuffix("/3"): n for path, n in sent.items()}
    assert got["endpoints"] == expected
    assert got["total"] == sum(sent.values())
    web.request("POST", app + "/__stats/reset")
    after = stats(app)
    # The JIT's count (the warm-up waits for it to settle) is not a request count: not reset.
    assert after.pop("jit_methods") >= got["jit_methods"] > 0
    assert after == {"total": 0, "endpoints": dict.fromkeys(expected, 0)}


def test_request_info_direct(app):
    info = json.loads(get_ok(app + "/__request-info", "application/json").body)
    port = app.rsplit(":", 1)[1]
    assert info == {
        "scheme": "http",
        "host": f"127.0.0.1:{port}",
        "remoteIp": "127.0.0.1",
        "path": "/__request-info",
        "protocol": "HTTP/1.1",
    }


def test_request_info_sees_forwarded_headers_from_loopback_proxy(app):
    resp = web.get(
        app + "/__request-info",
        headers={
            "Host": "127.0.0.1",
            "X-Forwarded-For": "203.0.113.7",
            "X-Forwarded-Proto": "https",
            "X-Forwarded-Host": "example.org:8443",
        },
    )
    assert resp.status == 200
    info = json.loads(resp.body)
    assert (info["scheme"], info["host"], info["remoteIp"]) == (
        "https",
        "example.org:8443",
        "203.0.113.7",
    )


# --- hosting options ------------------------------------------------------------------------


def test_unix_socket_with_socket_transport_options(tmp_path):
    sock = str(tmp_path / "app.sock")
    url = "http://localhost"
    args = ["--urls", f"http://unix:{sock}", "--io-queue-count", "1"]
    args += ["--inline-scheduling=true", "--wait-for-data", "false", "--log-level", "Information"]
    with start_server("testapp", TESTAPP, args, tmp_path, url, unix_socket=sock) as proc:
        resp = web.get(url + "/json", unix_socket=sock)
        assert resp.status == 200
        check_simple_class_json(json.loads(resp.body))
        info = json.loads(web.get(url + "/__request-info", unix_socket=sock).body)
        assert info["remoteIp"] is None  # no peer address on a Unix socket
        proc.stop()
    log = (tmp_path / "testapp.log").read_text()
    assert f"Now listening on: http://unix:{sock}" in log  # Information mimics the template


def test_stale_unix_socket_file_is_replaced(tmp_path):
    sock = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock))  # bound, never listening: what a killed server leaves behind
    s.close()
    args = ["--urls", f"http://unix:{sock}"]
    with start_server("testapp", TESTAPP, args, tmp_path, "http://x", unix_socket=str(sock)):
        assert web.get("http://x/text", unix_socket=str(sock)).text == LETTERS_AND_DIGITS


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (["--port", "5000"], "unknown option '--port'"),
        (["--verbose=1"], "unknown option '--verbose'"),
        (["stray"], "unexpected argument 'stray'"),
        (["--server", "iis"], "bad --server 'iis'"),
        (["--io-queue-count", "-1"], "bad --io-queue-count '-1'"),
        (["--inline-scheduling", "yes"], "bad --inline-scheduling 'yes'"),
        (["--wait-for-data=maybe"], "bad --wait-for-data 'maybe'"),
        (["--log-level", "Loud"], "bad --log-level 'Loud'"),
        (["--urls", "ftp://127.0.0.1:1"], "bad --urls 'ftp://127.0.0.1:1'"),
        (["--urls"], "'--urls' needs a value"),
        (["--mvc", "lite"], "bad --mvc 'lite'"),
        (["--api-test-body", "uuid"], "bad --api-test-body 'uuid'"),
    ],
)
def test_bad_command_line_exits_2_with_usage(args, says):
    r = run_cli(TESTAPP, *args)
    assert r.returncode == 2, r
    line = one_line(r.stderr)
    assert says in line
    assert "usage: TestApp" in line
    assert r.stdout == ""


def test_port_taken_exits_nonzero_naming_the_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run_cli(TESTAPP, "--urls", f"http://127.0.0.1:{port}")
    assert r.returncode != 0
    line = one_line(r.stderr)
    assert f"port {port} is already in use" in line
    assert "   at " not in r.stderr + r.stdout  # no stack trace


def test_httpsys_on_linux_exits_nonzero_with_one_line():
    r = run_cli(TESTAPP, "--server", "httpsys")
    assert r.returncode != 0
    line = one_line(r.stderr)
    assert "HTTP.sys runs only on Windows" in line
    assert r.stdout == ""
