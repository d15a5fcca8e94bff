"""The interleaved design's arithmetic (hostbench/analysis/components.py), on constructed log
ratios with a known answer: the nested ANOVA's components, the ratio's interval, the bias
against the longest slice, and which chunks count. Its measuring is run live in
test_interleave_live.py."""

import importlib.util
import itertools
import json
import math
from dataclasses import replace

import pandas as pd
import pytest

from hostbench.analysis import components
from hostbench.analysis.student_t import t_quantile
from hostbench.catalog import scenario_label
from hostbench.harness.measure.interleave import InterleavedWindow
from hostbench.harness.measure.slices import SliceSchedule
from hostbench.paths import ROOT

_spec = importlib.util.spec_from_file_location(
    "interleave_components", ROOT / "benchmarks" / "interleave_components.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

MU = math.log(1.3)
A, B, C = 0.05, 0.02, 0.01  # launch, run and chunk deviations


def nested(a=A, b=B, c=C, launches=3, offset=0.0) -> pd.DataFrame:
    """Log ratios mu + launch + run + chunk, each level's deviations chosen so the mean
    squares are known: launch means mu+a, mu, mu-a; run means +-b about their launch's;
    chunks +-c about their run's. With 2 runs of 2 chunks: MS_chunk = 2c^2, MS_run = 4b^2,
    MS_launch = 4a^2 (3 launches), so sd_chunk^2 = 2c^2, sd_run^2 = 2b^2 - c^2 and
    sd_launch^2 = a^2 - b^2."""
    launch_dev = [a, 0.0, -a][:launches]
    rows = []
    for (li, la), (run, rb), (chunk, cc) in itertools.product(
        enumerate(launch_dev, 1), [(1, b), (2, -b)], [(1, c), (2, -c)]
    ):
        rows.append({"launch": li, "run": run, "chunk": chunk, "value": MU + la + rb + cc + offset})
    return pd.DataFrame(rows)


def test_the_components_of_a_known_nested_design():
    got = components.components(nested())
    assert got["sd_chunk"] == pytest.approx(math.sqrt(2 * C**2))
    assert got["sd_run"] == pytest.approx(math.sqrt(2 * B**2 - C**2))
    assert got["sd_launch"] == pytest.approx(math.sqrt(A**2 - B**2))


def test_a_component_the_data_cannot_tell_from_zero_is_zero():
    # Run means that differ less than their chunks' noise explains: 2b^2 - c^2 < 0.
    assert components.components(nested(b=0.005, c=0.02))["sd_run"] == 0.0
    one_launch = components.components(nested(launches=1))
    assert math.isnan(one_launch["sd_launch"])  # one launch: no between-launches component
    assert one_launch["sd_run"] == pytest.approx(math.sqrt(2 * B**2 - C**2))


def test_with_one_run_per_launch_the_launches_hold_what_runs_would():
    # Launch means mu+a, mu, mu-a, 2 chunks +-c each: MS_launch = 2a^2, MS_chunk = 2c^2.
    one_run = nested()
    one_run = one_run[one_run["run"] == 1].assign(value=lambda d: d["value"] - B)
    got = components.components(one_run)
    assert math.isnan(got["sd_run"])
    assert got["sd_launch"] == pytest.approx(math.sqrt(A**2 - C**2))


def test_the_interval_takes_the_launch_as_its_unit():
    unit, means = components.unit_means(nested())
    assert unit == "launches" and means.tolist() == pytest.approx([MU + A, MU, MU - A])
    centre, low, high = components.interval(means)
    half = t_quantile(0.975, 2) * A / math.sqrt(3)  # the launch means' sd is a
    assert (centre, low, high) == pytest.approx((MU, MU - half, MU + half))
    unit, means = components.unit_means(nested(launches=1))
    assert unit == "runs" and len(means) == 2


def _chunks(frames: dict[float, pd.DataFrame]) -> pd.DataFrame:
    """Tidy chunk rows as the script writes them: per slice length, a Kestrel row with
    the log ratio and a baseline row without one; the baseline's log rate is the frame's
    `drift` (0 without one) about 1000/s, Kestrel's that times the ratio."""
    rows = []
    for slice_s, d in frames.items():
        for r in d.itertuples():
            ids = {"launch": r.launch, "run": r.run, "chunk": r.chunk, "slice_s": slice_s,
                   "scenario": "text", "valid": True, "foreign_cores": 0.01}  # fmt: skip
            base = 1000 * math.exp(getattr(r, "drift", 0.0))
            rows.append({**ids, "mode": "kestrel", "log_ratio": r.value,
                         "rate": base * math.exp(r.value)})  # fmt: skip
            rows.append({**ids, "mode": "nginx-keepalive", "log_ratio": math.nan, "rate": base})
    return pd.DataFrame(rows)


def test_the_two_rates_spread_and_move_together_as_the_ratio_lets_them():
    design = nested()  # 12 chunks; the ratio's own deviations sum to 0.026 in squares
    # The baseline drifts by +-0.1, in a pattern orthogonal to every level of the ratio's
    # deviations (+ - - + over each launch's 2 runs x 2 chunks); Kestrel's rate drifts with it.
    drift = [0.1 * s for s in (1, -1, -1, 1) * 3]
    shared = _chunks({0.25: design.assign(drift=drift)})
    got = components.rates_together(shared, "nginx-keepalive").iloc[0]
    assert got["sd_rate_baseline"] == pytest.approx(math.sqrt(0.12 / 11))
    assert got["sd_rate"] == pytest.approx(math.sqrt((0.12 + 0.026) / 11))
    assert got["rates_correlation"] == pytest.approx(math.sqrt(0.12 / (0.12 + 0.026)))
    # Kestrel's rate holds still while the baseline drifts: all of the drift is in the ratio.
    still = design.assign(drift=drift).assign(value=lambda d: MU - d["drift"])
    got = components.rates_together(_chunks({0.25: still}), "nginx-keepalive").iloc[0]
    assert got["sd_rate"] == pytest.approx(0.0, abs=1e-12)
    assert got["sd_rate_baseline"] == pytest.approx(math.sqrt(0.12 / 11))
    # A chunk on a busy machine (its two rows) counts neither in the ratio nor here.
    busy = shared.assign(foreign_cores=[0.5, 0.5] + [0.01] * (len(shared) - 2))
    pd.testing.assert_frame_equal(
        components.rates_together(busy, "nginx-keepalive"),
        components.rates_together(shared.iloc[2:], "nginx-keepalive"),
    )


def test_the_summary_gives_each_slice_its_ratio_and_its_bias_against_the_longest():
    chunks = _chunks({0.25: nested(offset=0.05), 15.0: nested()})
    s = components.summarise(chunks).set_index("slice_s")
    assert s.loc[15.0, "ratio"] == pytest.approx(1.3)
    assert s.loc[0.25, "ratio"] == pytest.approx(1.3 * math.exp(0.05))
    # Paired launch by launch, the offset is exact: an interval of no width around it.
    assert s.loc[0.25, ["bias", "bias_low", "bias_high"]].tolist() == pytest.approx(
        [math.exp(0.05)] * 3
    )
    assert s.loc[15.0, "bias"] == pytest.approx(1.0)
    assert s.loc[0.25, "chunks"] == 12 and s.loc[0.25, "units"] == "3 launches"
    assert s.loc[0.25, "sd_launch"] == pytest.approx(math.sqrt(A**2 - B**2))
    text = components.table(components.summarise(chunks), "nginx-keepalive")
    assert "Kestrel / " in text and "| 0.25 | 12 (3 launches) |" in text


def test_the_method_page_says_how_much_variance_each_slice_removes(tmp_path):
    # Within a run, 0.25 s slices' chunks spread half as much as 15 s slices': 4-fold.
    chunks = _chunks({0.25: nested(c=0.01), 15.0: nested(c=0.02)})
    chunks.to_csv(tmp_path / components.CHUNKS_FILE, index=False)
    setup = {"modes": ["kestrel", "nginx-keepalive"], "scenarios": ["text"], "slices": [0.25, 15],
             "launches": 3, "runs": 2, "chunks": 2, "chunk_s": 30.0, "vus": 8}  # fmt: skip
    (tmp_path / components.SEED_FILE).write_text(json.dumps(setup))
    drop = components.variance_drop(components.summarise(chunks)).set_index("slice_s")
    assert drop.loc[0.25, "variance_drop"] == pytest.approx(4.0)
    assert drop.loc[15.0, "variance_drop"] == pytest.approx(1.0)
    text = components.method_block(tmp_path, "data/benchmarks/x")
    assert "`data/benchmarks/x`" in text and "3 fresh launches" in text
    assert "(24 of 24 chunks)" in text
    assert f"run is {scenario_label('text')}: 4 times smaller at 0.25 s." in text
    # In all: the launches' and runs' components (the same at both lengths) stay, so the
    # variance of a chunk falls from 2c^2 + (2b^2 - c^2) + (a^2 - b^2) = 0.0033 to 0.0030.
    assert drop.loc[0.25, "total_drop"] == pytest.approx(0.0033 / 0.0030)
    assert f"together) it is {scenario_label('text')}: 1.1 times smaller at 0.25 s." in text


def test_a_chunk_counts_only_when_every_target_counted_cleanly_on_a_quiet_machine():
    chunks = _chunks({1.0: nested()})
    first = (chunks["launch"] == 1) & (chunks["run"] == 1) & (chunks["chunk"] == 1)
    chunks.loc[first & (chunks["mode"] == "nginx-keepalive"), "valid"] = False  # its partner
    second = (chunks["launch"] == 2) & (chunks["run"] == 1) & (chunks["chunk"] == 1)
    chunks.loc[second, "foreign_cores"] = 0.5  # busy
    assert len(components.valid_chunks(chunks, quick=False)) == 10
    assert len(components.valid_chunks(chunks, quick=True)) == 11  # a smoke run is not held to it
    assert components.summarise(chunks).loc[0, "chunks"] == 10


def test_a_chunks_rows_carry_each_modes_time_rate_and_log_ratio():
    schedule = SliceSchedule(2, 0.5, 9, (0, 1, 1, 0))
    target = {"tool": "k6", "requests": 3000, "seconds": 1.0, "server_requests": 3000,
              "count_diff_pct": 0.0,
              "cpu_us_per_request": 100.0, "latency_p50_ms": 0.5, "valid": True,
              "invalid_reason": ""}  # fmt: skip
    window = InterleavedWindow(
        [{**target, "mode": "kestrel", "rps": 3000.0},
         {**target, "mode": "nginx-keepalive", "requests": 2000, "rps": 2000.0}],
        {"schedule_seed": 9, "rounds": 2, "foreign_cores": 0.0, "cpu_steal_pct": 0.0,
         "cpu_loadgen_s": 1.0, "started_at": "t"},
        schedule,
    )  # fmt: skip
    ids = {"launch": 1, "run": 1, "slice_s": 0.5, "scenario": "text", "chunk": 1}
    rows = bench.chunk_rows(window, ids, "nginx-keepalive")
    assert [r["mode"] for r in rows] == ["kestrel", "nginx-keepalive"]
    assert rows[0]["log_ratio"] == pytest.approx(math.log(1.5)) and math.isnan(rows[1]["log_ratio"])
    assert list(rows[0])[:10] == ["launch", "run", "slice_s", "scenario", "chunk", "mode",
                                  "requests", "seconds", "rate", "log_ratio"]  # fmt: skip


@pytest.mark.parametrize(
    "args, message",
    [
        (["--slices", "0.01"], "slice_s must be a number >= 0.05 s, got 0.01"),
        (["--slices", "20"], "window_s 30.0 is shorter than one slice per target"),
        (["--chunks", "0"], "--chunks must be 1 or more, got 0"),
        (["--launches", "1", "--runs", "1", "--chunks", "1"], "gives no interval"),
        (["--modes", "kestrel", "iis"], "unknown mode 'iis'; allowed:"),
        (["--scenarios", "pdf"], "unknown scenario 'pdf'"),
        (["--sensitivity", "kestrel"], "each mode once"),
        (["--connections", "0"], "--connections must be 1 or more, got 0"),
        (["--app-env", "1X=0"], "--app-env: '1X' is not an environment variable name"),
        # Alternating runs: each slice a run of the tool, as long as the tool can time one.
        (
            ["--tool", "bombardier", "--slices", "0.5"],
            "each slice is one run of it, and it times runs of 1 s or more, not 0.5 s",
        ),
        (["--tool", "wrk", "--slices", "1.5"], "it times runs in whole seconds only, not 1.5 s"),
        (["--tool", "ab", "--chunk-s", "2.5"], "duration_s 2.5: ab takes whole seconds only"),
    ],
)
def test_bad_options_are_one_line_before_anything_starts(args, message, capsys):
    assert bench.main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_analysing_a_folder_without_chunks_says_what_to_give(tmp_path, capsys):
    assert bench.main(["--analyse", str(tmp_path)]) == 2
    assert "chunks.csv not found" in capsys.readouterr().err


def test_the_schedule_a_profile_gets_from_the_components():
    from hostbench.params import StudyParams

    chunks = _chunks({0.25: nested(c=0.01), 15.0: nested(c=0.02)})
    summary = components.summarise(chunks)
    row = next(summary[summary["slice_s"] == 0.25].itertuples())
    # A block is one launch: its launch and run components whole, its chunks' over 2 windows.
    spread = math.sqrt(row.sd_launch**2 + row.sd_run**2 + row.sd_chunk**2 / 2)
    assert components.block_spread(row, 2) == pytest.approx(spread)
    half = t_quantile(0.975, 2) * spread / math.sqrt(3)
    assert components.predicted_halfwidth_pct(row, 2, 3) == pytest.approx(100 * math.expm1(half))
    params = StudyParams.from_dict({
        "modes": ["nginx-keepalive", "kestrel"], "scenarios": ["text"], "tools": ["k6"],
        "concurrency": [8], "duration_s": 15, "warmup_s": 0, "repetitions": 3, "windows": 2,
        "interleave_slice_s": 0.25, "target_halfwidth_pct": 2, "max_minutes": 45,
    })  # fmt: skip
    text = components.schedule_text(summary, "jcsi2018", params)
    assert f"±{100 * math.expm1(half):.1f}% after 3 blocks" in text and "for ±2%" in text
    # A profile at a slice length that was not measured gets no prediction.
    assert components.schedule_text(summary, "x", replace(params, interleave_slice_s=0.5)) == ""
    # Nor one that loads with another tool: its window is of another design.
    assert components.schedule_text(summary, "x", params, tool="bombardier") == ""


def test_the_method_page_names_alternating_runs_and_what_their_gaps_cost(tmp_path):
    chunks = _chunks({1.0: nested(c=0.01), 15.0: nested(c=0.02)})
    chunks["seconds"] = 15.0  # each mode's half of a 30 s chunk
    # Gaps between runs: 1 s a chunk at 1 s slices (30 runs), 0.1 s at 15 s slices (2 runs).
    chunks["gap_total_s"] = chunks["slice_s"].map({1.0: 1.0, 15.0: 0.1})
    chunks.to_csv(tmp_path / components.CHUNKS_FILE, index=False)
    setup = {"modes": ["kestrel", "nginx-keepalive"], "scenarios": ["text"], "slices": [1, 15],
             "launches": 3, "runs": 2, "chunks": 2, "chunk_s": 30.0, "tool": "bombardier",
             "connections": 8}  # fmt: skip
    (tmp_path / components.SEED_FILE).write_text(json.dumps(setup))
    text = components.method_block(tmp_path, "data/benchmarks/x-bombardier")
    assert "(bombardier at 8 connections, one run per slice; every mode half" in text
    assert "k6" not in text
    assert "a chunk of 30 s of runs lost on average 1.00 s at 1 s slices, 0.10 s at 15 s" in text
    assert f"run is {scenario_label('text')}: 4 times smaller at 1 s." in text
    # A variance that grew says so, not "falls 0.25-fold".
    grew = _chunks({1.0: nested(c=0.02), 15.0: nested(c=0.01)})
    grew.assign(seconds=15.0, gap_total_s=0.5).to_csv(tmp_path / components.CHUNKS_FILE,
                                                      index=False)  # fmt: skip
    text = components.method_block(tmp_path, "data/benchmarks/x-bombardier")
    assert f"run is {scenario_label('text')}: 4 times larger at 1 s." in text


def test_the_tools_design_sets_the_default_slices_and_the_smoke():
    k6 = bench.resolved(bench.parser().parse_args([]))
    assert k6.tool == "k6" and k6.slices == bench.DEFAULT_SLICES and k6.connections == 8
    runs = bench.resolved(bench.parser().parse_args(["--tool", "wrk", "--connections", "16"]))
    assert runs.slices == bench.DEFAULT_RUN_SLICES and runs.connections == 16
    bench.check(runs)  # whole-second slices a run of wrk can time: accepted
    smoke = bench.resolved(bench.parser().parse_args(["--tool", "ab", "--quick"]))
    assert smoke.slices == bench.QUICK_RUNS["slices"]
    assert smoke.chunk_s == bench.QUICK_RUNS["chunk_s"]
    bench.check(smoke)
    assert bench.resolved(bench.parser().parse_args(["--vus", "4"])).connections == 4  # as before


def test_the_spread_table_gives_each_setting_its_row_and_where_its_spread_lies(tmp_path):
    one_run = nested()
    one_run = one_run[one_run["run"] == 1].assign(value=lambda d: d["value"] - B)
    settings = {
        "k6-8vus": (
            {"tool": "k6", "connections": 8, "app_env": {}, "cpu_model": "AMD EPYC"},
            one_run,
        ),
        "k6-8vus-tieredpgo-0": (
            {"tool": "k6", "connections": 8, "app_env": {"DOTNET_TieredPGO": "0"}},
            one_run.assign(value=lambda d: MU + (d["value"] - MU) / 10),  # a tenth the spread
        ),
    }
    folders = []
    for name, (setup, frame) in settings.items():
        folder = tmp_path / name
        folder.mkdir()
        chunks = _chunks({0.25: frame}).assign(cpu_steal_pct=0.02)
        chunks.to_csv(folder / components.CHUNKS_FILE, index=False)
        setup |= {"modes": ["kestrel", "nginx-keepalive"], "scenarios": ["text"], "slices": [0.25],
                  "launches": 3, "runs": 1, "chunks": 2, "chunk_s": 20.0}  # fmt: skip
        (folder / components.SEED_FILE).write_text(json.dumps(setup))
        folders.append(folder)
    text = components.spread_block(folders, ["a/k6-8vus", "a/k6-8vus-tieredpgo-0"])
    rows = [line for line in text.splitlines() if line.startswith("| `a/")]
    assert len(rows) == 2
    assert "| `a/k6-8vus` | AMD EPYC | Kestrel / " in rows[0]
    assert "| `a/k6-8vus-tieredpgo-0` | not recorded |" in rows[1]
    assert "| 3 x 2 chunks of 20 s | 6 (others at most 0.01 cores, steal at most 0.0%) |" in rows[0]
    assert "k6, 8 VUs, one run switching target in 0.25 s slices | defaults |" in rows[0]
    assert "| DOTNET_TieredPGO=0 |" in rows[1]
    wide, narrow = (math.sqrt(A**2 - C**2), math.sqrt(A**2 - C**2) / 10)
    assert f"| {wide:.4f} | " in rows[0] and f"| {narrow:.4f} | " in rows[1]
    # The baseline's rate held still in both: Kestrel's spread is the ratio's, and no
    # correlation can be told.
    assert rows[1].endswith(" / 0.000 | n/a |") and "| 0.000 / 0.000 |" not in rows[0]
