"""The runtime as a factor: a run that compared .NET runtimes (params key runtimes), or the
test app's runtime variants (runtime_variants: JIT or Native AOT, a GC setting), each a variant
of its TestApp modes sharing the window, read one at a time (StudyParams.app_comparison).

Within one runtime the ratios are the study's usual ones (each mode to the baseline, paired
within blocks); the modes that do not run the test app (the Go servers: variant "") are in
every runtime's part, so a ratio to Iris MVC is .NET on that runtime against the same Iris
windows. Each runtime is named with the exact version its rows recorded (runtime_version,
read from the app)."""

import pandas as pd

from ..catalog import mode_label, scenario_label
from ..runtimes import label
from . import intervals, wording

RUNTIME = "runtime"  # the variant a runtimes comparison gives each runtime: net8, net9, net10
CONDITION = "condition"  # attrs: how a runtime's part of a sub-study is named as a condition
# attrs: the condition a part ran under (a runtime, a runtime variant, TLS) as a first screen
# names it (".NET 8", "aot-datas", "TLS")
CONDITION_LABEL = "condition_label"
SUB_STUDY = "sub_study"  # attrs: the sub-study a part is of (claims.judge_table's stand-ins)


def parts(results: pd.DataFrame, order: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """{variant: its rows, with the rows of the modes that run no test app}, in `order` (the
    params' app_comparison), else oldest runtime first (net8 < net9 < net10)."""
    named = [v for v in results["variant"].astype(str).unique() if v]
    if order is not None:
        ordered = [v for v in order if v in named]
    else:
        ordered = sorted(named, key=lambda v: int("".join(c for c in v if c.isdigit()) or 0))
    return {v: results[results["variant"].astype(str).isin([v, ""])] for v in ordered}


def on_each(params) -> str:
    """ " on each runtime" (or runtime variant) a sub-study judged its claims, "" for one that
    compared neither."""
    if params.runtime_comparison:
        return " on each runtime"
    return " on each runtime variant" if params.runtime_variants else ""


def conditions(name: str, results: pd.DataFrame, params) -> dict[str, pd.DataFrame]:
    """A sub-study's results as conditions a claim is judged again under: {name: results}, or,
    for one that compared runtimes or runtime variants (its params' app_comparison), one per
    runtime (variant), keyed "<name> on <variant>", so no ratio mixes them; each part's
    attrs[CONDITION] names it for a reader: "the runtimes sub-study on .NET 8 (8.0.31)", "the
    aot-gc sub-study on minimal APIs, Native AOT, DATAS, .NET 10 (10.0.12)"; its
    attrs[CONDITION_LABEL], as a first screen's list names it (".NET 8", "aot-datas")."""
    compared = params.app_comparison
    if not compared:
        results.attrs[SUB_STUDY] = name
        return {name: results}
    short = label if params.runtime_comparison else str  # a runtime variant: its name
    found = {}
    for v, part in parts(results, list(compared)).items():  # each part a new frame
        part.attrs[CONDITION] = f"the {name} sub-study on {compared[v]} ({version_of(part, v)})"
        part.attrs[CONDITION_LABEL] = short(v)
        part.attrs[SUB_STUDY] = name
        found[f"{name} on {v}"] = part
    return found


def version_of(part: pd.DataFrame, variant: str) -> str:
    """The runtime version the variant's rows recorded ("8.0.31"); several, joined, should a
    build have changed between blocks."""
    versions = part.loc[part["variant"].astype(str) == variant, "runtime_version"].astype(str)
    return ", ".join(sorted(v for v in versions.unique() if v)) or "not reported"


def ratios(results: pd.DataFrame, baseline: str, metric: str = "rps",
           order: list[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Each mode's ratio to the baseline on each runtime (variant) (intervals.paired_ratios on
    its part; `order` as parts'), with it and its recorded version as the first columns."""
    frames = []
    for variant, part in parts(results, order).items():
        r = intervals.paired_ratios(part, baseline, metric=metric)
        r.insert(0, "version", version_of(part, variant))
        r.insert(0, RUNTIME, variant)
        frames.append(r)
    if not frames:
        return pd.DataFrame(columns=[RUNTIME, "version", *intervals.COLUMNS])
    return pd.concat(frames, ignore_index=True)


def table(results: pd.DataFrame, baseline: str, metric: str = "rps") -> pd.DataFrame:
    """ratios as a page shows them: runtime (".NET 8"), version, mode, scenario, blocks and the
    ratio with its interval in words."""
    r = wording.with_ratio_text(ratios(results, baseline, metric))
    r[RUNTIME] = r[RUNTIME].map(label)
    bounds = zip(r["ratio"], r["ci_low"], r["ci_high"], strict=True)
    r["in words"] = [wording.describe(x, lo, hi).split(":")[0] for x, lo, hi in bounds]
    return r[[RUNTIME, "version", "mode", "baseline", "scenario", "n", "ours (95% CI)", "in words"]]


def in_words(shown: pd.DataFrame) -> str:
    """`table`'s rows, one Markdown line per comparison across the runtimes (the table beside
    it gives each ratio and interval): its words where every runtime has the same ones, else
    each group of runtimes with its words. It never says one runtime beat another: that would
    take their own ratio, which these rows do not hold."""
    lines = []
    for (mode, baseline, scenario), rows in shown.groupby(["mode", "baseline", "scenario"],
                                                          sort=False):  # fmt: skip
        groups: dict[str, list[str]] = {}
        for runtime, words in zip(rows[RUNTIME], rows["in words"], strict=True):
            groups.setdefault(words, []).append(runtime)
        name = f"{mode_label(mode)} / {mode_label(baseline)}, {scenario_label(scenario)}"
        if len(groups) == 1:
            lines.append(f"- {name}: {next(iter(groups))} on every runtime.")
        else:
            each = "; ".join(f"{w} on {' and '.join(r)}" for w, r in groups.items())
            lines.append(f"- {name}: {each}.")
    return "\n".join(lines)
