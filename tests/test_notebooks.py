"""The notebooks end to end: `make reproduce` with the quick profile, the batch index, the
reports in a browser. (Every study's own notebook contract: tests/test_studies.py.)"""

import base64
import html
import io
import json
import re
import shutil
import subprocess

import matplotlib.image as mpimg
import pytest

from hostbench.analysis.prose import SMOKE_HEADLINE
from hostbench.pagecheck import check_report
from hostbench.paths import NOTEBOOKS
from hostbench.reproduce import reproduce
from hostbench.studies import STUDIES, available

# The batch of every study's quick profile takes minutes, more than the suite's default.
pytestmark = pytest.mark.timeout(3600)


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_the_tour_notebook_carries_no_outputs_and_one_parameters_cell(notebook):
    nb = json.loads(notebook.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1


@pytest.mark.live
def test_the_batch_index_links_a_report_for_each_study(batch):
    index = (batch / "index.html").read_text()
    for study in available():
        assert f'href="{study.id}/report.html"' in index
        assert (batch / study.id / "report.html").exists()
        headline = (batch / study.id / "headline.txt").read_text().strip()
        assert headline and html.escape(headline) in index
        # A reader's page names files relative to the run, never this machine's folders.
        page = (batch / study.id / "report.html").read_text()
        assert str(batch.parent) not in page and "pytest-of" not in page
        # Quick runs are smoke runs: no finding in the headline or the index.
        assert headline == SMOKE_HEADLINE


@pytest.mark.live
def test_every_run_of_the_batch_and_its_sub_studies_carries_its_ratios(batch):
    """reproduce writes ratios.csv where a notebook wrote none, in each study's folder and in
    each of its sub-studies' (the folders with a results.csv), in one schema."""
    runs = sorted(p.parent for p in batch.rglob("results.csv"))
    assert {r.name for r in runs} > {s.id for s in available()}  # sub-studies are among them
    for run in runs:
        header = (run / "ratios.csv").read_text().splitlines()[0].split(",")
        assert {"n", "ratio_pct", "ci_low_pct", "ci_high_pct"} <= set(header), run.name


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium (make setup)")
def test_each_report_renders_in_a_browser_with_every_figure(batch, tmp_path):
    for study in available():
        report = batch / study.id / "report.html"
        shot = tmp_path / f"{study.id}.png"
        browser = [
            "chromium", "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--hide-scrollbars", "--window-size=1200,2400",
        ]  # fmt: skip
        # One browser for both the screenshot and the page's DOM (each launch about 4 s).
        dom = subprocess.run(
            [*browser, f"--screenshot={shot}", "--dump-dom", report.as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout  # fmt: skip
        assert mpimg.imread(shot).shape[:2] == (2400, 1200)
        assert "<Figure size" not in dom
        images = re.findall(r'src="data:image/png;base64,([^"]+)"', dom)
        assert images, f"{study.id}: no figure in the page"
        for data in images:  # every figure decodes as an image with pixels
            picture = mpimg.imread(io.BytesIO(base64.b64decode(data)), format="png")
            assert picture.shape[0] > 50 and picture.shape[1] > 50


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium (make setup)")
def test_every_report_and_the_index_read_cleanly(batch):
    """No page a reader opens has any defect pagecheck knows: unescaped markup in a table
    cell, a machine's path (the runs folder, /tmp, pytest-of), a raw NaN, an index column, a
    raw column name, a figure without alt text, an interval or verdict not in the pages' one
    wording, raw text, or a table wider than the page at 1280 px."""
    pages = [batch / "index.html", *(batch / s.id / "report.html" for s in available())]
    found = {}
    for page in pages:
        defects = check_report(page, forbidden=[str(batch.parent)])
        if defects:
            found[str(page.relative_to(batch))] = defects
    assert found == {}
    for page in pages[1:]:  # one small stylesheet, not JupyterLab's ~265 KB in each page
        text = page.read_text()
        css = sum(map(len, re.findall(r"<style[^>]*>(.*?)</style>", text, re.S)))
        assert css < 40_000, (page, css)


@pytest.mark.live
def test_unknown_profile_or_study_is_refused(tmp_path):
    from hostbench.errors import BadInput

    study = available()[0]
    allowed = f"{', '.join(study.profiles())}, or the path of a params file (.yaml)"
    no_profile = f"study '{study.id}' has no profile 'fast'; allowed: {allowed}"
    with pytest.raises(BadInput, match=f"^{re.escape(no_profile)}$"):
        reproduce(study.id, "fast", runs_dir=tmp_path)
    missing = tmp_path / "mine.yaml"  # a reader's params file, not there
    with pytest.raises(BadInput, match=f"has no profile '{re.escape(str(missing))}'"):
        reproduce(study.id, str(missing), runs_dir=tmp_path)
    unknown = f"unknown study 'no-such-study'; allowed: {', '.join(STUDIES)}"
    with pytest.raises(BadInput, match=f"^{re.escape(unknown)}$"):
        reproduce("no-such-study", "quick", runs_dir=tmp_path)


@pytest.mark.live
def test_the_studies_command_lists_every_study():
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "hostbench", "studies"], capture_output=True, text=True, check=True
    ).stdout
    for study in available():
        line = next(line for line in out.splitlines() if line.split()[0] == study.id)
        assert study.notebook in line and ", ".join(study.profiles()) in line
