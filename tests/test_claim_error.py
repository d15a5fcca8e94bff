"""One claim, one error rate: Holm's split of a refutation over a claim's comparisons
(verdicts.claim_verdict), the family a run's claims make (wording.family_text), and every
design's interval at 95%: Stein's for a two-stage run (two_stage.py), a fixed design never
resumed with more blocks (harness.study.continued)."""

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import params_record
from hostbench.analysis import coverage, intervals, tables, verdicts, wording
from hostbench.analysis.student_t import t_quantile
from hostbench.analysis.two_stage import TwoStage, stein_interval
from hostbench.errors import BadInput
from hostbench.harness.study import continued, run_study
from hostbench.params import params_with_settings
from hostbench.paths import ROOT
from hostbench.studies import get_study

# Five blocks' log ratios with mean 0 and sd 1: a comparison's are centre + sd * these.
UNIT = np.array([-1.2649111, -0.6324555, 0.0, 0.6324555, 1.2649111])
SD = 0.03


def _below_one_just(at: float) -> float:
    """A centre whose interval at confidence `at` ends just below 0 (the log of 1): it
    excludes 1 at that level and at none stricter than a hair's."""
    half = t_quantile(0.5 + at / 2, len(UNIT) - 1) * SD / math.sqrt(len(UNIT))
    return -half * 1.001


def _judged_at(centres, kind="direction", side="above", article=1.0):
    """judged_at for claim_verdict: each comparison's verdict by its t interval at a level."""

    def at(level: float) -> list[str]:
        out = []
        for centre in centres:
            n, _, low, high = intervals.mean_interval(centre + SD * UNIT, level)
            if kind == "direction":
                out.append(verdicts.direction_verdict(math.exp(low), math.exp(high), side, n=n))
            else:
                out.append(verdicts.size_verdict(math.exp(low), math.exp(high), article, n=n))
        return out

    return at


def test_a_claim_with_one_comparison_is_judged_as_that_comparison():
    just = _below_one_just(0.95)
    assert verdicts.claim_verdict(_judged_at([just])) == verdicts.NOT_SUPPORTED
    assert verdicts.claim_verdict(_judged_at([-just])) == verdicts.SUPPORTED
    assert verdicts.claim_verdict(_judged_at([0.0])) == verdicts.UNDECIDED


def test_four_comparisons_each_just_refuting_at_95_do_not_refute_the_claim():
    # Each excludes 1 at 95% (the old rule: not supported) but none at 1 - 5%/4.
    just = _below_one_just(0.95)
    judged = _judged_at([just] * 4)
    assert judged(0.95) == [verdicts.NOT_SUPPORTED] * 4
    assert judged(1 - 0.05 / 4) == [verdicts.UNDECIDED] * 4
    assert verdicts.combined_verdict(judged(0.95)) == verdicts.NOT_SUPPORTED
    assert verdicts.claim_verdict(judged) == verdicts.UNDECIDED
    # One of them clear at 1 - 5%/4: refuted, whatever the other three say.
    clear = _below_one_just(1 - 0.05 / 4)
    assert verdicts.claim_verdict(_judged_at([clear, 0.0, 0.0, -just])) == verdicts.NOT_SUPPORTED
    # Holding needs no split: each at 95% (an intersection-union test).
    assert verdicts.claim_verdict(_judged_at([-just] * 4)) == verdicts.SUPPORTED


def test_two_comparisons_step_down_to_95_once_one_refutes_at_97_5():
    # A size claim of 1.00: one comparison clearly smaller at 1 - 5%/2, the other larger at
    # 95% only. Holm keeps the first at 97.5%, then judges the second at 95%: both refute,
    # on either side (differs); Bonferroni at 97.5% alone would say smaller.
    edge = math.log(1 + verdicts.TOLERANCE_PCT / 100)
    smaller = -edge + _below_one_just(1 - 0.05 / 2)
    larger = edge - _below_one_just(0.95)
    judged = _judged_at([smaller, larger], kind="size")
    assert judged(1 - 0.05 / 2) == [verdicts.SMALLER, verdicts.UNDECIDED]
    assert judged(0.95) == [verdicts.SMALLER, verdicts.LARGER]
    assert verdicts.claim_verdict(judged) == verdicts.DIFFERS
    # The larger one alone beside a reproduced one: at 97.5% it refutes nothing.
    assert verdicts.claim_verdict(_judged_at([0.0, larger], kind="size")) == verdicts.UNDECIDED
    # Measured too little anywhere: nothing is decided.
    too_few = lambda level: [verdicts.SMALLER, verdicts.NOT_ENOUGH]  # noqa: E731
    assert verdicts.claim_verdict(too_few) == verdicts.NOT_ENOUGH


def test_the_holm_split_holds_a_claims_error_at_its_rate_over_four_comparisons():
    # True ratio 1.00 on four independent comparisons of "faster": the old rule refuted it
    # up to 1 - 0.975^4 of the time; the split keeps it at 2.5% (simulated, fixed seed).
    rng = np.random.default_rng(7)
    runs, refuted_old, refuted_new = 4000, 0, 0
    for _ in range(runs):
        logs = rng.normal(0.0, SD, size=(4, 5))

        def at(level, logs=logs):
            out = []
            for x in logs:
                n, _, low, high = intervals.mean_interval(x, level)
                out.append(verdicts.direction_verdict(math.exp(low), math.exp(high), "above", n=n))
            return out

        refuted_old += verdicts.combined_verdict(at(0.95)) == verdicts.NOT_SUPPORTED
        refuted_new += verdicts.claim_verdict(at) == verdicts.NOT_SUPPORTED
    assert refuted_old / runs > 0.07  # about 9.6%
    assert refuted_new / runs < 0.035  # at most 2.5%, with the simulation's error


def test_the_family_sentence_counts_the_claims_judged_and_bounds_their_errors():
    judged = [verdicts.REPRODUCED, verdicts.UNDECIDED, verdicts.NOT_SUPPORTED,
              verdicts.NOT_TESTABLE, verdicts.NOT_ENOUGH]  # fmt: skip
    text = wording.family_text(judged)
    assert text.startswith("This run judges 3 claims by their intervals")
    assert "at most 15%" in text and f"{100 * (1 - 0.95**3):.0f}% were they independent" in text
    assert verdicts.family_error(30) == (1.0, pytest.approx(1 - 0.95**30))
    assert wording.family_text([verdicts.NOT_TESTABLE]) == ""


# --- Stein's interval ----------------------------------------------------------------------


def test_steins_interval_is_its_closed_form():
    logs = [0.10, 0.14, 0.09, 0.20, 0.05, 0.12, 0.11]
    blocks = [1, 2, 3, 4, 5, 6, 7]
    n, centre, low, high = stein_interval(logs, blocks, 3)
    s0 = math.sqrt(sum((v - 0.11) ** 2 for v in (0.10, 0.14, 0.09)) / 2)  # the first 3 alone
    half = 4.302652729911275 * s0 / math.sqrt(7)  # t(0.975, 2) over all 7 blocks
    assert n == 7 and centre == pytest.approx(sum(logs) / 7)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    # A first block with no pair: the first stage is the blocks up to 3 that have one.
    n, _, low, high = stein_interval([math.nan, *logs[1:]], blocks, 3)
    s0 = float(np.std([0.14, 0.09], ddof=1))
    assert n == 6 and high - low == pytest.approx(2 * 12.706204736174698 * s0 / math.sqrt(6))
    assert math.isnan(stein_interval([0.1, math.nan, 0.2], [1, 2, 5], 2)[2])


def test_a_two_stage_runs_ratios_are_steins_and_a_fixed_runs_are_not(tmp_path):
    rows = []
    for b, gain in enumerate([1.10, 1.15, 1.09, 1.22, 1.05], start=1):
        for mode, rps in (("kestrel", 1000 * gain), ("nginx", 1000.0)):
            rows.append(dict(mode=mode, scenario="html", tool="k6", concurrency=8, block=b,
                             rps=rps, valid=True))  # fmt: skip
    df = pd.DataFrame(rows)
    logs = np.log([1.10, 1.15, 1.09, 1.22, 1.05])
    r = intervals.paired_ratios(df, "nginx", plan=TwoStage(3)).iloc[0]
    _, _, low, high = stein_interval(logs, [1, 2, 3, 4, 5], 3)
    assert r["method"] == "stein" and (r["ci_low"], r["ci_high"]) == pytest.approx(
        (math.exp(low), math.exp(high)))  # fmt: skip
    fixed = intervals.paired_ratios(df, "nginx").iloc[0]
    assert fixed["method"] == "t-log" and fixed["ci_high"] != pytest.approx(r["ci_high"])
    # At another level (a claim's Holm split), the first stage's quantile at that level.
    r99 = intervals.paired_ratios(df, "nginx", plan=intervals.at_confidence(TwoStage(3), 0.99))
    _, _, _, high99 = stein_interval(logs, [1, 2, 3, 4, 5], 3, 0.99)
    assert r99["ci_high"].iloc[0] == pytest.approx(math.exp(high99))


def test_a_committed_two_stage_run_is_loaded_with_its_design(tmp_path):
    run = tmp_path / "run"
    source = ROOT / "data" / "runs" / get_study("jcsi2018").paper_run
    run.mkdir()
    for name in ("results.csv", "params.json", "design.json"):
        shutil.copy(source / name, run / name)
    first = json.loads((run / "design.json").read_text())["first_blocks"]
    assert tables.load_results(run).attrs[tables.PLAN] == TwoStage(first)
    params = json.loads((run / "params.json").read_text())
    params["target_halfwidth_pct"] = None  # a fixed design: its t intervals
    (run / "params.json").write_text(json.dumps(params))
    assert tables.load_results(run).attrs[tables.PLAN] is None


def test_every_designs_simulated_coverage_holds_95_and_the_pooled_two_stage_does_not():
    common = dict(first=3, target_pct=5.0, runs=20_000, seed=1)
    stein = coverage.simulate("two-stage, Stein's", 0.05, cap=200, **common)
    pooled = coverage.simulate("two-stage, pooled t(n - 1)", 0.05, cap=200, **common)
    assert stein["blocks_mean"] == pooled["blocks_mean"] > 3
    margin = 1.96 * math.sqrt(0.05 * 0.95 / 20_000)
    assert stein["covered"] > 0.95 - margin and pooled["covered"] < 0.93
    for design in ("fixed", "repeated"):
        found = coverage.simulate(design, 0.03, first=3, cap=16, runs=20_000, seed=1)
        assert found["covered"] > 0.95 - margin, design


# --- a fixed design resumed with more blocks -------------------------------------------------

QUICK = get_study("jcsi2018").params_path("quick")


def test_a_fixed_design_resumed_with_more_blocks_is_refused_saying_why(tmp_path):
    first = params_with_settings(QUICK, ["repetitions=2"])
    folder = tmp_path / "s"
    folder.mkdir()
    recorded = json.dumps(params_record(first, seed=1), indent=2)
    (folder / "params.json").write_text(recorded)
    more = params_with_settings(QUICK, ["repetitions=5"])
    with pytest.raises(BadInput, match=r"fixed design of 2 blocks resumed with 5.*new --run-id"):
        run_study(more, "s", tmp_path, progress=False)
    assert (folder / "params.json").read_text() == recorded
    old, new = json.loads(recorded), params_record(more, seed=1)
    assert "\n" not in continued(old, new)
    # The same blocks, or a design whose blocks follow the data, resume as before.
    assert continued(old, old) == ""
    sized = {"target_halfwidth_pct": 5, "stop_when_decided": False}
    assert continued({**old, **sized}, {**new, **sized}) == ""
