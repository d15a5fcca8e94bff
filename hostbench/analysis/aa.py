"""The machinery checked against itself: a mode against a second launch of the same app in the
same blocks (A/A; `kestrel-twin`, benchmarks/aa.yaml). Every ratio should hold 100%; how often
a fixed 95% t interval over 3 blocks excludes it, between identical launches, is what the
count bounds (a count of a few intervals is not a rate: its upper bound says what it rules
out). The intervals come in clusters, a group of blocks' scenarios sharing its launches, so
the bound is the clustered one (rate_bounds.py); how closely the intervals hold 100% is the
agreement the tolerance stands on (docs/method.md). The claims rule's own error on these
blocks is aa_resampled.py's."""

import math
import re
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..catalog import mode_label, scenario_label
from . import intervals, prose, rate_bounds, verdicts
from .kept import frame_key, keep_of_frame
from .student_t import incomplete_beta
from .tables import PLAN

BOUND_CONFIDENCE = rate_bounds.BOUND_CONFIDENCE  # the one-sided level of the rate's bound
NOMINAL_RATE = 0.05  # how often a 95% interval excludes the truth when it holds its level


def rate_upper_bound(excluded: int, total: int, confidence: float = BOUND_CONFIDENCE) -> float:
    """The one-sided Clopper-Pearson upper bound on a rate seen `excluded` times in `total`
    independent trials (rate_bounds.upper_bound): with none seen 1 - (1 - confidence) ** (1 /
    total), so 30 intervals bound the rate at about 10%."""
    return rate_bounds.upper_bound(excluded, total, confidence)


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
    independent re-run of the shortest design that gets a verdict).

    Computed once per content of the results (kept.py: every page that tells the A/A check
    asks for it, a hundred intervals a run); the caller gets its own copy."""
    key = ("aa intervals", frame_key(results), group, results.attrs.get(PLAN))
    return keep_of_frame(key, lambda: _aa_intervals(results, group)).copy()


def _aa_intervals(results: pd.DataFrame, group: int) -> pd.DataFrame:
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


def clustered(groups: pd.DataFrame, confidence: float = BOUND_CONFIDENCE) -> rate_bounds.Clustered:
    """The clustered bound of aa_intervals' groups of blocks: a cluster is one group (its span),
    its trials the scenarios' intervals over those blocks, which share their launches."""
    outcomes = pd.DataFrame({"cluster": groups["span"].to_numpy(),
                             "seen": groups["excludes_100"].astype(int).to_numpy()})  # fmt: skip
    return rate_bounds.clustered_upper_bound(outcomes, confidence)


PROGRESS_FILE = "progress.log"  # the harness's, "[done/planned windows] run_key: ..."
_WINDOW_COLUMNS = ["mode", "scenario", "tool", "concurrency", "window"]


def first_plan_blocks(run_dir: str | Path, results: pd.DataFrame) -> int | None:
    """The blocks the run was planned for when it began: its progress.log's first line's
    planned windows over the windows a block has (its results' distinct mode, scenario, tool,
    concurrency and window). A plan grown on a resume (more repetitions after a look) shows
    as more blocks measured than this. None without a log."""
    path = Path(run_dir) / PROGRESS_FILE
    if not path.is_file():
        return None
    for line in path.read_text().splitlines():
        if found := re.match(r"\[\d+/(\d+)\]", line):
            per_block = len(results[[c for c in _WINDOW_COLUMNS if c in results]].drop_duplicates())
            return int(found.group(1)) // per_block
    return None


def summary(results: pd.DataFrame, first_plan: int | None = None) -> str:
    """The A/A check in a paragraph, every number from the run: the count, its clustered bound
    and what it bounds, the blocks after a grown plan (`first_plan`, first_plan_blocks) apart
    from those before it, and each scenario alone."""
    table = aa_intervals(results)
    groups = table[table["span"] != "all"]
    whole = table[table["span"] == "all"]
    scenarios = ", ".join(scenario_label(s) for s in whole["scenario"])
    excluded = int(groups["excludes_100"].sum())
    expected = NOMINAL_RATE * len(groups)
    blocks = prose.span(whole["n"], ".0f")
    calibrated, seen = needed_at(NOMINAL_RATE, 0.10)
    # "Agrees to within": rounded outwards, never tighter than computed.
    within = [math.ceil(v - 1e-9) for v in whole["agrees_within_pct"]]
    return (
        f"{mode_label(TWIN)} against {mode_label(SELF)}, the same app launched twice in the "
        f"same blocks ({blocks} blocks; {scenarios}): {excluded} of {len(groups)} 95% "
        f"intervals of {verdicts.MIN_UNITS} blocks excluded 100% (at a 5% rate, "
        f"{expected:.1f} would).{_clustered_sentence(groups)} {_needed_for(0.10)} independent "
        f"intervals with none excluding 100% would bound it at 10%, and {calibrated} with "
        f"{seen} excluding it, as intervals that hold their 95% exactly would."
        f"{_grown_plan(groups, first_plan)} Over all blocks the ratios were "
        f"{prose.span(100 * whole['ratio'], '.0f')}% and agree with 100% to within "
        f"±{prose.span(within, '.0f')}%; {int(whole['excludes_100'].sum())} of {len(whole)} "
        f"exclude it.{_each_scenario(results, groups)}"
    )


def _clustered_sentence(groups: pd.DataFrame) -> str:
    """What the count bounds, and its bound with the clusters it comes in."""
    c = clustered(groups)
    size = f"{c.total / c.clusters:g}"
    if math.isnan(c.icc):
        how = ("no exclusion differs from another, so no correlation between them can be "
               "estimated: the clusters are counted, not the intervals "
               f"(design effect {size})")  # fmt: skip
    else:
        floor = ", counted as 0" if c.icc < 0 else ""
        how = (f"their exclusions correlate within a cluster at an intraclass correlation of "
               f"{c.icc:.2f}{floor} (design effect {c.design_effect:.2f})")  # fmt: skip
    return (
        f" What it bounds: how often a fixed 95% t interval over {verdicts.MIN_UNITS} blocks of "
        f"this design excludes 100% between two identical launches (not a verdict's error, "
        f"which rests on the intervals its design states). {_clusters_text(c, size)}; {how}, "
        f"so they weigh as {c.effective_total:.0f} independent intervals "
        f"with {c.effective_seen:.1f} excluding 100%, and bound that rate at "
        f"{_bound_pct(c.bound):.1f}% at most ({100 * BOUND_CONFIDENCE:.0f}% one-sided "
        f"Clopper-Pearson bound on those effective counts; {_bound_pct(c.independent_bound):.1f}% "
        f"were the intervals independent)."
    )


def _last_block(groups: pd.DataFrame) -> pd.Series:
    return groups["span"].str.split("-").str[-1].astype(int)


def _grown_plan(groups: pd.DataFrame, first_plan: int | None) -> str:
    """The groups of blocks planned from the start apart from those added after a look (a
    group reaching past the first plan counts as added)."""
    last = _last_block(groups)
    if first_plan is None or last.max() <= first_plan:
        return ""
    parts = []
    for words, part in (("planned from the start", groups[last <= first_plan]),
                        ("added after that look", groups[last > first_plan])):  # fmt: skip
        if part.empty:
            continue
        c = clustered(part)
        first, end = part["span"].iloc[0].split("-")[0], _last_block(part).max()
        parts.append(f"blocks {first}-{end}, {words}, {c.seen} of {c.total} "
                     f"({_bound_pct(c.bound):.1f}% at most)")  # fmt: skip
    return (
        f" The plan grew after its first {first_plan} blocks had been looked at: "
        f"{'; '.join(parts)}, each bound clustered as above. Blocks added after a look are "
        f"optional continuation, which these fixed intervals do not allow for: the whole run's "
        f"bound is that of the blocks measured, not of a plan fixed in advance."
    )


def _each_scenario(results: pd.DataFrame, groups: pd.DataFrame) -> str:
    """Each scenario's intervals alone (disjoint blocks, no launch shared): bounds that need no
    model of the clustering; and how far the scenarios' block ratios move together."""
    r = scenario_correlation(results)
    if math.isnan(r):
        return ""
    each = groups.groupby("scenario", sort=False)["excludes_100"].agg(["sum", "size"])
    bounds, counts = [], []
    for scenario, k, n in each.itertuples():
        bounds.append(_bound_pct(rate_upper_bound(int(k), int(n))))
        counts.append(f"{scenario_label(scenario)} {int(k)} of {int(n)}")
    return (
        f" Each scenario's intervals alone, over disjoint blocks ({', '.join(counts)} excluded "
        f"100%), bound each scenario's rate at {prose.span(bounds, '.1f')}%, with no model of "
        f"the clustering; the scenarios' block ratios themselves correlate at r = {r:.2f} on "
        f"average (0 for independent draws)."
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


def _clusters_text(c, size: int) -> str:
    """ "The 220 intervals come in 55 clusters, the 4 scenarios over each group of 3 blocks
    sharing its launches"."""
    return (f"The {c.total} intervals come in {c.clusters} clusters, the {size} scenarios over "
            f"each group of {verdicts.MIN_UNITS} blocks sharing its launches")  # fmt: skip
