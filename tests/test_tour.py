"""The C# tour (notebooks/00-testapp-tour.ipynb) as a file-based app, with real dotnet.

The generated program compiles and runs; it prints the four payloads in the shapes of the
paper (section 2.2, Listings 2 and 3), the HTML and text byte-for-byte what the running app
serves; papermill's C# parameter form compiles in it; app_work.csv has every scenario; and
`make reproduce`'s hook runs it and says how. Small iteration counts: the timings are only
checked for being positive and ordered.
"""

import csv
import json
import re
import shutil
import uuid
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hostbench import reproduce
from hostbench.errors import BadInput
from hostbench.harness import httpclient, tour
from hostbench.harness.processes import ManagedProcess
from hostbench.paths import DATA, TESTAPP

LETTERS_AND_DIGITS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"
# runDir relative to the program's folder, with a space: a string in papermill's form.
SMALL = {
    "iterations": 200,
    "warmupIterations": 50,
    "warmupSeconds": 0.0,
    "rounds": 3,
    "runDir": "tour out",
}
PAYLOAD = re.compile(
    r"^--- (?P<id>\w+): (?P<type>[^,]+), (?P<bytes>\d+) bytes ---\n"
    r"(?P<body>.*?)\n--- end (?P=id) ---$",
    re.M | re.S,
)


@pytest.fixture(scope="module")
def program_path(tmp_path_factory) -> Path:
    # One path for the module: the same text reuses dotnet's build.
    return tmp_path_factory.mktemp("tour-program") / "tour.cs"


@pytest.fixture(scope="module")
def tour_run(tmp_path_factory, program_path):
    """The file-based tour, its run folder holding the example run's results.csv."""
    out = tmp_path_factory.mktemp("tour")
    (out / "tour out").mkdir()
    shutil.copy(DATA / "runs" / "example-paper" / "results.csv", out / "tour out")
    return tour.run_file_based(out, SMALL, program_path, timeout_s=300)


@pytest.fixture(scope="module")
def payloads(tour_run) -> dict[str, dict]:
    found = {m["id"]: m.groupdict() for m in PAYLOAD.finditer(tour_run.output)}
    assert list(found) == ["html", "text", "json", "xml"], tour_run.output[-2000:]
    for p in found.values():
        assert len(p["body"].encode()) == int(p["bytes"]), p["id"]
    return found


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    if not TESTAPP.exists():
        pytest.fail(f"{TESTAPP} is missing: run `make setup`")
    url = f"http://127.0.0.1:{httpclient.free_port()}"
    log = tmp_path_factory.mktemp("testapp") / "testapp.log"
    ready = lambda: httpclient.answers_ok(url + "/health")  # noqa: E731
    with ManagedProcess("testapp", [TESTAPP, "--urls", url], log, ready=ready):
        yield url


# --- the generated program -----------------------------------------------------------------


@pytest.mark.live
def test_program_starts_with_directives_then_usings_then_cells(tour_run, program_path):
    lines = program_path.read_text().splitlines()
    assert lines[0] == f"#:project {tour.PROJECT.resolve()}"
    assert lines[1] == "#:property PublishAot=false"
    first_code = next(i for i, line in enumerate(lines) if line.startswith("// ---- code cell"))
    usings = [i for i, line in enumerate(lines) if line.startswith("using ")]
    assert usings and max(usings) < first_code
    assert "using TestApp;" in lines
    assert not [line for line in lines if line.lstrip().startswith(("#r ", "#!"))]


@pytest.mark.live
def test_papermill_parameters_are_injected_verbatim_and_compile(tour_run, program_path):
    from papermill.translators import translate_parameters

    injected = translate_parameters(".net-csharp", "C#", SMALL)
    assert injected == tour.csharp_parameters(SMALL)
    assert 'var runDir = "tour out";' in injected
    assert "var warmupSeconds = 0.0;" in injected
    # The program that compiled and ran carries papermill's lines as they are, and the
    # parameters cell's defaults for those names are commented out (no double declaration).
    text = program_path.read_text()
    assert injected in text
    assert re.search(r"^// var iterations = \d+;.*\(overridden below\)$", text, re.M)
    assert "TestApp is an optimized (Release) build" in tour_run.output


@pytest.mark.live
def test_non_ascii_string_parameters_are_refused(tmp_path):
    # papermill would write "\xf3a", which C# reads as U+0F3A.
    with pytest.raises(BadInput, match="must be ASCII"):
        tour.generate_program(parameters={"runDir": "óa"}, out=tmp_path / "t.cs")


@pytest.mark.live
def test_unknown_parameter_is_refused(tmp_path):
    with pytest.raises(BadInput, match=r"unknown tour parameter\(s\) iteratons; allowed: .*rounds"):
        tour.generate_program(parameters={"iteratons": 5}, out=tmp_path / "t.cs")


@pytest.mark.live
def test_notebook_only_lines_are_dropped_or_translated():
    assert tour._translate_line('#r "../build/testapp/TestApp.dll"') is None
    assert tour._translate_line("#!time") is None
    assert tour._translate_line('#r "nuget: BenchmarkDotNet, 0.14.0"') == (
        "#:package BenchmarkDotNet@0.14.0"
    )
    with pytest.raises(BadInput, match="only TestApp.dll"):
        tour._translate_line('#r "Other.dll"')
    assert tour._translate_line("var x = 1;") == "var x = 1;"


# --- the payloads --------------------------------------------------------------------------


class _FormCounter(HTMLParser):
    def __init__(self):
        super().__init__()
        self.buttons = 0
        self.selects: list[int] = []

    def handle_starttag(self, tag, attrs):
        if tag == "button":
            self.buttons += 1
        elif tag == "select":
            self.selects.append(0)
        elif tag == "option":
            self.selects[-1] += 1


def test_html_has_100_buttons_and_10_selects_of_10_options(payloads):
    counter = _FormCounter()
    counter.feed(payloads["html"]["body"])
    assert counter.buttons == 100
    assert counter.selects == [10] * 10
    assert payloads["html"]["type"] == "text/html; charset=utf-8"


def test_text_is_latin_letters_then_digits(payloads):
    assert payloads["text"]["body"] == LETTERS_AND_DIGITS


def test_json_matches_listing_2(payloads):
    doc = json.loads(payloads["json"]["body"])
    assert list(doc) == ["id", "stringValue", "intValue", "listOfInts"]
    assert str(uuid.UUID(doc["id"])) == doc["id"]
    assert doc["stringValue"] == doc["id"][:8]
    assert type(doc["intValue"]) is int
    assert len(doc["listOfInts"]) == 10 and all(type(v) is int for v in doc["listOfInts"])
    assert payloads["json"]["type"] == "application/json; charset=utf-8"


def test_xml_matches_listing_3(payloads):
    body = payloads["xml"]["body"]
    assert re.match(rf'\ufeff?<SimpleClass xmlns:xsi="{XSI}" xmlns:xsd="{XSD}">', body), body
    root = ET.fromstring(body.lstrip("\ufeff"))
    assert root.tag == "SimpleClass"
    assert [c.tag for c in root] == ["Id", "StringValue", "IntValue", "ListOfInts"]
    assert str(uuid.UUID(root.findtext("Id"))) == root.findtext("Id")
    int(root.findtext("IntValue"))
    ints = list(root.find("ListOfInts"))
    assert [i.tag for i in ints] == ["int"] * 10 and all(int(i.text) is not None for i in ints)
    assert payloads["xml"]["type"] == "application/xml; charset=utf-8"


@pytest.mark.live
def test_payloads_are_what_the_running_app_serves(payloads, app_url):
    for scenario in ("html", "text", "json", "xml"):
        resp = httpclient.get(f"{app_url}/{scenario}")
        assert resp.status == 200
        assert resp.content_type == payloads[scenario]["type"], scenario
    # Deterministic bodies: byte for byte.
    assert httpclient.get(app_url + "/html").body == payloads["html"]["body"].encode()
    assert httpclient.get(app_url + "/text").body == payloads["text"]["body"].encode()


# --- the measurements ----------------------------------------------------------------------


@pytest.mark.live
def test_app_work_csv_has_every_scenario_with_positive_costs(tour_run):
    assert tour_run.csv.name == "app_work.csv" and tour_run.csv.parent.name == "tour out"
    with tour_run.csv.open() as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == ["scenario", "ns_per_payload", "bytes_allocated", "method"]
        rows = {r["scenario"]: r for r in reader}
    assert list(rows) == ["html", "text", "json", "xml"]
    for row in rows.values():
        assert float(row["ns_per_payload"]) > 0
        assert int(row["bytes_allocated"]) > 0
        assert row["method"].startswith("Stopwatch median of 3 rounds x 200")
    assert float(rows["html"]["ns_per_payload"]) > float(rows["text"]["ns_per_payload"])
    assert int(rows["html"]["bytes_allocated"]) > int(rows["text"]["bytes_allocated"])


@pytest.mark.live
def test_every_payload_completed_synchronously_and_the_split_is_printed(tour_run):
    table = re.findall(r"^(html|text|json|xml) .* (\d+)$", tour_run.output, re.M)
    assert [(s, int(waited)) for s, waited in table] == [
        ("html", 0),
        ("text", 0),
        ("json", 0),
        ("xml", 0),
    ]
    # results.csv of the example run was in the folder: the share of the app's CPU per request.
    assert re.search(r"^kestrel +html +\d+ +[\d.]+ +[\d.]+ +[\d.]+ ?%$", tour_run.output, re.M)
    assert (tour_run.csv.parent.parent / tour.OUTPUT_NAME).read_text() == tour_run.output


@pytest.mark.live
def test_reproduce_hook_runs_the_tour_and_says_how(tmp_path, program_path, tour_run, capsys):
    run = tour.run_in_batch(
        tmp_path, reproduce._execute, reproduce._kernel_available, SMALL, program_path
    )
    line = capsys.readouterr().out.strip().splitlines()[-1]
    if run.runner == "dotnet run":  # no .NET Interactive kernel here
        assert line.startswith("00-testapp-tour.ipynb: ran with dotnet run (file-based app")
    else:
        assert line.startswith("00-testapp-tour.ipynb: ran with papermill on the .net-csharp")
    assert run.csv == tmp_path / "tour out" / "app_work.csv" and run.csv.exists()
