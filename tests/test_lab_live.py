"""The hosting lab end to end: its quick profile under papermill, as `make lab` runs it, on the
real app, proxies and load tool (a few minutes), and the report a teacher opens."""

import json
import re
import shutil

import pytest

from hostbench import lab
from hostbench.catalog import MODES
from hostbench.pagecheck import check_report
from hostbench.reproduce import DONE_FILE

pytestmark = [pytest.mark.live, pytest.mark.timeout(900)]


# The quick profile's runs shortened, as `make lab SET="..."` would: what these tests check
# (every path, figure, table and section of the page) 1 s runs make as 3 s ones do, and
# without a warm-up (tests/test_run.py and the session's batch test the warm-up).
# Windows of 1 s; min_duration_s below it, since a busy CI machine measured one 0.92 s long.
SHORTER = ["duration_s=1", "warmup_s=0", "min_duration_s=0.5"]


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    return lab.reproduce_lab("quick", run_id="lab-quick-test", runs_dir=runs, settings=SHORTER)


def test_the_quick_lab_runs_end_to_end_without_an_error(lab_run):
    executed = json.loads((lab_run / lab.NOTEBOOK.name).read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert [o for o in outputs if o["output_type"] == "error"] == []
    assert [o for o in outputs if o.get("name") == "stderr"] == []  # no progress bar on the page
    assert json.loads((lab_run / DONE_FILE).read_text())["profile"] == "quick"
    params = json.loads((lab_run / "params.json").read_text())
    # The settings reached the run, are recorded, and the page names them.
    assert params["duration_s"] == 1 and params["set_on_command_line"] == {
        s.split("=")[0]: s.split("=")[1] for s in SHORTER}  # fmt: skip
    assert "Set on the command line: <code>duration_s=1, warmup_s=0, min_duration_s=0.5" in (
        lab_run / "report.html").read_text()  # fmt: skip
    results = (lab_run / "results.csv").read_text().splitlines()
    assert len(results) == 1 + len(params["modes"]) * params["repetitions"]
    assert set(params["modes"]) == set(lab.lab_params("quick").modes)


def test_the_report_has_every_path_the_hop_table_with_intervals_and_no_error(lab_run):
    page = (lab_run / "report.html").read_text()
    params = json.loads((lab_run / "params.json").read_text())
    figures = ["paths", "hops", "cpu-per-request", "path-iis"]
    figures += [f"path-{m}" for m in params["modes"]]
    for name in figures:
        assert (lab_run / "figures" / f"{name}.png").stat().st_size > 1000, name
    assert page.count("data:image/png;base64") >= len(figures)
    # The per-hop table: one row per mode, each comparison with its interval.
    table = re.search(r"<table.*?added per request, app \+ proxy \(95% CI\).*?</table>", page, re.S)
    assert table, "the per-hop table is missing"
    rows = re.findall(r"<tr>.*?</tr>", table.group(0), re.S)[1:]
    assert len(rows) == len(params["modes"])
    for row in rows[1:]:  # every mode but Kestrel alone
        assert row.count("95% CI") == 3, row
    shown = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)  # what a reader sees
    text = re.sub(r"<[^>]+>", "", shown)
    assert "output_error" not in shown and "Traceback" not in text and "Error" not in text
    assert str(lab_run.parent) not in page  # nothing of this machine's folders
    # The sections a teacher walks through, each with its question and expected answer.
    sections = re.findall(r"<h2[^>]*>\d+\.", page)
    assert len(sections) >= 8
    assert page.count("<summary>Expected answer</summary>") == len(sections)  # one per section
    for mode in ("nginx", "nginx-keepalive", "nginx-uds", "caddy"):
        assert MODES[mode].label in page


@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium (make setup)")
def test_the_lab_report_reads_cleanly(lab_run):
    """The page check every study's report passes (hostbench/pagecheck.py), on the lab's."""
    assert check_report(lab_run / "report.html", forbidden=[str(lab_run.parent)]) == []


def test_a_what_if_and_a_setting_from_the_command_line_reach_the_run(tmp_path, capsys):
    from hostbench.__main__ import main

    argv = ["lab", "--profile", "quick", "--run-id", "lab-what-if", "--runs-dir", str(tmp_path),
            "--what-if", "modes=[kestrel, nginx]", "--what-if", "nginx_workers=1",
            "--what-if", "blocks=1", *(a for s in SHORTER for a in ("--set", s))]  # fmt: skip
    assert main(argv) == 0
    out = tmp_path / "lab-what-if"
    params = json.loads((out / "params.json").read_text())
    assert params["nginx_workers"] == 1 and params["duration_s"] == 1
    confs = list(out.glob("launch__r*/nginx/nginx.conf"))
    assert confs and all("worker_processes 1;" in c.read_text() for c in confs)
    page = (out / "report.html").read_text()
    assert "<strong>1</strong> worker," in page  # the settings line names the what-if
    assert "report.html" in capsys.readouterr().out
