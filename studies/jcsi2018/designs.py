"""The JCSI 2018 study's measuring design: the main study's windows beside the same ratio
measured with each mode's windows back to back (its back-to-back sub-study), on one machine."""

import math

import pandas as pd

from hostbench.analysis import (
    intervals,
    window_design,
    wording,
)
from hostbench.catalog import mode_label, scenario_label
from hostbench.params import StudyParams

# --- the measuring design: the main study's windows beside windows back to back

# The sub-study that runs the articles' design, each mode's windows one after another, beside
# the main study (params key sub_studies): the same ratio measured both ways, one machine.
BACK_TO_BACK = "back-to-back"
HEADLINE_MODE = "kestrel"  # the mode the headline and the designs' comparison are about
_SIDES = ("main", "sub")


def designs(main_runs: pd.DataFrame, sub_runs: pd.DataFrame, main_params: StudyParams,
            sub_params: StudyParams, mode: str = HEADLINE_MODE) -> pd.DataFrame:  # fmt: skip
    """Per scenario the back-to-back sub-study ran, `mode` against the main study's baseline
    measured with each study's design: its ratio, 95% interval, half-width
    (intervals.halfwidth_pct) and blocks from the main study (`*_main`) and from the sub-study
    (`*_sub`); `narrower`: the sub-study's half-width over the main study's (how many times
    narrower the main study's interval is); `spread_ratio`: the same for the blocks' spread
    of the log ratios (intervals.block_spread), which more blocks do not shrink; `overlap`:
    whether the two intervals share a value (None without both). attrs["designs"]: each
    side's design in words (window_design.short). Every run of each (invalid ones too:
    paired_ratios leaves them out)."""
    baseline = main_params.baseline_mode
    keys = intervals.SETUP
    main, sub = (_mode_ratios(runs, baseline, mode) for runs in (main_runs, sub_runs))
    both = main.merge(sub, on=keys, suffixes=tuple(f"_{side}" for side in _SIDES))
    for side in _SIDES:
        ratio, high, n = (both[f"{c}_{side}"] for c in ("ratio", "ci_high", "n"))
        both[f"half_{side}"] = intervals.halfwidth_pct(ratio, high)
        both[f"spread_{side}"] = [
            intervals.block_spread(r, h, int(k)) if k >= 2 and math.isfinite(h) else math.nan
            for r, h, k in zip(ratio, high, n, strict=True)
        ]
    both["narrower"] = both["half_sub"] / both["half_main"]
    both["spread_ratio"] = both["spread_sub"] / both["spread_main"]
    both["overlap"] = [
        None if math.isnan(a + b) else bool(lo_m <= hi_s and lo_s <= hi_m)
        for a, b, lo_m, hi_m, lo_s, hi_s in zip(
            both["half_main"], both["half_sub"], both["ci_low_main"], both["ci_high_main"],
            both["ci_low_sub"], both["ci_high_sub"], strict=True,
        )
    ]  # fmt: skip
    both.attrs.update(designs=(window_design.short(main_params), window_design.short(sub_params)),
                      mode=mode, baseline=baseline)  # fmt: skip
    return both


def _mode_ratios(runs: pd.DataFrame, baseline: str, mode: str) -> pd.DataFrame:
    """paired_ratios of `mode` against the baseline, one row per setup (scenario, tool,
    concurrency), keyed by plain values."""
    ratios = intervals.paired_ratios(runs, baseline)
    ratios = ratios[ratios["mode"].astype(str) == mode]
    ratios = ratios.astype({"scenario": str, "tool": str, "concurrency": int})
    return ratios[[*intervals.SETUP, "n", "ratio", "ci_low", "ci_high"]]


def designs_table(compared: pd.DataFrame) -> pd.DataFrame:
    """designs() as the page shows it: per scenario, each side's ratio with its interval
    (wording.ratio_text), half-width and blocks, then how many times narrower the main
    study's interval is and whether the two overlap."""
    columns = {"scenario": compared["scenario"]}
    for side, who, design in zip(_SIDES, ("main study", "sub-study"), compared.attrs["designs"],
                                 strict=True):  # fmt: skip
        columns[f"{who} ({design})"] = [
            wording.ratio_text(r, lo, hi)
            for r, lo, hi in zip(
                compared[f"ratio_{side}"],
                compared[f"ci_low_{side}"],
                compared[f"ci_high_{side}"],
                strict=True,
            )  # fmt: skip
        ]
        columns[f"half-width [%], {who}"] = compared[f"half_{side}"]
        columns[f"blocks, {who}"] = compared[f"n_{side}"].astype(int)
    columns["half-width, sub-study / main study"] = compared["narrower"]
    columns["intervals overlap"] = compared["overlap"]
    return pd.DataFrame(columns)


def _times(ratio: float, fewer: str, more: str, same: str) -> str:
    """ "2.9 times narrower" for 2.9, "1.3 times wider" for 1/1.3, `same` where it rounds to 1.0
    times either way."""
    if round(ratio if ratio >= 1 else 1 / ratio, 1) == 1.0:
        return same
    return f"{ratio:.1f} times {fewer}" if ratio >= 1 else f"{1 / ratio:.1f} times {more}"


def _side_text(row: dict, side: str) -> str:
    """One side of a designs() row: "159% (95% CI 156-162%), ±1.9% over 6 blocks"."""
    text = wording.ratio_text(row[f"ratio_{side}"], row[f"ci_low_{side}"], row[f"ci_high_{side}"])
    half = row[f"half_{side}"]
    return text if math.isnan(half) else f"{text}, ±{half:.1f}% over {row[f'n_{side}']} blocks"


def designs_sentences(compared: pd.DataFrame) -> str:
    """designs() in words, one line per scenario (Markdown): each side's ratio, interval,
    half-width and blocks; how many times narrower the main study's interval is, and its
    blocks' spread (which more blocks would not shrink); whether the intervals overlap."""
    if compared.empty:
        return (f"*The `{BACK_TO_BACK}` sub-study shares no ratio with the main study: the two "
                "designs are not compared.*")  # fmt: skip
    main, sub = compared.attrs["designs"]
    label, base = mode_label(compared.attrs["mode"]), mode_label(compared.attrs["baseline"])
    lines = [f"{label} as % of {base}, from the main study ({main}) and from the "
             f"`{BACK_TO_BACK}` sub-study ({sub}):", ""]  # fmt: skip
    for row in compared.to_dict("records"):
        each = f"the main study {_side_text(row, 'main')}; the sub-study {_side_text(row, 'sub')}"
        if row["overlap"] is None:
            verdict = "one side has no interval (fewer than 2 blocks): the widths are not compared"
        else:
            overlap = (
                "the two intervals overlap: no difference between the designs' ratios is shown"
                if row["overlap"]
                else "the two intervals do not overlap: the designs gave different ratios"
            )
            theirs = "the sub-study's"
            width = _times(row["narrower"], f"narrower than {theirs}", f"wider than {theirs}",
                           f"about as wide as {theirs}")  # fmt: skip
            spread = _times(row["spread_ratio"], f"smaller than {theirs}",
                            f"larger than {theirs}", f"about the same as {theirs}")  # fmt: skip
            verdict = (
                f"the main study's interval is {width}, and the spread between its blocks, "
                f"which more blocks would not shrink, is {spread}; {overlap}"
            )
        lines.append(f"- **{scenario_label(row['scenario'])}**: {each}. So {verdict}.")
    return "\n".join(lines)


def designs_missing(params: StudyParams) -> str:
    """Why the designs are not compared on this page: no back-to-back sub-study ran."""
    why = (
        "did not run on this machine (the measurement cell above says why)"
        if BACK_TO_BACK in params.sub_studies
        else "is not in this run's profile (a run from before it, or a profile without it)"
    )
    return f"*Not measured: the `{BACK_TO_BACK}` sub-study {why}, so the designs are not compared.*"
