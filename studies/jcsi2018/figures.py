"""The JCSI 2018 paper's own figures re-made: Fig. 4-7 (one chart per model), Fig. 8 (all
models) and Fig. 9 (throughput relative to the baseline, the paper's values beside ours)."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import StrMethodFormatter

from hostbench.analysis import figures, tables
from hostbench.catalog import mode_label, scenario_label
from hostbench.errors import BadInput

from . import models


def model_chart(df: pd.DataFrame, mode: str, baseline: str, ymax: float | None = None) -> Figure:
    """Fig. 4-7 of the paper for one hosting model: mean rps per scenario, error bars = 1 sd."""
    df = figures.one_setup(df)
    summary = tables.summarize(df)
    summary = summary[summary["mode"] == mode]
    if summary.empty:
        present = ", ".join(str(m) for m in df["mode"].unique())
        raise BadInput(f"mode {mode!r} is not in the results; modes present: {present}")
    with figures.style():
        fig = Figure(figsize=(7, 4.8), layout="constrained")
        ax = fig.subplots()
        figures.bars(ax, df, [mode])
        ax.set_ylabel("throughput [requests/s]")
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.set_xlabel("scenario")
        if ymax is not None:  # one scale for every model's chart, so heights compare
            ax.set_ylim(0, ymax)
        caption = models.caption(mode, baseline)
        ax.set_title(mode_label(mode) + (f"\n({caption})" if caption else ""))
        figures.footnote(fig, figures.setup_note(summary))
    return fig


def model_charts(df: pd.DataFrame, modes: list[str], baseline: str):
    """Fig. 4-7 analogs for `modes`, all on one y-scale so bar heights compare across charts."""
    summary = tables.summarize(figures.one_setup(df))
    tops = summary["rps_mean"] + summary["rps_std"].fillna(0.0)
    ymax = float(tops.max()) * 1.15
    return [model_chart(df, m, baseline, ymax) for m in modes if (summary["mode"] == m).any()]


def all_models_chart(df: pd.DataFrame) -> Figure:
    """Fig. 8 of the paper: every model in every scenario, grouped by scenario."""
    df = figures.one_setup(df)
    summary = tables.summarize(df)
    modes = figures.present(summary["mode"])
    with figures.style():
        fig = Figure(figsize=(max(8.0, 1.1 + 0.55 * len(modes) * 4), 5.2), layout="constrained")
        ax = fig.subplots()
        # Many narrow bars: upright labels would collide, so they stand vertically.
        figures.bars(ax, df, modes, rotation=90 if len(modes) > 2 else 0)
        ax.set_ylabel("throughput [requests/s]")
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.set_xlabel("scenario")
        fig.suptitle("All hosting models and scenarios (paper's Fig. 8)")
        figures.legend(ax, "hosting model")
        figures.footnote(fig, figures.setup_note(summary))
    return fig


# How the paper states each of its values, drawn as what it is (reference.paper_ratios).
_PAPER_MARKERS = {"about": "D", "stated": "D", "up to": "v"}


def relative_chart(
    ratios: pd.DataFrame,
    paper: pd.DataFrame | None,
    baseline: str,
) -> Figure:
    """Fig. 9 of the paper: each mode as % of the baseline, with its 95% interval.

    ratios: hostbench.analysis.intervals.paired_ratios (one setup). paper: the paper's
    values (paper.paper_ratios), or None: drawn beside ours as what they
    are: a point for "about", a downward marker on a dotted stem for "up to" (an upper
    bound), a line for a derived range. The paper's models that have no run here
    (HTTP.sys, IIS in-process) are marked "paper only".
    """
    if ratios.empty:
        raise BadInput(f"no ratios to the baseline {baseline!r}: only the baseline ran?")
    ratios = ratios.copy()
    ratios["mode"] = ratios["mode"].astype(str)
    ratios["scenario"] = ratios["scenario"].astype(str)
    scenarios = [s for s in tables.SCENARIO_ORDER if s in set(ratios["scenario"])]
    ours = [m for m in tables.MODE_ORDER if m in set(ratios["mode"])]
    theirs = []
    if paper is not None:
        paper = paper[paper["mode"] != models.PAPER_BASELINE]
        paper = paper[paper["scenario"].isin(scenarios)]
        theirs = [m for m in models.PAPER_MODELS if m in set(paper["mode"])]
    slots = ours + theirs
    width = 0.8 / len(slots)
    with figures.style():
        fig = Figure(
            figsize=(max(8.0, 1.5 + 0.45 * len(slots) * len(scenarios)), 5.4), layout="constrained"
        )
        ax = fig.subplots()
        for i, mode in enumerate(ours):
            rows = ratios[ratios["mode"] == mode].set_index("scenario").reindex(scenarios)
            x = np.arange(len(scenarios)) - 0.4 + width * (i + 0.5)
            low = (rows["ratio_pct"] - rows["ci_low_pct"]).to_numpy()
            high = (rows["ci_high_pct"] - rows["ratio_pct"]).to_numpy()
            has_ci = np.isfinite(low).any()
            ax.bar(
                x,
                rows["ratio_pct"],
                width * 0.9,
                color=figures.mode_color(mode),
                zorder=2,
                label=f"{mode_label(mode)} (ours)",
                yerr=np.nan_to_num([low, high]) if has_ci else None,
                capsize=3 if has_ci else 0,
                error_kw={"elinewidth": 1.1, "ecolor": "0.15"},
            )
        for j, mode in enumerate(theirs):
            x0 = np.arange(len(scenarios)) - 0.4 + width * (len(ours) + j + 0.5)
            rows = paper[paper["mode"] == mode].set_index("scenario").reindex(scenarios)
            color = figures.mode_color(mode)
            runs_here = mode in ours or any(models.paper_model(m) == mode for m in ours)
            note = "" if runs_here else ", paper only: not runnable here"
            for x, row in zip(x0, rows.itertuples(), strict=True):
                if not np.isfinite(row.ratio_high_pct):
                    continue
                if row.ratio_low_pct < row.ratio_high_pct:  # a derived range
                    ax.plot(
                        [x, x],
                        [row.ratio_low_pct, row.ratio_high_pct],
                        color=color,
                        lw=3,
                        solid_capstyle="butt",
                        zorder=3,
                    )
                    continue
                marker = _PAPER_MARKERS.get(row.qualifier, "D")
                if marker == "v":  # an upper bound: a stem from the baseline up to it
                    ax.plot(
                        [x, x], [100, row.ratio_high_pct], color=color, ls=":", lw=1.5, zorder=3
                    )
                ax.plot(
                    x,
                    row.ratio_high_pct,
                    marker=marker,
                    color=color,
                    ms=8,
                    markeredgecolor="0.1",
                    zorder=4,
                )
            kinds = sorted(set(rows["qualifier"].dropna()))
            words = (
                "range derived from the paper"
                if any("derived" in k for k in kinds)
                else (" / ".join(kinds))
            )
            label = f"{mode_label(mode)} (paper: {words}{note})"
            marker = "v" if "up to" in kinds else "D"
            ax.plot([], [], marker=marker, color=color, ls="", markeredgecolor="0.1", label=label)
        ax.axhline(
            100,
            color="0.2",
            linestyle="--",
            linewidth=1.2,
            zorder=1,
            label=f"baseline: {mode_label(baseline)} = 100%",
        )
        ax.set_xticks(range(len(scenarios)), [scenario_label(s) for s in scenarios])
        ax.set_xlim(-0.6, len(scenarios) - 0.4)
        ax.set_ylim(0, None)
        ax.set_ylabel(f"throughput [% of {mode_label(baseline)}]")
        ax.set_xlabel("scenario")
        fig.suptitle(f"Throughput relative to {mode_label(baseline)} (paper's Fig. 9)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
        n = ratios["n"].min()
        ci = (
            "bars: geometric mean of the ratios paired within blocks; whiskers: 95% interval"
            if n > 1
            else "one block: no interval"
        )
        figures.footnote(fig, ci)
    return fig
