"""The notebook's tables and computed prose, on results recorded from a real quick run."""

import re
from pathlib import Path

import pytest

from hostbench.analysis import prose as report
from hostbench.analysis import tables as analysis
from hostbench.catalog import paper_mapping
from hostbench.harness.loadgen import k6_script

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
    mapping = paper_mapping(["nginx", "kestrel", "nginx-uds"])
    comparison = analysis.compare_with_paper(results, mapping, baseline="nginx")
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
    script = k6_script("http://127.0.0.1:1/text", 8, 15.0)
    assert '"is status 200": (r) => r.status === 200' in script and "vus: 8" in script


def test_hosting_models_table_comes_from_the_catalog():
    table = report.hosting_models_table().set_index("our mode")
    assert "nginx, caddy" in table.index  # both stand for the paper's baseline
    assert table.loc["nginx-uds", "paper's model"] == "Kestrel + IIS (in-process)"
    assert table.loc["none", "paper's model"] == "HTTP.sys"


def test_study_run_from_notebook_parameters_reads_the_profile_or_takes_params(tmp_path):
    from hostbench.errors import BadInput
    from hostbench.harness.notebook import StudyRun

    run = StudyRun.from_parameters("jcsi2018", "quick", None, "x", str(tmp_path))
    assert run.params.duration_s == 3 and run.params.tools == ["k6"]  # quick extends paper
    assert run.out_dir == tmp_path / "x"
    given = {**run.params.to_dict(), "modes": ["kestrel"], "baseline": None}
    assert StudyRun.from_parameters("jcsi2018", "quick", given, "x").params.modes == ["kestrel"]
    with pytest.raises(BadInput, match="unknown mode 'iis'"):
        StudyRun.from_parameters("jcsi2018", "quick", {**given, "modes": ["iis"]}, "x")
    with pytest.raises(BadInput, match="study 'jcsi2018' has no profile 'fast'"):
        StudyRun.from_parameters("jcsi2018", "fast", None, "x")
