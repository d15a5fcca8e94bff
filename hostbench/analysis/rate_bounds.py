"""Bounds on a rate seen `seen` times in `total` trials: the exact (Clopper-Pearson) bounds of
independent trials, and the same for trials that come in clusters.

The A/A check's intervals come in clusters: the four scenarios of a group of three blocks share
those blocks' launches and their stretch of the machine, so whether one excludes 100% is not
independent of whether its neighbours do. A cluster of m correlated trials carries less than m
trials' worth of information: Kish's design effect, 1 + (m - 1) x ICC, with ICC the
intraclass correlation of the 0/1 outcomes, divides both counts, and the Clopper-Pearson bound
of the effective counts (real-valued: the beta function takes them) is the clustered bound
(Korn and Graubard 1998, without their degrees-of-freedom term). Why this and not a cluster
bootstrap: with a dozen events in some fifty clusters a bootstrap's percentile bound is a
large-sample approximation, and with none seen it is 0; the design-effect bound is the exact
one when the clusters' trials are uncorrelated, never below it (a negative ICC counts as 0),
and where no correlation can be estimated (no trial differs from another) it counts clusters,
not trials (ICC 1), the most the clustering can cost."""

import math
from functools import lru_cache
from typing import NamedTuple

import pandas as pd

from ..errors import BadInput
from .student_t import incomplete_beta

BOUND_CONFIDENCE = 0.95  # one-sided, for a bound; two-sided for an interval


@lru_cache(maxsize=4096)
def _beta_quantile(q: float, a: float, b: float) -> float:
    """The q quantile of Beta(a, b), by bisection on the regularized incomplete beta (100
    steps: the pages that state a bound ask for the same ones again)."""
    low, high = 0.0, 1.0
    for _ in range(100):
        p = (low + high) / 2
        low, high = (p, high) if incomplete_beta(p, a, b) < q else (low, p)
    return (low + high) / 2


def _check(seen: float, total: float) -> None:
    if not (0 <= seen <= total and total > 0):
        raise BadInput(f"{seen} of {total}: need 0 <= seen <= total and total > 0")


def upper_bound(seen: float, total: float, confidence: float = BOUND_CONFIDENCE) -> float:
    """The one-sided Clopper-Pearson upper bound: the p at which seeing `seen` or fewer has
    probability 1 - confidence, the confidence quantile of Beta(seen + 1, total - seen).
    With none seen it is 1 - (1 - confidence) ** (1 / total). Counts may be real (effective
    counts)."""
    _check(seen, total)
    if seen >= total:
        return 1.0
    return _beta_quantile(confidence, seen + 1, total - seen)


def interval(
    seen: float, total: float, confidence: float = BOUND_CONFIDENCE
) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval (each end at (1 - confidence) / 2): a simulated
    rate's Monte Carlo interval."""
    _check(seen, total)
    tail = (1 - confidence) / 2
    low = 0.0 if seen == 0 else _beta_quantile(tail, seen, total - seen + 1)
    high = 1.0 if seen >= total else _beta_quantile(1 - tail, seen + 1, total - seen)
    return low, high


def intraclass_correlation(outcomes: pd.DataFrame) -> float:
    """The one-way ANOVA estimate of the intraclass correlation of 0/1 outcomes (columns
    `cluster`, `seen`; clusters of any size): (MSB - MSW) / (MSB + (m0 - 1) MSW), m0 the
    clusters' adjusted mean size. NaN where it cannot be estimated: fewer than two clusters,
    no cluster with two trials, or no outcome differing from another."""
    y = outcomes["seen"].astype(float)
    groups = y.groupby(outcomes["cluster"].to_numpy())
    sizes, means = groups.size(), groups.mean()
    total, clusters = len(y), len(sizes)
    if clusters < 2 or total - clusters < 1:
        return math.nan
    between = float((sizes * (means - y.mean()) ** 2).sum()) / (clusters - 1)
    within = float(((y - outcomes["cluster"].map(means).to_numpy()) ** 2).sum()) / (
        total - clusters
    )
    m0 = (total - float((sizes**2).sum()) / total) / (clusters - 1)
    denominator = between + (m0 - 1) * within
    return math.nan if denominator <= 0 else (between - within) / denominator


class Clustered(NamedTuple):
    """A rate's clustered bound and what it rests on."""

    seen: int
    total: int
    clusters: int
    icc: float  # as estimated (NaN: not estimable)
    design_effect: float  # 1 + (mean size - 1) x the ICC used (floored at 0; 1 where NaN)
    effective_seen: float
    effective_total: float
    bound: float
    independent_bound: float  # the plain Clopper-Pearson bound, the trials taken as independent


def clustered_upper_bound(
    outcomes: pd.DataFrame, confidence: float = BOUND_CONFIDENCE
) -> Clustered:
    """The upper bound on the rate of `seen` among trials in clusters (columns `cluster`,
    `seen`): Clopper-Pearson on the counts divided by the design effect (module doc)."""
    seen, total = int(outcomes["seen"].sum()), len(outcomes)
    clusters = int(outcomes["cluster"].nunique())
    icc = intraclass_correlation(outcomes)
    used = 1.0 if math.isnan(icc) else max(icc, 0.0)
    effect = 1 + (total / clusters - 1) * used
    return Clustered(seen, total, clusters, icc, effect, seen / effect, total / effect,
                     upper_bound(seen / effect, total / effect, confidence),
                     upper_bound(seen, total, confidence))  # fmt: skip
