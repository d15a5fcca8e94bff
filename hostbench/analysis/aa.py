"""The machinery checked against itself: a mode against a second launch of the same app in the
same blocks (A/A; `kestrel-twin`, benchmarks/aa.yaml). Every ratio should hold 100%; how often
a 95% interval excludes it is the false-positive rate of the verdicts on this machine, and how
closely the intervals hold 100% is the agreement the tolerance stands on (docs/method.md)."""

import pandas as pd

from ..catalog import mode_label, scenario_label
from . import intervals, prose

SELF, TWIN = "kestrel", "kestrel-twin"
# Its committed runs (data/runs/<id>/), one per design, from benchmarks/<params file>.
RUNS = {"back to back": ("example-aa", "aa.yaml"),
        "interleaved": ("example-aa-interleaved", "aa-interleaved.yaml")}  # fmt: skip


def aa_intervals(results: pd.DataFrame, group: int = intervals.MIN_UNITS) -> pd.DataFrame:
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
                             agrees_within_pct=intervals.agrees_within_pct(
                                 r.ci_low, r.ci_high, 1.0)))  # fmt: skip
    return pd.DataFrame(rows)


def summary(results: pd.DataFrame) -> str:
    """The A/A check in two sentences, every number from the run."""
    table = aa_intervals(results)
    groups = table[table["span"] != "all"]
    whole = table[table["span"] == "all"]
    scenarios = ", ".join(scenario_label(s) for s in whole["scenario"])
    excluded = int(groups["excludes_100"].sum())
    expected = 0.05 * len(groups)
    blocks = prose.span(whole["n"], ".0f")
    return (
        f"{mode_label(TWIN)} against {mode_label(SELF)}, the same app launched twice in the "
        f"same blocks ({blocks} blocks; {scenarios}): {excluded} of {len(groups)} 95% "
        f"intervals of {intervals.MIN_UNITS} blocks excluded 100% (at a 5% rate, "
        f"{expected:.1f} would). Over all blocks the ratios were "
        f"{prose.span(100 * whole['ratio'], '.0f')}% and agree with 100% to within "
        f"±{prose.span(whole['agrees_within_pct'], '.0f')}%; "
        f"{int(whole['excludes_100'].sum())} of {len(whole)} exclude it."
    )
