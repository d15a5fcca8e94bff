"""Throughput relative to a baseline mode, with a confidence interval, from block-paired runs.

A study runs its repetitions as blocks: within a block every cell (mode x scenario x tool x
concurrency) runs once, in random order. The machine drifts between blocks (it slows down as
it warms) and single runs are noisy, so comparing a mode's mean with the baseline's mean over
all blocks mixes drift into the difference. Here a mode is compared with the baseline only
inside a block, r_b = value(mode, b) / value(baseline, b); the block's drift multiplies both
and cancels. The ratios are summarised on the log scale (a geometric mean), where "2x faster"
and "2x slower" are symmetric and noise that multiplies the throughput is additive.

Input is the harness's tidy contract (one row per run); every function returns a tidy
DataFrame or numbers. Only numpy and pandas: no scipy (the Student t quantile is student_t.py).
This module computes; how an interval is judged is verdicts.py, how it is printed wording.py.
"""

import dataclasses
import math
from collections import Counter

import numpy as np
import pandas as pd

from ..errors import BadInput
from ..results import LAUNCH_KEY, WINDOW_COLUMNS, is_valid, per_launch
from . import two_stage
from .kept import frame_key, keep_of_frame
from .sequential import Plan, repeated_interval
from .student_t import t_quantile
from .two_stage import TwoStage

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
    plan: "Plan | TwoStage | None" = None,
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
    interval of such a run is its repeated one. A two-stage run's design (two_stage.TwoStage,
    a paper profile that targets a half-width): Stein's interval, its first stage's spread
    with their t quantile (two_stage.stein_interval); method "stein".

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
    narrow = _columns_read(df, metric, block)
    # Judging a run's claims asks for most comparisons 2-3 times over (kept.py): computed once.
    key = ("paired ratios", frame_key(narrow), baseline, metric, block, confidence, method,
           n_boot, seed, plan)  # fmt: skip
    return keep_of_frame(key, lambda: _ratios(narrow, baseline, metric, block, confidence,
                                              method, n_boot, seed, plan)).copy()  # fmt: skip


def _ratios(df, baseline, metric, block, confidence, method, n_boot, seed, plan) -> pd.DataFrame:
    pairs, invalid = _paired_logs(df, baseline, metric, block)
    rng = np.random.default_rng(seed)
    rows = []
    if plan is not None:  # each look's blocks are the first ones: in block order
        pairs = pairs.sort_values(block, kind="stable")
    named = dict(baseline=baseline, confidence=confidence, method=_method(plan, method))
    for cell, logs in pairs.groupby(CELL, observed=True, sort=True)["log_ratio"]:
        if isinstance(plan, TwoStage):
            n, *log_ci = plan.interval(logs.to_numpy(), pairs.loc[logs.index, block].to_numpy())
        elif plan is not None:
            n, *log_ci = repeated_interval(logs.dropna().to_numpy(), plan)
        else:
            n, *log_ci = _log_interval(logs.dropna().to_numpy(), method, confidence, rng, n_boot)
        ratio, low, high = np.exp(log_ci)
        rows.append(dict(named, **dict(zip(CELL, cell, strict=True)), n=n, ratio=ratio,
                         ci_low=low, ci_high=high, ratio_pct=100.0 * ratio,
                         ci_low_pct=100.0 * low, ci_high_pct=100.0 * high))  # fmt: skip
    out = pd.DataFrame(rows, columns=COLUMNS)  # one frame built at once: this runs per claim
    out["left_out_invalid"] = _invalid_per_cell(out, invalid, baseline)
    out.attrs["left_out_invalid"] = len(invalid)
    out.attrs["block"] = block
    return out


def _method(plan, method: str) -> str:
    if plan is None:
        return method
    return two_stage.METHOD if isinstance(plan, TwoStage) else REPEATED


def at_confidence(plan, confidence: float):
    """The same plan (a sequential.Plan or a two_stage.TwoStage) with its intervals at another
    confidence: a claim's Holm split (verdicts.claim_verdict) needs its comparisons' intervals
    at 1 - alpha / m. A Plan's boundaries are fitted again for that level (t_boundaries).
    None stays None (the t interval takes the confidence itself)."""
    if plan is None:
        return None
    return dataclasses.replace(plan, alpha=1 - confidence)


def block_log_ratios(df: pd.DataFrame, baseline: str, *, metric: str = "rps",
                     block: str = "block") -> pd.DataFrame:  # fmt: skip
    """What paired_ratios' intervals are computed from: each block's log ratio of every mode
    to the baseline (a launch per block, valid rows only), NaN where that block has no
    baseline run. Columns: CELL, the block column, log_ratio."""
    block = _block_column(df, block)
    _require_columns(df, [metric, *CELL])
    pairs, _ = _paired_logs(df, baseline, metric, block)
    return pairs[[*CELL, block, "log_ratio"]]


def _paired_logs(df: pd.DataFrame, baseline: str, metric: str, block: str):
    """(each run's log ratio to its block's baseline, the rows left out as invalid): the
    launch is the unit, not the window."""
    kept, invalid = _valid_rows(per_launch(_columns_read(df, metric, block)))
    _require_baseline(kept, baseline)
    _check_values(kept, metric, block)
    return _pair_with_baseline(kept, baseline, metric, block), invalid


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


def variant_ratios(df: pd.DataFrame, first: str, metric: str = "rps") -> pd.DataFrame:
    """Each mode's variants against its `first` variant (params.variants: launches of the test
    app with other settings), paired within blocks: paired_ratios with the variant in the
    mode's place, one mode at a time. `variant` names the variant, `baseline` the first.
    A run that stopped when decided: its repeated intervals (the plan in df.attrs)."""
    plan = df.attrs.get("plan")
    frames = []
    for mode, part in df.groupby("mode", sort=False, observed=True):
        swapped = part.assign(mode=part["variant"].astype(str))
        r = paired_ratios(swapped, first, metric=metric, plan=plan)
        r = r.rename(columns={"mode": "variant"})
        frames.append(r.assign(mode=str(mode)))
    return pd.concat(frames, ignore_index=True)


def columns_read(df: pd.DataFrame, metrics, block: str = "block") -> pd.DataFrame:
    """df with only the columns paired_ratios reads to pair `metrics` (its attrs, a run's plan
    among them, kept): a caller that pairs many comparisons of one frame narrows it once."""
    read = [*CELL, block, "repetition", *metrics, *LAUNCH_KEY, *WINDOW_COLUMNS, "valid"]
    return df[[c for c in dict.fromkeys(read) if c in df.columns]]


def _columns_read(df: pd.DataFrame, metric: str, block: str) -> pd.DataFrame:
    # per_launch would combine every column, and pandas copies attrs with each step: the same
    # intervals at a fraction of the time. The plan was read from attrs already.
    narrow = columns_read(df, [metric], block)
    narrow.attrs = {}
    return narrow


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
    runs = df.loc[~is_base, [*CELL, block, metric]].reset_index(drop=True)
    # A dict of a few dozen keys, not a merge: this runs once per comparison of every claim.
    base = dict(zip(_keys(df[is_base], [*SETUP, block]), df.loc[is_base, metric], strict=True))
    runs["_base"] = [base.get(key, math.nan) for key in _keys(runs, [*SETUP, block])]
    return runs


def _keys(df: pd.DataFrame, columns: list[str]):
    return zip(*(df[c] for c in columns), strict=True)


def _invalid_per_cell(out: pd.DataFrame, invalid: pd.DataFrame, baseline: str) -> np.ndarray:
    # A cell loses a block when either its own run or the baseline's in that setup was invalid.
    if invalid.empty or out.empty:
        return np.zeros(len(out), dtype=int)
    keys = invalid[CELL].astype(str)
    own = Counter(_keys(keys, CELL))
    base = Counter(_keys(keys[keys["mode"] == baseline], SETUP))
    cells = out[CELL].astype(str)
    counts = [own[cell] + base[cell[1:]] for cell in _keys(cells, CELL)]  # CELL is mode, *SETUP
    return np.array(counts, dtype=int)


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
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":  # already numbers
        x = values[~np.isnan(values)].astype(float)  # (a pandas Series costs a simulation 2 s)
    else:
        x = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=float)
    n = len(x)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    centre = float(x.mean())
    if n == 1:
        return 1, centre, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return n, centre, centre - half, centre + half


# --- no number -----------------------------------------------------------------------------


def is_missing(value) -> bool:
    """Whether a value has no number: None, NaN, pd.NA, NaT. An interval's ends are NaN where
    there is too little data; verdicts.py and wording.py read that as "no interval"."""
    return value is None or bool(pd.isna(value))
