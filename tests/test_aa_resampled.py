"""The claims rule on resampled A/A blocks (hostbench/analysis/aa_resampled.py): the draws keep
a block's scenarios and a group's blocks together, the vectorised repeated intervals are the
package's own, and constructed runs with a known answer get the verdicts the rule gives."""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import aa_resampled, verdicts
from hostbench.analysis.reference import load_claims
from hostbench.analysis.sequential import Plan, repeated_interval

PLAN = Plan(3, 8)
SCENARIOS = ["html", "text", "json", "xml"]


def _wide(blocks: int = 30) -> pd.DataFrame:
    # Block b's log ratio in scenario s: b + s / 10, so every draw names its block and scenario.
    return pd.DataFrame([[b + s / 10 for s in range(4)] for b in range(blocks)], columns=SCENARIOS)


def test_draws_keep_scenarios_and_launch_triples_together_and_never_repeat_a_group():
    samples = aa_resampled.resampled(_wide(), runs=50, blocks=8, stretch=3, centred=False, seed=1)
    assert samples.shape == (50, 8, 4)
    block = np.floor(samples[:, :, 0])
    assert np.allclose(samples - block[:, :, None], np.arange(4) / 10)  # scenarios together
    for run in block:
        groups = run[::3]
        assert (groups % 3 == 0).all() and len(set(groups)) == len(groups)
        assert np.array_equal(run[:3], groups[0] + np.arange(3))  # a triple in order
    centred = aa_resampled.resampled(_wide(), runs=5, blocks=8, stretch=1, centred=True, seed=1)
    assert np.allclose(centred.min(axis=(0, 1)), centred.min(axis=(0, 1))[0])  # one offset each
    with pytest.raises(ValueError, match="fewer than 3 groups"):
        aa_resampled.resampled(_wide(6), runs=1, blocks=8, stretch=3, centred=False, seed=1)


def test_the_vectorised_repeated_intervals_are_the_packages_own():
    rng = np.random.default_rng(3)
    samples = rng.normal(0, 0.02, size=(4, PLAN.last, 1))
    low, high = aa_resampled.repeated_bounds(samples, PLAN)
    for run in range(4):
        for n in range(PLAN.first, PLAN.last + 1):
            _, _, want_low, want_high = repeated_interval(samples[run, :n, 0], PLAN)
            assert (low[run, n - 1, 0], high[run, n - 1, 0]) == pytest.approx((want_low, want_high))
    assert np.isnan(low[:, : PLAN.first - 1]).all()


def test_constructed_runs_get_the_verdicts_the_rule_gives():
    claims = aa_resampled.testable_claims(load_claims("jcsi2018"), SCENARIOS)
    names = [c.name for c in claims]
    assert len(claims) == 5  # the not-testable HTTP.sys and IIS in-process claims left out
    fastest = claims[names.index("Kestrel alone is the fastest hosting model")]
    assert len(fastest.columns) == 4
    # Kestrel 10% faster everywhere, +-0.5%: "the fastest" supported at the first look, the
    # +70% claim smaller, and the run stops there. The twin equal to Kestrel, +-2%: "the
    # fastest" stays undecided to the cap.
    noise = 0.005 * (-1.0) ** np.arange(PLAN.last)[:, None] * np.ones(4)
    faster, equal = np.log(1.10) + noise, 4 * noise * np.array([1, -1, 1, -1])
    judged = aa_resampled.judge(np.stack([faster, equal]), PLAN, claims)
    verdict = judged.set_index(["run", "claim"])["verdict"]
    assert verdict[0, fastest.name] == verdicts.SUPPORTED
    assert verdict[0, "Kestrel is about 70% faster than the standard model on HTML"] == (
        verdicts.SMALLER
    )
    assert verdict[1, fastest.name] == verdicts.UNDECIDED
    blocks = judged.groupby("run")["blocks"].first()
    assert (blocks[0], blocks[1]) == (PLAN.first, PLAN.last)
    # Between identical launches "the fastest" has no right verdict, the +70% claim "smaller".
    assert aa_resampled.truth_verdict(fastest) == verdicts.UNDECIDED
    assert aa_resampled.wrong_verdicts(fastest) == [verdicts.SUPPORTED, verdicts.NOT_SUPPORTED]


def test_one_slow_scenario_refutes_at_holms_level_only_when_it_clears_it():
    claims = aa_resampled.testable_claims(load_claims("jcsi2018"), SCENARIOS)
    fastest = next(c for c in claims if c.name == "Kestrel alone is the fastest hosting model")
    # HTML 6% slower, +-1%: clear of 1.00 at 95% and at Holm's 1 - 5%/4 by the first look.
    noise = 0.01 * (-1.0) ** np.arange(PLAN.last)
    run = np.stack([np.log(0.94) + noise, noise, -noise, noise], axis=1)
    judged = aa_resampled.judge(run[None], PLAN, [fastest])
    assert judged["verdict"].iloc[0] == verdicts.NOT_SUPPORTED
    excluded = aa_resampled.comparison_exclusions(run[None], PLAN)
    assert excluded[0, 0].tolist() == [False, True]  # HTML below, never above
    assert not excluded[0, 1:].any()
