"""The article's figures re-made beside ours: requests/s per server, .NET / Iris MVC with
intervals, memory (ours by MEMORY and the whole RSS, the article's beside them), and how
requests/s and memory converge with the request count."""

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, StrMethodFormatter

from hostbench.analysis import convergence, figure_words, figures, layout
from hostbench.catalog import mode_color, mode_label
from hostbench.results import valid_rows

from .models import SCENARIOS, contenders, summary
from .paper import published


def throughput_figure(results: pd.DataFrame) -> Figure:
    """Requests/s of every server per scenario: the mean over blocks (bar) and each block's
    run (dots), so the spread shows even with two blocks."""
    table = summary(results)
    runs = valid_rows(contenders(results))
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        x = np.arange(len(rows))
        ax.bar(x, rows["rps"], 0.7, color=[mode_color(m) for m in rows["mode"]], zorder=2)
        for xi, mode, v in zip(x, rows["mode"], rows["rps"], strict=True):
            mine = runs[(runs["scenario"] == scenario) & (runs["mode"] == mode)]["rps"]
            ax.scatter(np.full(len(mine), xi), mine, s=14, color="black", zorder=3)
            top = max(v, mine.max())
            ax.annotate(f"{v:,.0f}", (xi, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9)  # fmt: skip
        ax.set_xticks(x, [mode_label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(f"{scenario}")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("requests/s")
    n = int(table["n"].max()) if len(table) else 0
    fig.suptitle(f"Throughput per server (bombardier; bars: mean of {n} block(s), dots: each run)")
    return figure_words.set_finding(fig, "Mean requests/s, " + _ranges(table, "rps", "{:,.0f}"))


def _ranges(table: pd.DataFrame, column: str, spec: str, unit: str = "") -> str:
    """Per scenario of a summary() table, the lowest and highest mean of `column` and whose
    they are: a range, not a ranking (a mean beside its dots, no interval between servers)."""
    parts = []
    for scenario in SCENARIOS:
        rows = table[table["scenario"] == scenario].dropna(subset=[column])
        if rows.empty:
            continue
        low, high = figure_words.extremes(rows, column)
        parts.append(f"{scenario}: {spec.format(low[column])}{unit} ({low['server']}) to "
                     f"{spec.format(high[column])}{unit} ({high['server']})")  # fmt: skip
    return "; ".join(parts)


def ratio_figure(rps: pd.DataFrame, memory: pd.DataFrame) -> Figure:
    """Each server as % of Iris MVC (paired within blocks, 95% CI), requests/s and memory
    without mapped files (our reading of the article's words: ratios of MEMORY); the
    article's .NET / Iris as a hollow diamond beside the server it ran."""
    fig = Figure(figsize=(10, 5.2), layout="constrained")
    axes = fig.subplots(1, 2, squeeze=False)[0]
    panels = ((axes[0], rps, "requests/s"), (axes[1], memory, "memory"))
    for ax, frame, what in panels:
        frame = frame[frame["n"] > 0]
        if frame.empty:
            ax.text(0.5, 0.5, "not recorded in this run", ha="center", va="center",
                    transform=ax.transAxes)  # fmt: skip
            ax.set_axis_off()
            continue
        labels = [f"{r.scenario}: {r.server}" for r in frame.itertuples(index=False)]
        y = np.arange(len(frame))[::-1]
        pct = 100 * frame["ratio"]
        low = (pct - 100 * frame["ci_low"]).fillna(0).clip(lower=0)
        high = (100 * frame["ci_high"] - pct).fillna(0).clip(lower=0)
        ax.barh(y, pct, 0.6, color=[mode_color(m) for m in frame["mode"]], xerr=[low, high],
                capsize=3, error_kw={"elinewidth": 1.1})  # fmt: skip
        article = frame["article_ratio"].notna()
        ax.scatter(100 * frame.loc[article, "article_ratio"], y[article.to_numpy()], marker="D",
                   s=60, facecolor="white", edgecolor="black", zorder=3,
                   label="the article (2017)")  # fmt: skip
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
        ax.set_yticks(y, labels)
        ax.set_xlabel(
            f"{what} [% of Iris MVC]" + ("\n(without mapped files)" if what == "memory" else "")
        )
        ax.set_xscale("log")
        # Every whisker ends inside the axes, however wide (two blocks can span decades).
        known = frame[["ratio", "ci_low", "ci_high", "article_ratio"]].stack() * 100
        known = known[known > 0]
        low, high = min(known.min(), 100) / 1.5, max(known.max(), 100) * 1.5
        ax.set_xlim(low, high)
        ax.set_xticks(figures.log_ticks(low, high))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,g}%"))
        ax.xaxis.set_minor_formatter(StrMethodFormatter(""))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.4)
    handles, names = axes[0].get_legend_handles_labels()
    layout.legend_below(fig, handles, names, ncols=1, frameon=False)
    fig.suptitle("Every server relative to Iris MVC, paired within blocks (error bars: 95% CI)")
    found = []
    for frame, what in ((rps, "Requests/s"), (memory, "memory")):
        if len(frame[frame["n"] > 0]):
            text = figure_words.ratio_finding(_in_pct(frame))
            found.append(f"{what}: {text[0].lower()}{text[1:]}")
    return figure_words.set_finding(fig, "; ".join(found))


def _in_pct(frame: pd.DataFrame) -> pd.DataFrame:
    """ratios() rows as figure_words.ratio_finding reads them: its % columns, the article's too."""
    return frame[frame["n"] > 0].rename(columns={"article_ratio_pct": "article_pct"})


def memory_figure(results: pd.DataFrame, pub: pd.DataFrame | None = None) -> Figure:
    """The article's memory column: each server's RSS mean split into what is mapped from
    files (light, on top: for .NET the runtime and the framework) and the rest (solid: the
    part we set beside the article's figures, our reading of "excluding the dotnet
    framework"), its peak,
    and the article's memory as hatched bars beside the servers it ran."""
    pub = published() if pub is None else pub
    table = summary(results)
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False, sharey=True)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        theirs = pub[pub["scenario"] == scenario].set_index("mode")["memory_mb"]
        x = np.arange(len(rows))
        colors = [mode_color(m) for m in rows["mode"]]
        own = rows["rss_anon_mean_mb"]
        if own.notna().all():
            ax.bar(x - 0.2, own, 0.4, color=colors,
                   label="ours: without mapped files (our reading of the article's)")  # fmt: skip
            ax.bar(x - 0.2, rows["rss_mean_mb"] - own, 0.4, bottom=own, color=colors, alpha=0.35,
                   label="ours: mapped from files (runtime, framework, binary)")  # fmt: skip
        else:  # a run from before the split was recorded: the whole RSS only
            ax.bar(x - 0.2, rows["rss_mean_mb"], 0.4, color=colors, alpha=0.35,
                   label="ours: RSS mean (with the files the article leaves out)")  # fmt: skip
        ax.scatter(x - 0.2, rows["rss_peak_mb"], marker="_", s=300, color="black", zorder=3,
                   label="ours: RSS peak")  # fmt: skip
        art = [theirs.get(m, math.nan) for m in rows["mode"]]
        ax.bar(x + 0.2, art, 0.4, facecolor="white", edgecolor="0.3", hatch="///",
               label="the article: memory, excluding the dotnet framework")  # fmt: skip
        tops = np.fmax(rows["rss_mean_mb"], rows["rss_peak_mb"])  # above the peak's mark
        for xi, v, top in zip(x, rows["rss_mean_mb"], tops, strict=True):  # the whole RSS
            ax.annotate(f"{v:.0f}", (xi - 0.2, top), xytext=(0, 4), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9, color="0.4")  # fmt: skip
        for xi, v in zip(x, own, strict=True):  # the comparable part inside its bar
            if not math.isnan(v):
                ax.annotate(f"{v:.0f}", (xi - 0.2, v / 2), ha="center", va="center",
                            fontsize=9, color="white", fontweight="bold")  # fmt: skip
        for xi, v in zip(x, art, strict=True):
            if not math.isnan(v):
                ax.annotate(f"{v:.0f}", (xi + 0.2, v), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom", fontsize=9,
                            color="0.3")  # fmt: skip
        ax.set_xticks(x, [mode_label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(scenario)
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("memory [MB]")
    # Neutral swatches: the bars take each server's colour, the legend says what a shade is.
    handles = [
        Patch(facecolor="0.3", label="ours: without mapped files (our reading of the article's)"),
        Patch(facecolor="0.3", alpha=0.35, label="ours: mapped from files (runtime, framework, "
              "binary); above: the whole RSS"),
        Line2D([], [], color="black", linewidth=2, label="ours: RSS peak"),
        Patch(facecolor="white", edgecolor="0.3", hatch="///",
              label="the article: memory, excluding the dotnet framework"),
    ]  # fmt: skip
    layout.legend_below(fig, handles, ncols=2, fontsize=9, frameon=False)
    fig.suptitle(
        "Memory per server (the article's memory column; ours: RSS mean, solid the part "
        "without mapped files)"
    )
    own = "rss_anon_mean_mb" if table["rss_anon_mean_mb"].notna().all() else "rss_mean_mb"
    what = "without mapped files" if own == "rss_anon_mean_mb" else "the whole RSS"
    finding = f"Mean memory ({what}), " + _ranges(table, own, "{:.0f}", " MB")
    return figure_words.set_finding(fig, finding)


def convergence_figure(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT) -> Figure:
    return convergence.figure(curves, tolerance_pct)
