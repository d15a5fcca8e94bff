"""The notebook's tables and computed prose, on results recorded from a real quick run."""

from pathlib import Path

import pandas as pd
import pytest

from hostbench.analysis import intervals, jcsi2018
from hostbench.analysis import prose as report
from hostbench.analysis import tables as analysis
from hostbench.harness.loadgen import k6_script

RESULTS = Path(__file__).parent / "fixtures" / "results" / "quick-results.csv"
RUN3 = Path(__file__).parent / "fixtures" / "results" / "jcsi2018-3blocks"


@pytest.fixture(scope="module")
def results():
    return analysis.load_results(RESULTS)


@pytest.fixture(scope="module")
def run3():
    """A real 3-block run (nginx, kestrel, nginx-uds; html, text), recorded on a busy machine."""
    return {
        "results": analysis.load_results(RUN3),
        "params": analysis.load_params(RUN3),
        "env": analysis.load_environment(RUN3),
        "ratios": intervals.paired_ratios(analysis.load_results(RUN3, valid_only=False), "nginx"),
        "kestrel": intervals.paired_ratios(analysis.load_results(RUN3), "kestrel"),
    }


def test_method_is_written_from_params_json(run3):
    text = jcsi2018.method(run3["params"])
    p = run3["params"]
    assert f"Each of the {p['repetitions']} blocks" in text and f"seed {p['seed']}" in text
    assert f"{p['duration_s']:g} s of k6 load at concurrency 8" in text
    assert f"every {p['sample_interval_s']:g} s" in text
    assert f"within {p['steady_tolerance_pct']:g}%" in text


def test_claims_follow_the_intervals(run3):
    table = jcsi2018.claims(run3["ratios"], "nginx", run3["kestrel"]).set_index(
        "the paper's conclusion"
    )
    verdicts = set(table["here"])
    assert verdicts <= {jcsi2018.SUPPORTED, jcsi2018.NOT_SUPPORTED, jcsi2018.UNDECIDED,
                        jcsi2018.NOT_TESTABLE}  # fmt: skip
    # Windows-only claims are never judged on Linux.
    assert table.loc["HTTP.sys performs close to Kestrel", "here"] == jcsi2018.NOT_TESTABLE
    # Each verdict agrees with the interval it cites.
    html = run3["ratios"].set_index(["mode", "scenario"]).loc[("kestrel", "html")]
    row = table.loc[[c for c in table.index if c.startswith("Kestrel on HTML")][0]]
    assert f"95% CI {html.ci_low_pct:.0f}-{html.ci_high_pct:.0f}%" in row["evidence"]
    wide = html.ci_low_pct < 170 - jcsi2018.ABOUT_TOLERANCE_PCT < html.ci_high_pct
    assert (row["here"] == jcsi2018.UNDECIDED) == wide


def test_claims_on_synthetic_intervals_with_known_answers():
    def ratios(rows):
        df = pd.DataFrame(rows, columns=["mode", "scenario", "ratio_pct", "ci_low_pct",
                                         "ci_high_pct"])  # fmt: skip
        return df.assign(baseline="nginx", ratio=df["ratio_pct"] / 100)

    clear = ratios([("kestrel", "html", 172, 165, 180), ("kestrel", "text", 250, 240, 260)])
    table = jcsi2018.claims(clear, "nginx", None).set_index("the paper's conclusion")
    assert table.loc["Kestrel on HTML: about +70% over the baseline", "here"] == "supported"
    assert table.loc["Kestrel on text: up to +200% over the baseline", "here"] == "supported"
    assert table.loc["The reverse proxy over TCP (Kestrel + nginx (TCP)) is the slowest",
                     "here"] == "supported"  # fmt: skip
    far = ratios([("kestrel", "html", 300, 280, 320), ("kestrel", "text", 90, 80, 99)])
    table = jcsi2018.claims(far, "nginx", None).set_index("the paper's conclusion")
    assert table.loc["Kestrel on HTML: about +70% over the baseline", "here"] == "not supported"
    assert table.loc["Kestrel on text: up to +200% over the baseline", "here"] == "not supported"


def test_threats_carry_their_measured_sizes(run3):
    table = jcsi2018.threats(run3["results"], run3["env"], run3["ratios"]).set_index("threat")
    sat = analysis.saturation(run3["results"])
    share = 100 * sat["loadgen_cores"] / (sat["cpu_total_pct"] / 100 * sat["machine_cores"])
    size = table.loc["the load generator shares the cores", "size in this run"]
    assert f"it used {share.groupby(sat['mode'], observed=True).mean().min():.0f}% " in size
    drift = intervals.drift(run3["results"])
    noise = table.loc["noise and drift of a shared VM", "size in this run"]
    assert f"{drift['relative'].min():.2f}-{drift['relative'].max():.2f}" in noise
    assert run3["env"]["dotnet"]["sdk"] in " ".join(table.index)


def test_sensitivity_compares_the_two_setups():
    shared = pd.DataFrame({"mode": ["kestrel"], "scenario": ["text"], "ratio": [2.5],
                           "ci_low": [2.3], "ci_high": [2.7]})  # fmt: skip
    isolated = shared.assign(ratio=[3.5], ci_low=[3.2], ci_high=[3.9])
    (row,) = jcsi2018.sensitivity(shared, isolated).itertuples(index=False)
    assert row[4] == pytest.approx(1.4) and row[5] == "yes"  # moved by 1.4x, both "faster"


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


def test_the_readmes_example_numbers_are_the_example_runs():
    from hostbench.analysis import example
    from hostbench.paths import ROOT

    readme = (ROOT / "README.md").read_text()
    written = readme[readme.index(example.START) : readme.index(example.END) + len(example.END)]
    assert written == example.block(ROOT / "data" / "runs" / "example-paper"), (
        "README's example block is stale: python -m hostbench.analysis.example "
        "data/runs/example-paper"
    )


def test_machine_state_reads_each_runs_readings(run3):
    text = report.machine_state(run3["results"])
    load = run3["results"]["load_avg_1m"]
    assert f"{load.min():.1f}-{load.max():.1f}" in text
    assert f"up to {run3['results']['cpu_steal_pct'].max():.1f}%" in text
