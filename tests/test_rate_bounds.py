"""Bounds on a rate (hostbench/analysis/rate_bounds.py): the clustered bound against a hand
computation on constructed tables, and the exact bounds against their closed forms."""

import math

import pandas as pd
import pytest

from hostbench.analysis import rate_bounds
from hostbench.analysis.student_t import incomplete_beta
from hostbench.errors import BadInput


def _table(clusters: list[list[int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(i, seen) for i, members in enumerate(clusters) for seen in members],
        columns=["cluster", "seen"],
    )


def test_the_clustered_bound_matches_a_hand_computation():
    # 4 clusters of 2: [1, 1], [0, 0], [0, 0], [1, 0]. p = 3/8; cluster means 1, 0, 0, 1/2.
    # MSB = 2 x ((5/8)^2 + (3/8)^2 + (3/8)^2 + (1/8)^2) / 3 = 11/24;
    # MSW = (1/4 + 1/4) / (8 - 4) = 1/8; m0 = (8 - 16/8) / 3 = 2.
    # ICC = (11/24 - 3/24) / (11/24 + 3/24) = 8/14 = 4/7; design effect 1 + 4/7 = 11/7;
    # effective counts 3 x 7/11 = 21/11 of 8 x 7/11 = 56/11.
    c = rate_bounds.clustered_upper_bound(_table([[1, 1], [0, 0], [0, 0], [1, 0]]))
    assert c.icc == pytest.approx(4 / 7)
    assert c.design_effect == pytest.approx(11 / 7)
    assert (c.effective_seen, c.effective_total) == pytest.approx((21 / 11, 56 / 11))
    assert (c.seen, c.total, c.clusters) == (3, 8, 4)
    # The bound is the p at which P(X <= 21/11) = 5% for X ~ Bin(56/11, p), through the beta:
    # 1 - I_p(21/11 + 1, 56/11 - 21/11) = 0.05.
    assert 1 - incomplete_beta(c.bound, 21 / 11 + 1, 35 / 11) == pytest.approx(0.05, abs=1e-9)
    assert c.bound > c.independent_bound == pytest.approx(rate_bounds.upper_bound(3, 8))


def test_clusters_that_agree_throughout_count_once_each():
    # 10 clusters of 2, each all excluded or none (2 and 8): ICC 1, design effect 2, so the
    # bound is the exact one of 2 in 10.
    c = rate_bounds.clustered_upper_bound(_table([[1, 1]] * 2 + [[0, 0]] * 8))
    assert c.icc == pytest.approx(1.0) and c.design_effect == pytest.approx(2.0)
    assert c.bound == pytest.approx(rate_bounds.upper_bound(2, 10), abs=1e-12)


def test_uncorrelated_or_alike_clusters_keep_the_independent_bound():
    # Each cluster holds one exclusion of two: the clusters alike, ICC -1, floored at 0.
    c = rate_bounds.clustered_upper_bound(_table([[1, 0]] * 5))
    assert c.icc == pytest.approx(-1.0) and c.design_effect == 1.0
    assert c.bound == pytest.approx(c.independent_bound)
    # None excluded anywhere: no correlation to estimate, the clusters are counted (3 of them).
    none = rate_bounds.clustered_upper_bound(_table([[0, 0, 0, 0]] * 3))
    assert math.isnan(none.icc) and none.design_effect == 4.0
    assert none.bound == pytest.approx(1 - 0.05 ** (1 / 3), abs=1e-9)


def test_the_exact_bounds_have_their_closed_forms():
    for total in (8, 30):
        assert rate_bounds.upper_bound(0, total) == pytest.approx(1 - 0.05 ** (1 / total))
    # Two-sided: with none seen the upper end is 1 - 0.025 ** (1 / n), with all seen the lower
    # end 0.025 ** (1 / n).
    low, high = rate_bounds.interval(0, 20)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 20))
    low, high = rate_bounds.interval(20, 20)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 20))
    low, high = rate_bounds.interval(250, 10_000)
    assert low < 0.025 < high and high - low < 0.007
    with pytest.raises(BadInput, match="need 0 <= seen <= total"):
        rate_bounds.upper_bound(3, 2)
