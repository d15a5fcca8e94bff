"""The interval of a two-stage design (params target_halfwidth_pct): Stein's, as he defined it.

A paper profile that targets a half-width measures its first `repetitions` blocks (n0), and
the spread of its focus ratios over them sets the number of blocks n once (Stein's rule,
hostbench/harness/design.py). n then depends on the first stage's spread: where the first
blocks happened to spread little, the run stops short, and a t interval pooling all n blocks
with t(n - 1) degrees of freedom then covers less than its 95% (a referee's simulation: up to
8.7% missed with n0 = 3; data/benchmarks/coverage/ shows it). Stein (1945) gave the interval
that holds exactly: centred on the mean of all n blocks, its half-width is

    t(1 - alpha / 2, n0 - 1) x s0 / sqrt(n)

with s0 the sd of the first stage's n0 blocks alone. Under normal per-block log ratios the
mean of the n blocks is independent of the first stage's spreads (the sample mean and sample
covariance of normal blocks are independent, and n depends only on those spreads, the first
stage's pace and the profile's caps), so (mean - true) x sqrt(n) / s0 is Student's t with
n0 - 1 degrees of freedom, whatever n the rule chose. The price is the first stage's few
degrees of freedom: with n0 = 3 the quantile is 4.30, where t(n - 1) would be about 2.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .student_t import t_quantile

ALPHA = 0.05  # two-sided: the 95% of every other interval
METHOD = "stein"  # paired_ratios' method column for such a run
DESIGN_FILE = "design.json"  # written by the harness (harness/stopping.py), first_blocks in it


@dataclass(frozen=True)
class TwoStage:
    """A two-stage run's design: its first stage of `first` blocks, its intervals Stein's."""

    first: int
    alpha: float = ALPHA

    @classmethod
    def of(cls, params, run_dir: str | Path | None = None) -> "TwoStage | None":
        """The design of a run's params: None unless it targets a half-width without stopping
        when decided. n0 is the first stage as the run's design.json recorded it (its
        first_blocks), else the params' repetitions (what the harness records there)."""
        if getattr(params, "target_halfwidth_pct", None) is None:
            return None
        if getattr(params, "stop_when_decided", False):
            return None
        first = params.repetitions
        if run_dir is not None and (Path(run_dir) / DESIGN_FILE).is_file():
            first = json.loads((Path(run_dir) / DESIGN_FILE).read_text()).get("first_blocks", first)
        return cls(int(first))

    def interval(self, logs, blocks) -> tuple[int, float, float, float]:
        """(n, mean, low, high) of per-block log ratios (`blocks` their block numbers, from 1):
        stein_interval at this design's level."""
        return stein_interval(logs, blocks, self.first, 1 - self.alpha)

    def describe(self) -> str:
        return (f"Stein's two-stage 95% intervals: the first {self.first} blocks' spread, "
                f"t({self.first - 1}), over all blocks")  # fmt: skip


def stein_interval(logs, blocks, first: int, confidence: float = 0.95):
    """(n, mean, low, high): the mean of every log ratio, +- t(0.5 + confidence / 2, n0 - 1) x
    s0 / sqrt(n), s0 the sd of those of blocks 1..`first` (n0 of them: fewer where a first
    block has no pair). NaN bounds with fewer than 2 first-stage values."""
    x = np.asarray(logs, dtype=float)
    b = np.asarray(blocks)
    keep = ~np.isnan(x)
    x, b = x[keep], b[keep]
    n = len(x)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    centre = float(x.mean())
    stage = x[b <= first]
    if len(stage) < 2:
        return n, centre, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2, len(stage) - 1) * float(stage.std(ddof=1))
    half /= math.sqrt(n)
    return n, centre, centre - half, centre + half
