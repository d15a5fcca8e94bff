"""The JCSI 2018 paper's own figures re-made: Fig. 4-7 (a panel per model), Fig. 8 (all
models) and Fig. 9 (throughput relative to the baseline, the paper's values beside ours); and
one of ours: the same ratio with the main study's design and with windows back to back."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullLocator, StrMethodFormatter

from hostbench.analysis import figure_words, figures, layout, prose, tables, wording
from hostbench.catalog import mode_label, scenario_label
from hostbench.errors import BadInput

from . import models
from .models import is_analog
from .paper import absolute_note


def stand_ins(modes: list[str], baseline: str) -> dict[str, list[str]]:
    """Our modes under each of the paper's models, in its order (models.PAPER_MODELS): each
    mode under the model it is or stands for; a reverse proxy we add (nginx-keepalive) under
    the paper's baseline, which it resembles; an empty list where nothing runs here."""
    out = {model: [] for model in models.PAPER_MODELS}
    for mode in modes:
        model = models.paper_model(mode)
        if model is None and is_analog(mode):
            model = models.PAPER_BASELINE
        if model in out:
            out[model].append(mode)
    for ours in out.values():  # the study's baseline first under the paper's
        if baseline in ours:
            ours.insert(0, ours.pop(ours.index(baseline)))
    return out


def paper_models_chart(df: pd.DataFrame, modes: list[str], baseline: str) -> Figure:
    """Fig. 4-7 of the paper in one figure: a panel per paper model, in its figures' order,
    with the modes that stand for it here (stand_ins) on one shared scale, and the models
    with no run here (HTTP.sys) said so in their panel. Bars: mean rps, whiskers: 1 sd."""
    df = figures.one_setup(df)
    summary = tables.summarize(df)
    present = set(summary["mode"].astype(str))
    groups = stand_ins([m for m in modes if m in present], baseline)
    tops = summary["rps_mean"] + summary["rps_std"].fillna(0.0)
    ymax = float(tops.max()) * 1.25
    order = sorted(models.PAPER_MODELS, key=lambda m: models.PAPER_MODELS[m].figure)
    with figures.style():
        fig = Figure(figsize=(12, 9.5), layout="constrained")
        axes = fig.subplots(2, 2, sharey=True).ravel()
        for ax, model in zip(axes, order, strict=True):
            ours = groups[model]
            title = f"{models.PAPER_MODELS[model].figure}: {mode_label(model)}"
            if ours:
                figures.bars(ax, df, ours, rotation=90 if len(ours) > 2 else 0)
                ax.set_title(title, fontsize=11, loc="left")
                handles = [Patch(color=figures.mode_color(m), label=f"{mode_label(m)}: "
                                 f"{_role(m, baseline)}") for m in ours]  # fmt: skip
                ax.legend(handles=handles, fontsize=8, loc="upper left", frameon=False)
            else:
                ax.set_title(title, fontsize=10, loc="left")
                ax.text(0.5, 0.5, "Windows only: not measured here\n(docs/windows.md)",
                        ha="center", va="center",
                        transform=ax.transAxes, fontsize=11, color="0.35")  # fmt: skip
                ax.set_xticks([])
            ax.set_ylim(0, ymax)  # one scale, so bar heights compare across panels
            ax.set_xlabel("")
            ax.set_ylabel("throughput [requests/s]")
            ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        fig.suptitle("The paper's Fig. 4-7: one panel per hosting model, ours in each")
        figures.footnote(fig, figure_words.setup_note(summary) + ".\n" + absolute_note() + ".")
    return figure_words.set_finding(fig, figure_words.throughput_finding(summary))


def _role(mode: str, baseline: str) -> str:
    """What a mode is in a panel of the paper's model (stand_ins), in a few words."""
    if mode == baseline:
        return "our baseline, stands for it"
    role = models.role(mode)
    return {"same": "the same", "": "our addition"}.get(role, role)


def all_models_chart(df: pd.DataFrame) -> Figure:
    """Fig. 8 of the paper: every model in every scenario, grouped by scenario."""
    df = figures.one_setup(df)
    summary = tables.summarize(df)
    modes = figures.present(summary["mode"])
    with figures.style():
        # At most a page column wide (about 1,090 px at 100 dpi): shown at full size.
        fig = Figure(figsize=(min(10.8, max(8.0, 1.1 + 0.5 * len(modes) * 4)), 6.2),
                     layout="constrained")  # fmt: skip
        ax = fig.subplots()
        # Many narrow bars: upright labels would collide, so they stand vertically.
        figures.bars(ax, df, modes, rotation=90 if len(modes) > 2 else 0)
        ax.set_ylabel("throughput [requests/s]")
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.set_xlabel("scenario")
        fig.suptitle("All hosting models and scenarios (paper's Fig. 8)")
        ax.legend(title="hosting model", loc="upper center", bbox_to_anchor=(0.5, -0.12),
                  ncols=3, frameon=False)  # fmt: skip
        figures.footnote(fig, figure_words.setup_note(summary) + ".\n" + absolute_note() + ".")
    return figure_words.set_finding(fig, figure_words.throughput_finding(summary))


# How the paper states each of its values, drawn as what it is (paper.paper_ratios): a point
# for a stated, "about" or "as much as" value (each its own mark), a box for a range.
DERIVED = "range derived from its text"
_PAPER_MARKERS = {"about": "D", "stated": "o", "as much as": "^"}


def _legend_order(entry) -> int:
    label = entry[1]
    return 0 if "(ours)" in label else 1 if label.startswith("baseline") else 2


def _paper_kind(row) -> str:
    """How one of the paper's values is drawn, in the legend's words."""
    if row.ratio_low_pct < row.ratio_high_pct:
        return DERIVED
    return row.qualifier if row.qualifier in _PAPER_MARKERS else "about"


def relative_chart(
    ratios: pd.DataFrame,
    paper: pd.DataFrame | None,
    baseline: str,
) -> Figure:
    """Fig. 9 of the paper: each mode as % of the baseline, with its 95% interval.

    ratios: hostbench.analysis.intervals.paired_ratios (one setup). paper: the paper's
    values (paper.paper_ratios), or None: drawn beside ours as what they are: a point for a
    stated, "about" or "as much as" value, a box for a derived range. The paper's models that
    have no run here (HTTP.sys, IIS in-process) are marked "paper only".
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
    # The paper's value for a model that runs here sits on our bar of it; the models that
    # cannot run here (HTTP.sys, IIS in-process) get slots of their own after ours.
    slots = ours + [m for m in theirs if m not in ours]
    width = 0.8 / len(slots)
    with figures.style():
        # At most as wide as the page's column (about 1,090 px at 100 dpi), so it is shown at
        # full size and its text stays readable; the legend goes below, not beside it.
        fig = Figure(
            figsize=(min(10.8, max(8.0, 1.5 + 0.4 * len(slots) * len(scenarios))), 6.4),
            layout="constrained",
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
        for mode in theirs:
            x0 = np.arange(len(scenarios)) - 0.4 + width * (slots.index(mode) + 0.5)
            rows = paper[paper["mode"] == mode].set_index("scenario").reindex(scenarios)
            color = figures.mode_color(mode)
            runs_here = mode in ours or any(models.paper_model(m) == mode for m in ours)
            note = "" if runs_here else ", paper only: not runnable here"
            labelled = set()  # the first mark of each kind carries the legend entry: the
            for x, row in zip(x0, rows.itertuples(), strict=True):  # legend shows what is drawn
                if not np.isfinite(row.ratio_high_pct):
                    continue
                kind = _paper_kind(row)
                label = "_nolegend_"
                if kind not in labelled:
                    labelled.add(kind)
                    label = f"{mode_label(mode)} (paper: {kind}{note})"
                if kind == DERIVED:  # a range: an outlined box from its low to its high end
                    ax.bar(x, row.ratio_high_pct - row.ratio_low_pct, width * 0.9,
                           bottom=row.ratio_low_pct, color="white", edgecolor=color,
                           hatch="///", linewidth=1.5, zorder=3, label=label)  # fmt: skip
                    continue
                ax.plot(x, row.ratio_high_pct, marker=_PAPER_MARKERS[kind], color=color, ms=9,
                        markeredgecolor="0.1", ls="", zorder=4, label=label)  # fmt: skip
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
        # Ours first, then the baseline, then the paper's marks (matplotlib lists lines first).
        entries = sorted(zip(*ax.get_legend_handles_labels(), strict=True), key=_legend_order)
        # Below the whole figure (constrained layout makes room), so the axes keep its width.
        # As many columns as fit the figure's width: three of these labels did not, and the
        # saved PNG cut the legend off at both sides.
        layout.legend_below(fig, *zip(*entries, strict=True), ncols=3, frameon=False, fontsize=9)
        n = ratios["n"].min()
        ci = (
            "bars: geometric mean of the ratios paired within blocks; whiskers: 95% interval"
            if n > 1
            else "one block: no interval"
        )
        figures.footnote(fig, ci)
    return figure_words.set_finding(fig, _above_baseline(ratios, ours, scenarios, baseline))


def _above_baseline(ratios: pd.DataFrame, modes: list[str], scenarios: list[str], baseline) -> str:
    """What Fig. 9 shows, in one sentence: per mode, in how many scenarios its whole interval
    lies above the baseline (the words the pages use: "faster" only then)."""
    parts = []
    for mode in modes:
        rows = ratios[ratios["mode"] == mode]
        above = int((rows["ci_low"] > 1).sum())
        parts.append(f"{mode_label(mode)} in {above} of {len(scenarios)}")
    return (
        f"Scenarios where the whole 95% interval lies above {mode_label(baseline)} (faster): "
        + ", ".join(parts)
    )


# The two designs of analysis.designs(), each its own colour: the main study's, the sub-study's.
_DESIGN_COLORS = {"main": "#1f5f99", "sub": "#c0504d"}


def designs_chart(compared: pd.DataFrame) -> Figure:
    """The main study's ratio beside the back-to-back sub-study's, per scenario
    (analysis.designs): dots at the ratio, lines over the 95% interval, labelled with its
    half-width and blocks; a log scale, as the intervals are computed on it."""
    rows = [
        (f"{scenario_label(r['scenario'])}, {who}", side, r)
        for r in compared.to_dict("records")
        for side, who in zip(("main", "sub"), ("main study", "sub-study"), strict=True)
    ]
    ends = compared[["ci_low_main", "ci_low_sub", "ci_high_main", "ci_high_sub",
                     "ratio_main", "ratio_sub"]].to_numpy(dtype=float) * 100  # fmt: skip
    ends = ends[np.isfinite(ends)]
    left, high = ends.min() / 1.04, ends.max()
    right = high * 1.3  # room for the labels
    with figures.style():
        fig = Figure(figsize=(9.5, 0.55 * len(rows) + 2.0), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        for yi, (_, side, r) in zip(y, rows, strict=True):
            color = _DESIGN_COLORS[side]
            ratio, low, top = (100 * r[f"{c}_{side}"] for c in ("ratio", "ci_low", "ci_high"))
            if np.isfinite(low) and np.isfinite(top):
                ax.plot([low, top], [yi, yi], color=color, linewidth=2.5, zorder=2)
            ax.plot(ratio, yi, "o", color=color, markersize=8, zorder=3)
            half = r[f"half_{side}"]
            text = wording.pct_text(ratio / 100)
            text += "" if np.isnan(half) else f" ±{half:.1f}%, {r[f'n_{side}']} blocks"
            ax.annotate(text, (top if np.isfinite(top) else ratio, yi), xytext=(8, 0),
                        textcoords="offset points", va="center")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlim(left, right)
        ax.set_xticks(figures.log_ticks(left, high))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}%"))
        ax.set_yticks(y, [label for label, _, _ in rows])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        base, mode = mode_label(compared.attrs["baseline"]), mode_label(compared.attrs["mode"])
        ax.set_xlabel(f"{mode} as % of {base} (log scale)")
        handles = [
            Line2D(
                [],
                [],
                color=_DESIGN_COLORS[side],
                marker="o",
                linewidth=2.5,
                label=f"{who}: {design} (95% CI)",
            )  # fmt: skip
            for side, who, design in zip(
                ("main", "sub"), ("main study", "sub-study"), compared.attrs["designs"], strict=True
            )  # fmt: skip
        ]
        layout.legend_below(fig, handles, ncols=2, frameon=False)
        fig.suptitle("The same ratio, the compared modes' windows laid out two ways")
    return figure_words.set_finding(fig, designs_finding(compared))


def designs_finding(compared: pd.DataFrame) -> str:
    """What the designs' figure shows, in one sentence: how many times narrower the main
    study's intervals are than the sub-study's, and in how many scenarios the two overlap."""
    judged = compared.dropna(subset=["narrower"])
    if judged.empty:
        return "No scenario has an interval on both sides"
    overlap = int(judged["overlap"].astype(bool).sum())
    return (
        f"The sub-study's half-width over the main study's: "
        f"{prose.span(judged['narrower'], '.1f')}; the two intervals overlap in {overlap} of "
        f"{len(judged)} scenario{'s' * (len(judged) != 1)}"
    )
