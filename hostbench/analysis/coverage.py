"""How often each design's 95% interval covers the true ratio, by simulation (docs/method.md,
"Each design's interval").

One comparison per simulated run, its per-block log ratios normal with a block's sd around
the truth (0: the interval's law does not depend on it). The designs:
  - fixed: a number of blocks set beforehand, the t interval with n - 1 degrees of freedom;
  - two-stage: the paper profiles' (params target_halfwidth_pct): n set by Stein's rule from
    the first n0 blocks' sd, within the cap (hostbench/harness/design.py), and then either
    the interval that pools all n blocks with t(n - 1) (what the package stated before) or
    Stein's (two_stage.stein_interval: the first stage's sd and t(n0 - 1));
  - repeated: a claims profile's intervals (sequential.py), covering at every look up to the
    cap together: the intersection over the looks is what a verdict reads.
The time budget (max_minutes) caps n by the first stage's pace, not its spread: the simulation
leaves it out, since it cannot make Stein's interval miss more (n still depends on the first
stage alone) and it only shortens the pooled one's runs less often.
"""

import math

import numpy as np
import pandas as pd

from .sequential import Plan
from .student_t import t_quantile

RUNS = 50_000
COVERAGE_FILE = "coverage.csv"
DESIGNS = ("fixed", "two-stage, pooled t(n - 1)", "two-stage, Stein's", "repeated")


def _stein_blocks(s0: np.ndarray, first: int, target_pct: float, cap: int) -> np.ndarray:
    # blocks_for_halfwidth, vectorised: Stein's rule within the cap.
    t = t_quantile(0.975, first - 1)
    wanted = np.ceil((t * s0 / math.log(1 + target_pct / 100)) ** 2)
    return np.clip(wanted, first, cap).astype(int)


def simulate(design: str, sd: float, *, first: int, cap: int, target_pct: float | None = None,
             runs: int = RUNS, seed: int = 0) -> dict:  # fmt: skip
    """The share of `runs` simulated runs whose interval covers the truth, and their blocks
    (mean). fixed: `cap` blocks; two-stage: `first` blocks, then Stein's rule for
    `target_pct` within `cap`; repeated: Plan(first, cap), every look's interval together
    (their intersection). Deterministic for a seed."""
    if design not in DESIGNS:
        raise ValueError(f"design {design!r}; allowed: {', '.join(DESIGNS)}")
    x = np.random.default_rng(seed).normal(0.0, sd, size=(runs, cap))
    sums, squares = np.cumsum(x, axis=1), np.cumsum(x**2, axis=1)

    def mean_sd(n: np.ndarray):
        rows = np.arange(runs)
        total, sq = sums[rows, n - 1], squares[rows, n - 1]
        mean = total / n
        return mean, np.sqrt(np.maximum(sq - n * mean**2, 0.0) / (n - 1))

    if design == "fixed":
        n = np.full(runs, cap)
        mean, s = mean_sd(n)
        covered = np.abs(mean) <= t_quantile(0.975, cap - 1) * s / np.sqrt(n)
    elif design == "repeated":
        plan = Plan(first, cap)
        n = np.full(runs, cap)
        covered = np.ones(runs, dtype=bool)
        for k in range(max(first, 2), cap + 1):
            mean, s = mean_sd(np.full(runs, k))
            covered &= np.abs(mean) <= plan.t_critical(k) * s / math.sqrt(k)
    else:
        _, s0 = mean_sd(np.full(runs, first))
        n = _stein_blocks(s0, first, target_pct, cap)
        mean, s = mean_sd(n)
        if design == "two-stage, Stein's":
            half = t_quantile(0.975, first - 1) * s0 / np.sqrt(n)
        else:
            # t(0.975, n - 1) for each run's n (n >= first >= 2): index n - 2.
            quantiles = np.array([t_quantile(0.975, k - 1) for k in range(2, cap + 1)])
            half = quantiles[n - 2] * s / np.sqrt(n)
        covered = np.abs(mean) <= half
    return {"covered": float(covered.mean()), "blocks_mean": float(n.mean())}


def table(cases: list[dict], sds, runs: int = RUNS, seed: int = 0) -> pd.DataFrame:
    """Each case ({"profile", "first", "cap", "target_pct"}) at each sd, under its designs: a
    case with a target the two-stage ones, one without the fixed and the repeated (the claims
    profiles' plan, whose fixed design is its cap's blocks). One row each (profile, first,
    cap, target_pct, sd, design, covered, blocks_mean)."""
    rows = []
    for case in cases:
        designs = DESIGNS[1:3] if case["target_pct"] is not None else (DESIGNS[0], DESIGNS[3])
        for sd in sds:
            for design in designs:
                found = simulate(design, sd, first=case["first"], cap=case["cap"],
                                 target_pct=case["target_pct"], runs=runs, seed=seed)  # fmt: skip
                rows.append({**case, "sd": sd, "design": design, **found})
    return pd.DataFrame(rows)


def _share(p: float, runs: int) -> str:
    """A simulated share with its 95% interval (normal approximation), in %."""
    half = 1.96 * math.sqrt(p * (1 - p) / runs)
    return f"{100 * p:.1f}% ({100 * (p - half):.1f}-{100 * min(p + half, 1):.1f}%)"


def method_block(folder, shown_as: str, runs: int) -> str:
    """The simulated coverage of every design, as docs/method.md shows it."""
    found = pd.read_csv(folder / COVERAGE_FILE)
    worst = found.loc[found.groupby("design")["covered"].idxmin()].set_index("design")
    lines = [
        f"Simulated in `{shown_as}/` (`benchmarks/design_coverage.py`, {runs:,} runs per case, "
        "normal per-block log ratios): how often each design's 95% interval covers the true "
        "ratio, with the simulation's own 95% interval, and the blocks it took on average.",
        "",
        "| design | plan | sd of a block's log ratio | covers | blocks |",
        "|---|---|---:|---:|---:|",
    ]
    for r in found.itertuples():
        target = "" if pd.isna(r.target_pct) else f", target ±{r.target_pct:g}%"
        plan = f"{r.profile}: first {r.first}, at most {r.cap}{target}"
        lines.append(f"| {r.design} | {plan} | {r.sd:.3f} | {_share(r.covered, runs)} "
                     f"| {r.blocks_mean:.1f} |")  # fmt: skip
    low = {d: _share(worst.loc[d, "covered"], runs) for d in worst.index}
    lines += [
        "",
        "Lowest coverage of each design over these cases: "
        + "; ".join(f"{d} {low[d]}" for d in DESIGNS if d in low)
        + ".",
    ]
    return "\n".join(lines)
