"""The machinery checked against itself: a mode against a second launch of the same app in the
same blocks (A/A; `kestrel-twin`, benchmarks/aa.yaml). Every ratio should hold 100%; how often
a 95% interval excludes it bounds the false-positive rate of the verdicts on this machine (a
count of a few intervals is not a rate: its upper bound says what it rules out), and how
closely the intervals hold 100% is the agreement the tolerance stands on (docs/method.md)."""

import math
from typing import NamedTuple

import pandas as pd

from ..catalog import mode_label, scenario_label
from . import intervals, prose, verdicts
from .student_t import incomplete_beta

BOUND_CONFIDENCE = 0.95  # the one-sided level of the false-positive rate's upper bound
NOMINAL_RATE = 0.05  # how often a 95% interval excludes the truth when it holds its level


def rate_upper_bound(excluded: int, total: int, confidence: float = BOUND_CONFIDENCE) -> float:
    """The one-sided Clopper-Pearson upper bound on a rate seen `excluded` times in `total`:
    the p at which seeing `excluded` or fewer has probability 1 - confidence, i.e. the
    confidence quantile of Beta(excluded + 1, total - excluded). With none seen it is
    1 - (1 - confidence) ** (1 / total): 30 intervals bound the rate at about 10%."""
    if not 0 <= excluded <= total or total < 1:
        raise ValueError(f"{excluded} of {total}: need 0 <= excluded <= total, total >= 1")
    if excluded == total:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(100):  # P(X <= excluded | p) = 1 - I_p(excluded + 1, total - excluded)
        p = (low + high) / 2
        tail = 1 - incomplete_beta(p, excluded + 1, total - excluded)
        low, high = (p, high) if tail > 1 - confidence else (low, p)
    return (low + high) / 2


SELF, TWIN = "kestrel", "kestrel-twin"


class AARun(NamedTuple):
    """One design's committed A/A run: data/runs/<run_id>/, measured from
    benchmarks/<params_file>, its design in words ("Windows <words>")."""

    run_id: str
    params_file: str
    words: str


RUNS = {"back to back": AARun("example-aa", "aa.yaml", "back to back"),
        "interleaved": AARun("example-aa-interleaved", "aa-interleaved.yaml", "interleaved"),
        "alternating": AARun("example-aa-alternating", "aa-alternating.yaml",
                             "of alternating runs")}  # fmt: skip
# The claims rule's A/A: jcsi2018's claims judged with the twin as the baseline, measured
# until decided (benchmarks/aa-claims.yaml); its verdicts are what it checks.
CLAIMS_RUN = AARun("example-aa-claims", "aa-claims.yaml", "interleaved, until decided")
CLAIMS_STUDY = "jcsi2018"


def aa_intervals(results: pd.DataFrame, group: int = verdicts.MIN_UNITS) -> pd.DataFrame:
    """Every 95% interval of TWIN / SELF the run gives, per scenario: over all its blocks
    (`span` "all"), and over disjoint groups of `group` consecutive blocks (each an
    independent re-run of the shortest design that gets a verdict)."""
    rows = []
    ratios = intervals.paired_ratios(results, SELF)
    for scenario in ratios["scenario"].astype(str).unique():
        mine = results[results["scenario"].astype(str) == scenario]
        blocks = sorted(mine["block"].unique())
        spans = [("all", blocks)]
        spans += [(f"{part[0]}-{part[-1]}", part) for i in range(0, len(blocks) - group + 1, group)
                  if len(part := blocks[i : i + group]) == group]  # fmt: skip
        for span, part in spans:
            r = intervals.paired_ratios(mine[mine["block"].isin(part)], SELF)
            r = r[r["mode"].astype(str) == TWIN].iloc[0]
            rows.append(dict(scenario=scenario, span=span, n=int(r.n), ratio=r.ratio,
                             ci_low=r.ci_low, ci_high=r.ci_high,
                             excludes_100=bool(r.ci_low > 1 or r.ci_high < 1),
                             agrees_within_pct=verdicts.agrees_within_pct(
                                 r.ci_low, r.ci_high, 1.0)))  # fmt: skip
    return pd.DataFrame(rows)


def scenario_correlation(results: pd.DataFrame) -> float:
    """How far the scenarios' intervals over the same blocks move together: the mean pairwise
    correlation, across scenarios, of TWIN / SELF's block log ratios (a block's scenarios share
    its two launches and its stretch of the machine). Near 0 they are independent draws, as
    the bound's count takes them; NaN with fewer than two scenarios or three blocks."""
    logs = intervals.block_log_ratios(results, SELF)
    logs = logs[logs["mode"].astype(str) == TWIN]
    wide = logs.pivot_table(index="block", columns="scenario", values="log_ratio", observed=True)
    if wide.shape[1] < 2 or len(wide) < 3:
        return math.nan
    r = wide.corr().to_numpy()
    k = len(r)
    return float((r.sum() - k) / (k * (k - 1)))


def summary(results: pd.DataFrame) -> str:
    """The A/A check in two sentences, every number from the run."""
    table = aa_intervals(results)
    groups = table[table["span"] != "all"]
    whole = table[table["span"] == "all"]
    scenarios = ", ".join(scenario_label(s) for s in whole["scenario"])
    excluded = int(groups["excludes_100"].sum())
    expected = NOMINAL_RATE * len(groups)
    blocks = prose.span(whole["n"], ".0f")
    bound = _bound_pct(rate_upper_bound(excluded, len(groups)))
    calibrated, seen = needed_at(NOMINAL_RATE, 0.10)
    # "Agrees to within": rounded outwards, never tighter than computed.
    within = [math.ceil(v - 1e-9) for v in whole["agrees_within_pct"]]
    return (
        f"{mode_label(TWIN)} against {mode_label(SELF)}, the same app launched twice in the "
        f"same blocks ({blocks} blocks; {scenarios}): {excluded} of {len(groups)} 95% "
        f"intervals of {verdicts.MIN_UNITS} blocks excluded 100% (at a 5% rate, "
        f"{expected:.1f} would). {len(groups)} intervals bound the false-positive rate at "
        f"{bound:.1f}% at most ({100 * BOUND_CONFIDENCE:.0f}% one-sided Clopper-Pearson "
        f"bound); {_needed_for(0.10)} intervals with none excluding 100% would bound it at "
        f"10%, and {calibrated} with {seen} excluding it, as intervals that hold their 95% "
        f"exactly would. Over all blocks the ratios were "
        f"{prose.span(100 * whole['ratio'], '.0f')}% and agree with 100% to within "
        f"±{prose.span(within, '.0f')}%; {int(whole['excludes_100'].sum())} of {len(whole)} "
        f"exclude it.{_shared_blocks(results, groups)}"
    )


def _shared_blocks(results: pd.DataFrame, groups: pd.DataFrame) -> str:
    """What the count's independence rests on: a block's scenarios share its two launches, so
    their intervals may move together; each scenario's own intervals (disjoint blocks, their
    own launches) bound its rate without that assumption."""
    r = scenario_correlation(results)
    if math.isnan(r):
        return ""
    each = groups.groupby("scenario", sort=False)["excludes_100"].agg(["sum", "size"])
    bounds, counts = [], []
    for scenario, k, n in each.itertuples():
        bounds.append(_bound_pct(rate_upper_bound(int(k), int(n))))
        counts.append(f"{scenario_label(scenario)} {int(k)} of {int(n)}")
    return (
        f" The bound takes the intervals as independent draws; a block's scenarios share its two "
        f"launches, and their block ratios correlate at r = {r:.2f} on average (0 for "
        f"independent draws). Each scenario's intervals alone ({', '.join(counts)} excluded "
        f"100%) bound each scenario's rate at {prose.span(bounds, '.1f')}%."
    )


def _bound_pct(bound: float) -> float:
    """An upper bound in percent, rounded up to a tenth: never lower than computed, and fine
    enough to tell 9.8% from the 10% it is held to."""
    return math.ceil(1000 * bound - 1e-9) / 10


def needed_at(seen_rate: float, rate: float, most: int = 10_000) -> tuple[int, int]:
    """(intervals, excluding): the fewest intervals whose bound is at most `rate` when they
    exclude 100% at `seen_rate` (rounded to a count): what an A/A must measure to bound the
    rate at `rate` if the intervals hold their level (seen_rate = NOMINAL_RATE)."""
    if seen_rate >= rate:
        raise ValueError(f"a rate seen at {seen_rate} never bounds it at {rate} or below")
    for total in range(1, most + 1):
        excluded = round(seen_rate * total)
        # The bound is at most `rate` where seeing `excluded` or fewer is already that rare
        # at `rate` (the tail falls as the rate rises): one beta function, not a search.
        if 1 - incomplete_beta(rate, excluded + 1, total - excluded) <= 1 - BOUND_CONFIDENCE:
            return total, excluded
    raise ValueError(f"more than {most} intervals at {seen_rate}")


def _needed_for(rate: float, confidence: float = BOUND_CONFIDENCE) -> int:
    """The fewest intervals, none excluding 100%, whose bound is at most `rate`."""
    return math.ceil(math.log(1 - confidence) / math.log(1 - rate))
