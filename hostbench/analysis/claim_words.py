"""The words a claims table prints (claims.py judges, this words what it judged): its columns'
names, each comparison named ("Kestrel / nginx, text at 8") with its ratio and interval (OURS),
ours / the article's with how far it agrees (AGAINST), where a verdict was judged again in a
few words (conditions_in_short), and the table in one sentence (in_words).

Nothing here judges: a verdict is read from the table, a ratio and its interval from the
comparison dicts claims.comparison_ratios found.
"""

from typing import NamedTuple

import pandas as pd

from ..catalog import MODES, mode_label, scenario_label
from ..runtime_variants import VARIANTS
from . import verdicts, wording

# The claims table's columns (claims.judge_table), one row per claim; CLAIM names a row, so two
# runs' rows are matched by it.
CLAIM = "the article's claim"
VERDICT = "verdict"
WORDS = "its words, read as"
OURS = "ours (95% CI)"
AGAINST = "ours / the article's"
SENSITIVITY = "under the other analogs and sub-studies"
BOX_COLUMNS = [CLAIM, WORDS, OURS, AGAINST, VERDICT, SENSITIVITY]
# How the box words a claim that rests on an earlier claim's comparisons (restated).
RESTATES = "it rests on the comparisons of"
# How the box words a claim judged one-sided, its baseline slower than the article's (judge).
BOUNDED = (
    "ours an upper bound of the article's ratio, its comparator's stand-ins each slower "
    "than it: judged one-sided, ours can show the article's too large, never its holding"
)
# What a verdict depends on where a condition changes it (the SENSITIVITY column's first words).
ANALOG, SUB_STUDY = "the analog", "the sub-study"
# The verdict of a claim no interval judges, by its kind (reference.UNJUDGED_KINDS).
UNJUDGED = {"not testable": verdicts.NOT_TESTABLE, "not re-run": verdicts.NOT_RERUN}


IN_PLACE_OF = " in place of "  # a stand-in's condition: "<stand-in> in place of <mode>"


def in_place_of(results: pd.DataFrame, other: str, mode: str) -> str:
    """The condition of mode `other` standing in for `mode` a claim names: "Kestrel in place
    of Kestrel + nginx (TCP)". Where `other`'s rows ran a runtime variant's own app
    (testapp/aot), that app is named ("Kestrel on minimal APIs in place of Kestrel,
    AddMvcCore"): that is what stood in, and "Kestrel in place of Kestrel, AddMvcCore" would
    read as a mode in its own place. Where the labels read so without one, the stand-in's
    description says what it is."""
    variants = results.loc[results["mode"].astype(str) == other, "variant"] if (
        "variant" in results.columns) else pd.Series(dtype=str)  # fmt: skip
    apps = sorted({VARIANTS[v].build.app for v in variants.astype(str).unique()
                   if v in VARIANTS and VARIANTS[v].build.name})  # fmt: skip
    stand_in = mode_label(other)
    if apps:
        stand_in += f" on {' and '.join(apps)}"
    elif mode_label(mode).startswith(f"{stand_in}, ") and other in MODES:
        stand_in += f" ({MODES[other].summary})"
    return f"{stand_in}{IN_PLACE_OF}{mode_label(mode)}"


class Conditions(NamedTuple):
    """Where a claim was judged again (claims.judge_table's SENSITIVITY): the conditions its
    verdict held under, each (kind, runtime or ""), and those it changed under, each (kind,
    runtime or "", the verdict there); kind is ANALOG, SUB_STUDY or both."""

    held: tuple = ()
    changed: tuple = ()


def comparison_name(mode: str, relative: str, scenario: str, variants=("", "")) -> str:
    """ "Kestrel / nginx, text"; between two variants of the test app, "trace-id / date on
    Kestrel, text"."""
    if any(variants):
        subject, comparator = variants
        pair = (
            f"{subject} / {comparator} on {mode_label(mode)}"
            if mode == relative
            else f"{subject} on {mode_label(mode)} / {comparator} on {mode_label(relative)}"
        )
        return f"{pair}, {scenario_label(scenario)}"
    return f"{mode_label(mode)} / {mode_label(relative)}, {scenario_label(scenario)}"


def by_scenario_alone(found: list[dict]) -> bool:
    """Whether comparisons are named by their scenario alone: every one compares the same two
    modes."""
    return len({(c["mode"], c["relative_to"]) for c in found}) == 1


def comparison_label(c: dict, short: bool) -> str:
    """One comparison's name: its scenario alone where `short` (by_scenario_alone), else its
    modes, scenario and concurrency."""
    scenario = scenario_label(c["scenario"])
    conc = "" if pd.isna(c["concurrency"]) else f" at {int(c['concurrency'])}"
    if short:
        return scenario
    return f"{comparison_name(c['mode'], c['relative_to'], c['scenario'], c['variants'])}{conc}"


def ours_text(found: list[dict], missing: list[str]) -> str:
    """The OURS cell: each comparison's ratio with its interval and blocks, then each one that
    did not run."""
    short = by_scenario_alone(found)
    # A comparison named in full takes a colon before its ratio: "X / Y, text at 8: 95% (...)".
    parts = [f"{comparison_label(c, short)}{'' if short else ':'} {wording.pct_text(c['ratio'])} "
             f"({interval_text(c)}, {_blocks(c['n'])})" for c in found]  # fmt: skip
    parts += [f"{m}: not run" for m in missing]
    return "; ".join(parts)


def _blocks(n: int) -> str:
    return f"{n} block" if n == 1 else f"{n} blocks"


def interval_text(c: dict) -> str:
    """ "44-57%", a comparison's interval as percents, or "no interval"."""
    bounds = wording.ci_bounds(c["ci_low"], c["ci_high"])
    return "no interval" if bounds is None else f"{bounds[0]}-{bounds[1]}%"


def against_text(kind: str, found: list[dict]) -> str:
    """For a size, the ratio of ratios, ours / the article's: its centre (one value where every
    comparison's prints alike), the interval that holds every comparison's, its ends rounded
    outwards, and how far that agrees and differs, each computed from the printed ends in the
    direction of the printed ratio (0.81-0.85x: within 19% below, at least 15%), so a reader
    gets the same numbers from them. "Differs by at least" holds for every comparison it is
    about: all of them where all differ on one side, else those it names. "" for a direction."""
    if not found or kind not in ("size", "equivalence"):
        return ""
    centre = _centre([c["ratio"] / c["value"] for c in found])
    if any(pd.isna(c["ci_low"]) or pd.isna(c["ci_high"]) for c in found):
        return f"{centre}, no interval"
    low, high = _printed_ends(found)
    text = f"{centre} ({low}-{high}x): {wording.agreement_words(low, high)}"
    short = by_scenario_alone(found)
    for side in ("below", "above"):
        # The comparisons whose interval excludes the article's value on this side.
        apart = [c for c in found if (c["ci_high"] < c["value"] if side == "below"
                                      else c["ci_low"] > c["value"])]  # fmt: skip
        if not apart:
            continue
        side_low, side_high = _printed_ends(apart)
        gap = wording.gap_pct(side_low, side_high)
        if gap is None or gap < 1:  # "at least 0%" would tell a reader nothing
            continue
        text += f", differs by at least {wording.decimal_text(gap)}%"
        if len(apart) < len(found):
            names = ", ".join(comparison_label(c, short) for c in apart)
            text += f" on {names} ({side_low}-{side_high}x)"
    return text


def _centre(values: list[float]) -> str:
    """ "0.44x", or "0.41x to 0.47x" over comparisons that print differently."""
    low, high = (wording.times_text(v) for v in (min(values), max(values)))
    return low if low == high else f"{low} to {high}"


def _printed_ends(found: list[dict]) -> tuple[str, str]:
    """The ends of the interval that holds each comparison's ours / the article's, as printed:
    two decimals, rounded outwards (wording.times_bound), more where rounding would carry an
    end across an edge of the tolerance, so the printed ends say what the verdict read."""
    low = min(c["ci_low"] / c["value"] for c in found)
    high = max(c["ci_high"] / c["value"] for c in found)
    edges = wording.verdict_edges()
    return (wording.times_bound(low, up=False, edges=edges),
            wording.times_bound(high, up=True, edges=edges))  # fmt: skip


def in_words(table: pd.DataFrame) -> str:
    """The claims table in one sentence, one verdict per claim (how far a size agrees beside
    it), the claims not testable or not re-run here counted: for a README line or a batch
    index."""
    testable = table[~table[VERDICT].isin(UNJUDGED.values())]
    again = table.attrs.get("restated", {})
    parts = [f"{r[CLAIM]}: {r[VERDICT]}" + (f" ({r[AGAINST].split(': ', 1)[-1]})"
             if r[AGAINST] and ": " in r[AGAINST] else "")
             + (f' (the same comparisons as "{again[r[CLAIM]]}")' if r[CLAIM] in again else "")
             for _, r in testable.iterrows()]  # fmt: skip
    for verdict in UNJUDGED.values():
        if n := int((table[VERDICT] == verdict).sum()):
            parts.append(f"{n} more {verdict}")
    return "; ".join(parts)


def conditions_in_short(judged_again: Conditions | None, brief: bool = False) -> str:
    """Where a claim was judged again (Conditions), in a few words for a first screen: "holds
    on .NET 8, 9 and 10", "changes with the analog; holds under 2 other conditions; still
    open under 1", "" where nothing judged it again. brief: where it changes alone, else where it
    holds, for a line with more to say."""
    if not judged_again:
        return ""
    parts = []
    # Undecided under a condition is no other verdict: counted apart, as machines.in_short does.
    changed = [c for c in judged_again.changed if c[2] != verdicts.UNDECIDED]
    undecided = len(judged_again.changed) - len(changed)
    changed_runtimes = [rt for _, rt, _ in changed if rt]
    if changed_runtimes:
        parts.append(f"changes on {_runtimes_joined(changed_runtimes)}")
    kinds = [k for k in (ANALOG, SUB_STUDY)
             if any(k in kind for kind, rt, _ in changed if not rt)]  # fmt: skip
    if kinds:
        parts.append(f"changes with {' and '.join(kinds)}")
    if brief and parts:
        return "; ".join(parts)
    held_runtimes = [rt for _, rt in judged_again.held if rt]
    others = len(judged_again.held) - len(held_runtimes)
    if held_runtimes:
        parts.append(f"holds on {_runtimes_joined(held_runtimes)}")
    if others:
        parts.append(f"holds under {others} other condition{'s' * (others != 1)}")
    if undecided and not brief:
        parts.append(f"still open under {undecided}")
    return "; ".join(parts)


def _runtimes_joined(labels: list[str]) -> str:
    """ ".NET 8, 9 and 10" for [".NET 8", ".NET 9", ".NET 10"]; another condition a first
    screen names (TLS, a runtime variant) after them: ".NET 8, 9 and 10 and TLS"."""
    head = ".NET "
    versions = [label[len(head) :] for label in labels if label.startswith(head)]
    named = [label for label in labels if not label.startswith(head)]
    if versions:
        net = (
            versions[0] if len(versions) == 1 else f"{', '.join(versions[:-1])} and {versions[-1]}"
        )
        named.insert(0, head + net)
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
