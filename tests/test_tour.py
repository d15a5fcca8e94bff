"""The C# tour (notebooks/00-testapp-tour.ipynb) on the .NET Interactive kernel, for real.

papermill executes the notebook on the `.net-csharp` kernel that `make setup` installs, with
injected parameters, the way `make reproduce` does (reproduce.run_tour): it prints the four
payloads in the shapes of the paper (section 2.2, Listings 2 and 3), the HTML and text
byte-for-byte what the running app serves; app_work.csv has every scenario; no kernel
process is left; and the terminal gets one line per notebook. Small iteration counts: the
timings are only checked for being positive and ordered.
"""

import csv
import json
import re
import shutil
import sys
import uuid
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import psutil
import pytest

from hostbench import reproduce
from hostbench.errors import BadInput
from hostbench.harness import dotnet_kernel, tour
from hostbench.harness.launch import web
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.paths import DATA, TESTAPP

LETTERS_AND_DIGITS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"
# runDir relative to the run folder, with a space: a string in papermill's C# form.
SMALL = {
    "iterations": 200,
    "warmupIterations": 50,
    "warmupSeconds": 0.0,
    "rounds": 3,
    "runDir": "tour out",
}
TINY = {"iterations": 20, "warmupIterations": 1, "warmupSeconds": 0.0, "rounds": 1}
PAYLOAD = re.compile(
    r"^--- (?P<id>\w+): (?P<type>[^,]+), (?P<bytes>\d+) bytes ---\n"
    r"(?P<body>.*?)\n--- end (?P=id) ---$",
    re.M | re.S,
)


def _kernels_left() -> list[psutil.Process]:
    """This test process's descendants that are .NET Interactive kernels."""
    left = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("Microsoft.DotNet.Interactive" in arg for arg in child.cmdline()):
                left.append(child)
        except psutil.NoSuchProcess:
            pass
    return left


@pytest.fixture(scope="module")
def tour_run(tmp_path_factory):
    """The tour as `make reproduce` runs it, its runDir holding the example run's results.csv."""
    if not reproduce.kernel_available(dotnet_kernel.KERNEL):
        pytest.fail(f"no {dotnet_kernel.KERNEL} kernel: run `make setup`")
    out = tmp_path_factory.mktemp("tour")
    (out / "tour out").mkdir()
    shutil.copy(DATA / "runs" / "example-paper" / "results.csv", out / "tour out")
    reproduce.prepare_environment()
    return tour.run(out, reproduce.execute_notebook, reproduce.kernel_available, SMALL)


@pytest.fixture(scope="module")
def output(tour_run) -> str:
    """What the notebook printed, all its code cells' stdout in order."""
    nb = nbformat.read(tour_run.notebook, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert [o for o in outputs if o.output_type == "error"] == []
    return "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")


@pytest.fixture(scope="module")
def payloads(output) -> dict[str, dict]:
    found = {m["id"]: m.groupdict() for m in PAYLOAD.finditer(output)}
    assert list(found) == ["html", "text", "json", "xml"], output[-2000:]
    for p in found.values():
        assert len(p["body"].encode()) == int(p["bytes"]), p["id"]
    return found


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    if not TESTAPP.exists():
        pytest.fail(f"{TESTAPP} is missing: run `make setup`")
    url = f"http://127.0.0.1:{web.free_port()}"
    log = tmp_path_factory.mktemp("testapp") / "testapp.log"
    ready = lambda: web.answers_ok(url + "/health")  # noqa: E731
    with ManagedProcess("testapp", [TESTAPP, "--urls", url], log, ready=ready):
        yield url


# --- the kernel ----------------------------------------------------------------------------


@pytest.mark.live
def test_setup_installs_a_kernelspec_that_starts_from_any_folder(tmp_path):
    first = dotnet_kernel.install(prefix=str(tmp_path))
    assert first == tmp_path / "share" / "jupyter" / "kernels" / ".net-csharp" / "kernel.json"
    spec = json.loads(first.read_text())
    dotnet, entry = spec["argv"][:2]
    # Absolute paths, no `dotnet interactive` (which needs a manifest in the folder).
    assert dotnet.startswith("/") and entry.endswith(".dll") and Path(entry).exists()
    assert dotnet_kernel.pinned_version() in entry
    assert "{connection_file}" in spec["argv"] and "--http-local-only" in spec["argv"]
    text = first.read_text()
    assert dotnet_kernel.install(prefix=str(tmp_path)).read_text() == text  # idempotent


def test_setup_says_in_one_line_what_is_missing(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dotnet on it
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert dotnet_kernel.main() == 0  # setup goes on: the studies run without the tour
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not installed, missing: dotnet (.NET 10 SDK)" in err
    assert not dotnet_kernel.kernel_dir(str(tmp_path)).exists()


def test_an_unknown_parameter_is_refused_naming_the_allowed_ones(tmp_path):
    with pytest.raises(BadInput, match=r"unknown tour parameter\(s\) iteratons; allowed: .*rounds"):
        tour.run(tmp_path, reproduce.execute_notebook, lambda name: False, {"iteratons": 5})
    assert set(tour.parameter_names()) == set(SMALL)


def test_a_resumed_run_keeps_the_app_work_its_tour_measured(tmp_path, capsys):
    """A resume measures only what the run lacks: the tour is not run again (no kernel is
    asked for), and its app_work.csv stays as measured."""
    measured = tmp_path / tour.CSV_NAME
    measured.write_text("scenario,ns_per_payload\nhtml,87258.1\n")
    reproduce.run_tour(tmp_path)
    assert measured.read_text() == "scenario,ns_per_payload\nhtml,87258.1\n"
    assert capsys.readouterr().out == f"{tour.CSV_NAME}: kept, as this run's tour measured it\n"
    assert not (tmp_path / tour.NOTEBOOK.name).exists()


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


@pytest.mark.live
def test_html_has_100_buttons_and_10_selects_of_10_options(payloads):
    counter = _FormCounter()
    counter.feed(payloads["html"]["body"])
    assert counter.buttons == 100
    assert counter.selects == [10] * 10
    assert payloads["html"]["type"] == "text/html; charset=utf-8"


@pytest.mark.live
def test_text_is_latin_letters_then_digits(payloads):
    assert payloads["text"]["body"] == LETTERS_AND_DIGITS


@pytest.mark.live
def test_json_matches_listing_2(payloads):
    doc = json.loads(payloads["json"]["body"])
    assert list(doc) == ["id", "stringValue", "intValue", "listOfInts"]
    assert str(uuid.UUID(doc["id"])) == doc["id"]
    assert doc["stringValue"] == doc["id"][:8]
    assert type(doc["intValue"]) is int
    assert len(doc["listOfInts"]) == 10 and all(type(v) is int for v in doc["listOfInts"])
    assert payloads["json"]["type"] == "application/json; charset=utf-8"


@pytest.mark.live
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
        resp = web.get(f"{app_url}/{scenario}")
        assert resp.status == 200
        assert resp.content_type == payloads[scenario]["type"], scenario
    # Deterministic bodies: byte for byte.
    assert web.get(app_url + "/html").body == payloads["html"]["body"].encode()
    assert web.get(app_url + "/text").body == payloads["text"]["body"].encode()


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
        assert row["method"].startswith("Stopwatch median of 3 rounds x 200")  # injected
    assert float(rows["html"]["ns_per_payload"]) > float(rows["text"]["ns_per_payload"])
    assert int(rows["html"]["bytes_allocated"]) > int(rows["text"]["bytes_allocated"])


@pytest.mark.live
def test_every_payload_completed_synchronously_and_the_split_is_printed(output):
    assert "TestApp is an optimized (Release) build" in output
    table = re.findall(r"^(html|text|json|xml) .* (\d+)$", output, re.M)
    assert [(s, int(waited)) for s, waited in table] == [
        ("html", 0),
        ("text", 0),
        ("json", 0),
        ("xml", 0),
    ]
    # results.csv of the example run was in runDir: the share of the app's CPU per request.
    assert re.search(r"^kestrel +html +\d+ +[\d.]+ +[\d.]+ +[\d.]+ ?%$", output, re.M)


@pytest.mark.live
def test_no_kernel_process_is_left(tour_run):
    assert tour_run.notebook.exists()
    psutil.wait_procs(_kernels_left(), timeout=10)
    assert _kernels_left() == []


@pytest.mark.live
def test_the_terminal_gets_one_line_per_notebook_and_no_kernel_noise(tmp_path, capfd):
    """`make reproduce`'s terminal: the study notebook's ipykernel and the tour's .NET kernel
    start without warnings a reader cannot act on (unencrypted TCP, the kernel's own web
    server starting, papermill not reading C# parameters)."""
    reproduce.prepare_environment()
    python_nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    python_nb.metadata.kernelspec = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(python_nb, tmp_path / "p.ipynb")
    reproduce.execute_notebook(tmp_path / "p.ipynb", tmp_path / "p-out.ipynb", {}, "python3", 120)
    tour.run(tmp_path, reproduce.execute_notebook, reproduce.kernel_available, TINY)
    captured = capfd.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert lines[0] == f"running p.ipynb -> {tmp_path / 'p-out.ipynb'}"
    assert lines[1].startswith("running 00-testapp-tour.ipynb -> ")
    assert lines[2].startswith("00-testapp-tour.ipynb: ran on the .net-csharp kernel; ")
    assert len(lines) == 3, lines
    assert "42" in (tmp_path / "p-out.ipynb").read_text()  # the kernel did run


@pytest.mark.live
def test_a_notebooks_kernel_is_shut_down_without_an_interrupt(tmp_path):
    """jupyter_client interrupts a kernel before shutting it down; a SIGINT that lands while
    ipykernel finishes its last message prints "KeyboardInterrupt caught in kernel." on the
    terminal. execute_notebook shuts a finished kernel down without one: here the cell keeps
    a SIGINT handler of its own that records any, and none comes."""
    reproduce.prepare_environment()
    record = tmp_path / "sigint.txt"
    cell = "\n".join([
        "import signal",
        "kernel = get_ipython().kernel",
        "kernel.pre_handler_hook = kernel.post_handler_hook = lambda: None  # keep it below",
        "from pathlib import Path",
        f"signal.signal(signal.SIGINT, lambda *_: Path({str(record)!r}).write_text('SIGINT'))",
        "print('armed')",
    ])  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "n.ipynb")
    reproduce.execute_notebook(tmp_path / "n.ipynb", tmp_path / "n-out.ipynb", {}, "python3", 120)
    assert "armed" in (tmp_path / "n-out.ipynb").read_text()  # the handler was in place
    assert not record.exists(), record.read_text()


@pytest.mark.live
def test_the_kernel_listens_on_loopback_only():
    """Its Jupyter channels and its HTTP service (--http-local-only): nothing reachable from
    another host."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name=dotnet_kernel.KERNEL, cwd=str(tour.NOTEBOOK.parent))
    try:
        kc.execute_interactive("1 + 1", timeout=120)
        kernel = psutil.Process(km.provisioner.process.pid)
        listening = [
            c.laddr.ip
            for p in (kernel, *kernel.children(recursive=True))
            for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        ]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert listening and set(listening) <= {"127.0.0.1", "::1"}, listening
