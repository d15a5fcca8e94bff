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

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from ..errors import BadInput
from ..paths import ROOT
from .student_t import t_quantile

ALPHA = 0.05  # two-sided, over all looks together: the 95% of every other interval
SPENDING = "Pocock-type alpha spending (Lan and DeMets): alpha x ln(1 + (e - 1) t)"
_GRID_STEP = 0.02  # the score's grid, in units of one block's sd
_NORMAL = NormalDist()
CALIBRATION_DRAWS = 400_000  # a plan outside the committed table: fitted in seconds
CALIBRATION_SEED = 48  # fixed: the same boundaries on every machine and every run
CHUNK = 250_000  # sequences drawn at once (fitted_boundaries): the draws depend on it
SCREEN_FLOOR = 0.8  # of a pilot's boundaries: a sequence never reaching it cannot cross
# The committed boundaries (benchmarks/sequential_boundaries.py) and the digits an alpha is
# matched by (a Holm level 0.05 / m arrives as 1 - (1 - 0.05 / m)).
BOUNDARIES_FILE = ROOT / "data" / "benchmarks" / "sequential" / "boundaries.csv"
ALPHA_DIGITS = 10


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
    depend on their spread (fitted_boundaries). A plan in the committed table
    (BOUNDARIES_FILE, benchmarks/sequential_boundaries.py: BOUNDARY_DRAWS sequences, its
    recorded seed, each boundary's Monte Carlo error beside it) is read from it; any other is
    fitted here from CALIBRATION_DRAWS sequences and the fixed CALIBRATION_SEED (a few seconds,
    a larger error). A single look is the t quantile itself."""
    if not 2 <= first <= last:
        raise BadInput(f"looks from {first} to {last} blocks: need 2 <= first <= last")
    if first == last:
        return (t_quantile(1 - alpha / 2, first - 1),)
    table = committed_boundaries()
    key = (first, last, round(alpha, ALPHA_DIGITS))
    if key in table:
        return table[key]
    return fitted_boundaries(first, last, alpha, CALIBRATION_DRAWS, CALIBRATION_SEED)[0]


Bounds = tuple[float, ...]  # a plan's boundaries, one a look


def fitted_boundaries(first: int, last: int, alpha: float, draws: int, seed: int,
                      batches: int = 1) -> tuple[Bounds, list[Bounds]]:  # fmt: skip
    """(the boundaries from `draws` sequences of standard normals, and with batches > 1 the
    boundaries each of `batches` equal shares of them gives alone: their spread over
    sqrt(batches) is the Monte Carlo error of the first). The first look's boundary is exact:
    T after `first` blocks is Student t with first - 1 degrees of freedom, and the first
    look spends spent(first / last). Each later b_n is the quantile that leaves the look's
    share of the sequences still running beyond it, found among the sequences whose |T| ever
    reaches a floor under every boundary (SCREEN_FLOOR of a pilot's), the only ones that can
    cross: so the draws are made in chunks, kept where they can matter, and the rest dropped.
    Deterministic for a seed (and the fixed CHUNK)."""
    exact = t_quantile(1 - spent(first / last, alpha) / 2, first - 1)
    rng = np.random.default_rng(seed)
    pilot = _quantile_boundaries(_abs_t(rng, min(draws, CHUNK), first, last), exact, first,
                                 last, alpha)  # fmt: skip
    floor = SCREEN_FLOOR * np.asarray(pilot)
    rng = np.random.default_rng(seed)  # the pilot's draws are the first chunk's again
    kept, batch_of, made = [], [], 0
    while made < draws:
        n = min(CHUNK, draws - made)
        t = _abs_t(rng, n, first, last)
        keep = (t >= floor).any(axis=1)
        kept.append(t[keep].astype(np.float32))
        batch_of.append((made + np.flatnonzero(keep)) * batches // draws)
        made += n
    t, batch_of = np.concatenate(kept), np.concatenate(batch_of)
    whole = _quantile_boundaries(t, exact, first, last, alpha, draws, floor)
    parts = [_quantile_boundaries(t[batch_of == b], exact, first, last, alpha,
                                  draws // batches, floor)
             for b in range(batches)] if batches > 1 else []  # fmt: skip
    return whole, parts


def _abs_t(rng, n: int, first: int, last: int) -> np.ndarray:
    """|T| of n sequences of standard normals at the looks after first .. last blocks."""
    x = rng.standard_normal((n, last))
    k = np.arange(first, last + 1)
    mean = np.cumsum(x, axis=1)[:, first - 1 :] / k
    squares = np.cumsum(x**2, axis=1)[:, first - 1 :]
    sd = np.sqrt(np.maximum(squares - k * mean**2, 0.0) / (k - 1))
    return np.abs(mean) / (sd / np.sqrt(k))


def _quantile_boundaries(t, exact: float, first: int, last: int, alpha: float,
                         draws: int | None = None, floor=None) -> tuple[float, ...]:  # fmt: skip
    """The boundaries from |T| rows t (of `draws` sequences in all, the rest never reaching
    `floor`), the first look's given."""
    draws = len(t) if draws is None else draws
    out, running = [exact], t[:, 0] < exact
    for i, k in enumerate(range(first + 1, last + 1), start=1):
        share = spent(k / last, alpha) - spent((k - 1) / last, alpha)
        crossing = max(1, round(share * draws))
        still = t[running, i]
        place = len(still) - crossing
        if place < 0:
            raise BadInput(f"too few draws ({draws}) for the boundary after {k} blocks")
        b = float(np.partition(still, place)[place])
        if floor is not None and b < floor[i]:
            raise BadInput(f"the boundary after {k} blocks fell under its screen: lower it")
        out.append(b)
        running &= t[:, i] < b
    return tuple(out)


def committed_boundaries() -> dict[tuple, tuple[float, ...]]:
    """{(first, last, alpha rounded): boundaries} of the committed table ({} without one)."""
    return dict(_read_table(BOUNDARIES_FILE))


@lru_cache(maxsize=4)
def _read_table(path: Path) -> tuple:
    if not path.is_file():
        return ()
    table = pd.read_csv(path)
    out = []
    for (first, last, alpha), rows in table.groupby(["first", "last", "alpha"]):
        rows = rows.sort_values("look")
        out.append(((int(first), int(last), round(float(alpha), ALPHA_DIGITS)),
                    tuple(float(b) for b in rows["boundary"])))  # fmt: skip
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


# --- docs/method.md's account of the committed boundaries (benchmarks/sequential_boundaries.py)


def boundaries_block(folder, shown_as: str) -> str:
    """The committed boundaries' Monte Carlo error, beside how far every boundary must move
    before a committed verdict does (verdict_margins.json, benchmarks/boundary_verdicts.py)."""
    table = pd.read_csv(folder / BOUNDARIES_FILE.name)
    seed = json.loads((folder / "boundaries_seed.json").read_text())
    relative = table["mc_error"] / table["boundary"]
    later = relative[table["look"] > 1]
    pairs = table[["first", "last"]].drop_duplicates().itertuples(index=False)
    plans = ", ".join(f"looks after {a} to {b} blocks" for a, b in pairs)
    text = (
        f"The boundaries of the claims profiles' plan ({plans}), at 95% and at each Holm level "
        f"a claim of up to {table['comparisons'].max()} comparisons needs, are fitted once from "
        f"{seed['draws']:,} simulated sequences with the recorded seed {seed['seed']} "
        f"(`benchmarks/sequential_boundaries.py`, committed in `{shown_as}/"
        f"{BOUNDARIES_FILE.name}`), the first look's exactly (the t quantile of its level: "
        "after the first look's blocks, the studentised mean is Student t). Their Monte Carlo "
        f"error, the spread of {seed['batches']} equal shares' own boundaries over "
        f"sqrt({seed['batches']}): at most {100 * later.max():.3f}% of a boundary, "
        f"{100 * later.median():.3f}% at the median. A report reads them from the table; a plan "
        f"outside it is fitted when a report needs it from {CALIBRATION_DRAWS:,} sequences, "
        f"its error about {math.sqrt(seed['draws'] / CALIBRATION_DRAWS):.0f} times larger."
    )
    margins_file = folder / "verdict_margins.json"
    if margins_file.is_file():
        margins = json.loads(margins_file.read_text())
        parts = []
        for name in ("wider", "narrower"):
            found = margins[name]
            if found["change"] is None:
                parts.append(f"no committed verdict changes with every boundary 5% {name}")
                continue
            times, moves = found["change"] / later.max(), "; ".join(found["moves"])
            parts.append(f"every boundary {100 * found['change']:.2f}% {name} ({times:.0f} "
                         f"times the largest error) first changes {moves}")  # fmt: skip
        text += " Of the committed verdicts, " + "; and ".join(parts) + "."
    return text
