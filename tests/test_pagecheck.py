"""The report-page check (hostbench.pagecheck) finds each class of defect, and a page exported
through the report template has none of them."""

import re
import shutil

import matplotlib
import matplotlib.figure
import nbformat
import pandas as pd
import pytest

from hostbench.analysis import figure_output, layout, prose
from hostbench.pagecheck import check_report, page_defects
from hostbench.reproduce import REPORT_TEMPLATE, export_html

matplotlib.use("Agg")

CLEAN = """<html><body><main><h2>Results</h2>
<table><thead><tr><th>hosting mode</th><th>requests/s</th></tr></thead>
<tbody><tr><td>Kestrel</td><td>1,000</td></tr><tr><td><code>nginx</code></td><td>–</td></tr>
<tr><td>2</td><td>-2%</td></tr>
</tbody></table>
<figure><img src="data:image/png;base64,AAAA" alt="Throughput per mode. k6, 3 blocks">
<figcaption>Kestrel serves the most requests in every scenario.</figcaption></figure>
<p>Kestrel: 155% of the baseline (95% CI 141-170%): supported.</p>
<p>JSON: faster: 122% of the baseline (95% CI 100.7-149%); memory: less: 0.98x
(95% CI 0.95-0.999x); XML: indistinguishable at this precision: 98% (95% CI 89-108%).</p>
<p>The params key <code>quiet_max_steal_pct</code>; the clock read 2,596-2,610 MHz, 1-2 cores.</p>
</main></body></html>"""


def _with(snippet: str) -> str:
    return CLEAN.replace("</main>", snippet + "</main>")


def test_a_clean_page_has_no_defect():
    assert page_defects(CLEAN) == []


@pytest.mark.parametrize(
    "snippet, expected",
    [
        # A response body inserted unescaped: the browser parses its tags.
        ("<table><tr><td><h1>HTML scenario</h1><div>x</div></td></tr></table>",
         "markup in a table cell (<div>, <h1>)"),
        ("<table><tr><td><SimpleClass><Id>1</Id></SimpleClass></td></tr></table>",
         "markup in a table cell"),
        ("<p>results in /tmp/pytest-of-root/pytest-1/runs0/ci-quick/some-study</p>",
         "a machine's path: '/tmp/pytest-of-root"),
        ("<p>written to /home/me/hostbench/data/runs/x</p>", "a machine's path: '/home/me"),
        ('<a href="/work/main/data/runs/x/results.csv">results</a>', "a machine's path"),
        ("<table><tr><td>NaN</td></tr></table>", "a missing value shown raw: 'NaN'"),
        ("<table><tr><td>None</td></tr></table>", "a missing value shown raw: 'None'"),
        ("<p>the proxy used NaN cores</p>", "a missing value shown raw"),
        ("<table><tbody><tr><th>0</th><td>kestrel</td></tr></tbody></table>", "an index column"),
        ('<table><thead><tr><th class="blank level0">&nbsp;</th></tr></thead></table>',
         "an index column"),
        ("<table><thead><tr><th>rps_mean</th></tr></thead></table>",
         "a raw column name: 'rps_mean'"),
        ('<img src="data:image/png;base64,AAAA">', "figure without alt text: alt=''"),
        ('<img src="x.png" alt="No description has been provided for this image">',
         "figure without alt text"),
        ("<p>Kestrel 155% (95% CI 63.83-375%)</p>", "an interval not in whole percents"),
        ("<p>Kestrel 155% (95% CI 63-375.5%)</p>", "an interval not in whole percents"),
        ("<p>memory 1.50x (95% CI 1.415-1.60x)</p>", "an interval not in whole percents"),
        # The words a printed interval contradicts (the cases, as the pages printed them).
        ("<p>JSON: faster: 122% of the baseline (95% CI 100-149%)</p>",
         "a verdict its interval contradicts (it includes 100%)"),
        ("<p>less memory: 0.98x Iris MVC's (95% CI 0.95-1.00x)</p>",
         "a verdict its interval contradicts (it includes 1x)"),
        ("<p>YARP JSON faster, 122% (100-149%)</p>", "a verdict its interval contradicts"),
        ("<p>indistinguishable at this precision: 130% (95% CI 104-160%)</p>",
         "a verdict its interval contradicts (it excludes 100%)"),
        ('<img src="data:image/png;base64,AAAA" alt="Throughput per mode">',
         "a figure without a caption"),
        ('<figure><img src="data:image/png;base64,AAAA" alt="Throughput per mode">'
         "<figcaption> </figcaption></figure>", "a figure without a caption"),
        ("<p>steal above <code>x</code> quiet_max_steal_pct left out</p>",
         "a raw identifier in prose: 'quiet_max_steal_pct'"),
        ("<ul><li>the plaintext_pipelining test</li></ul>", "a raw identifier in prose"),
        ("<p>the CPU clock read 2,596-2,596 MHz</p>", "a range of one value: "),
        ("<td>0.44x to 0.44x (0.42-0.45x): agrees to within ±139%</td>", "a range of one value: "),
        ("<p>Caddy: not settled at this precision</p>", "a verdict not in the pages' words"),
        ("<table><tr><td>undecided</td></tr></table>", "a verdict not in the pages' words"),
        ("<p>not testable</p>", "a verdict not in the pages' words"),
        ("<p>ApacheBench, Version 2.3 &lt;$Revision$&gt;</p>", "raw text"),
        ("<p>Each of the 1 blocks runs every mode</p>", "raw text"),
        ("<p>&lt;Figure size 640x480 with 1 Axes&gt;</p>", "raw text"),
    ],
)  # fmt: skip
def test_each_class_of_defect_is_found(snippet, expected):
    found = page_defects(_with(snippet))
    assert any(expected in line for line in found), found


def test_text_the_caller_forbids_is_found():
    page = _with("<p>see data/runs/ci-quick</p>")
    assert page_defects(page, forbidden=["data/runs/ci-quick"]) == [
        "forbidden text on the page: 'data/runs/ci-quick'"
    ]
    assert page_defects(CLEAN, forbidden=["data/runs/ci-quick"]) == []


def test_words_the_pages_use_are_not_defects():
    text = (
        "<p>undecided at this precision; not testable here; indistinguishable at this "
        "precision: 98% of the baseline (95% CI 89-108%); 1 block; 1.23x (95% CI 1.10-1.40x); "
        "http://127.0.0.1:PORT/text; `results.csv`; docs/windows.md</p>"
    )
    assert page_defects(_with(text)) == []


def _notebook(tmp_path):
    """An executed notebook as a study's would be: a heading, a table and a figure shown
    by StudyRun.show's image, with outputs as IPython formats them."""
    rows = {"mode": ["kestrel", "nginx"], "rps_mean": [1000.0, 400.0],
            "cpu_proxy_cores_mean": [float("nan"), 0.3],
            "body": ["<h1>HTML scenario</h1>", "<Id>1</Id>"]}  # fmt: skip
    table = prose.table(pd.DataFrame(rows))
    fig = matplotlib.figure.Figure()
    fig.subplots().plot([1, 2], [3, 4])
    fig.suptitle("Throughput per mode")
    layout.footnote(fig, "k6, concurrency 8, 3 blocks")
    data, metadata = figure_output.FigureImage(fig)._repr_mimebundle_()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A study's report\n\nSome prose."),
        nbformat.v4.new_code_cell("prose.table(...)", outputs=[nbformat.v4.new_output(
            "execute_result", data={"text/html": table.to_html()}, execution_count=1)]),
        nbformat.v4.new_code_cell("run.show(...)", outputs=[nbformat.v4.new_output(
            "display_data", data=data, metadata=metadata)]),
    ]  # fmt: skip
    path = tmp_path / "study.ipynb"
    nbformat.write(nb, path)
    return path


def test_an_exported_report_carries_one_small_stylesheet_and_alt_text(tmp_path):
    page = export_html(_notebook(tmp_path), tmp_path / "report.html").read_text()
    assert page_defects(page) == []
    assert 'alt="Throughput per mode. k6, concurrency 8, 3 blocks"' in page
    assert "<figcaption>Throughput per mode: k6, concurrency 8, 3 blocks.</figcaption>" in page
    assert "<title>A study's report</title>" in page
    # One stylesheet, the package's, instead of JupyterLab's ~265 KB; nothing loaded from
    # elsewhere (no require.js, MathJax or fonts from a CDN).
    assert (REPORT_TEMPLATE / "report.css").read_text().strip() in page
    assert "jp-RenderedHTMLCommon {" not in page and "--jp-" not in page
    assert "<script" not in page and "<link" not in page
    css = sum(map(len, re.findall(r"<style[^>]*>(.*?)</style>", page, re.S)))
    images = sum(map(len, re.findall(r'src="data:image/png;base64,([^"]*)"', page)))
    assert css < 6_000 and len(page) - images < 15_000, (css, len(page) - images)
    # The table: names in words, a dash with what it means, the markup as text.
    assert "requests/s (mean)" in page and "– no proxy in this mode" in page
    assert "&lt;h1&gt;HTML scenario&lt;/h1&gt;" in page


def test_the_page_opens_with_its_title_then_the_findings_box(tmp_path):
    """The notebook computes the box below its introduction; the page shows it first."""
    import nbformat

    path = _notebook(tmp_path)
    nb = nbformat.read(path, as_version=4)
    box = '<section class="findings"><h2>Findings</h2><p>Kestrel: 155%</p></section>'
    nb.cells.append(nbformat.v4.new_code_cell("findings.findings_box(...)", outputs=[
        nbformat.v4.new_output("display_data", data={"text/html": box})]))  # fmt: skip
    nbformat.write(nb, path)
    page = export_html(path, tmp_path / "report.html").read_text()
    title, findings, intro = (page.index(text) for text in ("<h1", "Kestrel: 155%", "Some prose."))
    assert title < findings < intro, (title, findings, intro)
    assert page.count("Kestrel: 155%") == 1 and page.count("Some prose.") == 1
    assert nbformat.read(path, as_version=4).cells[-1].outputs, "the notebook keeps its order"


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium (make setup)")
def test_a_table_wider_than_the_page_at_1280_px_is_found(tmp_path):
    narrow = export_html(_notebook(tmp_path), tmp_path / "report.html")
    assert check_report(narrow) == []
    cells = "".join(f"<th>column {i} with a long header</th>" for i in range(40))
    wide = tmp_path / "wide.html"
    wide.write_text(narrow.read_text().replace(
        "</main>", f"<table><thead><tr>{cells}</tr></thead></table></main>"))  # fmt: skip
    found = check_report(wide)
    assert [line for line in found if line.startswith("a table") and "column 0" in line], found


def test_the_check_report_command_fails_on_a_page_with_each_new_defect_kind(tmp_path, capsys):
    from hostbench.__main__ import main

    defects = {
        "<p>JSON: faster: 122% of the baseline (95% CI 100-149%)</p>": "contradicts",
        '<img src="data:image/png;base64,AAAA" alt="Throughput per mode">': "without a caption",
        "<p>the plaintext_pipelining test</p>": "a raw identifier in prose",
        "<p>the CPU clock read 2,596-2,596 MHz</p>": "a range of one value",
    }
    clean, bad = tmp_path / "clean.html", tmp_path / "bad.html"
    clean.write_text(CLEAN)
    bad.write_text(_with("".join(defects)))
    assert main(["check-report", "--no-browser", str(clean)]) == 0
    assert main(["check-report", "--no-browser", str(bad)]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith(f"{clean}: reads cleanly") and f"{bad}: 4 defect(s)" in printed
    for what in defects.values():
        assert what in printed, printed
