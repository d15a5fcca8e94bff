"""The notebook's tables and computed prose, on results recorded from a real quick run."""

import re
from pathlib import Path

import pytest

from hostbench import analysis, report

RESULTS = Path(__file__).parent / "fixtures" / "results" / "quick-results.csv"


@pytest.fixture(scope="module")
def results():
    return analysis.load_results(RESULTS)


def test_conclusions_name_the_fastest_mode_per_scenario_from_the_data(results):
    text = report.conclusions(results, analysis.saturation(results), baseline="nginx")
    summary = analysis.summarize(results)
    for scenario, group in summary.groupby("scenario", observed=True):
        best = group.loc[group["rps_mean"].idxmax()]
        assert f"**{scenario}**: fastest {best['mode']} ({best['rps_mean']:,.0f} rps)" in text
    n = len(results)
    assert re.search(rf"CPU saturation: \d+ of {n} runs", text)


def test_discussion_quotes_our_ratios_as_computed(results):
    comparison = analysis.compare_with_paper(results, report.PAPER_MAPPING, baseline="nginx")
    text = report.discussion(comparison, "nginx")
    kestrel_html = comparison[
        (comparison["our_mode"] == "kestrel") & (comparison["scenario"] == "html")
    ]["ours_pct"].iloc[0]
    assert f"**{analysis.describe_ratio(kestrel_html)}** for HTML" in text
    compared = comparison[comparison["our_mode"] != "nginx"]
    assert f"{int(compared['within'].sum())} of {len(compared)} comparable ratios" in text


def test_modes_table_says_why_windows_modes_do_not_run_here():
    table = report.modes_table(["kestrel", "nginx"]).set_index("mode")
    assert table.loc["kestrel", "in this study"] == "runs in this study"
    assert table.loc["caddy", "in this study"] == "runs here, not requested"
    assert "only on Windows" in table.loc["httpsys", "in this study"]


def test_paper_tables_come_from_the_reference_data():
    k6 = report.k6_table(8, 15.0).set_index("parameter")
    assert k6.loc["vus", "paper"] == "8" and k6.loc["duration", "paper"] == "15s"
    assert k6.loc["duration", "this run"] == "15s"
    script = report.k6_script("http://127.0.0.1:1/text", 8, 15.0)
    assert '"is status 200": (r) => r.status === 200' in script and "vus: 8" in script


def test_paper_run_from_notebook_parameters_validates(tmp_path):
    run = report.PaperRun.from_parameters(
        "kestrel, nginx", "html,text", tool="k6", vus=8, duration_s=15.0, warmup_s=5.0,
        repetitions=3, run_id="x", runs_dir=str(tmp_path),
    )  # fmt: skip
    assert run.params.modes == ["kestrel", "nginx"] and len(run.params.runs()) == 12
    assert run.out_dir == tmp_path / "x"
    from hostbench.errors import BadInput

    with pytest.raises(BadInput, match="unknown mode 'iis'"):
        report.PaperRun.from_parameters(
            "iis", "html", tool="k6", vus=8, duration_s=15.0, warmup_s=5.0,
            repetitions=3, run_id="x",
        )  # fmt: skip
