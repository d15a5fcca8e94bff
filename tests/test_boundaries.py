"""The repeated intervals' boundaries as a report reads them: the first look's exact, later
ones fitted in chunks from the sequences that can cross, the committed table for the claims
profiles' plan and each Holm level, and its Monte Carlo error (hostbench/analysis/
sequential.py, benchmarks/sequential_boundaries.py)."""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import sequential, student_t
from hostbench.analysis.intervals import at_confidence
from hostbench.analysis.sequential import Plan


def test_the_first_look_is_the_t_quantile_of_what_it_spends():
    whole, _ = sequential.fitted_boundaries(3, 16, 0.05, 300_000, 1)
    spent = sequential.spent(3 / 16)
    assert whole[0] == student_t.t_quantile(1 - spent / 2, 2)


def test_chunked_fitting_spends_the_error_look_by_look():
    first, last = 3, 10
    whole, parts = sequential.fitted_boundaries(first, last, 0.05, 600_000, 5, batches=3)
    assert len(parts) == 3 and all(len(p) == len(whole) for p in parts)
    x = np.random.default_rng(99).standard_normal((300_000, last))  # not the fitting's
    k = np.arange(first, last + 1)
    mean = np.cumsum(x, axis=1)[:, first - 1 :] / k
    sd = np.sqrt((np.cumsum(x**2, axis=1)[:, first - 1 :] - k * mean**2) / (k - 1))
    t = np.abs(mean) / (sd / np.sqrt(k))
    crossed = (t >= np.asarray(whole)).any(axis=1).mean()
    assert crossed == pytest.approx(0.05, abs=0.002)


def test_a_report_reads_the_committed_table_for_the_claims_plan():
    table = pd.read_csv(sequential.BOUNDARIES_FILE)
    at_95 = table[(table["first"] == 3) & (table["last"] == 16) & (table["comparisons"] == 1)]
    assert sequential.t_boundaries(3, 16) == tuple(at_95.sort_values("look")["boundary"])
    # A Holm level arrives as 1 - (1 - 0.05 / m): the same row.
    holm = at_confidence(Plan(3, 16), 1 - 0.05 / 2)
    two = table[(table["first"] == 3) & (table["last"] == 16) & (table["comparisons"] == 2)]
    assert Plan(3, 16, holm.alpha).t_critical(3) == two[two["look"] == 1]["boundary"].item()


def test_the_committed_boundaries_carry_a_small_monte_carlo_error():
    table = pd.read_csv(sequential.BOUNDARIES_FILE)
    later = table[table["look"] > 1]
    assert (later["mc_error"] > 0).all()
    assert (later["mc_error"] / later["boundary"]).max() < 0.002
    assert (table[table["look"] == 1]["mc_error"] < 1e-12).all()  # exact


def test_a_plan_outside_the_table_is_fitted_with_its_fixed_seed():
    assert (
        sequential.t_boundaries(3, 9)
        == sequential.fitted_boundaries(
            3, 9, sequential.ALPHA, sequential.CALIBRATION_DRAWS, sequential.CALIBRATION_SEED
        )[0]
    )
