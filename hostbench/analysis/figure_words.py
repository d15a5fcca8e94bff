"""What a figure says in words: the sentence its caption opens with (its finding, computed
from the numbers it draws), the note under it of the load and the marks it drew, its caption
and its alt text.

figures.py draws the charts and gives each its finding from here (set_finding); a study's own
figures may too. Where the marks are means with no interval, a finding gives a range, not a
ranking.
"""

import pandas as pd
from matplotlib.figure import Figure

from ..catalog import mode_label, scenario_label
from . import tables
from .prose import span

# --- the finding a chart's caption opens with -------------------------------------------------


def extremes(rows: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    """The rows with the lowest and the highest `column` (missing values skipped)."""
    ordered = rows.dropna(subset=[column]).sort_values(column)
    return ordered.iloc[0], ordered.iloc[-1]


def _where(row) -> str:
    return f"{mode_label(str(row['mode']))}, {scenario_label(str(row['scenario']))}"


def throughput_finding(summary: pd.DataFrame) -> str:
    """What a chart of summarize() rows' requests/s shows: the range of the means (over
    blocks; the whiskers are sds, not intervals, so a range and not a ranking)."""
    low, high = extremes(summary, "rps_mean")
    return (f"Mean throughput ranged from {low['rps_mean']:,.0f} requests/s ({_where(low)}) "
            f"to {high['rps_mean']:,.0f} ({_where(high)})")  # fmt: skip


def latency_finding(summary: pd.DataFrame) -> str:
    """What the latency chart shows, from its numbers: the range of medians and of p99s
    (means over blocks, with no interval: a range, not a ranking)."""
    low, high = extremes(summary, "latency_p50_ms_mean")
    top = extremes(summary, "latency_p99_ms_mean")[1]
    return (f"Median latency ranged from {low['latency_p50_ms_mean']:,.2f} ms ({_where(low)}) "
            f"to {high['latency_p50_ms_mean']:,.2f} ms ({_where(high)}); the highest p99 was "
            f"{top['latency_p99_ms_mean']:,.2f} ms ({_where(top)})")  # fmt: skip


def cpu_per_request_finding(per: pd.DataFrame, columns: list[str]) -> str:
    """What the CPU-per-request chart shows: the cheapest and the dearest request in all
    processes, and the server's share (means over blocks: a range, not a ranking)."""
    total = per[columns].fillna(0.0).sum(axis=1)
    rows = per.assign(_total=total)
    low, high = extremes(rows, "_total")
    share = 100 * per["server_us_per_request"].sum() / total.sum()
    return (f"A request cost from {low['_total']:,.0f} µs of CPU ({_where(low)}) to "
            f"{high['_total']:,.0f} µs ({_where(high)}) in all processes; the test app took "
            f"{share:.0f}% of it")  # fmt: skip


def busy_finding(busy_pct: pd.Series, threshold_pct: float, shared: bool = False) -> str:
    """What the CPU chart shows: how busy the machine was (mean over blocks per mode and
    scenario, as its labels), and where it was below `threshold_pct`. `shared`: some modes
    shared an interleaved window (tables.shares_windows), whose machine-wide cores are the
    window's."""
    finding = _busy_words(busy_pct, threshold_pct)
    if shared:
        finding += (
            ". Where modes shared an interleaved window, its busy % and the load "
            "generator's and the rest's cores are the window's, the same for each; the "
            "server's and proxy's are each mode's own, per second of its slices"
        )
    return finding


def _busy_words(busy_pct: pd.Series, threshold_pct: float) -> str:
    # Judged as printed (whole percents), as the labels are.
    printed = busy_pct.dropna().round()
    if printed.empty:
        return "No run recorded how busy the machine was"
    below = int((printed < threshold_pct).sum())
    busy = f"The machine was {span(printed, '.0f')}% busy (mean over blocks per mode and scenario)"
    if below == 0:
        return f"{busy}: at or above {threshold_pct:.0f}% everywhere, the CPU was the limit"
    return f"{busy}: below {threshold_pct:.0f}% in {below} of {len(printed)}, not saturated there"


def ratio_finding(rows: pd.DataFrame) -> str:
    """How many of the rows' intervals lie above, below or across 100%, and how many of the
    article's values our intervals hold (columns ratio_pct, ci_low_pct, ci_high_pct and
    optionally article_pct, as ratio_chart takes them)."""
    ours = rows.reindex(columns=["ratio_pct", "ci_low_pct", "ci_high_pct", "article_pct"])
    with_ci = ours.dropna(subset=["ci_low_pct", "ci_high_pct"])
    if with_ci.empty:
        return "No row has an interval"
    above = int((with_ci["ci_low_pct"] > 100).sum())
    below = int((with_ci["ci_high_pct"] < 100).sum())
    across = len(with_ci) - above - below
    text = (
        f"Of {len(with_ci)} intervals, {above} {'lies' if above == 1 else 'lie'} above 100%, "
        f"{below} below, and {across} {'includes' if across == 1 else 'include'} it"
    )
    both = with_ci.dropna(subset=["article_pct"])
    if len(both):
        inside = int(
            (
                (both["ci_low_pct"] <= both["article_pct"])
                & (both["article_pct"] <= both["ci_high_pct"])
            ).sum()
        )
        text += f"; the article's value lies inside ours in {inside} of {len(both)}"
    return text


def calibration_finding(table: pd.DataFrame) -> str:
    """Per sweep: the level from which throughput stopped growing (the circled knee) and how
    busy the machine was at most, as the two panels draw them."""
    parts = []
    for r in tables.calibration_findings(table).itertuples(index=False):
        grew = (
            f"throughput stopped growing from {r.knee:.0f} on"
            if pd.notna(r.knee)
            else f"no level from which throughput stopped growing, up to {r.highest}"
        )
        parts.append(f"{mode_label(str(r.mode))}, {scenario_label(str(r.scenario))}: {grew}, "
                     f"the machine at most {r.cpu_busy_peak_pct:.0f}% busy")  # fmt: skip
    return "; ".join(parts) if parts else "No sweep to show"


# --- the note under a figure ------------------------------------------------------------------


def setup_note(summary: pd.DataFrame, drawn: str | None = None) -> str:
    """The note under a figure of summarize() rows: the load, the blocks, and what its marks
    are: `drawn`, or by default the error bars of figures.bars (1 sd over blocks)."""
    tool, concurrency = summary.iloc[0][["tool", "concurrency"]]
    n = summary["n"]
    reps = f"{n.min()}" if n.min() == n.max() else f"{n.min()}-{n.max()}"
    blocks = f"{reps} block{'' if reps == '1' else 's'}"
    if drawn is None:
        drawn = "error bars: 1 sd over blocks" if n.max() > 1 else "one run each, no error bars"
    return f"{tool}, concurrency {concurrency}, {blocks}; {drawn}"


def sweep_note(blocks: pd.Series) -> str:
    """The note under the load sweep's figure: its blocks per level (`blocks`, one per level
    and mode) and what its error bars are."""
    if blocks.max() <= 1:
        return "one block per level: no interval, no knee; dashed line: 100% busy"
    return f"{span(blocks, '.0f')} blocks per level; error bars: 95% interval of the mean" + (
        "; a level with one block has none" if blocks.min() == 1 else ""
    )


# --- a figure's caption and alt text ----------------------------------------------------------


def set_finding(fig: Figure, sentence: str) -> Figure:
    """Give a figure the sentence its caption opens with: what it shows, computed from the
    data it draws (the figure functions here set one; a study's own figures may too)."""
    fig._hostbench_finding = sentence  # read by caption_text
    return fig


def caption_text(fig: Figure) -> str:
    """A caption: what the figure shows (set_finding), then what it draws: its title, and
    its note after a colon."""
    finding = " ".join(getattr(fig, "_hostbench_finding", "").split()).rstrip(".")
    title, note = (part.rstrip(".") for part in _title_and_note(fig))
    drawn = f"{title}: {note}" if title and note else title or note
    return " ".join(f"{part}." for part in (finding, drawn) if part)


def alt_text(fig: Figure) -> str:
    """A figure in words for its image's alt text: its title (else its panels' titles) and
    the note under it, as drawn."""
    return ". ".join(part for part in _title_and_note(fig) if part) or "a figure"


def _title_and_note(fig: Figure) -> tuple[str, str]:
    title = fig.get_suptitle().strip()
    if not title:
        panels = [ax.get_title() or ax.get_title(loc="left") for ax in fig.axes]
        title = "; ".join(" ".join(t.split()) for t in panels if t.strip())
    return " ".join(title.split()), " ".join(fig.get_supxlabel().split())
