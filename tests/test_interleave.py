"""Interleaved windows without starting a process: the slices' schedule, the k6 script made
from it, the per-target counts read from real recorded k6 summaries, and the validity rule.

The fixtures come from scripts/record_interleave_fixtures.py (4 VUs, 0.25 s slices, 2 s):
`ok` two TestApps on /text, `mixed` a TestApp and a port nothing listens on. The numbers
below are read off their summary.json by eye (k6's own sub-metrics per target tag).
"""

import itertools
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from hostbench.errors import BadInput
from hostbench.harness.measure.interleave import COUNT_TOLERANCE_PCT, target_reasons
from hostbench.harness.measure.k6_interleaved import k6_interleaved_script, parse_k6_targets
from hostbench.harness.measure.slices import SliceSchedule, slice_schedule
from hostbench.harness.measure.tool_output import parse_k6
from hostbench.harness.measure.window import count_diff_pct
from hostbench.params import StudyParams

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen" / "k6-interleaved"


def test_every_target_gets_the_same_time_in_whole_rounds():
    for targets, slice_s, window_s in [(2, 0.25, 30), (2, 2, 30), (3, 0.1, 30), (2, 15, 30)]:
        s = slice_schedule(targets, slice_s, window_s, seed=3)
        assert Counter(s.order) == dict.fromkeys(range(targets), s.rounds)
        assert {s.seconds(t) for t in range(targets)} == {s.rounds * slice_s}
        assert sum(s.seconds(t) for t in range(targets)) == pytest.approx(s.duration_s)
        # The nearest whole number of rounds: 30 s of 2 s slices over 2 targets is 8 rounds.
        assert s.rounds == max(1, round(window_s / (targets * slice_s)))
    assert slice_schedule(2, 2, 30, seed=1).duration_s == 32


def test_each_round_is_one_slice_per_target_in_a_seeded_random_order():
    s = slice_schedule(2, 0.25, 30, seed=11)
    rounds = [s.order[i : i + 2] for i in range(0, len(s.order), 2)]
    assert all(sorted(r) == [0, 1] for r in rounds)
    firsts = Counter(r[0] for r in rounds)
    # 60 fair coin flips: both orders occur (each misses with probability 2^-60).
    assert firsts[0] > 0 and firsts[1] > 0
    assert slice_schedule(2, 0.25, 30, seed=11) == s  # the seed gives the order back
    assert slice_schedule(2, 0.25, 30, seed=12).order != s.order
    three = slice_schedule(3, 0.5, 60, seed=5)
    assert len({three.order[i : i + 3] for i in range(0, len(three.order), 3)}) > 1


@pytest.mark.parametrize(
    "args, message",
    [
        ((1, 0.25, 30), "needs 2 or more targets, got 1"),
        ((2, 0.01, 30), "slice_s must be a number >= 0.05 s, got 0.01"),
        ((2, math.nan, 30), "slice_s must be a number >= 0.05 s"),
        ((2, 10, 15), "window_s 15 is shorter than one slice per target (2 x 10 s)"),
        ((2, 0.2505, 30), "k6's clock counts whole milliseconds"),
    ],
)
def test_bad_schedules_are_one_line_saying_what_is_allowed(args, message):
    with pytest.raises(BadInput) as info:
        slice_schedule(*args, seed=1)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_script_carries_the_targets_the_order_and_the_whole_duration():
    s = SliceSchedule(targets=2, slice_s=0.25, seed=1, order=(1, 0, 0, 1))
    script = k6_interleaved_script(["http://127.0.0.1:1/text", "http://127.0.0.1:2/text"], 8, s)
    assert 'const URLS = ["http://127.0.0.1:1/text", "http://127.0.0.1:2/text"];' in script
    assert "const SLICE_MS = 250;" in script and "const ORDER = [1, 0, 0, 1];" in script
    assert 'vus: 8,\n  duration: "1000ms"' in script
    assert "exec.scenario.startTime" in script  # slices counted from the load's own start
    assert "const START_MS = 0;" in script
    # A warm-up together: the slices from a start the harness set on its own clock, and k6
    # running a little longer than the slices (its start-up before the first).
    warm = k6_interleaved_script(["http://a/text", "http://b/text"], 8, s, "x.json", 1234, 2.5)
    assert "const START_MS = 1234;" in warm and 'duration: "2500ms"' in warm


def test_the_time_a_target_had_between_two_readings_follows_its_slices():
    s = SliceSchedule(targets=2, slice_s=0.25, seed=1, order=(1, 0, 0, 1))
    assert s.seconds_between(0, 0, 1.0) == s.seconds(0) == 0.5
    assert s.seconds_between(1, 0, 1.0) == s.seconds(1) == 0.5
    assert s.seconds_between(0, 0.1, 0.4) == pytest.approx(0.15)  # part of its slice 2
    assert s.seconds_between(1, 0.1, 0.4) == pytest.approx(0.15)  # the rest of slice 1
    # Before the first slice the script sends to the first slice's target, after the last
    # to the last's.
    assert s.seconds_between(1, -0.5, 0.0) == 0.5 and s.seconds_between(0, -0.5, 0.0) == 0
    assert s.seconds_between(1, 0.9, 1.3) == pytest.approx(0.4)
    assert s.seconds_between(0, 0.9, 1.3) == 0
    # Any split of a stretch gives each target the same time in all.
    cuts = [0, 0.13, 0.26, 0.61, 0.99, 1.0]
    for t in (0, 1):
        parts = sum(s.seconds_between(t, a, b) for a, b in itertools.pairwise(cuts))
        assert parts == pytest.approx(s.seconds(t))


def _fixture(case: str):
    folder = FIXTURES / case
    meta = json.loads((folder / "meta.json").read_text())
    schedule = SliceSchedule(2, meta["schedule"]["slice_s"], meta["schedule"]["seed"],
                             tuple(meta["schedule"]["order"]))  # fmt: skip
    return (folder / "summary.json").read_text(), schedule, meta


def test_each_targets_count_over_its_own_time_from_a_real_summary():
    summary, schedule, meta = _fixture("ok")
    t0, t1 = parse_k6_targets(summary, schedule)
    assert (t0.requests, t1.requests) == (2050, 2788)
    assert [t0.requests, t1.requests] == meta["server_requests"]  # as the apps counted them
    assert t0.duration_s == t1.duration_s == 1.0  # four slices of 0.25 s each
    assert t0.rps == 2050.0 and t1.rps == 2788.0
    assert t0.latency_p50_ms <= t0.latency_p99_ms <= t0.latency_max_ms
    assert t0.errors == t1.errors == t0.non_2xx == t1.non_2xx == 0
    total = parse_k6(summary)  # the window as a whole: the two targets together
    assert total.requests == t0.requests + t1.requests
    assert t0.bytes_read + t1.bytes_read == pytest.approx(total.bytes_read, abs=1)


def test_a_target_that_never_answers_has_its_errors_and_no_bytes():
    summary, schedule, meta = _fixture("mixed")
    t0, t1 = parse_k6_targets(summary, schedule)
    assert t0.requests == 2518 == meta["server_requests"][0] and t0.errors == 0
    assert t1.requests == 0 and t1.errors == 3509
    assert t1.bytes_read == 0 and t0.bytes_read == parse_k6(summary).bytes_read
    assert math.isnan(t1.latency_p50_ms)


def _row(requests=1000, server=1000, errors=0, non_2xx=0):
    diff = count_diff_pct(requests, server)
    return {"requests": requests, "server_requests": server, "count_diff_pct": diff,
            "errors": errors, "non_2xx": non_2xx}  # fmt: skip


def test_a_target_is_valid_only_when_both_counts_agree_and_every_answer_was_good():
    assert COUNT_TOLERANCE_PCT == 1.0
    assert target_reasons(_row(1000, 1000)) == ""
    assert target_reasons(_row(1009, 1000)) == ""  # 0.9% apart
    assert "k6 counted 1020, the app 1000" in target_reasons(_row(1020, 1000))
    assert "3 transport errors" in target_reasons(_row(errors=3))
    assert "2 non-2xx" in target_reasons(_row(non_2xx=2))
    assert "counter could not be read" in target_reasons(_row(server=None))
    assert target_reasons(_row(0, 0)) == "no response in its slices"


STUDY = {"modes": ["kestrel", "nginx-keepalive"], "scenarios": ["text"], "tools": ["k6"],
         "concurrency": [8], "duration_s": 15, "warmup_s": 0, "repetitions": 3}  # fmt: skip


@pytest.mark.parametrize(
    "change, message",
    [
        ({"tools": ["k6", "bombardier"]}, "bombardier cannot switch target within a run"),
        ({"interleave_slice_s": 20}, "is longer than duration_s 15"),
        ({"modes": ["kestrel"]}, "scenario text has one mode to measure, nothing to interleave"),
        ({"scenario_modes": {"text": ["kestrel"]}}, "leave interleave_slice_s out (null)"),
        ({"interleave_slice_s": 0.01}, "'interleave_slice_s' must be a number >= 0.05"),
        ({"interleave_slice_s": 0.2505}, "whole milliseconds"),
    ],
)
def test_interleaved_windows_are_refused_where_they_cannot_run(change, message):
    with pytest.raises(BadInput) as info:
        StudyParams.from_dict({**STUDY, "interleave_slice_s": 0.25, **change})
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("where", [{"topology": "netns"}, {"topology": "ssh", "inventory": "i"}])
def test_interleaved_windows_run_across_two_hosts(where):
    # k6 where the load generator lives, each target's trees where it runs (interleave.py).
    p = StudyParams.from_dict({**STUDY, "interleave_slice_s": 0.25, **where})
    assert p.measured_settings()["topology"] == where["topology"]


def test_interleaving_is_off_by_default_and_in_the_fingerprint_only_when_set():
    off = StudyParams.from_dict(STUDY)
    on = StudyParams.from_dict({**STUDY, "interleave_slice_s": 0.25})
    assert off.interleave_slice_s is None and "interleave_slice_s" not in off.measured_settings()
    assert on.measured_settings()["interleave_slice_s"] == 0.25


def test_with_focus_a_blocks_first_window_holds_every_mode_and_the_others_the_focus_alone():
    from hostbench.harness.measure.designs import SWITCHING_DESIGN
    from hostbench.harness.order import run_order

    params = StudyParams.from_dict({**STUDY, "modes": ["nginx-keepalive", "kestrel", "nginx",
                                                       "caddy"], "baseline": "nginx-keepalive",
                                    "scenarios": ["text", "html"], "windows": 3,
                                    "focus": ["kestrel"], "interleave_slice_s": 0.25})  # fmt: skip
    for block in (1, 2, 3):
        windows = SWITCHING_DESIGN.windows([s for s in run_order(params, 7) if s.block == block])
        members = Counter(frozenset(s.mode.id for s in w) for w in windows)
        assert members == {frozenset(params.modes): 2,  # one per scenario
                           frozenset({"kestrel", "nginx-keepalive"}): 4}  # fmt: skip
    # A block a target adds measures the focus and the baseline alone.
    added = SWITCHING_DESIGN.windows([s for s in run_order(params, 7, blocks=4) if s.block == 4])
    assert {frozenset(s.mode.id for s in w) for w in added} == {
        frozenset({"kestrel", "nginx-keepalive"})
    }
    assert len(added) == 6
