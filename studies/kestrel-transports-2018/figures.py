"""Kestrel's transports, 2018: its figures: requests/s against IOQueueCount, as the article's
graphs plot it against ThreadCount / IOQueueCount (sweep_figure), and each setting against the
runtime's defaults (gains_figure)."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, StrMethodFormatter

from hostbench.analysis import figure_words, figures, layout
from hostbench.catalog import scenario_label
from hostbench.results import valid_rows

from .variants import ARTICLES, DEFAULT, SCENARIOS, prepared, sweep

_LINES = {  # (inline scheduling, wait for data) -> colour, style, label
    (False, True): ("#0173b2", "-", "IOQueueCount alone (the article's sweep)"),
    (False, False): ("#56b4e9", "--", "no wait for data (ours)"),
    (True, True): ("#d55e00", "-", "inline scheduling (ours)"),
    (True, False): ("#e69f00", "--", "inline, no wait (ours)"),
}


def sweep_figure(results: pd.DataFrame) -> Figure:
    """Requests/s against IOQueueCount, as the article's graphs plot it against ThreadCount /
    IOQueueCount: one panel per scenario; the IOQueueCount line is the article's sweep, the
    inline-scheduling and wait-for-data lines are ours; error bars: 95% interval over blocks;
    the star: the runtime's defaults."""
    table = sweep(results)
    runs = valid_rows(prepared(results))
    cores = int(pd.to_numeric(results["machine_cores"]).max())
    fig = Figure(figsize=(11, 4.6), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        for (inline, wait), (color, style, _) in _LINES.items():
            line = rows[(rows["variant"] != DEFAULT) & (rows["inline"] == inline)
                        & (rows["wait for data"] == wait)].sort_values("IOQueueCount")  # fmt: skip
            if line.empty:
                continue
            low = (line["rps"] - line["rps_ci_low"]).fillna(0).clip(lower=0)
            high = (line["rps_ci_high"] - line["rps"]).fillna(0).clip(lower=0)
            ax.errorbar(line["IOQueueCount"], line["rps"], yerr=[low, high], color=color,
                        linestyle=style, marker="o", capsize=3)  # fmt: skip
            mine = runs[(runs["scenario"] == scenario) & runs["variant"].isin(line["variant"])]
            x = mine["variant"].map(line.set_index("variant")["IOQueueCount"])
            ax.scatter(x, mine["rps"], s=10, color=color, alpha=0.6, zorder=3)
        default = rows[rows["variant"] == DEFAULT]
        if not default.empty:
            ax.scatter(default["IOQueueCount"], default["rps"], marker="*", s=220,
                       color="black", zorder=4)  # fmt: skip
        ax.axvline(2 * cores, color="0.6", linestyle=":", linewidth=1)
        ax.set_xticks(sorted(set(rows["IOQueueCount"]) | {2 * cores}))
        ax.set_xlabel("IOQueueCount")
        pipeline = int(rows["pipeline"].max()) if len(rows) else 1
        ax.set_title(
            scenario_label(scenario) + (f" (pipelined {pipeline})" if pipeline > 1 else "")
        )
        # The runs and the intervals' tops set the scale: every whisker ends inside the axes.
        tops = pd.concat([runs.loc[runs["scenario"] == scenario, "rps"], rows["rps_ci_high"]])
        top = tops.max()
        ax.set_ylim(0, 1.1 * top if top == top else 1.0)
        ax.grid(alpha=0.4)
    axes[0].set_ylabel("requests/s")
    handles = [Line2D([], [], color=c, linestyle=s, marker="o", label=lab)
               for c, s, lab in _LINES.values()]  # fmt: skip
    handles.append(Line2D([], [], color="black", marker="*", linestyle="", markersize=12,
                          label="runtime defaults"))  # fmt: skip
    handles.append(Line2D([], [], color="0.6", linestyle=":", label=f"twice the {cores} cores"))
    layout.legend_below(fig, handles, ncols=3, frameon=False)
    n = int(table["n"].max()) if len(table) else 0
    fig.suptitle(
        f"Requests/s against IOQueueCount (wrk; mean of {n} block(s) with its 95% interval; "
        "dots: each run)"
    )
    return figure_words.set_finding(fig, _sweep_finding(table))


def _sweep_finding(table: pd.DataFrame) -> str:
    """Per scenario of a sweep() table: the runtime defaults' mean and the highest and lowest
    means among the settings (means with their own intervals: a range; the gains figure
    pairs each setting with the defaults)."""
    parts = []
    for scenario in SCENARIOS:
        rows = table[table["scenario"] == scenario]
        others = rows[rows["variant"] != DEFAULT]
        if others.empty:
            continue
        low, high = figure_words.extremes(others, "rps")
        default = rows[rows["variant"] == DEFAULT]
        text = f"{scenario_label(scenario)}: " + (
            f"the defaults {default['rps'].iloc[0]:,.0f} requests/s, " if len(default) else ""
        )
        parts.append(text + f"the settings from {low['rps']:,.0f} ({low['setting']}) to "
                     f"{high['rps']:,.0f} ({high['setting']})")  # fmt: skip
    return "Mean requests/s, " + "; ".join(parts)


def gains_figure(g: pd.DataFrame) -> Figure:
    """Each variant as % of the runtime defaults, paired within blocks, with its 95% CI."""
    fig = Figure(figsize=(11, 0.9 + 0.32 * max(len(g) // 2, 4)), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False, sharex=True)[0]
    # The settings named once, at the left, where every panel lists the same in the same
    # order: repeated, their long names squeezed the right panel until its axis label ran
    # off the canvas.
    settings = [list(g.loc[g["scenario"] == s, "setting"]) for s in SCENARIOS]
    named_once = all(s == settings[0] for s in settings)
    for i, (ax, scenario) in enumerate(zip(axes, SCENARIOS, strict=True)):
        rows = g[g["scenario"] == scenario]
        y = np.arange(len(rows))[::-1]
        pct = 100 * rows["ratio"]
        low = (pct - 100 * rows["ci_low"]).fillna(0).clip(lower=0)
        high = (100 * rows["ci_high"] - pct).fillna(0).clip(lower=0)
        colors = ["#0173b2" if o == ARTICLES else "#d55e00" if "inline" in c else "#949494"
                  for o, c in zip(rows["origin"], rows["changes"], strict=True)]  # fmt: skip
        ax.barh(y, pct, 0.6, color=colors, xerr=[low, high], capsize=3)
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
        ax.set_yticks(y, rows["setting"], fontsize=9)
        if named_once and i > 0:
            ax.tick_params(axis="y", labelleft=False)
        ax.set_xscale("log")
        low, high = _ratio_range(pd.concat([g["ratio"], g["ci_low"], g["ci_high"]]))
        ax.set_xlim(low, high)
        ax.set_xticks(figures.log_ticks(low, high))  # decades when the intervals are wide
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,g}%"))
        ax.tick_params(axis="x", labelsize=8)
        ax.xaxis.set_minor_formatter(StrMethodFormatter(""))
        ax.set_xlabel("requests/s [% of the runtime defaults]")
        ax.set_title(scenario_label(scenario))
        ax.grid(axis="x", alpha=0.4)
    fig.suptitle(
        "Each setting against the runtime defaults, paired within blocks (95% CI)\nblue: "
        "IOQueueCount, the article's setting; orange (inline scheduling) and grey (wait for "
        "data): ours"
    )
    return figure_words.set_finding(fig, figure_words.ratio_finding(g))


def _ratio_range(ratios: pd.Series) -> tuple[float, float]:
    """An x range in % that holds the ratios, their intervals' ends and 100%, with a margin:
    every whisker ends inside the axes, however wide (two blocks can span decades)."""
    pct = 100 * pd.to_numeric(ratios, errors="coerce").dropna()
    pct = pct[pct > 0]
    low, high = min(pct.min(), 100) if len(pct) else 100, max(pct.max(), 100) if len(pct) else 100
    return low / 1.5, high * 1.5
