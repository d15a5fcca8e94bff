"""hostbench.analysis on small synthetic tables whose answers are known by hand.

The numbers here are made up for the arithmetic (baseline 1000 rps, kestrel 2000 -> 200%);
they are not measurements.
"""

import math

import pandas as pd
import pytest

from hostbench.analysis import tables as analysis
from hostbench.errors import BadInput


def runs(rps: dict, cpu: dict | None = None, tool="k6", concurrency=8) -> pd.DataFrame:
    """Results rows: rps = {(mode, scenario): [rps per repetition]}; cpu overrides per run."""
    rows = []
    for (mode, scenario), values in rps.items():
        for rep, value in enumerate(values):
            row = {
                "run_key": f"{mode}-{scenario}-{tool}-{concurrency}-{rep}",
                "mode": mode,
                "scenario": scenario,
                "tool": tool,
                "concurrency": concurrency,
                "repetition": rep,
                "rps": value,
                "latency_p50_ms": 1.0 + rep,
                "latency_p99_ms": 10.0 + rep,
                "cpu_total_pct": 100.0,
                "cpu_total_pct_max": 100.0,
                "cpu_server_cores": 2.0,
                "cpu_proxy_cores": float("nan") if mode == "kestrel" else 1.0,
                "cpu_loadgen_cores": 1.0,
                "machine_cores": 4,
            }
            row.update((cpu or {}).get((mode, scenario), {}))
            rows.append(row)
    return pd.DataFrame(rows)


def paper_table(rows: list[tuple]) -> pd.DataFrame:
    """A table shaped like hostbench.reference.paper_ratios(): (mode, scenario, low, high)."""
    df = pd.DataFrame(rows, columns=["mode", "scenario", "ratio_low_pct", "ratio_high_pct"])
    df["quote"] = "synthetic"
    return df


def test_scenario_order_is_the_papers():
    assert analysis.SCENARIO_ORDER[:4] == ("html", "text", "json", "xml")


def test_load_results_from_run_dir_or_file_orders_categories(tmp_path):
    # Written in reverse order: loading must still give paper order.
    runs({("nginx", "xml"): [1.0], ("kestrel", "html"): [2.0], ("nginx", "text"): [3.0]}).to_csv(
        tmp_path / "results.csv", index=False
    )
    for where in (tmp_path, tmp_path / "results.csv", str(tmp_path)):
        df = analysis.load_results(where)
        assert list(df["scenario"].cat.categories) == list(analysis.SCENARIO_ORDER)
        assert df["scenario"].cat.ordered
        assert list(df.sort_values("scenario")["scenario"]) == ["html", "text", "xml"]
        assert df["mode"].cat.categories[0] == "kestrel"
        assert math.isnan(df.loc[df["mode"] == "kestrel", "cpu_proxy_cores"].iloc[0])


def test_load_results_names_missing_columns(tmp_path):
    runs({("nginx", "html"): [1.0]}).drop(columns=["rps", "machine_cores"]).to_csv(
        tmp_path / "results.csv", index=False
    )
    with pytest.raises(BadInput, match="rps, machine_cores") as err:
        analysis.load_results(tmp_path)
    assert "\n" not in str(err.value)


def test_load_results_missing_file(tmp_path):
    with pytest.raises(BadInput, match="no results file"):
        analysis.load_results(tmp_path)


def test_unknown_scenario_goes_after_the_papers():
    df = analysis.prepare(runs({("nginx", "plaintext-big"): [1.0], ("nginx", "json"): [1.0]}))
    assert list(df["scenario"].cat.categories) == [*analysis.SCENARIO_ORDER, "plaintext-big"]


def test_summarize_spread_over_repetitions():
    df = runs({("nginx", "html"): [900.0, 1000.0, 1100.0], ("kestrel", "html"): [2000.0]})
    out = analysis.summarize(df).set_index("mode")
    nginx = out.loc["nginx"]
    assert (nginx["rps_mean"], nginx["rps_std"], nginx["n"]) == (1000.0, 100.0, 3)
    assert (nginx["rps_min"], nginx["rps_max"]) == (900.0, 1100.0)
    assert nginx["latency_p50_ms_mean"] == 2.0  # 1, 2, 3
    assert nginx["latency_p99_ms_mean"] == 11.0
    assert nginx["cpu_proxy_cores_mean"] == 1.0
    # One repetition: no spread, rather than a misleading 0.
    assert math.isnan(out.loc["kestrel", "rps_std"])
    assert math.isnan(out.loc["kestrel", "cpu_proxy_cores_mean"])


def test_summarize_keeps_load_setups_apart():
    df = pd.concat(
        [
            runs({("nginx", "html"): [1000.0]}, concurrency=8),
            runs({("nginx", "html"): [3000.0]}, concurrency=64),
        ]
    )
    out = analysis.summarize(df)
    assert dict(zip(out["concurrency"], out["rps_mean"], strict=True)) == {8: 1000.0, 64: 3000.0}


def test_relative_to_baseline_per_scenario():
    df = runs(
        {
            ("nginx", "html"): [900.0, 1100.0],  # mean 1000
            ("kestrel", "html"): [2000.0],
            ("nginx", "json"): [500.0],
            ("kestrel", "json"): [850.0],
        }
    )
    out = analysis.relative_to_baseline(df).set_index(["mode", "scenario"])["pct_of_baseline"]
    assert out[("kestrel", "html")] == pytest.approx(200.0)
    assert out[("kestrel", "json")] == pytest.approx(170.0)
    assert out[("nginx", "html")] == pytest.approx(100.0)


def test_relative_to_another_baseline():
    df = runs({("nginx", "html"): [1000.0], ("kestrel", "html"): [2000.0]})
    out = analysis.relative_to_baseline(df, baseline="kestrel").set_index("mode")
    assert out.loc["nginx", "pct_of_baseline"] == pytest.approx(50.0)
    assert set(out["baseline"]) == {"kestrel"}


def test_relative_to_absent_baseline_says_which_modes_exist():
    df = runs({("kestrel", "html"): [2000.0], ("caddy", "html"): [900.0]})
    with pytest.raises(BadInput, match="'nginx'.*kestrel, caddy"):
        analysis.relative_to_baseline(df)


def test_relative_setup_without_baseline_is_nan():
    df = runs({("nginx", "html"): [1000.0], ("kestrel", "html"): [2000.0], ("kestrel", "xml"): [1]})
    out = analysis.relative_to_baseline(df).set_index(["mode", "scenario"])["pct_of_baseline"]
    assert math.isnan(out[("kestrel", "xml")])


PAPER = paper_table(
    [
        ("kestrel", "html", 160.0, 180.0),
        ("kestrel", "text", 280.0, 320.0),
        ("kestrel", "json", 280.0, 320.0),
        ("iis-inprocess", "html", 136.0, 153.0),
    ]
)


def compare(rps: dict, mapping: dict, **kwargs) -> pd.DataFrame:
    out = analysis.compare_with_paper(runs(rps), mapping, paper=PAPER, **kwargs)
    return out.set_index(["our_mode", "scenario"])


def test_compare_with_paper_verdicts():
    out = compare(
        {
            ("nginx", "html"): [1000.0],
            ("nginx", "text"): [1000.0],
            ("nginx", "json"): [1000.0],
            ("kestrel", "html"): [1700.0],  # 170%: inside 160-180
            ("kestrel", "text"): [2000.0],  # 200%: under 280-320
            ("kestrel", "json"): [3500.0],  # 350%: over, even with the 10-point tolerance
        },
        {"kestrel": "kestrel"},
    )
    assert list(out.columns[:2]) == ["paper_mode", "tool"]  # our_mode, scenario are the index
    html = out.loc[("kestrel", "html")]
    assert (html["ours_pct"], html["paper_low_pct"], html["paper_high_pct"]) == (170, 160, 180)
    assert bool(html["within"]) and html["verdict"] == "within"
    assert not out.loc[("kestrel", "text"), "within"]
    assert out.loc[("kestrel", "text"), "verdict"] == "lower than the paper"
    assert out.loc[("kestrel", "json"), "verdict"] == "higher than the paper"


def test_compare_with_paper_tolerance_widens_the_range():
    rps = {("nginx", "html"): [1000.0], ("kestrel", "html"): [1850.0]}  # 185% vs 160-180
    exact = compare(rps, {"kestrel": "kestrel"}, tolerance_pct=0).loc[("kestrel", "html")]
    assert not exact["within"] and exact["verdict"] == "higher than the paper"
    assert compare(rps, {"kestrel": "kestrel"}, tolerance_pct=5).loc[("kestrel", "html"), "within"]
    assert compare(rps, {"kestrel": "kestrel"}).loc[("kestrel", "html"), "within"]  # default 10


def test_compare_with_paper_maps_modes_and_skips_those_not_run():
    rps = {("nginx", "html"): [1000.0], ("nginx-uds", "html"): [1400.0]}
    out = compare(rps, {"nginx-uds": "iis-inprocess", "kestrel": "kestrel"})
    assert list(out.index) == [("nginx-uds", "html")]
    assert out.iloc[0]["paper_mode"] == "iis-inprocess"
    assert out.iloc[0]["within"]


def test_compare_with_paper_baseline_is_the_papers_100():
    rps = {("nginx", "html"): [1000.0], ("caddy", "html"): [950.0]}
    row = compare(rps, {"caddy": "iis-outofprocess"}, tolerance_pct=0).loc[("caddy", "html")]
    assert (row["paper_low_pct"], row["paper_high_pct"], row["ours_pct"]) == (100, 100, 95)
    assert row["verdict"] == "lower than the paper"


def test_compare_with_paper_order_and_missing_baseline():
    rps = {
        ("nginx", "html"): [1000.0],
        ("nginx-uds", "html"): [1400.0],
        ("kestrel", "text"): [3000.0],
        ("kestrel", "html"): [1700.0],
    }
    out = compare(rps, {"nginx-uds": "iis-inprocess", "kestrel": "kestrel"})
    # Package order of modes (kestrel first), paper order of scenarios.
    assert list(out.index) == [("kestrel", "html"), ("kestrel", "text"), ("nginx-uds", "html")]
    # The baseline never ran "text": no verdict rather than a false one.
    assert not out.loc[("kestrel", "text"), "within"]
    assert out.loc[("kestrel", "text"), "verdict"].startswith("n/a")


def test_compare_with_paper_rejects_unknown_names():
    rps = {("nginx", "html"): [1000.0], ("kestrel", "html"): [1700.0]}
    with pytest.raises(BadInput, match="httpsys"):  # a paper mode the table lacks
        compare(rps, {"kestrel": "httpsys"})
    with pytest.raises(BadInput, match="kestrl"):
        compare(rps, {"kestrl": "kestrel"})
    with pytest.raises(BadInput, match="none of the mapped modes"):
        compare(rps, {"caddy": "kestrel"})


def test_compare_with_the_real_paper_table():
    reference = pytest.importorskip("hostbench.reference")
    paper = reference.paper_ratios()
    assert {"mode", "scenario", "ratio_low_pct", "ratio_high_pct", "quote"} <= set(paper.columns)
    rps = {("nginx", s): [1000.0] for s in analysis.SCENARIO_ORDER}
    rps |= {("kestrel", s): [2000.0] for s in analysis.SCENARIO_ORDER}
    out = analysis.compare_with_paper(runs(rps), {"kestrel": "kestrel"})
    assert set(out["scenario"]) == set(analysis.SCENARIO_ORDER)
    # The paper: Kestrel about +70% for HTML, about +200% for the others.
    html = out[out["scenario"] == "html"].iloc[0]
    assert html["paper_low_pct"] <= 170 <= html["paper_high_pct"]
    assert (out["ours_pct"] == 200).all()
    if "qualifier" in paper.columns:  # the paper's hedge travels with the verdict
        assert "qualifier" in out.columns


def test_saturation_splits_the_cpu_between_process_groups():
    cpu = {
        ("nginx", "html"): {
            "cpu_total_pct": 95.0,
            "cpu_server_cores": 2.0,
            "cpu_proxy_cores": 1.0,
            "cpu_loadgen_cores": 0.5,
            "machine_cores": 4,
        },
        ("kestrel", "html"): {"cpu_total_pct": 60.0, "cpu_server_cores": 2.0},
    }
    df = runs({("nginx", "html"): [1000.0], ("kestrel", "html"): [2000.0]}, cpu=cpu)
    out = analysis.saturation(df).set_index("mode")
    nginx = out.loc["nginx"]
    assert nginx["server_share_pct"] == 50.0
    assert nginx["proxy_share_pct"] == 25.0
    assert nginx["other_cores"] == pytest.approx(0.3)  # 3.8 busy - 3.5 watched
    assert nginx["busiest"] == "server"
    assert bool(nginx["saturated"])
    kestrel = out.loc["kestrel"]
    assert math.isnan(kestrel["proxy_cores"])  # no proxy: unknown, not zero
    assert kestrel["other_cores"] == 0.0  # 2.4 busy < 3.0 watched: clipped, never negative
    assert not kestrel["saturated"]
    assert analysis.saturation(df, threshold_pct=50)["saturated"].all()


def test_pct_change_and_prose():
    assert analysis.pct_change(1000, 1700) == pytest.approx(70.0)
    assert analysis.pct_change(1000, 800) == pytest.approx(-20.0)
    with pytest.raises(BadInput):
        analysis.pct_change(0, 1)
    assert analysis.describe_ratio(170.0) == "+70%"
    assert analysis.describe_ratio(85.4) == "-15%"
    assert analysis.describe_ratio(312.26, digits=1) == "+212.3%"
    assert analysis.describe_ratio(float("nan")) == "n/a"
    assert analysis.describe_range([290, 170, 310]) == "+70% to +210%"
    assert analysis.describe_range([170, 170.2]) == "+70%"


def test_cpu_per_request_divides_cores_by_rps():
    df = runs(
        {("kestrel", "text"): [10_000.0], ("nginx", "text"): [4_000.0]},
        cpu={
            ("kestrel", "text"): {"cpu_server_cores": 1.5},
            ("nginx", "text"): {"cpu_server_cores": 0.8, "cpu_proxy_cores": 0.4},
        },
    )
    out = analysis.cpu_per_request(df).set_index("mode")
    assert out.loc["kestrel", "server_us_per_request"] == pytest.approx(150.0)
    assert math.isnan(out.loc["kestrel", "proxy_us_per_request"])
    assert out.loc["nginx", "server_us_per_request"] == pytest.approx(200.0)
    assert out.loc["nginx", "proxy_us_per_request"] == pytest.approx(100.0)
    assert out.loc["nginx", "loadgen_us_per_request"] == pytest.approx(250.0)
