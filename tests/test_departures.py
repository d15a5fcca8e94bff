"""The stopping rule off its model (hostbench/analysis/departures.py): its error a side on
constructed sequences with known answers, the stress cases' known inflations, and the
committed runs' blocks as it reads them."""

import math

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import departures
from hostbench.analysis.sequential import Plan, repeated_interval
from hostbench.errors import BadInput
from hostbench.paths import RUNS

PLAN = Plan(3, 16)  # the claims profiles' plan
SEQUENCES = 20_000  # a 2.5% share's Monte Carlo sd about 0.11%


def test_normal_independent_blocks_err_at_the_spent_rate_a_side():
    logs = np.random.default_rng(1).standard_normal((SEQUENCES, PLAN.last))
    found = departures.miss_rates(logs, PLAN)
    for side in departures.SIDES:
        assert found[side] == pytest.approx(0.025, abs=0.005)


def test_a_miss_is_where_the_repeated_interval_excludes_the_truth():
    logs = np.random.default_rng(2).standard_normal((400, PLAN.last)) + 0.4
    for row in logs[:60]:
        _, _, low, high = repeated_interval(row, PLAN)
        found = departures.miss_rates(row[None, :], PLAN)
        assert (found["above"] == 1.0) == (low > 0)
        assert (found["below"] == 1.0) == (high < 0)


def test_resampling_a_long_normal_record_gives_the_models_rate():
    rng = np.random.default_rng(3)
    record = rng.standard_normal(5000)
    logs = departures.resampled(record - record.mean(), SEQUENCES, PLAN.last, rng)
    found = departures.miss_rates(logs, PLAN)
    assert max(found.values()) == pytest.approx(0.025, abs=0.006)


def test_resampled_rows_keep_a_blocks_scenarios_together():
    pool = np.arange(20.0).reshape(10, 2)
    pool[:, 1] += 100
    drawn = departures.resampled(pool, 50, 16, np.random.default_rng(4))
    assert drawn.shape == (50, 16, 2)
    assert np.all(drawn[:, :, 1] - drawn[:, :, 0] == 101)


def test_strong_serial_correlation_inflates_both_sides():
    logs = departures.ar1(SEQUENCES, PLAN.last, 0.5, np.random.default_rng(5))
    found = departures.miss_rates(logs, PLAN)
    assert min(found.values()) > 0.06


def test_negative_serial_correlation_errs_less():
    logs = departures.ar1(SEQUENCES, PLAN.last, -0.3, np.random.default_rng(6))
    assert max(departures.miss_rates(logs, PLAN).values()) < 0.025


def test_a_slow_block_inflates_the_side_its_mode_is_fast_on():
    logs = departures.slow_blocks(SEQUENCES, PLAN.last, 0.1, 3.0, np.random.default_rng(7))
    found = departures.miss_rates(logs, PLAN)
    # the rare slow blocks leave most sequences high of the mixture's mean
    assert found["above"] > 0.04
    assert found["below"] < 0.015
    assert departures.slow_block_skewness(0.1, 3.0) < -0.5


def test_cells_dropped_after_the_first_look_err_on_the_shifts_side():
    rng = np.random.default_rng(8)
    logs = departures.changed_make_up(SEQUENCES, PLAN.last, PLAN.first, 1.0, rng, truth="fewer")
    found = departures.miss_rates(logs, PLAN)
    assert found["below"] > 0.06  # the first blocks lie a block sd below the truth
    with pytest.raises(BadInput, match="allowed: every, fewer"):
        departures.changed_make_up(10, 16, 3, 1.0, rng, truth="first")


def test_widening_brings_an_inflated_case_to_the_spent_rate():
    logs = departures.ar1(5000, PLAN.last, 0.3, np.random.default_rng(9))
    factor = departures.widening_needed(logs, PLAN)
    assert factor > 1.1
    assert max(departures.miss_rates(logs, PLAN, factor).values()) <= 0.025


def test_miss_rates_refuses_sequences_shorter_than_the_cap():
    with pytest.raises(BadInput, match="need"):
        departures.miss_rates(np.zeros((5, 4)), PLAN)


def _blocks(values, record="r", scenario="html", cells=None) -> pd.DataFrame:
    n = len(values)
    cells = cells if cells is not None else 1
    return pd.DataFrame({"record": record, "variant": "", "mode": "kestrel", "tool": "k6",
                         "concurrency": 8, "scenario": scenario, "block": range(1, n + 1),
                         "log_ratio": values, "cells": cells})  # fmt: skip


def test_lag1_autocorrelation_of_a_long_ar1_record():
    x = departures.ar1(1, 4000, 0.6, np.random.default_rng(10))[0]
    found = departures.lag1_autocorrelation(_blocks(x))
    assert found["long"] == pytest.approx(0.6, abs=0.05)
    assert found["bias"] == pytest.approx(-1 / 4000)


def test_make_up_shift_of_a_constructed_comparison():
    values = [0.0, 0.2, -0.2, 1.0, 1.2, 0.8, 1.0]
    shifts = departures.make_up_shifts(_blocks(values, cells=[4, 4, 4, 1, 1, 1, 1]))
    row = shifts.iloc[0]
    assert (row.n_every, row.n_fewer) == (3, 4)
    assert row["shift"] == pytest.approx(1.0)
    sd = math.sqrt((2 * 0.04 + 3 * (0.08 / 3)) / 5)
    assert row.shift_sd == pytest.approx(1.0 / sd)


def test_the_committed_claims_run_dropped_cells_after_its_first_look():
    blocks = departures.measured_blocks([RUNS / "example-jcsi2018-claims"])
    html = blocks[blocks["scenario"] == "html"].sort_values("block")
    assert list(html["cells"]) == [4, 4, 4, 1, 1, 1, 1]
    shifts = departures.make_up_shifts(blocks)
    assert list(shifts["scenario"]) == ["html"]


def test_the_block_reads_the_cases_it_was_given(tmp_path):
    rng = np.random.default_rng(11)
    blocks = pd.concat([
        _blocks(rng.standard_normal(40) * 0.02, record="long"),
        _blocks(rng.standard_normal(7) * 0.02 + [0, 0, 0, 0.03, 0.03, 0.03, 0.03],
                record="claims", cells=[2, 2, 2, 1, 1, 1, 1]),
    ])  # fmt: skip
    table = departures.table(blocks, PLAN, runs=2000, reference_records=5)
    assert set(table["case"]) >= {departures.MODEL, departures.ALONE, departures.AR1,
                                  departures.SLOW, departures.MAKE_UP}  # fmt: skip
    table.to_csv(tmp_path / departures.DEPARTURES_FILE, index=False)
    text = departures.method_block(tmp_path, "somewhere", PLAN,
                                   departures.measured_facts(blocks, PLAN.first))  # fmt: skip
    assert "long: kestrel / html, 40 blocks" in text
    assert "Not withstood: " in text and "phi = 0.20" in text
