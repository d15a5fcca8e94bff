"""The claims rule's own error on identical launches: the interleaved A/A's measured blocks
(Kestrel against its twin, benchmarks/aa-interleaved.yaml) resampled as claims runs and judged
as a claims run is (benchmarks/aa-claims.yaml: jcsi2018's claims, the twin as the baseline).

Each resampled run takes blocks of the measured run in turn and is judged after every block
from its plan's first look by the repeated intervals (sequential.Plan, the intersection over
looks as sequential.repeated_interval takes it), each claim by verdicts.claim_verdict (its
comparisons at 95%, a refutation at Holm's levels, whose boundaries are fitted for them); a
decided claim stays decided, and the run stops once every claim is, or at the plan's cap. The
time budget is left out: it only stops a run sooner. Every true ratio is 1.00, so a verdict is
wrong where it is decided and differs from the verdict the truth itself gets (a direction
at its stated value, as "the fastest" between identical launches is: any decided verdict).

The clusters are kept: a block's scenarios are drawn together (they share its two launches
and its stretch of the machine), and in the "launch triples" scheme whole groups of three
consecutive blocks are (the A/A bound's clusters, aa.clustered), which keeps the correlation
between neighbouring blocks too. "Centred": each scenario's mean log ratio over the run is
taken off its blocks, so the truth is exactly 1.00 and only the noise is the machine's; "as
measured": not, so a real offset of the twin from Kestrel would count as well.

What the resampling cannot answer: it draws from these blocks of one machine over one day, so
drift slower than a group of blocks, and other machines, are not in it; its Monte Carlo
interval is the simulation's error, not the sampling error of the measured blocks."""

import dataclasses
import math

import numpy as np
import pandas as pd

from ..catalog import scenario_label
from . import intervals, rate_bounds, verdicts
from .aa import SELF, TWIN
from .reference import RUN_BASELINE, UNJUDGED_KINDS
from .sequential import Plan

RUNS = 20_000  # per scheme and centring: a 2.5% rate's Monte Carlo interval about +-0.2%
SCHEMES = {"blocks": 1, "launch triples": 3}  # the blocks drawn together
CENTRINGS = ("centred", "as measured")
CLAIM, COMPARISON = "claim", "comparison"  # the two kinds of row the table has
RATES_FILE = "rates.csv"
BAND_FILE = "normal_band.csv"  # normal_band's rates


def measured_blocks(results: pd.DataFrame) -> pd.DataFrame:
    """Each measured block's log ratio of SELF over TWIN (the claims' Kestrel over their
    baseline), one column per scenario, blocks in order; blocks missing a scenario left out."""
    logs = intervals.block_log_ratios(results, TWIN)
    logs = logs[logs["mode"].astype(str) == SELF]
    wide = logs.pivot_table(index="block", columns="scenario", values="log_ratio", observed=True)
    wide.columns = wide.columns.astype(str)
    return wide.dropna().sort_index()


def resampled(wide: pd.DataFrame, runs: int, blocks: int, stretch: int, centred: bool,
              seed: int) -> np.ndarray:  # fmt: skip
    """(runs, blocks, scenarios) log ratios: each run `blocks` measured blocks in whole groups
    of `stretch` consecutive blocks (groups from the first block, as the A/A's intervals take
    them; a last incomplete group left out), each block with all its scenarios. A run's
    groups are distinct, in random order: drawn with replacement, a run would repeat a block
    now and then, and a repeated block narrows its interval as no measured one could.
    Deterministic for a seed."""
    x = wide.to_numpy()
    if centred:
        x = x - x.mean(axis=0)
    groups, needed = len(x) // stretch, -(-blocks // stretch)
    if groups < needed:
        raise ValueError(f"{len(x)} blocks make fewer than {needed} groups of {stretch}")
    keys = np.random.default_rng(seed).random((runs, groups))
    draws = np.argsort(keys, axis=1)[:, :needed]
    index = (draws[:, :, None] * stretch + np.arange(stretch)).reshape(runs, -1)[:, :blocks]
    return x[index]


def normal_band(wide: pd.DataFrame, plan: Plan, sets: int = 20, runs: int = RUNS,
                seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """What a set of blocks of this size shows by itself: `sets` sets of as many iid normal
    blocks (each scenario's measured sd), each resampled as the measured ones are (each
    scheme, centred): each comparison's rate a side. Normal blocks hold 2.5% a side exactly,
    so the spread of these rates is the resampling's own, from the set's finite size.
    Columns: scheme, set, scenario, side, wrong, runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(sets):
        fake = pd.DataFrame(rng.normal(0.0, wide.std().to_numpy(), size=wide.shape),
                            columns=wide.columns)  # fmt: skip
        for scheme, stretch in SCHEMES.items():
            samples = resampled(fake, runs, plan.last, stretch, True, seed + i)
            excluded = comparison_exclusions(samples, plan)
            rows += [(scheme, i, scenario, side, int(excluded[:, k, j].sum()), runs)
                     for k, scenario in enumerate(wide.columns)
                     for j, side in enumerate(verdicts.SIDES)]  # fmt: skip
    return pd.DataFrame(rows, columns=["scheme", "set", "scenario", "side", "wrong", "runs"])


def repeated_bounds(samples: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) on the log scale, shaped as `samples`: after n blocks, the intersection of
    the plan's repeated intervals over its looks up to n (the last look's alone where they no
    longer meet, as sequential.repeated_interval has it); NaN before the first look."""
    runs, blocks, width = samples.shape
    n = np.arange(1, blocks + 1, dtype=float)[None, :, None]
    mean = np.cumsum(samples, axis=1) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.maximum(np.cumsum(samples**2, axis=1) - n * mean**2, 0) / (n - 1))
    out_low, out_high = np.full(samples.shape, np.nan), np.full(samples.shape, np.nan)
    low, high = np.full((runs, width), -np.inf), np.full((runs, width), np.inf)
    for k in range(max(plan.first, 2), min(blocks, plan.last) + 1):
        half = plan.t_critical(k) * sd[:, k - 1] / math.sqrt(k)
        now_low, now_high = mean[:, k - 1] - half, mean[:, k - 1] + half
        low, high = np.maximum(low, now_low), np.minimum(high, now_high)
        empty = low > high
        out_low[:, k - 1] = np.where(empty, now_low, low)
        out_high[:, k - 1] = np.where(empty, now_high, high)
    return out_low, out_high


@dataclasses.dataclass(frozen=True)
class Claim:
    """A claim as the rule reads it: its kind, side and value, and the columns (scenarios) of
    its comparisons."""

    name: str
    kind: str
    side: str
    value: float
    columns: tuple[int, ...]

    @classmethod
    def of_rows(cls, rows: pd.DataFrame, scenarios: list[str]) -> "Claim":
        first = rows.iloc[0]
        columns = tuple(scenarios.index(s) for r in rows.itertuples() for s in scenarios
                        if not r.scenario or r.scenario == s)  # fmt: skip
        return cls(first.claim, first.kind, first.side, float(first.value), columns)

    def verdict(self, low: float, high: float, n: int) -> str:
        if self.kind in ("size", "equivalence"):
            return verdicts.size_verdict(low, high, self.value, n=n)
        return verdicts.direction_verdict(low, high, self.side, n=n, value=self.value)


def testable_claims(table: pd.DataFrame, scenarios: list[str]) -> list[Claim]:
    """The claims a run of Kestrel against its baseline judges (reference.load_claims' table):
    those whose every row compares SELF with the run's baseline in a scenario it measured."""
    out = []
    for _, rows in table.groupby("claim", sort=False):
        if rows.iloc[0].kind in UNJUDGED_KINDS:
            continue
        if (rows["mode"] != SELF).any() or (rows["relative_to"] != RUN_BASELINE).any():
            continue
        if any(r.scenario and r.scenario not in scenarios for r in rows.itertuples()):
            continue
        out.append(Claim.of_rows(rows, scenarios))
    return out


def truth_verdict(claim: Claim) -> str:
    """The verdict the truth gets (every ratio 1.00, an interval of no width)."""
    return verdicts.claim_verdict(
        lambda level: [claim.verdict(1.0, 1.0, 10**6)] * len(claim.columns)
    )


def judge(samples: np.ndarray, plan: Plan, claims: list[Claim]) -> pd.DataFrame:
    """Each resampled run judged as a claims run is (module doc): one row per run and claim,
    with its verdict when the run stopped and the blocks the run took."""
    most = max(len(c.columns) for c in claims)
    # Holm's levels: 1 - alpha / j for j comparisons left, each with its own boundaries.
    bounds = {round(plan.alpha / j, 10): [np.exp(b) for b in repeated_bounds(
                  samples, dataclasses.replace(plan, alpha=plan.alpha / j))]
              for j in range(1, most + 1)}  # fmt: skip
    rows = []
    for run in range(len(samples)):
        final = {}
        for k in range(plan.first, samples.shape[1] + 1):
            for claim in claims:
                if claim.name in final and final[claim.name] in _DECIDED:
                    continue

                def judged_at(level, claim=claim, k=k, run=run):
                    low, high = bounds[round(1 - level, 10)]
                    return [claim.verdict(low[run, k - 1, c], high[run, k - 1, c], k)
                            for c in claim.columns]  # fmt: skip

                final[claim.name] = verdicts.claim_verdict(judged_at)
            if all(v in _DECIDED for v in final.values()):
                break
        rows += [(run, name, v, k) for name, v in final.items()]
    return pd.DataFrame(rows, columns=["run", "claim", "verdict", "blocks"])


_DECIDED = (verdicts.REPRODUCED, verdicts.SMALLER, verdicts.LARGER, verdicts.DIFFERS,
            verdicts.SUPPORTED, verdicts.NOT_SUPPORTED)  # fmt: skip


def comparison_exclusions(samples: np.ndarray, plan: Plan) -> np.ndarray:
    """(runs, scenarios, 2): whether some look's repeated 95% interval up to the cap lies
    wholly above 1.00 ([..., 0]) or wholly below it ([..., 1]), stopping aside: what the
    boundaries promise at most 2.5% a side."""
    runs, blocks, width = samples.shape
    n = np.arange(1, blocks + 1, dtype=float)[None, :, None]
    mean = np.cumsum(samples, axis=1) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.maximum(np.cumsum(samples**2, axis=1) - n * mean**2, 0) / (n - 1))
    above, below = np.zeros((runs, width), bool), np.zeros((runs, width), bool)
    for k in range(max(plan.first, 2), min(blocks, plan.last) + 1):
        half = plan.t_critical(k) * sd[:, k - 1] / math.sqrt(k)
        above |= mean[:, k - 1] - half > 0
        below |= mean[:, k - 1] + half < 0
    return np.stack([above, below], axis=2)


ANY_OTHER = "any other decided verdict"


def wrong_verdicts(claim: Claim) -> list[str]:
    """The ways a claim can be wrong between identical launches, each a row of the table: a
    direction or order each decided verdict the truth does not get (each at most 2.5% by the
    rule); a size, whose truth lies well outside the tolerance, any other decided verdict."""
    truth = truth_verdict(claim)
    if claim.kind in ("size", "equivalence"):
        return [ANY_OTHER]
    return [v for v in (verdicts.SUPPORTED, verdicts.NOT_SUPPORTED) if v != truth]


def rates(wide: pd.DataFrame, plan: Plan, table: pd.DataFrame, runs: int = RUNS,
          seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Every scheme and centring: per claim and way of being wrong, the runs whose verdict was
    that (and the blocks the runs took); per scenario and side, the runs whose comparison's
    interval excluded 1.00. Columns: scheme, centring, kind, name, truth, wrong_verdict, wrong,
    runs, blocks_mean."""
    scenarios = list(wide.columns)
    claims = testable_claims(table, scenarios)
    out = []
    for scheme, stretch in SCHEMES.items():
        for centring in CENTRINGS:
            samples = resampled(wide, runs, plan.last, stretch, centring == "centred", seed)
            judged = judge(samples, plan, claims)
            for claim in claims:
                mine = judged[judged["claim"] == claim.name]
                truth = truth_verdict(claim)
                for way in wrong_verdicts(claim):
                    if way == ANY_OTHER:
                        hit = mine["verdict"].isin(_DECIDED) & (mine["verdict"] != truth)
                    else:
                        hit = mine["verdict"] == way
                    out.append((scheme, centring, CLAIM, claim.name, truth, way, int(hit.sum()),
                                runs, float(mine["blocks"].mean())))  # fmt: skip
            excluded = comparison_exclusions(samples, plan)
            for i, scenario in enumerate(scenarios):
                for j, side in enumerate(verdicts.SIDES):
                    out.append((scheme, centring, COMPARISON, f"{scenario} {side}", "", "",
                                int(excluded[:, i, j].sum()), runs, float(plan.last)))  # fmt: skip
    columns = ["scheme", "centring", "kind", "name", "truth", "wrong_verdict", "wrong", "runs",
               "blocks_mean"]  # fmt: skip
    return pd.DataFrame(out, columns=columns)


# --- docs/method.md's account (benchmarks/aa_resampled.py writes the table) -----------------


def _rate(wrong: int, runs: int) -> str:
    low, high = rate_bounds.interval(wrong, runs)
    return f"{100 * wrong / runs:.2f}% ({100 * low:.2f}-{100 * high:.2f}%)"


def _comparison(name: str) -> str:
    scenario, side = name.rsplit(" ", 1)
    return f"{scenario_label(scenario)} {side}"


def method_paragraph(folder, shown_as: str, blocks: int, plan: Plan) -> str:
    """The resampled claims runs' error rates, as docs/method.md's A/A block shows them."""
    found = pd.read_csv(folder / RATES_FILE, keep_default_na=False)
    band = pd.read_csv(folder / BAND_FILE)
    runs = int(found["runs"].iloc[0])
    claims = found[found["kind"] == CLAIM]
    comparisons = found[found["kind"] == COMPARISON]
    headers = [f"{s}, {c}" for s in SCHEMES for c in CENTRINGS]
    lines = [
        f"The claims rule on identical launches, resampled (`{shown_as}/`, "
        f"`benchmarks/aa_resampled.py`): the interleaved run's {blocks} blocks drawn as claims "
        f"runs of {plan.describe()}, each judged as a claims run is (a claim over several "
        f"comparisons by Holm's split, the run stopped once every claim is decided; the time "
        f"budget left out, as it only stops a run sooner), {runs:,} runs per scheme, each "
        "rate with the simulation's own 95% interval (Clopper-Pearson). A run's blocks are "
        "distinct measured blocks in random order, each with its scenarios, which share its "
        "launches; launch triples draw whole groups of "
        f"{SCHEMES['launch triples']} consecutive blocks, keeping their neighbours' "
        "correlation too. Centred, the truth is exactly 1.00 and only the noise is the "
        "machine's; as measured, the twin's own offset from Kestrel counts as well. A verdict "
        "is wrong where it is decided and is not the one the truth gets (between identical "
        "launches a direction at its value gets none: either decided verdict is wrong, each "
        "at most 2.5% by the rule).",
        "",
        "| claim | the truth's verdict | wrongly | " + " | ".join(headers) + " |",
        "|---|---|---|" + "---|" * len(headers),
    ]
    for (name, way), rows in claims.groupby(["name", "wrong_verdict"], sort=False):
        cells = [_rate(int(r.wrong), int(r.runs)) for r in rows.itertuples()]
        lines.append(f"| {name} | {rows['truth'].iloc[0]} | {way} | {' | '.join(cells)} |")
    lines += ["", "Each comparison's repeated interval over every look up to the cap (stopping "
                  "aside) excluding 1.00, on each side (at most 2.5% a side by construction "
                  "for normal blocks):", "",
              "| comparison | " + " | ".join(headers) + " |",
              "|---|" + "---|" * len(headers)]  # fmt: skip
    for name, rows in comparisons.groupby("name", sort=False):
        scenario, side = name.rsplit(" ", 1)
        cells = [_rate(int(r.wrong), int(r.runs)) for r in rows.itertuples()]
        lines.append(f"| Kestrel / its twin, {scenario_label(scenario)}, {side} 1.00 "
                     f"| {' | '.join(cells)} |")  # fmt: skip
    each_scheme = []
    for scheme in SCHEMES:
        mine = band[band["scheme"] == scheme]
        low, high = np.percentile(100 * mine["wrong"] / mine["runs"], [5, 95])
        seen = comparisons[comparisons["scheme"] == scheme]
        rate = 100 * seen["wrong"] / seen["runs"]
        outside = seen[(rate < low) | (rate > high)]
        named = "; ".join(f"{_comparison(r.name)}, {r.centring}" for r in outside.itertuples())
        where = f" (outside it: {named})" if named else " (every rate within it)"
        each_scheme.append(f"{scheme}, {low:.2f}-{high:.2f}% a side{where}")
    worst = claims.loc[claims["wrong"].idxmax()]
    lines += ["", (
        f"What a set of {blocks} blocks shows by itself: {band['set'].nunique()} sets of as "
        f"many iid normal blocks (each scenario's measured spread), resampled in each scheme "
        f"as the measured ones are, give (5th to 95th percentile of their rates) "
        f"{'; '.join(each_scheme)}, though normal blocks hold 2.5% a side exactly: a rate "
        "within its scheme's band is one this resampling cannot tell from 2.5%, one outside "
        "it a departure of these blocks from normal ones (their skew, or their neighbours' "
        "correlation). A claim's verdict erred one way at most "
        f"{100 * worst['wrong'] / worst['runs']:.2f}% of the time ({worst['name']}, "
        f"{worst['wrong_verdict']}, {worst['scheme']}, {worst['centring']}), against the 2.5% "
        "the rule allows each way. The draws come from these blocks of one machine on one "
        "day, so drift slower than a launch triple, and other machines, are not in them."
    )]  # fmt: skip
    return "\n".join(lines)
