"""The words: how a ratio, a difference and their intervals are printed on every page.

One rounding rule for every page: whole percents of the baseline; the ratio rounded to the
nearest, the interval's low end floored and its high end ceiled, so a printed interval is never
narrower than the computed one (one that includes 100% is never shown as excluding it). An end
that lies beside 100% (100.77%, 99.6%) gets as many decimals as keep it on its side of 100%:
floored to "100%" it would print an interval that includes 100% beside a verdict that says it
excludes it. Tables, sentences and headlines all print through pct_text / ci_text / ratio_text.

The numbers come from intervals.py and the verdicts from verdicts.py; here they become text.
"""

import math
from decimal import Decimal

import pandas as pd

from ..errors import BadInput
from . import verdicts
from .intervals import is_missing
from .verdicts import MIN_UNITS, TOLERANCE_PCT, tolerance_edges

# --- printing an interval ------------------------------------------------------------------


def pct_text(ratio: float) -> str:
    """A ratio as a whole percent of the baseline: 1.554 -> "155%"; "n/a" when missing."""
    return "n/a" if is_missing(ratio) else f"{100.0 * ratio:.0f}%"


def ci_bounds(
    ci_low: float, ci_high: float, edges: tuple[float, ...] = ()
) -> tuple[float, float] | None:
    """The interval's ends in percents, rounded outwards: whole percents (ints), or decimals
    for an end beside 100% (100.77% -> 100.7, not 100) or beside one of `edges` (ratios: a
    verdict's tolerance edges, verdict_edges; 86.97% stays 86.97, not 86, beside 1/1.15);
    None without an interval."""
    if is_missing(ci_low) or is_missing(ci_high):
        return None
    return _pct_bound(ci_low, up=False, edges=edges), _pct_bound(ci_high, up=True, edges=edges)


def times_text(ratio: float) -> str:
    """A ratio as a multiple, two decimals: 1.554 -> "1.55x"; "n/a" when missing. For what a
    page compares as "so many times" (memory), by the same rule as pct_text."""
    return "n/a" if is_missing(ratio) else f"{ratio:.2f}x"


def times_bound(value: float, *, up: bool, edges: tuple[float, ...] = ()) -> str:
    """An interval's end as a multiple, rounded outwards (up: ceiled, else floored) to two
    decimals, more beside 1.00x as ci_text's, more for a low end that would floor to 0, and
    more where rounding would carry it across one of `edges` (a verdict's tolerance edges: the
    printed end stays on the side the verdict read): 0.4274 -> "0.42", 0.4488 up -> "0.45",
    0.0042 -> "0.004", 0.8703 with edge 1/1.15 -> "0.870"."""
    text, places = _outward(value, 2, up=up), 2
    while (float(text) == 0 < value or _crossed(value, float(text), edges, up)) and places < 12:
        places += 1
        text = _outward(value, places, up=up)
    return text


# The two ways a page prints a ratio: in whole percents of the baseline, or as a multiple.
UNITS = ("%", "x")


def ci_text(ci_low: float, ci_high: float, confidence: float = 0.95, unit: str = "%") -> str:
    """ "95% CI 141-429%" (unit "x": "95% CI 1.41-4.29x"), or "one block only, no interval".
    The ends rounded outwards, in the unit's precision."""
    _check_unit(unit)
    bounds = ci_bounds(ci_low, ci_high)
    if bounds is None:
        return "one block only, no interval"
    if unit == "x":
        low, high = times_bound(ci_low, up=False), times_bound(ci_high, up=True)
        return f"{_confidence_label(confidence)} CI {low}-{high}x"
    return f"{_confidence_label(confidence)} CI {bounds[0]}-{bounds[1]}%"


def ratio_text(
    ratio: float, ci_low: float, ci_high: float, confidence: float = 0.95, unit: str = "%"
) -> str:
    """ "155% (95% CI 141-170%)", "155% (one block only, no interval)", or "n/a"; unit "x":
    "1.55x (95% CI 1.41-1.70x)"."""
    _check_unit(unit)
    if is_missing(ratio):
        return "n/a"
    value = times_text(ratio) if unit == "x" else pct_text(ratio)
    return f"{value} ({ci_text(ci_low, ci_high, confidence, unit)})"


def _check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise BadInput(f"a ratio prints in {' or '.join(UNITS)}; got {unit!r}")


def interval_text(ratio: float, ci_low: float, ci_high: float, confidence: float = 0.95) -> str:
    """The interval alone, as every page prints it ("95% CI 30-37%"); kept for callers that
    print the ratio themselves."""
    return ci_text(ci_low, ci_high, confidence)


def pct_cell(value_pct: float) -> str:
    """A table cell of a ratio already in % (ratio_pct): "155%"."""
    return pct_text(value_pct / 100.0)


def low_cell(value_pct: float) -> str:
    """A table cell of an interval's low end in % (ci_low_pct): floored, as ci_text prints it."""
    return "n/a" if is_missing(value_pct) else f"{_pct_bound(value_pct / 100.0, up=False)}%"


def high_cell(value_pct: float) -> str:
    """A table cell of an interval's high end in % (ci_high_pct): ceiled, as ci_text prints it."""
    return "n/a" if is_missing(value_pct) else f"{_pct_bound(value_pct / 100.0, up=True)}%"


# prose.table formats for paired_ratios' % columns: the same characters as ci_text.
PCT_FORMATS = {"ratio_pct": pct_cell, "ci_low_pct": low_cell, "ci_high_pct": high_cell}


def with_ratio_text(
    ratios: pd.DataFrame, column: str = "ours (95% CI)", unit: str = "%"
) -> pd.DataFrame:
    """paired_ratios rows with their ratio and interval as one text column, printed by
    ratio_text: a table shows the same characters as the sentences and the headline."""
    confidence = ratios["confidence"] if "confidence" in ratios.columns else [0.95] * len(ratios)
    text = [
        ratio_text(ratio, low, high, level, unit)
        for ratio, low, high, level in zip(
            ratios["ratio"], ratios["ci_low"], ratios["ci_high"], confidence, strict=True
        )
    ]
    return ratios.assign(**{column: text})


# --- words ---------------------------------------------------------------------------------


def describe(
    ratio: float,
    ci_low: float,
    ci_high: float,
    *,
    higher: str = "faster",
    lower: str = "slower",
    confidence: float = 0.95,
    unit: str = "%",
    baseline: str = "the baseline",
) -> str:
    """A ratio to the baseline in words chosen by its interval, as % of the baseline.

    describe(2.46, 2.31, 2.62) -> "faster: 246% of the baseline (95% CI 231-262%)"
    describe(0.98, 0.89, 1.08) -> "indistinguishable at this precision: 98% of the baseline
    (95% CI 89-108%)"; describe(0.98, nan, nan) -> "one block only, no interval: 98% of the
    baseline". `higher`/`lower` name the two directions (for latency: "slower"/"faster").
    Numbers follow the one rounding rule above (ratio_text); unit "x" prints a multiple
    ("more memory: 1.23x Iris MVC's (95% CI 1.10-1.40x)", with baseline="Iris MVC's").
    """
    _check_unit(unit)
    if is_missing(ratio):
        return "no paired blocks: n/a"
    pct = f"{times_text(ratio)} {baseline}" if unit == "x" else f"{pct_text(ratio)} of {baseline}"
    if ci_bounds(ci_low, ci_high) is None:
        return f"one block only, no interval: {pct}"
    interval = f"({ci_text(ci_low, ci_high, confidence, unit)})"
    if ci_low > 1.0:
        return f"{higher}: {pct} {interval}"
    if ci_high < 1.0:
        return f"{lower}: {pct} {interval}"
    return f"indistinguishable at this precision: {pct} {interval}"


# --- a paired difference -------------------------------------------------------------------


def difference_text(
    difference: float, ci_low: float, ci_high: float, unit: str = "µs", confidence: float = 0.95
) -> str:
    """A paired difference with its interval: "+38 µs (95% CI +30 to +47 µs)". Whole units,
    tenths for a number under 10 (so rounding never hides which side of 0 it lies on); the
    interval rounded outwards, never narrower than computed; "n/a" when missing."""
    if is_missing(difference):
        return "n/a"
    value = f"{_signed(difference, round)} {unit}"
    if is_missing(ci_low) or is_missing(ci_high):
        return f"{value} (one block only, no interval)"
    low, high = _signed(ci_low, math.floor), _signed(ci_high, math.ceil)
    return f"{value} ({_confidence_label(confidence)} CI {low} to {high} {unit})"


def _signed(value: float, rounding) -> str:
    # rounding: round (the estimate), math.floor / math.ceil (an interval's ends, outwards).
    scale = 10 if abs(value) < 10 else 1
    nudge = 0.0 if rounding is round else (1e-9 if rounding is math.floor else -1e-9)
    rounded = rounding(value * scale + nudge) / scale
    return f"{rounded:+,.1f}" if scale == 10 else f"{rounded:+,.0f}"


def difference_words(ci_low: float, ci_high: float, *, more: str, less: str) -> str:
    """What a paired difference's interval allows saying: `more` when it lies wholly above 0,
    `less` wholly below, else "indistinguishable at this precision" (also with no interval)."""
    if is_missing(ci_low) or is_missing(ci_high):
        return "indistinguishable at this precision"
    if ci_low > 0:
        return more
    if ci_high < 0:
        return less
    return "indistinguishable at this precision"


# --- the verdicts' rule and an agreement ---------------------------------------------------

# The decimals the rule prints its edges with: 1/1.15 = 0.869565... prints "0.8696", so a
# bound that the verdict read as inside (0.8699) never prints beside a rule that reads
# "0.870" and looks outside it. A bound between the edge and its printed digits (0.86958)
# still prints its own digits: the gap is 4e-5 of the ratio of ratios wide.
EDGE_PLACES = 4


def edge_text(edge: float) -> str:
    """A tolerance edge as the rule prints it: 0.8695652 -> "0.8696", 1.15 -> "1.15"."""
    return f"{edge:.{EDGE_PLACES}f}".rstrip("0").rstrip(".")


def verdict_edges(tolerance_pct: float = TOLERANCE_PCT) -> tuple[float, ...]:
    """What a printed end beside a verdict must stay on its side of (times_bound's `edges`):
    1.00x, the tolerance's edges as computed and as the rule prints them (edge_text)."""
    computed = tolerance_edges(tolerance_pct)
    return (1.0, *computed, *(float(edge_text(e)) for e in computed))


def pct_from_one(printed: str) -> str:
    """How far a printed ratio lies from 1.00x, in percent of 1.00x, exactly as printed (no
    rounding: the digits a reader gets by subtracting): "0.81" -> "19", "0.8699" -> "13.01",
    "1.05" -> "5", "0.004" -> "99.6"."""
    return decimal_text(abs(Decimal(printed) - 1) * 100)


def decimal_text(value: Decimal) -> str:
    """An exact decimal with its digits, no trailing zeros: Decimal("19.00") -> "19",
    Decimal("1E+2") -> "100"."""
    return format(value.normalize(), "f")


def agreement_words(low: str, high: str) -> str:
    """ "agrees to within 19% below" for printed ends 0.81-0.85x of the article's value (every
    percentage in the direction of the printed ratio: 0.81 is 19% below 1.00x), "within 10%
    below and 5% above" for 0.90-1.05x, "within 41% above" for 1.20-1.41x."""
    below = f"{pct_from_one(low)}% below" if Decimal(low) < 1 else ""
    above = f"{pct_from_one(high)}% above" if Decimal(high) > 1 else ""
    return f"agrees to within {' and '.join(p for p in (below, above) if p) or '0%'}"


def gap_pct(low: str, high: str) -> Decimal | None:
    """How far, at least, printed ends that both lie on one side of 1.00x are from it, in
    percent as printed (0.81-0.85x: 15); None where they hold 1.00x."""
    if Decimal(high) < 1:
        return (1 - Decimal(high)) * 100
    if Decimal(low) > 1:
        return (Decimal(low) - 1) * 100
    return None


def tolerance_text(tolerance_pct: float = TOLERANCE_PCT) -> str:
    """The rule in one sentence, as every page prints it: its edges with the digits the
    printed ends beside a verdict keep their side of (edge_text, verdict_edges)."""
    low, high = (edge_text(e) for e in tolerance_edges(tolerance_pct))
    return (
        f"A size is reproduced when the whole 95% interval of ours / the article's lies within "
        f"±{tolerance_pct:g}% on the log scale ({low}-{high}x: from {pct_from_one(low)}% below "
        f"the article's to {pct_from_one(high)}% above), smaller or larger than "
        "the article's when it lies wholly outside it; a direction is supported when the "
        "interval lies on its side of the stated value. Fewer than "
        f"{MIN_UNITS} blocks decide nothing."
    )


# The verdicts that state nothing about the claim, so cannot be wrong: no interval judged them.
_NO_STATEMENT = (verdicts.NOT_TESTABLE, verdicts.NOT_RERUN, verdicts.NOT_ENOUGH)


def family_text(verdict_list, confidence: float = verdicts.CONFIDENCE) -> str:
    """The family a run's claims make, in a sentence: how many claims its intervals judge, each
    verdict's error (the claim's, whatever its comparisons: verdicts.claim_verdict) and the
    chance that at least one errs (verdicts.family_error). "" where no claim was judged."""
    judged = sum(v not in _NO_STATEMENT for v in verdict_list)
    if not judged:
        return ""
    each = 100 * (1 - confidence)
    most, independent = verdicts.family_error(judged, confidence)
    by = "claim by its interval" if judged == 1 else "claims by their intervals"
    text = (f"This run judges {judged} {by}, each verdict wrong at most {each:g}% of the time "
            f"({each / 2:g}% for each way it can be wrong) whatever the number of comparisons "
            "it rests on: a claim that one comparison alone would refute is judged at Holm's "
            f"levels, 1 - {each:g}%/m first for m comparisons")  # fmt: skip
    if judged == 1:
        return text + "."
    return (text + f". That at least one of the {judged} errs has a chance of at most "
            f"{_share(most)} (their rates summed, as the claims share the run's blocks; "
            f"{_share(independent)} were they independent). The sensitivity column's verdicts "
            "are each at the same rate, and not counted here.")  # fmt: skip


def _share(p: float) -> str:
    return f"{100 * p:.0f}%" if p >= 0.1 else f"{100 * p:.1f}%"


def agreement_text(ci_low: float, ci_high: float, article: float) -> str:
    """ "agrees to within 12% below", and ", differs by at least 4%" where the interval
    excludes the article's value; "" without an interval. From ours / the article's ends as
    printed (rounded outwards, never tighter than computed), each percentage in the direction
    of the printed ratio."""
    if is_missing(ci_low) or is_missing(ci_high):
        return ""
    edges = verdict_edges()
    low = times_bound(ci_low / article, up=False, edges=edges)
    high = times_bound(ci_high / article, up=True, edges=edges)
    text = agreement_words(low, high)
    gap = gap_pct(low, high)
    if gap is not None and gap >= 1:
        text += f", differs by at least {decimal_text(gap)}%"
    return text


# --- rounding ------------------------------------------------------------------------------


def _pct_bound(fraction: float, *, up: bool, edges: tuple[float, ...] = ()) -> float:
    text = _outward(100.0 * fraction, 0, up=up, one=100.0)
    places = len(text.partition(".")[2])
    while _crossed(100.0 * fraction, float(text), [100.0 * e for e in edges], up) and places < 10:
        places += 1
        text = _outward(100.0 * fraction, places, up=up, one=100.0)
    return int(text) if "." not in text else float(text)


def _crossed(value: float, printed: float, edges, up: bool) -> bool:
    """Whether rounding `value` outwards to `printed` carried it onto the far side of an edge."""
    return any((value <= e < printed) if up else (printed < e <= value) for e in edges)


def _outward(value: float, digits: int, *, up: bool, one: float = 1.0) -> str:
    """value rounded outwards (up: ceiled, else floored) to `digits` decimals, or to more where
    that would move it onto or across `one` (100% or 1.00x), up to 4 more: the printed end
    stays on the side of `one` the computed end is on."""
    for places in range(digits, digits + 5):
        scale = 10.0**places
        # The tolerance stops binary fractions from moving a whole step outwards: 100 * 2.62 is
        # 262.00000000000006 in floating point, whose ceiling would print 263%.
        rounded = math.ceil(value * scale - 1e-9) if up else math.floor(value * scale + 1e-9)
        rounded /= scale
        crossed = (value < one <= rounded) if up else (rounded <= one < value)
        if not crossed:
            break
    return f"{rounded:.{places}f}"


def _confidence_label(confidence: float) -> str:
    # 0.95 -> "95%", 0.995 -> "99.5%": as many digits as the level has, no more.
    return f"{100.0 * confidence:.10g}%"
