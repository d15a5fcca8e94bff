"""How often the stopping rule errs off the model its boundaries were fitted on.

The repeated intervals (sequential.py) are exact for independent, identically distributed
normal per-block log ratios, and the studentised mean's law does not depend on their spread,
so a simulation from that model (error_rates.py) can only return the 2.5% a side it was
fitted to. What the rule meets is the machine's blocks. Here it is run on them and on the
departures a machine can show:

  - the committed runs' measured block log ratios, resampled: each comparison's blocks
    centred at their own mean and scaled by their own sd, pooled over every comparison of
    every committed run (the shape of the machine's block-to-block noise: its tails, its
    skew), and, where a record is long enough that a resample of it rarely repeats a block,
    each such record alone, a block's scenarios drawn together;
  - serial correlation between blocks (AR(1));
  - a slow block: one mode slow in a share of the blocks (a skewed spread);
  - blocks whose make-up changes once claims are decided (the first blocks measure every
    cell, the later ones the open claim's alone), at the shift and spreads one committed run
    measured.

Every sequence is centred so that its true mean log ratio is known (0), and judged as a
claims run is: the repeated interval of every look from plan.first to plan.last blocks,
Plan.t_critical's boundaries. An error a side is a sequence whose interval excludes the true
ratio on that side at some look up to the cap: that is every wrong verdict the rule can
reach (a decided verdict stays decided, so stopping on it changes nothing), an upper bound
for any stopping rule and equal to the error of a direction whose truth is its value.
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import BadInput
from . import intervals, tables
from .sequential import Plan
from .student_t import t_quantile

RUNS = 100_000  # per case: a 2.5% share's Monte Carlo sd about 0.05%
MIN_ALONE = 30  # blocks a record needs to be resampled alone: a resample of fewer repeats
# blocks often enough (3 equal draws in 1 of n^2 first looks) to make the spread vanish,
# an artefact of resampling, not of the machine
MIN_POOLED = 10  # blocks a comparison needs to give its standardised residuals to the pool:
# residuals standardised by the sd of few blocks are lighter-tailed than the blocks (their
# kurtosis is bounded by the count), and a light-tailed parent alone inflates a 3-block look
AR1_PHI = 0.2  # the referee's stress (issue 67); the measured value is shown beside it
SLOW_SHARE, SLOW_SD = 0.10, 3.0  # one mode slow in 10% of blocks, by 3 block sds
SIDES = ("above", "below")  # the interval wholly above the true ratio, wholly below it
MODEL = "normal, independent (the model)"
POOLED = "measured blocks, pooled"
ALONE = "measured blocks, one record"
AR1 = "serial correlation, AR(1)"
SLOW = "a slow block"
MAKE_UP = "cells dropped after the first look"
COMPARISON = ["record", "variant", "mode", "tool", "concurrency", "scenario"]


# --- the committed runs' blocks ------------------------------------------------------------


def measured_blocks(run_dirs) -> pd.DataFrame:
    """Every committed run's per-block log ratios of each mode to its baseline, per variant
    (a variant's modes are paired with its own baseline): columns COMPARISON, block,
    log_ratio, cells (how many cells of the pair's mode the block measured: a block that
    dropped decided claims' cells measures fewer). Runs that cannot be paired are left out."""
    frames = []
    for run_dir in map(Path, run_dirs):
        if not (run_dir / "results.csv").is_file() or tables.is_smoke(run_dir):
            continue
        df = tables.load_results(run_dir)
        baseline = tables.load_params(run_dir).baseline_mode
        for variant, part in df.groupby(df["variant"].fillna(""), sort=True):
            if baseline not in set(part["mode"]):
                continue
            try:
                logs = intervals.block_log_ratios(part, baseline)
            except BadInput:
                continue  # a block repeating a cell: not a paired design
            logs = logs.dropna(subset=["log_ratio"]).assign(record=run_dir.name, variant=variant)
            logs["cells"] = logs.groupby(["record", "mode", "block"], observed=True)[
                "scenario"
            ].transform("size")
            frames.append(logs)
    if not frames:
        return pd.DataFrame(columns=[*COMPARISON, "block", "log_ratio", "cells"])
    out = pd.concat(frames, ignore_index=True)
    out["scenario"] = out["scenario"].astype(str)
    out["mode"] = out["mode"].astype(str)
    return out[[*COMPARISON, "block", "log_ratio", "cells"]]


def standardised_residuals(blocks: pd.DataFrame, min_blocks: int = MIN_POOLED) -> np.ndarray:
    """Each comparison's block log ratios less their mean, over their sd, pooled over every
    comparison with at least min_blocks blocks: mean 0 exactly, the machine's shape."""
    out = []
    for _, logs in blocks.groupby(COMPARISON, observed=True, sort=False)["log_ratio"]:
        x = logs.to_numpy(dtype=float)
        if len(x) >= min_blocks and x.std(ddof=1) > 0:
            out.append((x - x.mean()) / x.std(ddof=1))
    return np.concatenate(out) if out else np.zeros(0)


def lag1_autocorrelation(blocks: pd.DataFrame, min_blocks: int = 3) -> dict:
    """The lag-1 autocorrelation of the block log ratios, in block order: pooled over every
    comparison with min_blocks or more (sum of products of successive deviations from each
    comparison's mean over the sum of squares; each short series biases it by about
    -1/n, so `bias` gives the pooled -1/n it would show with none), and for the records of
    MIN_ALONE blocks or more alone. {"pooled", "bias", "long", "comparisons", "long_records"}."""
    num = den = bias_num = 0.0
    long_num = long_den = 0.0
    comparisons, long_records = 0, set()
    for key, part in blocks.groupby(COMPARISON, observed=True, sort=False):
        x = part.sort_values("block")["log_ratio"].to_numpy(dtype=float)
        if len(x) < min_blocks:
            continue
        d = x - x.mean()
        products, squares = float((d[1:] * d[:-1]).sum()), float((d**2).sum())
        num, den, bias_num = num + products, den + squares, bias_num - squares / len(x)
        comparisons += 1
        if len(x) >= MIN_ALONE:
            long_num, long_den = long_num + products, long_den + squares
            long_records.add(key[0])
    return {
        "pooled": num / den if den else math.nan,
        "bias": bias_num / den if den else math.nan,
        "long": long_num / long_den if long_den else math.nan,
        "comparisons": comparisons,
        "long_records": sorted(long_records),
    }


def make_up_shifts(blocks: pd.DataFrame) -> pd.DataFrame:
    """What changed in each comparison whose blocks dropped other cells (claims decided):
    one row per comparison with 2 or more blocks of each make-up, with the mean log ratio of
    the blocks that measured fewer cells less that of those that measured every cell
    (`shift`), the sd within the two groups pooled (`sd`) and the shift in those sds."""
    rows = []
    for key, part in blocks.groupby(COMPARISON, observed=True, sort=True):
        every = part[part["cells"] == part["cells"].max()]["log_ratio"].to_numpy(dtype=float)
        fewer = part[part["cells"] < part["cells"].max()]["log_ratio"].to_numpy(dtype=float)
        if len(every) < 2 or len(fewer) < 2:
            continue
        within = (len(every) - 1) * every.var(ddof=1) + (len(fewer) - 1) * fewer.var(ddof=1)
        sd = math.sqrt(within / (len(every) + len(fewer) - 2))
        shift = float(fewer.mean() - every.mean())
        rows.append({**dict(zip(COMPARISON, key, strict=True)), "n_every": len(every),
                     "n_fewer": len(fewer), "shift": shift, "sd": sd,
                     "shift_sd": shift / sd if sd > 0 else math.nan})  # fmt: skip
    return pd.DataFrame(rows)


def mean_make_up_shift(shifts: pd.DataFrame) -> tuple[float, float]:
    """(the mean shift in block sds over the comparisons of make_up_shifts, each weighted by
    its precision 1 / (1/n_every + 1/n_fewer), and that mean's standard error), taking the
    comparisons as independent (a runtimes sub-study's variants share their blocks: the
    error is then too small)."""
    usable = shifts.dropna(subset=["shift_sd"])
    if usable.empty:
        return math.nan, math.nan
    weight = 1 / (1 / usable["n_every"] + 1 / usable["n_fewer"])
    mean = float((weight * usable["shift_sd"]).sum() / weight.sum())
    return mean, float(1 / math.sqrt(weight.sum()))


def by_run_shift(shifts: pd.DataFrame) -> dict:
    """The shift with the run as the unit (its comparisons share their blocks): each run's
    precision-weighted mean shift in sds, their mean over runs and its 95% t interval
    ({"runs", "mean", "low", "high"}; NaN bounds with fewer than 2 runs)."""
    usable = shifts.dropna(subset=["shift_sd"])
    means = [mean_make_up_shift(part)[0] for _, part in usable.groupby("record")]
    if not means:
        return {"runs": 0, "mean": math.nan, "low": math.nan, "high": math.nan}
    n, centre = len(means), float(np.mean(means))
    if n < 2:
        return {"runs": 1, "mean": centre, "low": math.nan, "high": math.nan}
    half = t_quantile(0.975, n - 1) * float(np.std(means, ddof=1)) / math.sqrt(n)
    return {"runs": n, "mean": centre, "low": centre - half, "high": centre + half}


def first_blocks_shifts(blocks: pd.DataFrame, first: int) -> pd.DataFrame:
    """The control: make_up_shifts of the comparisons whose blocks all kept one make-up, as
    if their first `first` blocks had measured every cell and the rest fewer (what the first
    blocks differ by with no change of cells: a warm-up of the machine would show here)."""
    kept = blocks.groupby(COMPARISON, observed=True).filter(
        lambda part: part["cells"].nunique() == 1 and len(part) >= first + 2
    )
    return make_up_shifts(kept.assign(cells=np.where(kept["block"] <= first, 2, 1)))


# --- the rule on a set of sequences --------------------------------------------------------


def miss_rates(logs: np.ndarray, plan: Plan, widen: float = 1.0) -> dict[str, float]:
    """The share of sequences (rows of `logs`, per-block log ratios whose true mean is 0, in
    block order, at least plan.last columns) whose repeated interval excludes 0 at some look
    from plan.first to plan.last blocks: {"above": wholly above 0, "below": wholly below}.
    A sequence whose spread vanishes at a look (equal blocks) counts as its mean's side.
    widen: every boundary times this (wider boundaries, widening_needed)."""
    logs = np.asarray(logs, dtype=float)
    if logs.ndim != 2 or logs.shape[1] < plan.last:
        raise BadInput(f"logs of shape {logs.shape}: need (runs, {plan.last} blocks or more)")
    sums, squares = np.cumsum(logs, axis=1), np.cumsum(logs**2, axis=1)
    above = np.zeros(len(logs), dtype=bool)
    below = np.zeros(len(logs), dtype=bool)
    for n in range(max(plan.first, 2), plan.last + 1):
        mean = sums[:, n - 1] / n
        sd = np.sqrt(np.maximum(squares[:, n - 1] - n * mean**2, 0.0) / (n - 1))
        half = widen * plan.t_critical(n) * sd / math.sqrt(n)
        above |= mean - half > 0
        below |= mean + half < 0
    return {"above": float(above.mean()), "below": float(below.mean())}


def widening_needed(logs: np.ndarray, plan: Plan, alpha_side: float | None = None) -> float:
    """The smallest factor on every boundary (to 0.01) that brings both sides' miss rates on
    these sequences to alpha_side (plan.alpha / 2) or less: 1.0 where they are already within
    their Monte Carlo error of it."""
    target = plan.alpha / 2 if alpha_side is None else alpha_side
    if all(mc_interval(p, len(logs))[0] <= target for p in miss_rates(logs, plan).values()):
        return 1.0  # within the simulation's own error of it
    low, high = 1.0, 2.0
    while max(miss_rates(logs, plan, high).values()) > target:
        low, high = high, 2 * high
    while high - low > 0.005:
        mid = (low + high) / 2
        low, high = (
            (mid, high) if max(miss_rates(logs, plan, mid).values()) > target else (low, mid)
        )
    return math.ceil(high * 100) / 100


# --- the cases -------------------------------------------------------------------------------


def resampled(pool: np.ndarray, runs: int, blocks: int, rng) -> np.ndarray:
    """runs sequences of `blocks` blocks drawn with replacement from `pool` (1-D: values; 2-D:
    rows, a block's scenarios kept together, giving (runs, blocks, scenarios))."""
    return pool[rng.integers(0, len(pool), size=(runs, blocks))]


def ar1(runs: int, blocks: int, phi: float, rng) -> np.ndarray:
    """Stationary AR(1) sequences, unit variance, lag-1 correlation phi."""
    e = rng.standard_normal((runs, blocks))
    out = np.empty_like(e)
    out[:, 0] = e[:, 0]
    for k in range(1, blocks):
        out[:, k] = phi * out[:, k - 1] + math.sqrt(1 - phi**2) * e[:, k]
    return out


def slow_blocks(runs: int, blocks: int, share: float, size: float, rng) -> np.ndarray:
    """Normal blocks of unit sd, a `share` of them (at random) lower by `size` sds (one mode
    slow), centred at the mixture's mean so that the true mean is 0."""
    x = rng.standard_normal((runs, blocks)) - size * (rng.random((runs, blocks)) < share)
    return x + share * size


def slow_block_skewness(share: float, size: float) -> float:
    """The skewness of slow_blocks' blocks (unit normal plus a share lower by `size`)."""
    variance = 1 + share * (1 - share) * size**2
    return -share * (1 - share) * (1 - 2 * share) * size**3 / variance**1.5


def resampling_reference(size: int, plan: Plan, rng, *, records: int = 200,
                         runs: int = 20_000) -> float:  # fmt: skip
    """What resampling alone does: the 95th percentile, over `records` records of `size`
    independent normal blocks (the model itself), of the worse side's miss rate when each
    record's centred blocks are resampled as the measured ones are. A resampled record is a
    discrete law whose shape is its sample's: even from the model it errs above 2.5% a side,
    more the fewer its blocks; a measured record that errs within this is what the model
    would give."""
    worst = []
    for _ in range(records):
        x = rng.standard_normal(size)
        worst.append(max(miss_rates(resampled(x - x.mean(), runs, plan.last, rng), plan).values()))
    return float(np.percentile(worst, 95))


def changed_make_up(runs: int, blocks: int, first: int, shift_sd: float, rng, *,
                    truth: str) -> np.ndarray:  # fmt: skip
    """The first `first` blocks with every cell, the rest with fewer, `shift_sd` block sds
    apart (normal blocks of unit sd); the truth 0 at the level of the blocks with every cell
    (truth "every") or of those with fewer ("fewer")."""
    if truth not in ("every", "fewer"):
        raise BadInput(f"truth {truth!r}; allowed: every, fewer")
    x = rng.standard_normal((runs, blocks))
    x[:, first:] += shift_sd
    return x - (shift_sd if truth == "fewer" else 0.0)


def table(blocks: pd.DataFrame, plan: Plan, *, runs: int = RUNS, seed: int = 0,
          widening: bool = True, reference_records: int = 200) -> pd.DataFrame:  # fmt: skip
    """Every case's error a side on `runs` sequences: one row per case (case, detail, runs,
    above, below, and with `widening` the factor on the boundaries that would bring both to
    2.5%, widening_needed; a resampled record's `reference`, resampling_reference over
    reference_records records). Deterministic for a seed."""
    rng = np.random.default_rng(seed)
    last, rows = plan.last, []

    references: dict[int, float] = {}

    def add(case: str, detail: str, logs: np.ndarray, resampled_from: int = 0) -> None:
        row = {"case": case, "detail": detail, "runs": len(logs), **miss_rates(logs, plan)}
        if resampled_from:
            if resampled_from not in references:
                references[resampled_from] = resampling_reference(
                    resampled_from, plan, rng, records=reference_records, runs=min(runs, 20_000)
                )
            row["reference"] = references[resampled_from]
        if widening:
            row["widen_needed"] = widening_needed(logs, plan)
        rows.append(row)

    add(MODEL, "", rng.standard_normal((runs, last)))
    pool = standardised_residuals(blocks)
    add(POOLED, f"{len(pool)} blocks of comparisons with {MIN_POOLED} or more",
        resampled(pool, runs, last, rng), len(pool))  # fmt: skip
    for (record, _, mode, _, _), part in blocks.groupby(COMPARISON[:-1], observed=True):
        wide = part.pivot_table(index="block", columns="scenario", values="log_ratio").dropna()
        if len(wide) < MIN_ALONE:
            continue
        drawn = resampled((wide - wide.mean()).to_numpy(), runs, last, rng)
        for i, scenario in enumerate(wide.columns):
            detail = f"{record}: {mode} / {scenario}, {len(wide)} blocks"
            add(ALONE, detail, drawn[:, :, i], len(wide))
    measured = lag1_autocorrelation(blocks)
    for phi in sorted({AR1_PHI, round(measured["long"], 2)}):
        add(AR1, f"phi = {phi:.2f}", ar1(runs, last, phi, rng))
    skew = slow_block_skewness(SLOW_SHARE, SLOW_SD)
    add(SLOW, f"{SLOW_SHARE:.0%} of blocks {SLOW_SD:g} sd slower (skewness {skew:+.2f})",
        slow_blocks(runs, last, SLOW_SHARE, SLOW_SD, rng))  # fmt: skip
    shift_sd, _ = mean_make_up_shift(make_up_shifts(blocks))
    if math.isfinite(shift_sd):
        for truth, level in (("fewer", "fewer cells"), ("every", "every cell")):
            detail = f"{shift_sd:+.2f} sd apart, the truth at the blocks with {level}"
            add(
                MAKE_UP, detail, changed_make_up(runs, last, plan.first, shift_sd, rng, truth=truth)
            )
    return pd.DataFrame(rows)


def mc_interval(p: float, runs: int) -> tuple[float, float]:
    """A simulated share's 95% Monte Carlo interval (normal approximation)."""
    half = 1.96 * math.sqrt(p * (1 - p) / runs)
    return max(p - half, 0.0), p + half


# --- docs/method.md's account (benchmarks/sequential_departures.py) -----------------------

DEPARTURES_FILE = "departures.csv"
MEASURED_FILE = "departures_measured.json"
SEED_FILE = "departures_seed.json"  # the arguments, and the plan as [first, last]


def measured_facts(blocks: pd.DataFrame, first: int) -> dict:
    """What the committed blocks show of each departure: the lag-1 autocorrelation, the
    pooled residuals' skewness and kurtosis (normal: 0 and 3), the changes of make-up (and,
    as their control, the `first` blocks of the runs that kept theirs)."""
    pool = standardised_residuals(blocks)
    m2 = float((pool**2).mean()) if len(pool) else math.nan
    shifts = make_up_shifts(blocks)
    mean, se = mean_make_up_shift(shifts)
    control = first_blocks_shifts(blocks, first)
    return {
        "records": int(blocks["record"].nunique()),
        "blocks": int(len(blocks)),
        "lag1": lag1_autocorrelation(blocks),
        "pool": {
            "blocks": len(pool),
            "skewness": float((pool**3).mean() / m2**1.5),
            "kurtosis": float((pool**4).mean() / m2**2),
        },
        "make_up": {
            "comparisons": len(shifts),
            "records": int(shifts["record"].nunique()) if len(shifts) else 0,
            "later_higher": int((shifts["shift"] > 0).sum()) if len(shifts) else 0,
            "mean_shift_sd": mean,
            "mean_shift_se": se,
            "largest_abs_shift_pct": float(100 * (np.exp(shifts["shift"].abs().max()) - 1)),
            "by_run": by_run_shift(shifts),
        },
        "control": {"comparisons": len(control), "by_run": by_run_shift(control)},
    }


def withstood(row: dict, alpha_side: float = 0.025) -> bool:
    """Whether neither side passes what the rule may err by more than its Monte Carlo error
    (the lower end of its 95% Monte Carlo interval at that or below): alpha_side, or for a
    resampled record the worse side resampling gives records of the model of its size
    (`reference`), where that is larger."""
    allowed = max(alpha_side, _number(row.get("reference")))
    return all(mc_interval(row[side], row["runs"])[0] <= allowed for side in SIDES)


def _number(value) -> float:
    try:
        return 0.0 if value in ("", None) or math.isnan(float(value)) else float(value)
    except (TypeError, ValueError):
        return 0.0


def _shift(found: dict) -> str:
    """ "+0.26 sds (95% interval -1.40 to +1.92, 6 runs)" """
    return (f"{found['mean']:+.2f} sds (95% interval {found['low']:+.2f} to "
            f"{found['high']:+.2f}, {found['runs']} runs)")  # fmt: skip


def _shown(found: dict) -> str:
    if found["low"] > 0 or found["high"] < 0:
        return "the machines show such a shift"
    return "the machines are consistent with such a shift without establishing one"


def _cases(rates: pd.DataFrame, held: bool) -> str:
    """The cases withstood (held) or not: a case by its name where all its rows (several) agree,
    else each row that does as "case, detail"."""
    names = []
    for case, rows in rates.groupby("case", sort=False):
        chosen = [r for r in rows.to_dict("records") if withstood(r) == held]
        if len(rows) > 1 and len(chosen) == len(rows) or (chosen and not chosen[0]["detail"]):
            names.append(case)
        else:
            names += [f"{case}, {r['detail']}" for r in chosen]
    return "; ".join(names) if names else "none"


def _pct(p: float, runs: int) -> str:
    low, high = mc_interval(p, runs)
    return f"{100 * p:.2f}% ({100 * low:.2f}-{100 * high:.2f}%)"


def method_block(folder, shown_as: str, plan: Plan, facts: dict) -> str:
    """The rule's error a side on the machine's blocks and under each departure, as
    docs/method.md shows it."""
    rates = pd.read_csv(folder / DEPARTURES_FILE, keep_default_na=False)
    runs = int(rates["runs"].min())
    lag1, pool, make_up = facts["lag1"], facts["pool"], facts["make_up"]
    run, control = make_up["by_run"], facts["control"]
    lines = [
        f"Run in `{shown_as}/` (`benchmarks/sequential_departures.py`, {runs:,} sequences per "
        f"case, the claims profiles' plan: looks after {plan.first} to {plan.last} blocks) on "
        f"the {facts['blocks']:,} measured block log ratios of the {facts['records']} committed "
        "runs that pair modes within blocks, and under each departure: how often the repeated "
        "interval excludes the true ratio at some look up to the cap, on each side, with the "
        "simulation's own 95% interval. A resampled record is judged against what resampling "
        "does to the model itself: the worse side that 95 of 100 records of as many normal "
        'blocks give when resampled the same way (the column "resampling alone"). '
        "Withstood: neither side above 2.5%, or above that, by more than its interval; the "
        "last column is the factor on every boundary that would bring both sides to 2.5%.",
        "",
        "| case | what | wholly above the truth | wholly below it | resampling alone "
        "| withstood | boundaries x, to hold 2.5% |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for r in rates.to_dict("records"):
        held = "yes" if withstood(r) else "**no**"
        above, below = _pct(r["above"], r["runs"]), _pct(r["below"], r["runs"])
        reference = _number(r.get("reference"))
        alone = f"{100 * reference:.2f}%" if reference else ""
        lines.append(f"| {r['case']} | {r['detail']} | {above} | {below} | {alone} | {held} "
                     f"| {r['widen_needed']:.2f} |")  # fmt: skip
    shift, se = make_up["mean_shift_sd"], make_up["mean_shift_se"]
    lines += [
        "",
        "What the committed blocks show of each departure. Serial correlation: the lag-1 "
        f"autocorrelation of the records of {MIN_ALONE} blocks or more "
        f"({', '.join(lag1['long_records'])}) is {lag1['long']:+.2f}; over all "
        f"{lag1['comparisons']} comparisons of 3 blocks or more it is {lag1['pooled']:+.2f}, "
        f"where independent blocks would give about {lag1['bias']:+.2f} (each short series' "
        f"-1/n). Skew: the pooled residuals ({pool['blocks']:,} blocks) have skewness "
        f"{pool['skewness']:+.2f} and kurtosis {pool['kurtosis']:.2f} (normal: 0 and 3; the "
        "slow block's skewness is in its row). Cells dropped: "
        f"{make_up['comparisons']} comparisons in {make_up['records']} runs measured blocks of "
        "two make-ups (every cell up to a look, the open claims' alone after it); the later "
        f"blocks' level lies higher in {make_up['later_higher']} of them, by {shift:+.2f} "
        f"block sds on average (95% interval {shift - 1.96 * se:+.2f} to "
        f"{shift + 1.96 * se:+.2f}, the comparisons taken as independent), by "
        f"{make_up['largest_abs_shift_pct']:.1f}% in ratio at the most. With the run as the "
        f"unit (a run's comparisons share its blocks) the shift is {_shift(run)}: "
        f"{_shown(run)}. The control, "
        f"the {control['comparisons']} comparisons of runs whose blocks kept one make-up, "
        f"their first {plan.first} blocks against the later ones (a warm-up of the machine "
        f"would show here): {_shift(control['by_run'])}.",
        "",
        f"Withstood: {_cases(rates, True)}. Not withstood: {_cases(rates, False)}.",
    ]
    return "\n".join(lines)
