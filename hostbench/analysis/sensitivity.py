"""One factor at a time: the same ratios in a study and in a sub-study that changed one factor.

Shared by the studies that run such sub-studies (their params' `sub_studies`): what a
sub-study changed (from the two params.json), how far each ratio moved and whether its words
stayed, and what the localhost shortcut costs (a `two-hosts` sub-study, topology netns,
against the main study over loopback).
"""

import pandas as pd

from ..catalog import mode_label, scenario_label
from ..params import SCHEDULE, StudyParams
from ..results import valid_rows
from . import intervals, tables, verdicts, wording

# Params keys that say what was measured, not how: a sub-study narrows them on purpose.
_SCOPE = {"modes", "scenarios", "seed", "description", "baseline", "sub_studies", "smoke",
          *SCHEDULE}  # fmt: skip
MOVED = "moved (sub-study / main)"
SAME = "same words"
TWO_HOSTS = "two-hosts"  # the sub-study that moves the client off the server's loopback


def changed_factors(main: StudyParams, sub: StudyParams) -> str:
    """What a sub-study changed against the main study, from their params.json
    (tables.load_params): "loadgen_cpus: none -> 1; ..." (the measurement's scope, modes and
    scenarios, left out)."""
    main, sub = main.to_dict(), sub.to_dict()
    changes = []
    for key in sorted((set(main) | set(sub)) - _SCOPE):
        before, after = main.get(key), sub.get(key)
        if before != after:
            changes.append(f"{key}: {_setting(before)} -> {_setting(after)}")
    return "; ".join(changes) or "nothing"


def _setting(value) -> str:
    if value is None or value == []:
        return "none"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def sensitivity(main: pd.DataFrame, variant: pd.DataFrame, label: str = "sub-study",
                reference: str = "main study"):  # fmt: skip
    """The same ratios (intervals.paired_ratios) measured in the main study (or the `reference`
    it names: another sub-study) and in a sub-study that changed one factor (`label` names
    it). `moved`: sub-study / main (or reference); `same words`:
    whether both intervals lead to the same words (faster, slower, indistinguishable).
    Ratios pair by mode and scenario, and by concurrency where both have it (a study at more
    than one concurrency shows it as a column). Each side shows its n (blocks); words from
    fewer than verdicts.MIN_UNITS blocks are not compared ("n/a")."""
    keys = ["mode", "scenario"]
    if "concurrency" in main.columns and "concurrency" in variant.columns:
        keys.append("concurrency")
    left, right = (_keyed(df, keys) for df in (main, variant))
    both = left.merge(right, on=keys, suffixes=("_main", "_variant"))
    several = "concurrency" in keys and both["concurrency"].nunique() > 1
    rows = []
    for r in both.itertuples(index=False):
        main_words = wording.describe(r.ratio_main, r.ci_low_main, r.ci_high_main)
        variant_words = wording.describe(r.ratio_variant, r.ci_low_variant, r.ci_high_variant)
        rows.append(
            (
                mode_label(r.mode),
                scenario_label(r.scenario),
                *((int(r.concurrency),) if several else ()),
                main_words,
                int(r.n_main),
                variant_words,
                int(r.n_variant),
                r.ratio_variant / r.ratio_main,
                _same_words(main_words, variant_words)
                if min(r.n_main, r.n_variant) >= verdicts.MIN_UNITS
                else "n/a",
            )
        )
    own = reference != "main study"  # another sub-study: the columns name it
    main_n = f"n ({reference})" if own else "n (main)"
    moved = f"moved (sub-study / {reference})" if own else MOVED
    columns = ["mode", "scenario", *(["concurrency"] if several else []), reference,
               main_n, label, f"n ({label})", moved, SAME]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _keyed(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = df.assign(**{k: df[k].astype(str) for k in ("mode", "scenario")})
    if "concurrency" in keys:
        out["concurrency"] = out["concurrency"].astype(int)
    return out


def _same_words(a: str, b: str) -> str:
    """Whether two interval descriptions reach the same verdict ("n/a" without intervals)."""
    verdicts = [text.split(":")[0] for text in (a, b)]
    if any(v not in ("faster", "slower", "indistinguishable at this precision") for v in verdicts):
        return "n/a"
    return "yes" if verdicts[0] == verdicts[1] else "no"


# --- the localhost shortcut: loopback (the main study) against two hosts (netns, a veth)

NOT_MEASURED = (
    "not measured in this run (no two-hosts sub-study: it is not in this profile, this machine "
    "could not make network namespaces, or the study ran over ssh, which skips it)"
)


def baseline_cpu_us(runs: pd.DataFrame, baseline: str, setups: pd.DataFrame | None = None) -> float:
    """The baseline's CPU per request in microseconds, all its process groups (server, proxy,
    load generator) together, averaged over its setups (valid runs only); only over `setups`
    (scenario, tool, concurrency rows) when given, so two runs compare the same ones."""
    per = tables.cpu_per_request(valid_rows(runs))
    per = per[per["mode"].astype(str) == baseline]
    if setups is not None:
        per = per.merge(setups, on=list(setups.columns))
    columns = [f"{g}_us_per_request" for g in tables.CPU_GROUPS]
    return float(per[columns].fillna(0).sum(axis=1).mean())  # no proxy: NaN, none spent


def localhost_cost(main_runs: pd.DataFrame, two_hosts_runs: pd.DataFrame | None,
                   baseline: str) -> str:  # fmt: skip
    """What measuring over loopback cost the ratios, in one sentence from the two studies'
    rows (every run, invalid ones too: paired_ratios leaves them out): how far the ratios
    moved from loopback to the veth, whether their words stayed, and the baseline's CPU per
    request in both. NOT_MEASURED without a two-hosts sub-study."""
    if two_hosts_runs is None or two_hosts_runs.empty:
        return NOT_MEASURED
    table = sensitivity(
        intervals.paired_ratios(main_runs, baseline),
        intervals.paired_ratios(two_hosts_runs, baseline),
        TWO_HOSTS,
    )
    if table.empty:
        return "not measured: the two-hosts sub-study shares no ratio with this study"
    moved = table[MOVED].dropna()  # a ratio with no valid pair on one side moves nowhere
    if moved.empty:
        return "not measured: no ratio has valid pairs both over loopback and over the veth"
    judged = table[table[SAME] != "n/a"]
    words = (
        f"the words stayed the same for {int((judged[SAME] == 'yes').sum())} of {len(judged)}"
        if len(judged)
        else (
            f"no ratio has {verdicts.MIN_UNITS} or more blocks on both sides, so their words "
            "are not compared"
        )
    )
    label = mode_label(baseline)
    # The CPU over loopback and over the veth from the same setups: the main study has more
    # scenarios than the two-hosts sub-study, and averaging unmatched sets flips comparisons.
    shared = _shared_setups(main_runs, two_hosts_runs, baseline)
    scenarios = ", ".join(scenario_label(s) for s in shared["scenario"].unique())
    n = len(moved)
    low, high = f"x{moved.min():.2f}", f"x{moved.max():.2f}"
    span = low if low == high else f"{low} to {high}"
    return (
        f"over a veth between two network namespaces the {n} ratio{'s' * (n > 1)} measured "
        f"both ways moved by {span} (two hosts / loopback); {words}; "
        f"on the same scenarios ({scenarios}), {label} cost "
        f"{baseline_cpu_us(main_runs, baseline, shared):.0f} µs of CPU per request over "
        f"loopback, {baseline_cpu_us(two_hosts_runs, baseline, shared):.0f} µs over the veth"
    )


def _shared_setups(a: pd.DataFrame, b: pd.DataFrame, baseline: str) -> pd.DataFrame:
    # The (scenario, tool, concurrency) setups both ran the baseline in.
    def setups(runs):
        rows = valid_rows(runs)
        rows = rows[rows["mode"].astype(str) == baseline]
        return rows[intervals.SETUP].astype({"scenario": str, "tool": str}).drop_duplicates()

    return setups(a).merge(setups(b), on=intervals.SETUP)
