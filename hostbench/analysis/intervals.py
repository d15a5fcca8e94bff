"""Throughput relative to a baseline mode, with a confidence interval, from block-paired runs.

A study runs its repetitions as blocks: within a block every cell (mode x scenario x tool x
concurrency) runs once, in random order. The machine drifts between blocks (it slows down as
it warms) and single runs are noisy, so comparing a mode's mean with the baseline's mean over
all blocks mixes drift into the difference. Here a mode is compared with the baseline only
inside a block, r_b = value(mode, b) / value(baseline, b); the block's drift multiplies both
and cancels. The ratios are summarised on the log scale (a geometric mean), where "2x faster"
and "2x slower" are symmetric and noise that multiplies the throughput is additive.

Input is the harness's tidy contract (one row per run); every function returns a tidy
DataFrame or a string. Only numpy and pandas: no scipy, so the Student t quantile is here too.
"""

import math

import numpy as np
import pandas as pd

from ..errors import BadInput
from ..results import is_valid, per_launch
from .sequential import Plan, repeated_interval
from .student_t import t_quantile

# One measurement setup: results are only comparable within the same one.
SETUP = ["scenario", "tool", "concurrency"]
CELL = ["mode", *SETUP]
METHODS = ("t-log", "bootstrap")
REPEATED = "repeated"  # the method column of a run that stopped when decided (sequential.py)
COLUMNS = [
    "baseline",
    "mode",
    *SETUP,
    "n",
    "ratio",
    "ci_low",
    "ci_high",
    "ratio_pct",
    "ci_low_pct",
    "ci_high_pct",
    "confidence",
    "method",
    "left_out_invalid",
]


# --- paired ratios -------------------------------------------------------------------------


def paired_ratios(
    df: pd.DataFrame,
    baseline: str,
    *,
    metric: str = "rps",
    block: str = "block",
    confidence: float = 0.95,
    method: str = "t-log",
    n_boot: int = 10_000,
    seed: int = 0,
    plan: "Plan | None" = None,
) -> pd.DataFrame:
    """Each mode's `metric` as a ratio to the baseline's, paired within blocks, with a CI.

    For every cell and every block that ran both the mode and the baseline in that setup,
    r_b = value(mode, b) / value(baseline, b). `ratio` is the geometric mean of the r_b
    (1.0 = equal, 1.5 = 50% more), `n` the number of blocks paired. Interval, per `method`:
      "t-log": Student t interval on the mean log ratio (n - 1 degrees of freedom);
      "bootstrap": percentile bootstrap of the mean log ratio, resampling blocks (n_boot
        resamples, numpy.random.default_rng(seed), so the same input gives the same interval).
    Both are transformed back with exp, so the interval is not symmetric around the ratio.
    n = 1 gives the ratio with a NaN interval; a cell the baseline never ran with has n = 0.
    plan (a run that stopped when decided, sequential.Plan): the repeated interval instead,
    valid over every look the run took (sequential.repeated_interval, blocks in order); the
    method column names it. `confidence` and `method` then do not apply. Without one, the
    plan the results were loaded with (tables.load_results: attrs["plan"]), so every
    interval of such a run is its repeated one.

    Blocks come from `block`, or from `repetition` when there is no `block` column (a
    repetition of the whole matrix is a block). Rows whose `valid` is False are left out
    (hostbench.results.is_valid: a missing verdict counts); `left_out_invalid` counts them
    per cell (the mode's and the baseline's in that setup) and attrs["left_out_invalid"] in
    all. `_pct` columns are the
    same numbers x 100 (% of the baseline). The baseline itself is not in the output.
    """
    if plan is None:
        plan = df.attrs.get("plan")
    block = _block_column(df, block)
    _check_arguments(df, baseline, metric, confidence, method, n_boot)
    kept, invalid = _valid_rows(per_launch(df))  # the launch is the unit, not the window
    _require_baseline(kept, baseline)
    _check_values(kept, metric, block)

    pairs = _pair_with_baseline(kept, baseline, metric, block)
    rng = np.random.default_rng(seed)
    rows = []
    if plan is not None:  # each look's blocks are the first ones: in block order
        pairs = pairs.sort_values(block, kind="stable")
    for cell, logs in pairs.groupby(CELL, observed=True, sort=True)["log_ratio"]:
        if plan is not None:
            n, *log_ci = repeated_interval(logs.dropna().to_numpy(), plan)
        else:
            n, *log_ci = _log_interval(logs.dropna().to_numpy(), method, confidence, rng, n_boot)
        ratio, low, high = np.exp(log_ci)
        names = dict(zip(CELL, cell, strict=True))
        rows.append(dict(names, n=n, ratio=ratio, ci_low=low, ci_high=high))
    out = pd.DataFrame(rows, columns=[*CELL, "n", "ratio", "ci_low", "ci_high"])
    for column in ("ratio", "ci_low", "ci_high"):
        out[f"{column}_pct"] = 100.0 * out[column]
    out.insert(0, "baseline", baseline)
    out["confidence"] = confidence
    out["method"] = method if plan is None else REPEATED
    out["left_out_invalid"] = _invalid_per_cell(out, invalid, baseline)
    out.attrs["left_out_invalid"] = len(invalid)
    out.attrs["block"] = block
    return out[COLUMNS]


def _block_column(df: pd.DataFrame, block: str) -> str:
    # A repetition of the whole matrix is a block: older results have no block column.
    if block in df.columns:
        return block
    if "repetition" in df.columns:
        return "repetition"
    raise BadInput(f"results have neither a {block!r} nor a 'repetition' column to pair runs by")


def _check_arguments(df, baseline, metric, confidence, method, n_boot) -> None:
    if method not in METHODS:
        raise BadInput(f"unknown interval method {method!r}; allowed: {', '.join(METHODS)}")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise BadInput(f"confidence must be a number in (0, 1), e.g. 0.95; got {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise BadInput(f"confidence must be in (0, 1), e.g. 0.95; got {confidence!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise BadInput(f"n_boot must be a positive integer, got {n_boot!r}")
    _require_columns(df, [metric, *CELL])


def _require_columns(df: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        present = ", ".join(map(str, df.columns))
        raise BadInput(f"results lack column(s) {', '.join(missing)}; columns: {present}")


def _valid_rows(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    # The rows that count and those left out, by the one validity filter.
    valid = is_valid(df)
    return df[valid], df[~valid]


def _require_baseline(df: pd.DataFrame, baseline: str) -> None:
    present = sorted(set(df["mode"].astype(str)))
    if baseline not in present:
        raise BadInput(
            f"baseline mode {baseline!r} has no (valid) runs; modes present: {', '.join(present)}"
        )


def _check_values(df: pd.DataFrame, metric: str, block: str) -> None:
    values = pd.to_numeric(df[metric], errors="coerce")
    bad = df.loc[~(values > 0), "mode"]  # NaN fails the test too: a ratio needs a value
    if not bad.empty:
        raise BadInput(
            f"{metric} must be > 0 for a ratio; {len(bad)} row(s) are not "
            f"(modes: {', '.join(sorted(set(bad.astype(str))))}); mark failed runs valid=False"
        )
    if df[block].isna().any():
        raise BadInput(f"column {block!r} has empty values; every run needs its block")
    twice = df.duplicated([*CELL, block])
    if twice.any():
        first = df.loc[twice, [*CELL, block]].iloc[0].astype(str).tolist()
        raise BadInput(
            f"{int(twice.sum())} run(s) repeat a cell within a block (first: {' / '.join(first)});"
            f" a block runs each cell once"
        )


def _pair_with_baseline(df: pd.DataFrame, baseline: str, metric: str, block: str) -> pd.DataFrame:
    # One row per run of a non-baseline mode; log_ratio is NaN where its block has no baseline.
    pairs = _beside_baseline(df, baseline, metric, block)
    pairs["log_ratio"] = np.log(pairs[metric].astype(float)) - np.log(pairs["_base"].astype(float))
    return pairs


def _beside_baseline(df: pd.DataFrame, baseline: str, metric: str, block: str) -> pd.DataFrame:
    # Each run of a non-baseline mode with the baseline's value in its setup and block ("_base",
    # NaN where that block has no baseline run).
    is_base = df["mode"].astype(str) == baseline
    base = df.loc[is_base, [*SETUP, block, metric]].rename(columns={metric: "_base"})
    runs = df.loc[~is_base, [*CELL, block, metric]]
    return runs.merge(base, on=[*SETUP, block], how="left")


def _invalid_per_cell(out: pd.DataFrame, invalid: pd.DataFrame, baseline: str) -> np.ndarray:
    # A cell loses a block when either its own run or the baseline's in that setup was invalid.
    if invalid.empty or out.empty:
        return np.zeros(len(out), dtype=int)
    keys = invalid[CELL].astype(str)
    own = keys.groupby(CELL).size().rename("own")
    base = keys[keys["mode"] == baseline].groupby(SETUP).size().rename("base")
    counts = out[CELL].astype(str).merge(own, on=CELL, how="left").merge(base, on=SETUP, how="left")
    return (counts["own"].fillna(0) + counts["base"].fillna(0)).astype(int).to_numpy()


def _log_interval(logs: np.ndarray, method: str, confidence: float, rng, n_boot: int):
    """(n, mean log ratio, low, high) on the log scale; NaN where there is too little data."""
    n = len(logs)
    if method == "t-log" or n < 2:
        return mean_interval(logs, confidence)  # the logs' Student t interval
    centre = float(logs.mean())
    # Resample whole blocks: each block's ratio already has the drift cancelled.
    means = logs[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return n, centre, float(low), float(high)


# --- how many blocks a precision takes ---------------------------------------------------


def block_spread(ratio: float, ci_high: float, n: int, confidence: float = 0.95) -> float:
    """The sd of the per-block log ratio behind a t-log interval of n blocks: its half-width
    on the log scale, log(ci_high / ratio), is t(n-1) x sd / sqrt(n)."""
    t = t_quantile(0.5 + confidence / 2, n - 1)
    return math.log(ci_high / ratio) * math.sqrt(n) / t


def halfwidth_pct(ratio, ci_high):
    """A ratio's 95% half-width in % of it (floats or Series), on the log scale where its t
    interval is symmetric: 100 x (ci_high / ratio - 1), as every page states it."""
    return 100 * (ci_high / ratio - 1)


def blocks_for_halfwidth(spread: float, first_blocks: int, target_pct: float) -> int:
    """Stein's two-stage rule: the blocks in all whose 95% interval of the mean log ratio
    reaches +-target_pct, from the sd `spread` of the per-block log ratio over the
    `first_blocks` measured, with their t quantile: (t(0.975, n0-1) x s / log(1 + target))^2,
    never fewer than n0."""
    t = t_quantile(0.975, first_blocks - 1)
    return max(first_blocks, math.ceil((t * spread / math.log(1 + target_pct / 100)) ** 2))


# --- paired differences --------------------------------------------------------------------

DIFFERENCE_COLUMNS = [
    "baseline", "mode", *SETUP, "n", "difference", "ci_low", "ci_high", "baseline_mean",
    "confidence", "left_out_invalid",
]  # fmt: skip


def paired_differences(
    df: pd.DataFrame,
    baseline: str,
    *,
    metric: str,
    block: str = "block",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Each mode's `metric` minus the baseline's, paired within blocks, with a t interval.

    For an additive quantity, such as the CPU microseconds a request costs, where "how much
    more" is the question rather than "how many times": d_b = value(mode, b) - value(baseline,
    b) for every block that ran both in a setup; `difference` is the mean of the d_b, `ci_low`
    and `ci_high` its Student t interval (n - 1 degrees of freedom), `baseline_mean` the
    baseline's mean over the same blocks. n = 1 gives a NaN interval. Blocks and invalid rows
    as in paired_ratios; values may be any finite number.
    """
    block = _block_column(df, block)
    _check_arguments(df, baseline, metric, confidence, "t-log", 1)
    kept, invalid = _valid_rows(per_launch(df))
    _require_baseline(kept, baseline)
    values = pd.to_numeric(kept[metric], errors="coerce")
    if not np.isfinite(values).all():
        bad = sorted(set(kept.loc[~np.isfinite(values), "mode"].astype(str)))
        raise BadInput(
            f"{metric} must be a number in every valid row; some are not (modes: "
            f"{', '.join(bad)}); mark failed runs valid=False"
        )
    _check_values(kept.assign(**{metric: 1.0}), metric, block)  # blocks and duplicates only
    pairs = _beside_baseline(kept.assign(**{metric: values}), baseline, metric, block)
    pairs = pairs.dropna(subset=["_base"])
    rows = []
    for cell, group in pairs.groupby(CELL, observed=True, sort=True):
        n, mean, low, high = mean_interval(group[metric] - group["_base"], confidence)
        names = dict(zip(CELL, cell, strict=True))
        rows.append(dict(names, n=n, difference=mean, ci_low=low, ci_high=high,
                         baseline_mean=float(group["_base"].mean())))  # fmt: skip
    out = pd.DataFrame(rows, columns=[*CELL, "n", "difference", "ci_low", "ci_high",
                                      "baseline_mean"])  # fmt: skip
    out.insert(0, "baseline", baseline)
    out["confidence"] = confidence
    out["left_out_invalid"] = _invalid_per_cell(out, invalid, baseline)
    out.attrs["left_out_invalid"] = len(invalid)
    return out[DIFFERENCE_COLUMNS]


def difference_text(
    difference: float, ci_low: float, ci_high: float, unit: str = "µs", confidence: float = 0.95
) -> str:
    """A paired difference with its interval: "+38 µs (95% CI +30 to +47 µs)". Whole units,
    tenths for a number under 10 (so rounding never hides which side of 0 it lies on); the
    interval rounded outwards, never narrower than computed; "n/a" when missing."""
    if _missing(difference):
        return "n/a"
    value = f"{_signed(difference, round)} {unit}"
    if _missing(ci_low) or _missing(ci_high):
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
    if _missing(ci_low) or _missing(ci_high):
        return "indistinguishable at this precision"
    if ci_low > 0:
        return more
    if ci_high < 0:
        return less
    return "indistinguishable at this precision"


# --- printing an interval ------------------------------------------------------------------
# One rounding rule for every page: whole percents of the baseline; the ratio rounded to the
# nearest, the interval's low end floored and its high end ceiled, so a printed interval is never
# narrower than the computed one (one that includes 100% is never shown as excluding it). An end
# that lies beside 100% (100.77%, 99.6%) gets as many decimals as keep it on its side of 100%:
# floored to "100%" it would print an interval that includes 100% beside a verdict that says it
# excludes it. Tables, sentences and headlines all print through pct_text / ci_text / ratio_text.


def pct_text(ratio: float) -> str:
    """A ratio as a whole percent of the baseline: 1.554 -> "155%"; "n/a" when missing."""
    return "n/a" if _missing(ratio) else f"{100.0 * ratio:.0f}%"


def ci_bounds(ci_low: float, ci_high: float) -> tuple[float, float] | None:
    """The interval's ends in percents, rounded outwards: whole percents (ints), or decimals
    for an end beside 100% (100.77% -> 100.7, not 100); None without an interval."""
    if _missing(ci_low) or _missing(ci_high):
        return None
    return _pct_bound(ci_low, up=False), _pct_bound(ci_high, up=True)


def times_text(ratio: float) -> str:
    """A ratio as a multiple, two decimals: 1.554 -> "1.55x"; "n/a" when missing. For what a
    page compares as "so many times" (memory), by the same rule as pct_text."""
    return "n/a" if _missing(ratio) else f"{ratio:.2f}x"


def times_bound(value: float, *, up: bool, edges: tuple[float, ...] = ()) -> str:
    """An interval's end as a multiple, rounded outwards (up: ceiled, else floored) to two
    decimals, more beside 1.00x as ci_text's, more for a low end that would floor to 0, and
    more where rounding would carry it across one of `edges` (a verdict's tolerance edges: the
    printed end stays on the side the verdict read): 0.4274 -> "0.42", 0.4488 up -> "0.45",
    0.0042 -> "0.004", 0.8703 with edge 1/1.15 -> "0.870"."""
    text, places = _outward(value, 2, up=up), 2

    def crossed(printed: float) -> bool:
        return any((printed < e <= value) if not up else (value <= e < printed) for e in edges)

    while (float(text) == 0 < value or crossed(float(text))) and places < 12:
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
    if _missing(ratio):
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
    return "n/a" if _missing(value_pct) else f"{_pct_bound(value_pct / 100.0, up=False)}%"


def high_cell(value_pct: float) -> str:
    """A table cell of an interval's high end in % (ci_high_pct): ceiled, as ci_text prints it."""
    return "n/a" if _missing(value_pct) else f"{_pct_bound(value_pct / 100.0, up=True)}%"


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
    if _missing(ratio):
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


def _missing(value) -> bool:
    return value is None or bool(pd.isna(value))  # None, NaN, pd.NA, NaT


def _pct_bound(fraction: float, *, up: bool) -> float:
    text = _outward(100.0 * fraction, 0, up=up, one=100.0)
    return int(text) if "." not in text else float(text)


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


# --- claims --------------------------------------------------------------------------------

# The verdicts, worded the same on every page, by one rule on the log scale the intervals live
# on (docs/method.md, "Verdicts"). Each claim is read once as a ratio to its baseline, its
# value (hostbench/analysis/claims.py: reference/claims.csv):
#   a size or an equivalence (+70% is 1.70, "basically the same" is 1.00): the ratio of
#     ratios, ours / the article's, against one relative tolerance, log-symmetric (within
#     ±15% is 1/1.15 to 1.15): REPRODUCED when its whole interval lies within it, SMALLER or
#     LARGER when it lies wholly outside it on one side, else UNDECIDED;
#   a direction or an order ("faster", "the fastest", "several-fold" = at least 2): SUPPORTED
#     when the interval lies on the claimed side of the value, NOT_SUPPORTED when it lies on
#     the other, else UNDECIDED.
# A ratio from fewer than MIN_UNITS independent units (blocks) gets NOT_ENOUGH, whatever its
# interval; a claim over several comparisons holds only where each does (combined_verdict).
# A claim gets no interval where it needs what this machine cannot run (Windows): NOT_TESTABLE;
# or where what it measured is gone from the runtime the package runs (a transport removed
# from .NET), so this re-run leaves it out, though an older runtime could test it: NOT_RERUN.
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
VERDICTS = (REPRODUCED, SMALLER, LARGER, DIFFERS, SUPPORTED, NOT_SUPPORTED, UNDECIDED,
            NOT_TESTABLE, NOT_RERUN, NOT_ENOUGH)  # fmt: skip
# Fewer independent units than this and an interval says too little to decide anything: with
# 2 blocks a t interval has 1 degree of freedom and its width depends on one difference.
MIN_UNITS = 3
# How far ours may sit from the article's value and still reproduce it, relative and
# log-symmetric: ours / the article's within 1/(1 + t) to 1 + t. Declared once, printed on
# every page that judges a claim (tolerance_text); docs/method.md says why 15%.
TOLERANCE_PCT = 15.0
SIDES = ("above", "below")


def tolerance_text(tolerance_pct: float = TOLERANCE_PCT) -> str:
    """The rule in one sentence, as every page prints it."""
    t = 1 + tolerance_pct / 100
    return (
        f"A size is reproduced when the whole 95% interval of ours / the article's lies within "
        f"±{tolerance_pct:g}% on the log scale ({1 / t:.3f}-{t:.2f}x), smaller or larger than "
        "the article's when it lies wholly outside it; a direction is supported when the "
        "interval lies on its side of the stated value. Fewer than "
        f"{MIN_UNITS} blocks decide nothing."
    )


def tolerance_edges(tolerance_pct: float = TOLERANCE_PCT) -> tuple[float, float]:
    """The ratio of ratios at each edge of the size verdicts' tolerance (size_verdict)."""
    t = 1 + tolerance_pct / 100
    return 1 / t, t


def _too_few(n) -> bool:
    return _missing(n) or int(n) < MIN_UNITS


def size_verdict(
    ci_low: float, ci_high: float, article: float, *, n, tolerance_pct: float = TOLERANCE_PCT
) -> str:
    """A size or equivalence claim: our ratio's interval (ci_low, ci_high) against the
    article's ratio `article`, by the ratio of ratios and the tolerance (module rule)."""
    if _too_few(n):
        return NOT_ENOUGH
    if _missing(ci_low) or _missing(ci_high):
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
    if _missing(ci_low) or _missing(ci_high):
        return UNDECIDED
    above, below = ci_low > value, ci_high < value
    if (side == "above" and above) or (side == "below" and below):
        return SUPPORTED
    return NOT_SUPPORTED if above or below else UNDECIDED


def agrees_within_pct(ci_low: float, ci_high: float, article: float) -> float:
    """The smallest log-symmetric tolerance (in %) that holds the whole interval of ours /
    the article's: "agrees with the article's value to within ±X%". NaN without an interval."""
    if _missing(ci_low) or _missing(ci_high):
        return math.nan
    return 100 * (max(ci_high / article, article / ci_low) - 1)


def differs_by_pct(ci_low: float, ci_high: float, article: float) -> float:
    """How far, at least, ours lies from the article's value where the interval excludes it,
    on the same log-symmetric scale: "differs by at least Y%". NaN where it does not."""
    if _missing(ci_low) or _missing(ci_high):
        return math.nan
    low, high = ci_low / article, ci_high / article
    if low > 1:
        return 100 * (low - 1)
    if high < 1:
        return 100 * (1 / high - 1)
    return math.nan


def agreement_text(ci_low: float, ci_high: float, article: float) -> str:
    """ "agrees to within ±12%", and ", differs by at least 4%" where the interval excludes
    the article's value; "" without an interval. Rounded outwards: never tighter than
    computed."""
    within = agrees_within_pct(ci_low, ci_high, article)
    if _missing(within):
        return ""
    text = f"agrees to within ±{math.ceil(within - 1e-9):.0f}%"
    differs = differs_by_pct(ci_low, ci_high, article)
    if not _missing(differs):
        text += f", differs by at least {math.floor(differs + 1e-9):.0f}%"
    return text


def combined_verdict(verdicts) -> str:
    """One verdict for a claim over several comparisons, which holds only where each does:
    NOT_ENOUGH if any was measured too little; for a direction NOT_SUPPORTED if any
    contradicts it; for a size SMALLER (or LARGER) if some are that and none the other,
    DIFFERS if both; REPRODUCED or SUPPORTED if all are; else UNDECIDED."""
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
    for holds in (REPRODUCED, SUPPORTED):
        if all(v == holds for v in verdicts):
            return holds
    return UNDECIDED


# --- drift ---------------------------------------------------------------------------------


def drift(df: pd.DataFrame, *, metric: str = "rps", block: str = "block") -> pd.DataFrame:
    """How fast the machine was in each block, relative to the study as a whole.

    Each run's value is divided by its cell's mean over all blocks (so cells with very
    different throughput weigh the same); `relative` is the mean of those over the block's
    runs: 1.0 = an average block, 0.9 = runs were 10% slower than their cells' average.
    Values falling from block to block mean the machine slowed down during the study, which
    unpaired comparisons would mistake for differences between modes. Columns: block,
    n_runs, relative, relative_sd (spread over the block's runs), started_at (the block's
    first start, when the results have started_at). Rows with valid == False are left out.
    """
    block = _block_column(df, block)
    _require_columns(df, [metric, *CELL])
    kept, _ = _valid_rows(df)
    if kept.empty:
        raise BadInput("no (valid) runs to measure drift on")
    values = pd.to_numeric(kept[metric], errors="coerce")
    cell_mean = values.groupby([kept[c] for c in CELL], observed=True).transform("mean")
    runs = pd.DataFrame({"block": kept[block], "relative": values / cell_mean})
    out = runs.groupby("block", sort=True)["relative"].agg(
        n_runs="count", relative="mean", relative_sd="std"
    )
    if "started_at" in kept.columns:
        out["started_at"] = _start_times(kept["started_at"]).groupby(kept[block]).min()
    return out.reset_index().rename(columns={"block": block})


def _start_times(values: pd.Series) -> pd.Series:
    try:
        return pd.to_datetime(values, utc=True, format="ISO8601")
    except (ValueError, TypeError):
        raise BadInput("started_at has values that are not ISO 8601 times") from None


# --- one mean ------------------------------------------------------------------------------


def mean_interval(values, confidence: float = 0.95) -> tuple[int, float, float, float]:
    """(n, mean, low, high): a Student t interval for the mean of independent values.

    For one cell's runs over blocks (not paired: comparisons between cells use
    paired_ratios). NaN values are left out; fewer than 2 values give a NaN interval.
    """
    x = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=float)
    n = len(x)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    centre = float(x.mean())
    if n == 1:
        return 1, centre, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return n, centre, centre - half, centre + half
