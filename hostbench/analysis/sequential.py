"""Measuring until decided: intervals that stay valid however often the data are looked at.

A claims profile (params `stop_when_decided`) judges every claim again after each block from
the `repetitions`-th on and stops once each is decided. A fixed-sample 95% interval looked at
after every block, the run stopping on the first decision, errs more often than 5%: each look
is another chance for noise to cross a decision edge. So a run that stops when decided uses
repeated confidence intervals (Jennison and Turnbull, "Group Sequential Methods", ch. 9):
at its k-th look, with n_k blocks, a comparison's interval is

    mean log ratio +- t(1 - p_k / 2, n_k - 1) x s_k / sqrt(n_k)

where p_k is the nominal two-sided level of a group-sequential boundary c_k, p_k = 2 (1 - Phi
(c_k)). The boundaries spend the 5% error over the looks by the Pocock-type alpha-spending
function of Lan and DeMets, alpha(t) = alpha x ln(1 + (e - 1) t), t = n / max_repetitions the
share of the most blocks the profile allows: every look up to that cap together covers the
true ratio with 95% probability (normal per-block log ratios, known spread; the t quantile at
the same nominal level stands in for the estimated spread, J&T section 11.5, and the error
rates below check it by simulation). Because the coverage holds over all looks at once, it
holds whatever rule stops the run, and the interval a claim is judged by is the intersection
of its comparison's intervals over all looks so far: narrower, still covering, and a verdict
reached at one look stays at every later one.

Pocock-type rather than O'Brien-Fleming-type spending: a claims profile exists to stop
early on the claims whose answer is clear, so the spending must not hold the early looks
back; the price is a wider interval at the last looks (docs/method.md gives both's widths).

The boundaries come from the recursive integration of Armitage, McPherson and Rowe (1969):
the score S_k (a sum of n_k unit-variance increments) is carried look to look on a grid,
the part that crossed earlier boundaries removed, and each c_k is found by bisection so
that the probability of first crossing at look k is alpha(t_k) - alpha(t_{k-1}).
"""

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from ..errors import BadInput
from .student_t import t_quantile

ALPHA = 0.05  # two-sided, over all looks together: the 95% of every other interval
SPENDING = "Pocock-type alpha spending (Lan and DeMets): alpha x ln(1 + (e - 1) t)"
_GRID_STEP = 0.02  # the score's grid, in units of one block's sd
_NORMAL = NormalDist()
CALIBRATION_DRAWS = 400_000  # t_boundaries: a share's error about 0.0002 at 2.5%
CALIBRATION_SEED = 48  # fixed: the same boundaries on every machine and every run


def spent(share: float, alpha: float = ALPHA) -> float:
    """The error spent by the time `share` (0-1) of the most blocks have run."""
    return alpha * math.log(1 + (math.e - 1) * min(max(share, 0.0), 1.0))


@lru_cache(maxsize=64)
def boundaries(first: int, last: int, alpha: float = ALPHA) -> tuple[float, ...]:
    """The z boundaries c_n for looks after n = first, first + 1, ..., last blocks (the
    information n / last), the spread known: under no effect, a standardised mean crosses
    |Z_n| >= c_n for the first time at look n with probability spent(n / last) - spent((n - 1)
    / last) (the first look takes everything spent up to it). The classical boundaries
    (Lan-DeMets), against which t_boundaries is checked."""
    if not 1 <= first <= last:
        raise BadInput(f"looks from {first} to {last} blocks: need 1 <= first <= last")
    out = [_NORMAL.inv_cdf(1 - spent(first / last, alpha) / 2)]
    step = _GRID_STEP
    half_span = 9 * math.sqrt(last)  # the score's grid, +-9 sd of its widest spread
    grid = np.arange(-half_span, half_span + step / 2, step)
    # The score after the first look, the part still inside the first boundary.
    density = _normal_density(grid, first) * (np.abs(grid) < out[0] * math.sqrt(first))
    for n in range(first + 1, last + 1):
        density = _convolved(density, grid, step)  # one more block's increment
        target = spent(n / last, alpha) - spent((n - 1) / last, alpha)
        c = _crossing_boundary(density, grid, step, math.sqrt(n), target)
        out.append(c)
        density = density * (np.abs(grid) < c * math.sqrt(n))
    return tuple(out)


@lru_cache(maxsize=64)
def t_boundaries(first: int, last: int, alpha: float = ALPHA) -> tuple[float, ...]:
    """The boundaries of the studentised mean, T_n = mean / (s / sqrt(n)), for looks after n =
    first .. last blocks, spending as `boundaries` does: under no effect, T crosses |T_n| >=
    b_n for the first time at look n with probability spent(n / last) - spent((n - 1) / last).

    With the spread estimated, as every run's is, the z boundaries' t quantiles at the same
    nominal level (J&T section 11.5) err more than they spend when the first look has 2
    degrees of freedom (about 2.9% a side where 2.5% is spent; error_rates.py). So the
    boundaries are found for T itself, whose law under normal per-block log ratios does not
    depend on their spread: CALIBRATION_DRAWS sequences of standard normals, a fixed seed, each
    b_n the quantile that leaves the look's share of the sequences still running beyond it.
    A single look is the t quantile itself."""
    if not 2 <= first <= last:
        raise BadInput(f"looks from {first} to {last} blocks: need 2 <= first <= last")
    if first == last:
        return (t_quantile(1 - alpha / 2, first - 1),)
    x = np.random.default_rng(CALIBRATION_SEED).standard_normal((CALIBRATION_DRAWS, last))
    x = np.ascontiguousarray(x.T)  # a look's row in one piece: the same sums, read faster
    sums, squares = np.cumsum(x, axis=0), np.cumsum(x**2, axis=0)
    out, running = [], np.ones(CALIBRATION_DRAWS, dtype=bool)
    for k in range(first, last + 1):
        mean = sums[k - 1] / k
        sd = np.sqrt(np.maximum(squares[k - 1] - k * mean**2, 0.0) / (k - 1))
        t = np.abs(mean) / (sd / math.sqrt(k))
        share = spent(k / last, alpha) - (spent((k - 1) / last, alpha) if k > first else 0.0)
        crossing = max(1, round(share * CALIBRATION_DRAWS))
        still = t[running]
        # The crossing-th largest T still running: found by partition, not a whole sort.
        place = len(still) - crossing
        b = float(np.partition(still, place)[place]) if place >= 0 else 0.0
        out.append(b)
        running &= t < b
    return tuple(out)


def _normal_density(x: np.ndarray, variance: float) -> np.ndarray:
    return np.exp(-(x**2) / (2 * variance)) / math.sqrt(2 * math.pi * variance)


def _convolved(density: np.ndarray, grid: np.ndarray, step: float) -> np.ndarray:
    """The density after adding one N(0, 1) increment."""
    offsets = np.arange(-8.0, 8.0 + step / 2, step)
    kernel = _normal_density(offsets, 1.0) * step
    return np.convolve(density, kernel, mode="same")


def _crossing_boundary(density, grid, step, scale: float, target: float) -> float:
    """The c whose |S| >= c x scale holds `target` of the still-running probability."""
    cumulative = np.concatenate([[0.0], np.cumsum(density) * step])
    edges = np.concatenate([[grid[0] - step / 2], grid + step / 2])

    def outside(c: float) -> float:
        inside = np.interp(c * scale, edges, cumulative) - np.interp(-c * scale, edges, cumulative)
        return cumulative[-1] - inside

    low, high = 0.0, 10.0
    if outside(high) > target:  # nothing left to spend this look: no boundary can hold it
        return high
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if outside(mid) > target else (low, mid)
    return (low + high) / 2


@dataclass(frozen=True)
class Plan:
    """How a run that stops when decided states its intervals: looks from `first` blocks,
    at most `last` blocks (the profile's repetitions and max_repetitions)."""

    first: int
    last: int
    alpha: float = ALPHA

    @classmethod
    def of(cls, params) -> "Plan | None":
        """The plan of a run's params; None for a fixed-length run (its t intervals)."""
        if not getattr(params, "stop_when_decided", False):
            return None
        return cls(params.repetitions, params.max_repetitions)

    def t_critical(self, n: int) -> float:
        """The multiplier of s / sqrt(n) at the look after n blocks (t_boundaries; n beyond
        the cap: the last look's)."""
        bs = t_boundaries(self.first, self.last, self.alpha)
        return bs[min(max(n, self.first), self.last) - self.first]

    def describe(self) -> str:
        return (
            f"repeated 95% intervals over looks after {self.first} to {self.last} blocks "
            f"({SPENDING})"
        )


def repeated_interval(logs, plan: Plan) -> tuple[int, float, float, float]:
    """(n, mean, low, high) of per-block log ratios in block order: the mean of all n, and
    the intersection of the repeated intervals of every look from plan.first blocks to n
    (NaN bounds before the first look). Where the intersection is empty (the coverage failed
    at some look), the last look's interval alone."""
    x = np.asarray([v for v in logs if not math.isnan(v)], dtype=float)
    n = len(x)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    centre = float(x.mean())
    if n < max(plan.first, 2):
        return n, centre, math.nan, math.nan
    low, high = -math.inf, math.inf
    last = (math.nan, math.nan)
    for k in range(max(plan.first, 2), n + 1):
        look = x[:k]
        half = plan.t_critical(k) * float(look.std(ddof=1)) / math.sqrt(k)
        last = (float(look.mean()) - half, float(look.mean()) + half)
        low, high = max(low, last[0]), min(high, last[1])
    if low > high:
        low, high = last
    return n, centre, low, high
