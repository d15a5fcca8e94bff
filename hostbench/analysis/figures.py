"""Figures every study draws (latency, CPU per request, CPU saturation, ratios) and the
helpers a study's own figures are built with, from results.csv rows.

Each function takes the tidy results (one row per run) and returns a matplotlib Figure; the
numbers drawn are the ones hostbench.analysis computes, so figures and tables agree.
Figures are built without pyplot, so notebooks show each one once and nothing global changes.
What a figure says in words (the finding its caption opens with, its notes, its caption and
alt text) is figure_words.py's; its files and its image on the page, figure_output.py's.
"""

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullLocator, StrMethodFormatter

from ..catalog import mode_color, mode_label, scenario_label
from ..errors import BadInput
from . import tables, wording
from .figure_words import (
    busy_finding,
    calibration_finding,
    cpu_per_request_finding,
    latency_finding,
    ratio_finding,
    set_finding,
    setup_note,
    sweep_note,
)
from .layout import footnote, legend_below

CPU_LABELS = {
    "server": "server (test app)",
    "proxy": "reverse proxy",
    "loadgen": "load generator",
    "other": "rest of system",
}

# Process groups in greys and a purple, so they never read as hosting modes (catalog colours).
_CPU_COLORS = {"server": "#3b3b3b", "proxy": "#8c6bb1", "loadgen": "#a6a6a6", "other": "#e0e0e0"}
_APP_WORK_COLOR = "#7f7f7f"
_STYLE = {"axes.titlesize": 13, "axes.labelsize": 11, "xtick.labelsize": 11, "legend.fontsize": 10}


def latency_chart(df: pd.DataFrame) -> Figure:
    """Latency under the load: p50 (bar) and p99 (whisker top) per mode and scenario, in ms."""
    summary = tables.summarize(one_setup(df))
    modes = present(summary["mode"])
    scenarios = present(summary["scenario"])
    width = 0.8 / len(modes)
    with style():
        fig = Figure(
            figsize=(max(8.0, 1.5 + 0.5 * len(modes) * len(scenarios)), 4.8), layout="constrained"
        )
        ax = fig.subplots()
        for i, mode in enumerate(modes):
            rows = summary[summary["mode"] == mode].set_index("scenario").reindex(scenarios)
            x = np.arange(len(scenarios)) - 0.4 + width * (i + 0.5)
            p50, p99 = rows["latency_p50_ms_mean"], rows["latency_p99_ms_mean"]
            ax.bar(x, p50, width * 0.9, color=mode_color(mode), label=mode_label(mode), zorder=2)
            ax.vlines(x, p50, p99, color="0.15", lw=1.2, zorder=3)
            ax.plot(x, p99, "_", color="0.15", ms=8, zorder=3)
        ax.plot([], [], "_", color="0.15", ms=8, label="p99 (line top)")
        ax.set_xticks(range(len(scenarios)), [scenario_label(s) for s in scenarios])
        ax.set_ylabel("latency [ms]: bar p50, line up to p99")
        ax.set_xlabel("scenario")
        fig.suptitle("Latency under the load (mean over blocks)")
        legend(ax, "hosting model")
        footnote(fig, setup_note(summary, "bars: p50, lines up to p99, each a mean over blocks"))
    return set_finding(fig, latency_finding(summary))


def cpu_per_request_chart(df: pd.DataFrame, app_work: pd.DataFrame | None = None) -> Figure:
    """CPU microseconds one request costs in the app, the proxy and the load generator.

    app_work: the C# tour's app_work.csv (scenario, ns_per_payload); when given, the
    server's share is split into the app's own work (producing the payload) and the rest
    (hosting, HTTP, the connection handling the proxy hop adds).
    """
    per = tables.cpu_per_request(one_setup(df))
    modes = present(per["mode"])
    scenarios = present(per["scenario"])
    work = None if app_work is None else app_work.set_index("scenario")["ns_per_payload"] / 1e3
    layers = [  # column, legend label, colour
        ("server_us_per_request", "server (test app)", _CPU_COLORS["server"]),
        ("proxy_us_per_request", "reverse proxy", _CPU_COLORS["proxy"]),
        ("loadgen_us_per_request", "load generator", _CPU_COLORS["loadgen"]),
    ]
    ncols = min(2, len(scenarios))
    nrows = -(-len(scenarios) // ncols)
    with style():
        fig = Figure(figsize=(12, 0.5 + nrows * (0.9 + 0.45 * len(modes))), layout="constrained")
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        y = np.arange(len(modes))[::-1]  # the first mode on top
        for ax, scenario in zip(axes, scenarios, strict=False):
            rows = per[per["scenario"] == scenario].set_index("mode").reindex(modes)
            left = np.zeros(len(modes))
            for column, label, color in layers:
                values = rows[column].fillna(0.0).to_numpy()
                if column == "server_us_per_request" and work is not None and scenario in work:
                    own = np.minimum(values, work[scenario])
                    ax.barh(y, own, 0.7, left=left, color=_APP_WORK_COLOR,
                            label="app's own work (C# tour)")  # fmt: skip
                    ax.barh(y, values - own, 0.7, left=left + own, color=color,
                            label="server: hosting, HTTP, connections")  # fmt: skip
                else:
                    ax.barh(y, values, 0.7, left=left, color=color, label=label)
                left += values
            ax.set_yticks(y, [mode_label(m) for m in modes])
            ax.set_title(scenario_label(scenario), fontsize=12)
            ax.set_xlabel("CPU per request [µs]")
        for ax in axes[len(scenarios) :]:
            ax.set_visible(False)
        handles, labels = axes[0].get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))
        legend_below(fig, unique.values(), unique.keys(), ncols=len(unique), frameon=False)
        fig.suptitle("Where a request's CPU goes: microseconds per request, by process")
    return set_finding(fig, cpu_per_request_finding(per, [c for c, _, _ in layers]))


def cpu_chart(df: pd.DataFrame, threshold_pct: float = 90.0) -> Figure:
    """Was the CPU saturated, and by whom: cores used per process group, one panel per mode.

    Bars stack the mean cores (over repetitions) of server, proxy, load generator and the rest
    of the system; the dashed line is all the machine's cores; the label above a bar is the
    machine's busy % (the paper tuned its load so that this was 100%).
    """
    df = one_setup(df)
    sat = tables.saturation(df, threshold_pct)
    stacks = [f"{g}_cores" for g in CPU_LABELS]
    means = sat.groupby(["mode", "scenario"], observed=True)[
        [*stacks, "cpu_total_pct", "machine_cores"]
    ].mean()
    modes = present(sat["mode"])
    ncols = min(3, len(modes))
    nrows = -(-len(modes) // ncols)
    with style():
        # Wide enough for the title and legend even with a single panel.
        fig = Figure(figsize=(max(8.5, 4.2 * ncols), 3.6 * nrows + 0.9), layout="constrained")
        axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
        top = max(means["machine_cores"].max(), (means[stacks].fillna(0).sum(axis=1)).max())
        for ax, mode in zip(axes, modes, strict=False):
            rows = means.loc[mode]
            x = np.arange(len(rows))
            bottom = np.zeros(len(rows))
            for group, column in zip(CPU_LABELS, stacks, strict=True):
                values = rows[column].fillna(0.0).to_numpy()
                ax.bar(x, values, 0.7, bottom=bottom, color=_CPU_COLORS[group], label=group)
                bottom += values
            cores = rows["machine_cores"].max()
            ax.axhline(cores, color="0.2", linestyle="--", linewidth=1.2)
            for xi, height, pct in zip(x, bottom, rows["cpu_total_pct"], strict=True):
                # Judged on the value as printed: 89.6% shows as "90%", so it is not red.
                saturated = not np.isnan(pct) and round(pct) >= threshold_pct
                # Above the all-cores line, so the label never crosses it.
                ax.annotate(
                    "n/a" if np.isnan(pct) else f"{pct:.0f}%",
                    (xi, max(height, cores)),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=10,
                    fontweight="bold" if saturated else "normal",
                    color="0.1" if saturated else "tab:red",
                )
            ax.set_xticks(x, [scenario_label(s) for s in rows.index])
            ax.set_title(mode_label(mode), fontsize=11)
            ax.set_ylim(0, top * 1.18)
        for ax in axes[len(modes) :]:
            ax.set_visible(False)
        for ax in axes[::ncols]:
            ax.set_ylabel("CPU [cores]")
        handles = [Patch(color=_CPU_COLORS[g], label=label) for g, label in CPU_LABELS.items()]
        all_cores = f"all {means['machine_cores'].max():.0f} cores"
        handles.append(Line2D([], [], color="0.2", linestyle="--", label=all_cores))
        columns = len(handles) if ncols > 1 else 3
        legend_below(fig, handles, ncols=columns, frameon=False)
        fig.suptitle(
            "CPU use under load (label: machine busy %, "
            f"red = below {threshold_pct:.0f}%, not saturated)",
            fontsize=13,
        )
    shared = tables.shares_windows(df)
    return set_finding(fig, busy_finding(means["cpu_total_pct"], threshold_pct, shared))


def bar_panels(
    panels: list[tuple[str, pd.DataFrame]],
    xlabel: str,
    title: str,
    note: str = "",
    sharex: bool = True,
) -> Figure:
    """Horizontal bars in stacked panels: e.g. an article's numbers above ours.

    Each panel is (title, rows) with columns `label`, `value` and optionally `err` (an error
    bar, NaN for none), `color`, `hatch` (e.g. "///" for numbers shown as published only) and
    `text` (the label at the bar's end; default the value with thousands separators).
    sharex: one x scale for all panels; False when their magnitudes differ (other machines).
    """
    sizes = [max(len(rows), 1) for _, rows in panels]
    with style():
        height = 0.42 * sum(sizes) + 1.1 * len(panels) + 0.6
        fig = Figure(figsize=(9.5, height), layout="constrained")
        axes = fig.subplots(
            len(panels), 1, sharex=sharex, squeeze=False, gridspec_kw={"height_ratios": sizes}
        )[:, 0]
        right = 0.0
        for ax, (panel_title, rows) in zip(axes, panels, strict=True):
            rows = rows.reset_index(drop=True)
            y = np.arange(len(rows))[::-1]  # first row on top
            err = rows["err"] if "err" in rows else pd.Series(np.nan, index=rows.index)
            right = 0.0 if not sharex else right
            for yi, row, e in zip(y, rows.to_dict("records"), err, strict=True):
                hatch = row.get("hatch") or None
                color = row.get("color") or "0.6"
                ax.barh(
                    yi,
                    row["value"],
                    0.7,
                    color="white" if hatch else color,
                    edgecolor=color if hatch else "none",
                    hatch=hatch,
                    linewidth=1.5 if hatch else 0,
                    xerr=None if pd.isna(e) else e,
                    capsize=3,
                    error_kw={"elinewidth": 1.2, "ecolor": "0.15"},
                    zorder=2,
                )
                end = row["value"] + (0.0 if pd.isna(e) else e)
                right = max(right, end)
                text = row.get("text") or f"{row['value']:,.0f}"
                ax.annotate(
                    text,
                    (end, yi),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=10,
                )
            ax.set_yticks(y, rows["label"])
            ax.set_title(panel_title, loc="left", fontsize=12)
            ax.grid(axis="y", visible=False)
            ax.set_xlim(0, right * 1.4)  # room for the labels at the bars' ends
            ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        axes[-1].set_xlabel(xlabel)
        fig.suptitle(title)
        footnote(fig, note)
    return fig


def ratio_chart(rows: pd.DataFrame, title: str, xlabel: str, note: str = "") -> Figure:
    """Ratios in % with their intervals (dots and whiskers) beside an article's (diamonds).

    rows: `label`, and `ratio_pct`, `ci_low_pct`, `ci_high_pct` (ours; NaN where a row has
    none, or no interval) and/or `article_pct` (NaN where the article has none); `color`
    optional. A log scale, as the intervals are computed on the log scale (half and double
    are the same distance from 100%); a dashed line marks 100% (equal).
    """
    rows = rows.reset_index(drop=True)
    low_end, high_end = _ratio_span(rows)
    clipped = False
    with style():
        fig = Figure(figsize=(9.5, 0.5 * len(rows) + 1.9), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        for yi, row in zip(y, rows.to_dict("records"), strict=True):
            ours, article = row.get("ratio_pct", np.nan), row.get("article_pct", np.nan)
            low, high = row.get("ci_low_pct", np.nan), row.get("ci_high_pct", np.nan)
            color = row.get("color") or "0.2"
            if not pd.isna(ours):
                interval = not (pd.isna(low) or pd.isna(high))
                if interval:  # an end beyond the axis stops at its edge, with an arrowhead
                    shown = (max(low, low_end / 1.5), min(high, high_end))
                    ax.plot(shown, [yi, yi], color=color, linewidth=2.5, zorder=2)
                    for end, limit, head in ((low, shown[0], "<"), (high, shown[1], ">")):
                        if end != limit:
                            ax.plot(limit, yi, head, color=color, markersize=9, zorder=3)
                            clipped = True
                ax.plot(ours, yi, "o", color=color, markersize=8, zorder=3)
                # The interval by the pages' rounding rule (wording.ci_bounds).
                bounds = wording.ci_bounds(low / 100, high / 100)
                text = wording.pct_text(ours / 100)
                text += f" ({bounds[0]}-{bounds[1]}%)" if interval else ""  # the true ends
                # At our point, just above its line: placed after the interval's end or the
                # article's diamond, whichever lay further right, it sat by the diamond.
                ax.annotate(text, (ours, yi), xytext=(-6, 6), textcoords="offset points",
                            ha="left", va="bottom", color="0.1",
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8,
                                  "pad": 1})  # fmt: skip
            if not pd.isna(article):
                ax.plot(
                    article,
                    yi,
                    "D",
                    color="0.35",
                    markerfacecolor="white",
                    markeredgewidth=1.6,
                    markersize=8,
                    zorder=4,
                )
                if pd.isna(ours):
                    ax.annotate(
                        f"{article:.0f}%",
                        (article, yi),
                        xytext=(8, 0),
                        textcoords="offset points",
                        va="center",
                        color="0.35",
                    )
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1.2, zorder=1)
        ax.set_xscale("log")
        # Room on the right for the labels: about a third of the axis, whatever its span.
        left = low_end / 1.5
        right = high_end * 10 ** max(0.5, 0.5 * np.log10(high_end / left))
        ax.set_xlim(left, right)
        ax.set_xticks(log_ticks(left, high_end))  # none in the labels' room
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(_pct_label))
        ax.set_yticks(y, rows["label"])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel(xlabel)
        handles = [
            Line2D([], [], color="0.2", marker="o", linewidth=2.5, label="ours (95% CI)"),
            Line2D(
                [],
                [],
                color="0.35",
                marker="D",
                markerfacecolor="white",
                linestyle="none",
                label="the article",
            ),
            Line2D([], [], color="0.2", linestyle="--", label="100%: equal"),
        ]
        if clipped:
            handles.append(Line2D([], [], color="0.2", marker=">", linestyle="none",
                                  label="interval runs on past the axis"))  # fmt: skip
        legend_below(fig, handles, ncols=len(handles), frameon=False)
        fig.suptitle(title)
        footnote(fig, note)
    return set_finding(fig, ratio_finding(rows))


# How far beyond the outermost point (ours or the article's) an interval may widen the axis: a
# 2-block interval of 12-1,000% would otherwise squeeze every other row into a sliver.
INTERVAL_ROOM = 3.0


def _ratio_span(rows: pd.DataFrame) -> tuple[float, float]:
    """The ratio axis's span in %: every point and 100%, and the intervals up to INTERVAL_ROOM
    times beyond the outermost points."""

    def finite(columns: list[str]) -> np.ndarray:
        values = rows.reindex(columns=columns).to_numpy(dtype=float)
        return values[np.isfinite(values) & (values > 0)]

    points = finite(["ratio_pct", "article_pct"])
    ends = finite(["ci_low_pct", "ci_high_pct"])
    low = min(points.min(initial=100.0), 100.0)
    high = max(points.max(initial=100.0), 100.0)
    return (max(min(ends.min(initial=low), low), low / INTERVAL_ROOM),
            min(max(ends.max(initial=high), high), high * INTERVAL_ROOM))  # fmt: skip


def log_ticks(low: float, high: float) -> list[float]:
    # Decades on a wide log axis, 1-2-5 steps or denser on a narrow one: at least 3 labels.
    for steps in ((1,), (1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)):
        ticks = [n * 10.0**k for k in range(-3, 8) for n in steps]
        ticks = [t for t in ticks if low <= t <= high]
        if len(ticks) >= 3:
            return ticks
    return ticks


def _pct_label(x: float, _pos=None) -> str:
    return f"{x:,.0f}%" if x >= 1 else f"{x:g}%"


def calibration_chart(df: pd.DataFrame) -> Figure:
    """The load sweep: mean throughput with its 95% interval over blocks (none with one block)
    and the machine's busy % against concurrency, per mode; the knee circled where one was
    found (tables.find_knee)."""
    table = tables.calibration(df)
    modes = present(table["mode"])
    with style():
        fig = Figure(figsize=(10, 4.2), layout="constrained")
        rps_ax, cpu_ax = fig.subplots(1, 2)
        for mode in modes:
            for scenario, rows in table[table["mode"] == mode].groupby("scenario", observed=True):
                label = f"{mode_label(mode)}, {scenario_label(scenario)}"
                error = np.nan_to_num(
                    [rows["rps_mean"] - rows["rps_ci_low"], rows["rps_ci_high"] - rows["rps_mean"]]
                )
                rps_ax.errorbar(rows["concurrency"], rows["rps_mean"], yerr=error, fmt="o-",
                                capsize=3, color=mode_color(mode), label=label)  # fmt: skip
                # The knee computed for this mode (tables.find_knee), named where it is drawn.
                for knee in rows[rows["knee"]].itertuples(index=False):
                    rps_ax.plot(knee.concurrency, knee.rps_mean, "o", ms=12, mfc="none",
                                mec="0.1")  # fmt: skip
                    rps_ax.annotate(f"knee: {knee.concurrency}", (knee.concurrency, knee.rps_mean),
                                    xytext=(9, -13), textcoords="offset points", fontsize=9,
                                    color=mode_color(mode))  # fmt: skip
                cpu_ax.plot(rows["concurrency"], rows["cpu_total_pct_mean"], "o-",
                            color=mode_color(mode), label=label)  # fmt: skip
        levels = sorted(table["concurrency"].unique())
        for ax in (rps_ax, cpu_ax):
            ax.set_xscale("log", base=2)
            ax.set_xticks(levels, [str(level) for level in levels])
            ax.minorticks_off()
            ax.set_xlabel("concurrency (virtual users / connections)")
        rps_ax.set_ylabel("throughput [requests/s]")
        rps_ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        # An interval from few blocks can reach far above every mean and flatten the curves:
        # the axis stops at INTERVAL_ROOM / 2 times the highest mean, an arrowhead marks the cut.
        top = table["rps_mean"].max() * INTERVAL_ROOM / 2
        cut = table[table["rps_ci_high"] > top]
        rps_ax.set_ylim(0, top if len(cut) else None)
        for mode in present(cut["mode"]) if len(cut) else []:
            above = cut[cut["mode"] == mode]
            rps_ax.plot(above["concurrency"], [top] * len(above), "^", ms=9, clip_on=False,
                        color=mode_color(mode))  # fmt: skip
        if len(cut):
            rps_ax.plot([], [], "^", ms=9, color="0.2", label="interval runs on past the axis")
        rps_ax.plot([], [], "o", ms=12, mfc="none", mec="0.1",
                    label="knee: no higher level's mean above its 95% interval")  # fmt: skip
        cpu_ax.set_ylabel("machine busy [%] (mean over blocks)")
        cpu_ax.set_ylim(0, 105)
        cpu_ax.axhline(100, color="0.4", ls="--", lw=1)  # the paper's target
        rps_ax.legend(frameon=False, fontsize=9)
        fig.suptitle("Choosing the load: throughput and CPU against concurrency")
        footnote(fig, sweep_note(table["blocks"].astype(int)))
    return set_finding(fig, calibration_finding(table))


def style():
    # seaborn's whitegrid look and notebook-size fonts while a figure is built, never globally.
    rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook", rc=_STYLE)}
    return mpl.rc_context(rc)


def one_setup(df: pd.DataFrame) -> pd.DataFrame:
    # A figure compares modes and scenarios under one load setup, as the paper did (k6, 8 VUs).
    df = tables.prepare(df)
    setups = df[["tool", "concurrency"]].drop_duplicates()
    if len(setups) > 1:
        found = ", ".join(f"{t} at {c}" for t, c in setups.itertuples(index=False))
        raise BadInput(f"results mix load setups ({found}); select one tool and concurrency first")
    return df


def present(values: pd.Series) -> list[str]:
    # Categories in display order, only those with data.
    return [str(v) for v in values.cat.categories if (values == v).any()]


def bars(ax, df: pd.DataFrame, modes: list[str], rotation: int = 0) -> None:
    """Mean rps per scenario, one bar per mode, whiskers 1 sd over blocks (seaborn's barplot),
    each labelled with its mean above its whisker (matplotlib's bar_label)."""
    runs = df[df["mode"].astype(str).isin(modes)]
    order = [scenario_label(s) for s in present(runs["scenario"])]
    hue_order = [mode_label(m) for m in modes]
    data = runs.assign(
        x=runs["scenario"].astype(str).map(scenario_label),
        hue=runs["mode"].astype(str).map(mode_label),
    )
    many = data.groupby(["hue", "x"])["rps"].count().max() > 1  # one run has no sd
    sns.barplot(data, x="x", y="rps", hue="hue", order=order, hue_order=hue_order,
                palette={mode_label(m): mode_color(m) for m in modes},
                errorbar="sd" if many else None, capsize=0.15,
                err_kws={"linewidth": 1.2, "color": "0.15"}, legend=len(modes) > 1,
                saturation=1.0,  # the catalog's colours, as on every other figure
                ax=ax, zorder=2)  # fmt: skip
    stats = data.groupby(["hue", "x"])["rps"].agg(["mean", "std"]).fillna(0.0)
    tops = []
    for label, container in zip(hue_order, ax.containers, strict=False):
        texts = ax.bar_label(container, fmt="{:,.0f}", padding=3, rotation=rotation,
                             fontsize=9 if rotation else 10, zorder=5,
                             bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                                   "edgecolor": "none"})  # fmt: skip
        for text, patch in zip(texts, container.patches, strict=True):
            scenario = order[round(patch.get_x() + patch.get_width() / 2)]
            top = stats.loc[(label, scenario)].sum()  # mean + sd: above the whisker
            text.xy = (text.xy[0], top)
            tops.append(top)
    # Headroom for the labels; vertical labels need more.
    ax.set_ylim(0, max(tops) * (1.22 if rotation else 1.1))


def legend(ax, title: str) -> None:
    ax.legend(title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
