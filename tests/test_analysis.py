"""hostbench.analysis on small synthetic tables whose answers are known by hand.

The numbers here are made up for the arithmetic (baseline 1000 rps, kestrel 2000 -> 200%);
they are not measurements.
"""

import math

import pandas as pd
import pytest

from conftest import record_params
from hostbench.analysis import invalid_runs
from hostbench.analysis import tables as analysis
from hostbench.analysis.prose import validity_note
from hostbench.errors import BadInput
from hostbench.paths import RUNS
from hostbench.studies import DEFAULT_STUDY, get_study


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


def test_saturation_gives_an_interleaved_window_one_rest_of_the_system():
    # Two modes shared one window (one start): busy 3.6 cores and the load generator's 1.0
    # are the window's, each mode's app and proxy cores its own over equal halves of it, so
    # the rest is 3.6 - 1.0 - mean(2.0, 2.0 + 1.0) = 0.1 for both, not a remainder per mode.
    start = {"started_at": "2026-11-26T20:00:00+00:00", "cpu_total_pct": 90.0}
    cpu = {("nginx", "html"): start, ("kestrel", "html"): start}
    df = runs({("nginx", "html"): [1000.0], ("kestrel", "html"): [2000.0]}, cpu=cpu)
    out = analysis.saturation(df).set_index("mode")
    assert out["other_cores"].tolist() == pytest.approx([0.1, 0.1])
    # The same rows in windows of their own: each its own remainder (0.6 and 0.0, clipped).
    alone = analysis.saturation(df.drop(columns="started_at")).set_index("mode")
    assert alone.loc["kestrel", "other_cores"] == pytest.approx(0.6)
    assert alone.loc["nginx", "other_cores"] == 0.0


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


def test_invalid_rows_are_left_out_and_counted():
    df = runs({("kestrel", "html"): [2000, 2100, 1900], ("nginx", "html"): [1000, 1000, 1000]})
    df["valid"] = [True, False, True, True, True, True]
    kept = analysis.prepare(df)
    assert len(kept) == 5 and kept.attrs["left_out_invalid"] == 1
    assert len(analysis.prepare(df, valid_only=False)) == 6
    assert analysis.summarize(df).set_index("mode").loc["kestrel", "n"] == 2


def test_write_ratios_pairs_within_blocks_with_the_studys_baseline(tmp_path):
    df = runs({("kestrel", "text"): [2000, 2200, 1800], ("nginx", "text"): [1000, 1100, 900]})
    df.to_csv(tmp_path / "results.csv", index=False)
    record_params(tmp_path, baseline="nginx")
    ratios = pd.read_csv(analysis.write_ratios(tmp_path))
    assert ratios["measure"].tolist() == ["rps", "cpu_us_per_request"]
    rate, cpu = ratios.itertuples()
    assert (rate.mode, rate.n, rate.ratio_pct) == ("kestrel", 3, pytest.approx(200.0))
    assert rate.ci_low_pct == pytest.approx(200.0) and rate.ci_high_pct == pytest.approx(200.0)
    # Kestrel's 2 cores at twice the rate of nginx's 2 + 1 (app and proxy) per request.
    assert (cpu.mode, cpu.n) == ("kestrel", 3)
    assert cpu.ratio_pct == pytest.approx(100 * (2.0 / 2000) / (3.0 / 1000))


def sweep(rps_by_level: dict[int, list[float]], busy_pct: float = 97.0) -> pd.DataFrame:
    """A load sweep of kestrel/text: rps per block at each concurrency."""
    frames = [
        runs({("kestrel", "text"): values}, concurrency=level).assign(cpu_total_pct=busy_pct)
        for level, values in rps_by_level.items()
    ]
    return pd.concat(frames, ignore_index=True)


def test_calibration_knee_is_where_no_higher_level_exceeds_the_interval():
    table = analysis.calibration(
        sweep(
            {
                1: [1000, 1010, 990],
                2: [1900, 2000, 2100],
                4: [3000, 3100, 2900],
                8: [3050, 2950, 3000],
                16: [3000, 3020, 2980],
            }
        )  # fmt: skip
    )
    assert table["blocks"].eq(3).all()
    level4 = table.set_index("concurrency").loc[4]
    assert level4.rps_ci_low < 3000 < level4.rps_ci_high  # a t interval over the blocks
    assert table.loc[table["knee"], "concurrency"].tolist() == [4]
    (found,) = analysis.calibration_findings(table).itertuples(index=False)
    assert found.knee == 4 and found.cpu_busy_peak_pct == pytest.approx(97.0)
    assert not found.cpu_reached_100


def test_calibration_finds_no_knee_while_throughput_grows_or_with_one_block():
    growing = analysis.calibration(sweep({1: [1000, 1010, 990], 2: [2000, 2010, 1990],
                                          4: [3000, 3010, 2990]}, busy_pct=100.0))  # fmt: skip
    assert not growing["knee"].any()
    (found,) = analysis.calibration_findings(growing).itertuples(index=False)
    assert math.isnan(found.knee) and found.cpu_reached_100
    one_block = analysis.calibration(sweep({1: [1000], 2: [1000], 4: [1000]}))
    assert one_block["rps_ci_low"].isna().all() and not one_block["knee"].any()


def test_invalid_reasons_are_grouped_by_kind_and_reruns_counted():
    df = runs({("kestrel", "html"): [2000, 2100, 1900, 2000], ("nginx", "html"): [1000] * 4})
    df["valid"] = [False, False, False, True, True, True, True, False]
    df["invalid_reason"] = [
        "machine busy: 0.42 cores used by other processes",
        "machine busy: 0.30 cores used by other processes; 3 transport errors",
        "warm-up not steady after 20 s",
        "", "", "", "",
        "0.3 s: shorter than min_duration_s 5",
    ]  # fmt: skip
    df["attempt"] = [1, 1, 1, 2, 1, 1, 2, 1]
    table = invalid_runs.invalid_reasons(df).set_index("why")
    assert table.loc["machine busy (CPU used by other processes)", "runs"] == 2
    assert table.loc["transport errors", "runs"] == 1
    assert table.loc["warm-up not steady", "runs"] == 1
    assert table.loc["shorter than min_duration_s", "runs"] == 1
    assert table.loc[invalid_runs.RERUN_KIND, "runs"] == 2
    assert invalid_runs.reason_kind("1 cell broke at 3.5 s") == "N cell broke at N s"


def test_invalid_reasons_tolerate_results_without_the_new_columns():
    path = get_study(DEFAULT_STUDY).fixtures_dir / "quick-results.csv"  # before the new columns
    recorded = analysis.load_results(path, valid_only=False)
    assert invalid_runs.invalid_reasons(recorded).empty


def test_load_params_takes_the_run_folder_or_its_results_file(tmp_path):
    recorded = record_params(tmp_path, smoke=True, loadgen_cpus=[1])
    (tmp_path / "results.csv").write_text("")
    assert analysis.load_params(tmp_path / "results.csv") == analysis.load_params(tmp_path)
    params = analysis.load_params(tmp_path)
    assert params == recorded and analysis.is_smoke(tmp_path)
    assert params.loadgen_cpus == [1] and params.options.app_args == []  # typed, defaults too


def test_a_run_written_again_is_read_again_and_each_caller_gets_its_own_copy(tmp_path):
    # What was read is kept by the files' content: an edit that keeps the size is seen too.
    recorded = get_study(DEFAULT_STUDY).fixtures_dir / "quick-results.csv"
    results = tmp_path / "results.csv"
    results.write_text(recorded.read_text())
    first = analysis.load_results(results, valid_only=False)
    first["rps"] = 0.0  # the caller's own copy
    kept = analysis.load_results(results, valid_only=False)
    assert (kept["rps"] > 0).all()
    assert "nginx" in set(kept["mode"].astype(str))
    results.write_text(recorded.read_text().replace(",nginx,", ",caddy,"))  # the same size
    assert "nginx" not in set(analysis.load_results(results, valid_only=False)["mode"].astype(str))
    record_params(tmp_path, seed=1)
    record_params(tmp_path, seed=2)  # the same size, another seed
    assert analysis.load_params(tmp_path).seed == 2


def test_the_validity_note_counts_the_rows_results_csv_holds_not_the_launches():
    # Launches with several windows are one row once loaded; the note counts every window.
    # Two windows a block, two left out: the earlier committed example, on Intel Xeon.
    run = RUNS / "community" / "linux-proxies-2021-intel-xeon-interleaved"
    rows = pd.read_csv(run / "results.csv")
    loaded = analysis.load_results(run, valid_only=False)
    assert len(loaded) < len(rows)
    left_out = int((~rows["valid"]).sum())
    assert f"**{left_out} of {len(rows)} runs left out**" in validity_note(loaded)
