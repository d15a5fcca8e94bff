"""Alternating runs (the interleaved window of bombardier, wrk and ab) without starting a
process: each target's rate from its own runs, the gaps between runs, the latency arithmetic,
how far the two counts may be apart, and what is refused.

The windows in fixtures/loadgen/alternate/<tool>/ are real: scripts/record_alternate_fixtures.py
ran each tool over two Kestrel apps (4 connections, 1 s slices, 2 rounds: four short runs) and
kept their raw files, interleave.json and meta.json (the counts as the live window judged
them, the app's own among them). Here the runs are parsed again by each tool's own parser.
"""

import json
import math
import shlex
from pathlib import Path

import pytest

from hostbench.errors import BadInput
from hostbench.harness.measure.alternate import (
    ALTERNATING,
    Run,
    alternate_reasons,
    alternating_window,
    combined,
    count_slack,
    gaps,
    per_target,
    read_runs,
    run_folder,
    run_load,
)
from hostbench.harness.measure.designs import window_for
from hostbench.harness.measure.interleave import COUNT_TOLERANCE_PCT, interleaved_window
from hostbench.harness.measure.tool_output import parse_bombardier
from hostbench.load import TOOLS, Load, alternating_tools, read_load
from hostbench.params import StudyParams

LOADGEN = Path(__file__).parent / "fixtures" / "loadgen"
FIXTURES = LOADGEN / "alternate"


def window(tool: str):
    """A recorded window: its schedule, its runs parsed again, interleave.json, meta.json."""
    schedule, results, record = read_runs(FIXTURES / tool)
    return schedule, results, record, json.loads((FIXTURES / tool / "meta.json").read_text())


def test_the_tools_that_cannot_switch_target_alternate_runs():
    assert alternating_tools() == ("ab", "bombardier", "wrk")
    assert window_for("k6") is interleaved_window
    assert {window_for(tool) for tool in alternating_tools()} == {alternating_window}
    assert [t for t in TOOLS if TOOLS[t].switches_target] == ["k6"]


@pytest.mark.parametrize("tool", alternating_tools())
def test_each_targets_rate_is_its_runs_requests_over_their_own_clocks(tool):
    schedule, results, record, meta = window(tool)
    assert record["design"] == ALTERNATING and record["tool"] == tool
    assert len(results) == len(schedule.order) == 4 and schedule.rounds == 2
    for i, (mine, judged) in enumerate(zip(per_target(schedule, results), meta["targets"],
                                           strict=True)):  # fmt: skip
        runs = [r for r, t in zip(results, schedule.order, strict=True) if t == i]
        assert len(runs) == judged["slices"] == 2
        assert mine.requests == sum(r.requests for r in runs) == judged["requests"] > 0
        assert mine.duration_s == pytest.approx(sum(r.duration_s for r in runs))
        assert mine.duration_s == pytest.approx(judged["seconds"])  # as the live window had it
        assert mine.rps == pytest.approx(mine.requests / mine.duration_s)
        # Each run lasted its slice by the tool's own clock (wrk stops on a 100 ms tick).
        assert all(0.9 <= r.duration_s / schedule.slice_s < 1.2 for r in runs), runs
        assert mine.errors == mine.non_2xx == 0
        # The app's own count of the same requests, within what two runs may leave in flight.
        slack = count_slack(judged["server_requests"], 2, Load(tool, meta["connections"], 1))
        assert judged["count_slack"] == slack
        assert abs(mine.requests - judged["server_requests"]) <= slack
        assert judged["valid"], judged["invalid_reason"]


@pytest.mark.parametrize("tool", alternating_tools())
def test_each_slices_run_went_to_its_target_for_one_slice(tool):
    schedule, _, record, _ = window(tool)
    assert len(set(record["urls"])) == 2
    for i, target in enumerate(schedule.order):
        folder = FIXTURES / tool / "load" / run_folder(i, target)
        assert shlex.split((folder / "command.txt").read_text())[-1] == record["urls"][target]
        load = read_load(folder)
        assert load.duration_s == schedule.slice_s and load.warmup_s == 0
    assert [r["target"] for r in record["runs"]] == list(schedule.order)


@pytest.mark.parametrize("tool", alternating_tools())
def test_the_gaps_add_up_to_the_time_no_runs_clock_covered(tool):
    schedule, results, record, meta = window(tool)
    runs = [Run(r["slice"], r["target"], r["started_s"], r["wall_s"], result)
            for r, result in zip(record["runs"], results, strict=True)]  # fmt: skip
    between = gaps(runs)
    assert between == pytest.approx([r["gap_s"] for r in record["runs"]], abs=1e-3)
    # Every run's tool starts up, exits and is read: a gap is never nothing.
    assert all(gap > 0 for gap in between), between
    clocks = sum(r.duration_s for r in results)
    assert sum(between) == pytest.approx(runs[-1].ended_s - clocks, abs=1e-3)
    assert record["gap_total_s"] == pytest.approx(sum(between), abs=1e-3)
    assert meta["window"]["tool_s"] == pytest.approx(clocks)
    assert record["wall_s"] >= runs[-1].ended_s - 1e-3


def test_a_targets_latency_is_its_runs_weighted_by_their_requests():
    schedule, results, _, _ = window("bombardier")
    runs = [r for r, t in zip(results, schedule.order, strict=True) if t == 0]
    mine, total = combined(runs), sum(r.requests for r in runs)
    weighted = sum(r.latency_mean_ms * r.requests for r in runs) / total
    assert mine.latency_mean_ms == pytest.approx(weighted)
    assert mine.latency_max_ms == max(r.latency_max_ms for r in runs)
    for q in ("p50", "p90", "p99"):
        values = [getattr(r, f"latency_{q}_ms") for r in runs]
        assert min(values) <= getattr(mine, f"latency_{q}_ms") <= max(values)
    assert mine.bytes_read == sum(r.bytes_read for r in runs)
    # A run that got no response (a port nothing listens on) adds its errors, its time and
    # no latency.
    refused = parse_bombardier((LOADGEN / "bombardier" / "refused" / "stdout.txt").read_text())
    both = combined([runs[0], refused])
    assert refused.requests == 0 and math.isnan(refused.latency_mean_ms)
    assert both.requests == runs[0].requests and both.errors == refused.errors > 0
    assert both.latency_mean_ms == pytest.approx(runs[0].latency_mean_ms)
    assert both.duration_s == pytest.approx(runs[0].duration_s + refused.duration_s)


def _row(requests=96_000, server=100_000, slack=4096.0, **counts):
    return {"tool": "wrk", "requests": requests, "server_requests": server, "slices": 4,
            "count_slack": slack, "errors": 0, "non_2xx": 0, **counts}  # fmt: skip


def test_the_counts_may_be_apart_by_1_pct_or_what_each_run_leaves_in_flight():
    pipelined = Load("wrk", 64, 1, pipeline=16)
    assert count_slack(100_000, 4, pipelined) == 4 * 64 * 16  # more than 1%: in flight
    assert count_slack(10_000_000, 4, pipelined) == COUNT_TOLERANCE_PCT / 100 * 10_000_000
    assert alternate_reasons(_row()) == ""  # 4,000 apart, 4,096 allowed
    assert "wrk counted 95000, the app 100000 (more than 4,096 apart" in alternate_reasons(
        _row(requests=95_000)
    )
    assert "3 transport errors" in alternate_reasons(_row(errors=3))
    assert "2 non-2xx" in alternate_reasons(_row(non_2xx=2))
    assert "counter could not be read" in alternate_reasons(_row(server=None))
    assert alternate_reasons(_row(requests=0, server=0)) == "no response in its runs"


@pytest.mark.parametrize(
    "load, slice_s, message",
    [
        (Load("k6", 4, 2), 1, "k6 switches target within one run"),
        (Load("bombardier", 4, 2, requests=1000), 1, "a load of 1000 requests cannot be cut"),
        (Load("bombardier", 4, 2), 0.5, "it times runs of 1 s or more, not 0.5 s"),
        (Load("wrk", 4, 2), 1.5, "it times runs in whole seconds only, not 1.5 s"),
        (Load("ab", 4, 2), 0.5, "ab cannot switch target within a run, so each slice is one"),
    ],
)
def test_a_run_the_tool_cannot_make_is_refused_in_one_line(load, slice_s, message):
    with pytest.raises(BadInput) as info:
        run_load(load, slice_s)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_each_run_fires_the_cells_load_for_one_slice():
    cell = Load("wrk", 64, 30, warmup_s=5, pipeline=16, path="/plaintext",
                base_url="http://127.0.0.1:1")  # fmt: skip
    each = run_load(cell, 2)
    assert (each.duration_s, each.warmup_s, each.base_url) == (2.0, 0.0, None)
    assert (each.concurrency, each.pipeline, each.path) == (64, 16, "/plaintext")
    assert run_load(Load("bombardier", 8, 15), 1.25).duration_s == 1.25


STUDY = {"modes": ["kestrel", "nginx-keepalive"], "scenarios": ["text"], "tools": ["bombardier"],
         "concurrency": [8], "duration_s": 15, "warmup_s": 0, "repetitions": 3,
         "interleave_slice_s": 1}  # fmt: skip


@pytest.mark.parametrize(
    "change, message",
    [
        ({"interleave_slice_s": 0.5}, "params key 'interleave_slice_s' 0.5: bombardier cannot "
         "switch target within a run, so each slice is one run of it, and it times runs of 1 s "
         "or more, not 0.5 s"),
        ({"tools": ["wrk"], "interleave_slice_s": 1.5}, "whole seconds only, not 1.5 s"),
        ({"tools": ["k6", "ab"], "interleave_slice_s": 0.25}, "ab cannot switch target"),
        ({"tools": ["ab"], "requests": 1000}, "an interleaved window is timed"),
    ],
)  # fmt: skip
def test_params_refuse_slices_the_tools_runs_cannot_make(change, message):
    with pytest.raises(BadInput) as info:
        StudyParams.from_dict({**STUDY, **change})
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "tools, slice_s",
    [(["bombardier"], 1.5), (["wrk"], 1), (["ab"], 2), (["k6", "wrk"], 1), (["k6"], 0.25)],
)
def test_every_tool_can_interleave_in_its_own_design(tools, slice_s):
    params = StudyParams.from_dict({**STUDY, "tools": tools, "interleave_slice_s": slice_s})
    assert params.interleave_slice_s == slice_s
    # On any topology: each run starts where the load generator lives (test_ssh.py, live).
    for topology in ("netns", "ssh"):
        where = {"topology": topology, **({"inventory": "hosts.ini"} if topology == "ssh" else {})}
        assert StudyParams.from_dict({**STUDY, "tools": tools, "interleave_slice_s": slice_s,
                                      **where}).interleave_slice_s == slice_s  # fmt: skip
    assert params.measured_settings()["interleave_slice_s"] == slice_s
