"""The verdicts: how a ratio's interval is judged against an article's number or a direction.

One rule, on the log scale the intervals live on (docs/method.md, "Verdicts"), so every page
words a claim the same way. Each claim is read once as a ratio to its baseline, its value
(hostbench/analysis/claims.py: reference/claims.csv):
  a size or an equivalence (+70% is 1.70, "basically the same" is 1.00): the ratio of
    ratios, ours / the article's, against one relative tolerance, log-symmetric (within
    ±15% is 1/1.15 to 1.15): REPRODUCED when its whole interval lies within it, SMALLER or
    LARGER when it lies wholly outside it on one side, else UNDECIDED;
  a direction or an order ("faster", "the fastest", "several-fold" = at least 2): SUPPORTED
    when the interval lies on the claimed side of the value, NOT_SUPPORTED when it lies on
    the other, else UNDECIDED.
A ratio from fewer than MIN_UNITS independent units (blocks) gets NOT_ENOUGH, whatever its
interval. A claim over several comparisons (claim_verdict) holds only where each does, each
at 95%; it is refuted where one comparison refutes it at the level Holm's split gives (1 -
5%/m first, for m comparisons), so the claim's error is at most 5%, not m times that.
Where the run's stand-in for the article's comparator is known to be slower than it (a full
hop for IIS in-process's none), ours over it is only an upper bound of the article's ratio
(bounded_verdict): a verdict says it is smaller (or, for a direction, not supported) when the
bound's whole interval lies below, and CONSISTENT, no more, when the article's is not ruled out.
A claim gets no interval where it needs what this machine cannot run (Windows): NOT_TESTABLE;
or where what it measured is gone from the runtime the package runs (a transport removed
from .NET), so this re-run leaves it out, though an older runtime could test it: NOT_RERUN.

The intervals come from intervals.py; the rule in words (tolerance_text) is in wording.py.
"""

import math
from collections.abc import Callable, Sequence

from ..errors import BadInput
from .intervals import is_missing

REPRODUCED = "reproduced"
SMALLER = "smaller than the article's"
LARGER = "larger than the article's"
DIFFERS = "differs from the article's"  # smaller on some comparisons, larger on others
SUPPORTED = "supported"
NOT_SUPPORTED = "not supported"
UNDECIDED = "undecided at this precision"
NOT_TESTABLE = "not testable here"
NOT_RERUN = "not re-run here"
NOT_ENOUGH = "not measured enough"
# Ours an upper bound of the article's ratio (bounded_verdict): it does not rule the article out.
CONSISTENT = "consistent with the article's (ours at most)"
VERDICTS = (REPRODUCED, SMALLER, LARGER, DIFFERS, SUPPORTED, NOT_SUPPORTED, CONSISTENT,
            UNDECIDED, NOT_TESTABLE, NOT_RERUN, NOT_ENOUGH)  # fmt: skip
# Fewer independent units than this and an interval says too little to decide anything: with
# 2 blocks a t interval has 1 degree of freedom and its width depends on one difference.
MIN_UNITS = 3
# How far ours may sit from the article's value and still reproduce it, relative and
# log-symmetric: ours / the article's within 1/(1 + t) to 1 + t. Declared once, printed on
# every page that judges a claim (wording.tolerance_text); docs/method.md says why 15%.
TOLERANCE_PCT = 15.0
SIDES = ("above", "below")
# The level of every interval a verdict reads: a claim's stated error, two-sided. A wrong
# verdict of one kind (reproduced where the truth lies outside the tolerance, smaller where it
# lies inside, ...) needs its interval to miss on one side: at most half of it.
CONFIDENCE = 0.95
# The verdicts that say a claim is wrong: one comparison is enough, so they split the error.
REFUTING = (NOT_SUPPORTED, SMALLER, LARGER)


def tolerance_edges(tolerance_pct: float = TOLERANCE_PCT) -> tuple[float, float]:
    """The ratio of ratios at each edge of the size verdicts' tolerance (size_verdict)."""
    t = 1 + tolerance_pct / 100
    return 1 / t, t


def _too_few(n) -> bool:
    return is_missing(n) or int(n) < MIN_UNITS


def size_verdict(
    ci_low: float, ci_high: float, article: float, *, n, tolerance_pct: float = TOLERANCE_PCT
) -> str:
    """A size or equivalence claim: our ratio's interval (ci_low, ci_high) against the
    article's ratio `article`, by the ratio of ratios and the tolerance (module rule)."""
    if _too_few(n):
        return NOT_ENOUGH
    if is_missing(ci_low) or is_missing(ci_high):
        return UNDECIDED
    low, high = ci_low / article, ci_high / article
    t = 1 + tolerance_pct / 100
    if 1 / t <= low and high <= t:
        return REPRODUCED
    if high < 1 / t:
        return SMALLER
    if low > t:
        return LARGER
    return UNDECIDED


def direction_verdict(ci_low: float, ci_high: float, side: str, *, n, value: float = 1.0) -> str:
    """A direction or order claim: our ratio's interval on `side` ("above" / "below") of
    `value` (1: faster / slower than the baseline; 2: at least twice)."""
    if side not in SIDES:
        raise BadInput(f"side must be {' or '.join(SIDES)}; got {side!r}")
    if _too_few(n):
        return NOT_ENOUGH
    if is_missing(ci_low) or is_missing(ci_high):
        return UNDECIDED
    above, below = ci_low > value, ci_high < value
    if (side == "above" and above) or (side == "below" and below):
        return SUPPORTED
    return NOT_SUPPORTED if above or below else UNDECIDED


def bounded_verdict(kind: str, ci_low: float, ci_high: float, value: float, side: str = "", *,
                    n, tolerance_pct: float = TOLERANCE_PCT) -> str:  # fmt: skip
    """A claim judged where ours bounds the article's ratio from above (its comparator's
    stand-in slower than it): the truth lies at or below ours, so only an interval wholly
    below what the claim needs refutes it (a size: below the tolerance's low edge, SMALLER;
    above `value`: NOT_SUPPORTED) or, for "below", supports it; where the interval lies wholly
    on the claim's side, the bound does not rule it out, CONSISTENT; else UNDECIDED. One side
    of an interval at 95%: wrong at most 2.5% of the time, as the two-sided rule's each way."""
    if _too_few(n):
        return NOT_ENOUGH
    if is_missing(ci_low) or is_missing(ci_high):
        return UNDECIDED
    if kind in ("size", "equivalence"):
        edge = value * tolerance_edges(tolerance_pct)[0]
        return SMALLER if ci_high < edge else CONSISTENT if ci_low >= edge else UNDECIDED
    if side not in SIDES:
        raise BadInput(f"side must be {' or '.join(SIDES)}; got {side!r}")
    if ci_high < value:
        return NOT_SUPPORTED if side == "above" else SUPPORTED
    return CONSISTENT if ci_low > value else UNDECIDED


def agrees_within_pct(ci_low: float, ci_high: float, article: float) -> float:
    """The smallest log-symmetric tolerance (in %) that holds the whole interval of ours /
    the article's: "agrees with the article's value to within ±X%". NaN without an interval."""
    if is_missing(ci_low) or is_missing(ci_high):
        return math.nan
    return 100 * (max(ci_high / article, article / ci_low) - 1)


def differs_by_pct(ci_low: float, ci_high: float, article: float) -> float:
    """How far, at least, ours lies from the article's value where the interval excludes it,
    on the same log-symmetric scale: "differs by at least Y%". NaN where it does not."""
    if is_missing(ci_low) or is_missing(ci_high):
        return math.nan
    low, high = ci_low / article, ci_high / article
    if low > 1:
        return 100 * (low - 1)
    if high < 1:
        return 100 * (1 / high - 1)
    return math.nan


def combined_verdict(verdicts) -> str:
    """The verdicts of a claim's comparisons in one, each read at the level that makes its
    error the claim's (claim_verdict: a refutation at Holm's level, a holding at 95%):
    NOT_ENOUGH if any was measured too little; for a direction NOT_SUPPORTED if any
    contradicts it; for a size SMALLER (or LARGER) if some are that and none the other,
    DIFFERS if both; REPRODUCED, SUPPORTED or CONSISTENT if all are; else UNDECIDED."""
    verdicts = list(verdicts)
    if not verdicts or NOT_ENOUGH in verdicts:
        return NOT_ENOUGH
    if all(v == NOT_TESTABLE for v in verdicts):
        return NOT_TESTABLE
    if NOT_SUPPORTED in verdicts:
        return NOT_SUPPORTED
    if SMALLER in verdicts and LARGER in verdicts:
        return DIFFERS
    for side in (SMALLER, LARGER):
        if side in verdicts:
            return side
    for holds in (REPRODUCED, SUPPORTED, CONSISTENT):
        if all(v == holds for v in verdicts):
            return holds
    return UNDECIDED


def claim_verdict(judged_at: Callable[[float], Sequence[str]],
                  confidence: float = CONFIDENCE) -> str:  # fmt: skip
    """One verdict for a claim over m comparisons whose error is the claim's, whatever m.

    judged_at(level): each comparison's verdict (size_verdict or direction_verdict) by its
    interval at that confidence, the same comparisons in the same order at every level.
    A claim holds (reproduced, supported) only where every comparison holds at `confidence`:
    an intersection-union test, wrong only where some comparison's truth lies outside, whose
    interval must then miss on that side, at most (1 - confidence) / 2, whatever m. A claim
    is refuted (not supported, smaller, larger, differs) where one comparison alone refutes
    it, so that error would add up over the comparisons (m of them: up to 1 - 0.975^m): it is
    judged by Holm's step-down instead. The m comparisons at 1 - alpha/m; those that refute
    there are kept, the rest judged again at 1 - alpha/(m - k) with k kept, until no more
    refute. The chance that any comparison wrongly refutes is then at most alpha / 2, as for
    one. With m = 1 it is the comparison's verdict."""
    first = list(judged_at(confidence))
    if len(first) <= 1 or NOT_ENOUGH in first or not any(v in REFUTING for v in first):
        return combined_verdict(first)
    alpha, refuted = 1 - confidence, {}
    while len(refuted) < len(first):
        left = [i for i in range(len(first)) if i not in refuted]
        at = first if len(left) == 1 else list(judged_at(1 - alpha / len(left)))
        found = {i: at[i] for i in left if at[i] in REFUTING}
        if not found:
            break
        refuted |= found
    return combined_verdict([refuted.get(i, UNDECIDED) for i in range(len(first))])


def family_error(claims: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """(at most, were they independent): the chance that at least one of `claims` verdicts
    errs, each at most 1 - confidence (claim_verdict). The claims of a run share its blocks,
    so the first, the sum of their rates (Bonferroni), is the bound that holds; the second,
    1 - confidence^claims, what it would be for claims on independent data."""
    each = 1 - confidence
    return min(1.0, claims * each), 1 - confidence**claims
