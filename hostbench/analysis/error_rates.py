"""How often the stopping rule errs, by simulation: a claims profile's runs drawn from the
spread its pairs were measured with (docs/method.md, "Where the variance lives"), each judged
after every block from the first look by the repeated intervals (sequential.py) and stopped
when decided, as the harness does.

One comparison per simulated run: its per-block log ratio is normal around the true value
with the block's measured sd (the launch's component and one window's, components.
block_spread), the VM's drift shared by the pair and cancelled. Cases:
  - a size whose true ratio of ratios sits exactly on the tolerance's edge (1.15, 1/1.15):
    how often the rule wrongly says "reproduced" (at most 2.5% per edge by construction);
  - a direction whose true ratio is exactly the stated value (1.00): how often it wrongly says
    "supported" (at most 2.5%);
and, for each, how many blocks a run took (mean and 95th percentile). Beside them the same
looks with a fixed-sample 95% t interval at every look: the error the repeated intervals
exist to prevent.
"""

import math

import numpy as np
import pandas as pd

from .sequential import Plan
from .student_t import t_quantile
from .verdicts import TOLERANCE_PCT

RUNS = 10_000
EDGE = math.log(1 + TOLERANCE_PCT / 100)
# Each case: the claim's kind, the true log ratio (of ratios, for a size) against the claim's
# value, and the verdict that would be wrong there.
CASES = {
    "size at the upper edge": ("size", EDGE, "reproduced"),
    "size at the lower edge": ("size", -EDGE, "reproduced"),
    "direction at its value": ("direction", 0.0, "supported"),
}
RULES = ("repeated", "fixed t at every look")


def simulate(sd: float, plan: Plan, kind: str, truth: float, *, runs: int = RUNS, seed: int = 0,
             rule: str = "repeated") -> dict:  # fmt: skip
    """`runs` simulated runs of one comparison whose per-block log ratio is normal with spread
    `sd` around `truth` (the claim's value at 0; for a size, the log of ours / the article's),
    judged after each block from plan.first and stopped when decided: the share of runs
    ending at each verdict ("" undecided at the cap), and the blocks they took (mean and 95th
    percentile). rule: "repeated" (the intervals a claims profile states) or "fixed t at
    every look" (a fixed-sample 95% t interval, for contrast). Deterministic for a seed."""
    if rule not in RULES:
        raise ValueError(f"rule {rule!r}; allowed: {', '.join(RULES)}")
    logs = np.random.default_rng(seed).normal(truth, sd, size=(runs, plan.last))
    low = np.full(runs, -np.inf)
    high = np.full(runs, np.inf)
    verdict = np.full(runs, "", dtype=object)
    blocks = np.full(runs, plan.last)
    for n in range(plan.first, plan.last + 1):
        x = logs[:, :n]
        mean, s = x.mean(axis=1), x.std(axis=1, ddof=1)
        if rule == "repeated":
            half = plan.t_critical(n) * s / math.sqrt(n)
            low, high = np.maximum(low, mean - half), np.minimum(high, mean + half)
        else:
            half = t_quantile(0.975, n - 1) * s / math.sqrt(n)
            low, high = mean - half, mean + half
        now = _verdicts(kind, low, high)
        newly = (verdict == "") & (now != "")
        verdict[newly] = now[newly]
        blocks[newly] = n
    shares = pd.Series(verdict).value_counts(normalize=True).to_dict()
    return {
        "verdicts": shares,
        "blocks_mean": float(blocks.mean()),
        "blocks_p95": float(np.percentile(blocks, 95)),
    }


def _verdicts(kind: str, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The decided verdicts of intervals (low, high) of a log ratio whose claimed value is 0,
    as verdicts.size_verdict and direction_verdict word them ("" undecided)."""
    out = np.full(len(low), "", dtype=object)
    if kind == "size":
        out[(low >= -EDGE) & (high <= EDGE)] = "reproduced"
        out[high < -EDGE] = "smaller"
        out[low > EDGE] = "larger"
    else:
        out[low > 0] = "supported"
        out[high < 0] = "not supported"
    return out


def table(spreads: dict[str, float], plan: Plan, runs: int = RUNS, seed: int = 0) -> pd.DataFrame:
    """Every case under both rules for each named spread: one row each (pair, sd, case, rule,
    wrong, blocks_mean, blocks_p95)."""
    rows = []
    for name, sd in spreads.items():
        for case, (kind, truth, wrong) in CASES.items():
            for rule in RULES:
                found = simulate(sd, plan, kind, truth, runs=runs, seed=seed, rule=rule)
                rows.append({"pair": name, "sd": sd, "case": case, "rule": rule,
                             "wrong": found["verdicts"].get(wrong, 0.0),
                             "blocks_mean": found["blocks_mean"],
                             "blocks_p95": found["blocks_p95"]})  # fmt: skip
    return pd.DataFrame(rows)


# --- docs/method.md's account of a simulation (benchmarks/sequential_error_rates.py) --------

RATES_FILE = "error_rates.csv"


def _rate(p: float, runs: int) -> str:
    """A simulated share with its 95% interval (normal approximation), in %."""
    half = 1.96 * math.sqrt(p * (1 - p) / runs)
    return f"{100 * p:.1f}% ({100 * max(p - half, 0):.1f}-{100 * (p + half):.1f}%)"


def method_block(folder, shown_as: str, runs: int) -> str:
    """The simulated error rates and blocks to a decision, as docs/method.md shows them."""
    rates = pd.read_csv(folder / RATES_FILE)
    out = []
    for (first, last), plan in rates.groupby(["first", "last"]):
        edges = plan[plan["wrong"].notna()]
        # At an edge the t statistic's law does not depend on the spread: one pair shows it.
        one = edges[edges["pair"] == edges["pair"].iloc[0]].set_index(["case", "rule"])
        lines = [
            f"Simulated in `{shown_as}/` (`benchmarks/sequential_error_rates.py`, {runs:,} runs "
            f"per case), for the claims profiles' plan: the first look after {first} blocks, at "
            f"most {last}. How often a run wrongly decides, with the simulation's own 95% "
            "interval:",
            "",
            "| case | wrongly | repeated intervals (the claims profiles) "
            "| a fixed 95% t interval looked at after every block |",
            "|---|---|---|---|",
        ]
        for case, (_, _, wrong) in CASES.items():
            cells = [_rate(one.loc[(case, rule), "wrong"], runs) for rule in RULES]
            lines.append(f"| {case} | {wrong} | {cells[0]} | {cells[1]} |")
        lines += [
            "",
            "At an edge the rate is the same for every pair's spread (the studentised mean's law "
            "does not depend on it). Blocks to a decision with the repeated intervals, where "
            "there is a margin (a run never decided counts the cap):",
            "",
            "| pair | sd of a block's log ratio | case | decided | blocks: mean | 95th pct |",
            "|---|---:|---|---:|---:|---:|",
        ]
        margins = plan[plan["wrong"].isna()]
        for r in margins.itertuples():
            lines.append(f"| {r.pair} | {r.sd:.3f} | {r.case} | {100 * r.decided:.1f}% "
                         f"| {r.blocks_mean:.1f} | {r.blocks_p95:.0f} |")  # fmt: skip
        out.append("\n".join(lines))
    return "\n\n".join(out)
