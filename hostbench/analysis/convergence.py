"""How a run's mean rate and memory converge with its request count (from progress.csv).

A run with `progress_interval_s` set records, once per interval, the server's own count of
served requests and its memory (harness/measure/progress.py). Stopped after n requests, that run
would have reported a mean rate of n / t(n) (t from the start of the load; at one reading a
second, the last reading may add up to a second after the last request: negligible over the
article's counts, visible on a run of seconds) and a memory that is the mean of the readings so
far; here both are divided by the whole run's value, so each curve ends at 1.0. The count
from which a run is "converged" is the smallest n from which both stay within the tolerance
of 1.0 up to the end: a shorter run at that count would have reported both within it.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..catalog import mode_color, mode_label
from ..errors import BadInput
from .digits import write_csv
from .figure_words import set_finding
from .layout import legend_below

FILE = "progress.csv"  # harness/measure/progress.py FILE: one per run folder
# Every cell's curve in one tidy file in the run folder: the evidence a later profile's counts
# cite, readable when the per-run folders are archived (a committed example's runs.tar.gz).
CURVES_FILE = "convergence.csv"
COLUMNS = ("elapsed_s", "requests", "rss_mb", "rss_anon_mb")
TOLERANCE_PCT = 2.0  # a count is converged when rate and memory stay this close to the end's
MEMORY = "rss_anon_mb"  # the memory followed: RSS without file-mapped pages (the article's)


def load_progress(path: str | Path) -> pd.DataFrame:
    """A run's progress.csv; BadInput (one line) when it is missing or lacks a column."""
    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise BadInput(f"no {FILE} at {path.parent}: run with progress_interval_s set") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing or frame.empty:
        what = f"lacks {', '.join(missing)}" if missing else "has no rows"
        raise BadInput(f"{path} {what}; expected the columns {', '.join(COLUMNS)}")
    return frame


def curve(progress: pd.DataFrame) -> pd.DataFrame:
    """Per reading with requests served: the count, the cumulative mean rate and memory, and
    each relative to the whole run's (its last reading's), so both end at 1.0."""
    frame = progress.sort_values("elapsed_s").reset_index(drop=True)
    # Readings after the last request (the load tool's exit, the last reading at stop) add
    # time but no work: the run ends at the first reading of its final count.
    frame = frame.iloc[
        : int(np.argmax(frame["requests"].to_numpy() == frame["requests"].max())) + 1
    ]
    # Every reading counts toward the memory's mean, as the run's own mean does.
    memory = frame[MEMORY].expanding().mean()
    rate = frame["requests"] / frame["elapsed_s"]
    out = pd.DataFrame(
        {
            "requests": frame["requests"],
            "elapsed_s": frame["elapsed_s"],
            "rate": rate,
            "memory_mb": memory,
            "rate_rel": rate / rate.iloc[-1],
            "memory_rel": memory / memory.iloc[-1],
        }
    )
    # No request yet: no rate, and no place on a log axis of requests.
    return out[out["requests"] > 0].reset_index(drop=True)


def _within_from(relative: pd.Series, requests: pd.Series, tolerance_pct: float) -> int:
    """The smallest count from which `relative` stays within the tolerance of 1.0 to the end."""
    outside = np.flatnonzero(np.abs(relative.to_numpy() - 1.0) > tolerance_pct / 100)
    first_for_good = outside[-1] + 1 if len(outside) else 0
    return int(requests.iloc[first_for_good])  # the last reading is 1.0: always within


def converged_from(c: pd.DataFrame, tolerance_pct: float = TOLERANCE_PCT) -> dict:
    """Where the run's rate, its memory, and both enter the tolerance band for good."""
    rate = _within_from(c["rate_rel"], c["requests"], tolerance_pct)
    memory = _within_from(c["memory_rel"], c["requests"], tolerance_pct)
    return {"rate_from": rate, "memory_from": memory, "converged_from": max(rate, memory)}


def run_curves(results: pd.DataFrame, runs_dir: str | Path) -> dict[tuple[str, str], pd.DataFrame]:
    """The curve of each run of results.csv that recorded progress, by (mode, scenario);
    a cell run in several blocks keeps its first block's."""
    curves = {}
    for row in results.sort_values("block").itertuples(index=False):
        path = Path(runs_dir) / row.run_key / FILE
        if path.is_file() and (row.mode, row.scenario) not in curves:
            curves[(row.mode, row.scenario)] = curve(load_progress(path))
    return curves


def write_curves(curves: dict[tuple[str, str], pd.DataFrame], run_dir: str | Path) -> Path:
    """The curves as one tidy CURVES_FILE in `run_dir` (a row per cell and reading)."""
    tidy = pd.concat(
        [c.assign(mode=mode, scenario=scenario) for (mode, scenario), c in curves.items()],
        ignore_index=True,
    )
    columns = ["mode", "scenario", *(c for c in tidy.columns if c not in ("mode", "scenario"))]
    return write_csv(tidy[columns], Path(run_dir) / CURVES_FILE)  # at the declared precision


def read_curves(run_dir: str | Path) -> dict[tuple[str, str], pd.DataFrame]:
    """The curves a run folder's CURVES_FILE holds, by (mode, scenario); BadInput (one line)
    when it has none."""
    path = Path(run_dir) / CURVES_FILE
    if not path.is_file():
        raise BadInput(f"no {CURVES_FILE} in {path.parent}: it is written by a run with progress")
    tidy = pd.read_csv(path)
    return {
        (mode, scenario): c.drop(columns=["mode", "scenario"]).reset_index(drop=True)
        for (mode, scenario), c in tidy.groupby(["mode", "scenario"], sort=False)
    }


def table(
    curves: dict[tuple[str, str], pd.DataFrame], tolerance_pct: float = TOLERANCE_PCT
) -> pd.DataFrame:
    """Per cell: the run's count, its final rate and memory, and where each converged."""
    rows = []
    for (mode, scenario), c in curves.items():
        last = c.iloc[-1]
        found = converged_from(c, tolerance_pct)
        rows.append(
            {
                "mode": mode,
                "scenario": scenario,
                "requests": int(last["requests"]),
                "rate": last["rate"],
                "memory_mb": last["memory_mb"],
                **found,
                "converged_share": found["converged_from"] / last["requests"],
            }
        )
    return pd.DataFrame(rows)


def per_scenario(cells: pd.DataFrame) -> pd.DataFrame:
    """The count each scenario needs: the largest of its cells' (every cell converged)."""
    return (
        cells.groupby("scenario", sort=False)
        .agg(
            converged_from=("converged_from", "max"),
            requests=("requests", "max"),
            cells=("mode", "size"),
        )
        .reset_index()
    )


def figure(
    curves: dict[tuple[str, str], pd.DataFrame], tolerance_pct: float = TOLERANCE_PCT
) -> Figure:
    """Cumulative mean rate / final and memory / final against the requests served (log
    axis), one line per cell (colour: server, dash: scenario), the tolerance band shaded."""
    fig = Figure(figsize=(10, 5.6), layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    scenarios = sorted({s for _, s in curves})
    dashes = dict(zip(scenarios, ("-", "--", ":", "-."), strict=False))
    panels = (
        ("rate_rel", "cumulative mean requests/s / final"),
        ("memory_rel", "mean memory (RSS without mapped files) / final"),
    )
    for ax, (column, ylabel) in zip(axes, panels, strict=True):
        ax.axhspan(1 - tolerance_pct / 100, 1 + tolerance_pct / 100, color="0.85", zorder=0)
        for (mode, scenario), c in curves.items():
            ax.plot(c["requests"], c[column], dashes.get(scenario, "-"), color=mode_color(mode),
                    label=f"{mode_label(mode)}, {scenario}", lw=1.5)  # fmt: skip
        ax.axhline(1.0, color="0.3", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("requests served (server's counter)")
        ax.set_ylabel(ylabel)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
        ax.grid(alpha=0.4, which="both")
    # Below the panels, not over them: eleven curves cross the whole of both.
    handles, labels = axes[0].get_legend_handles_labels()
    legend_below(fig, handles, labels, ncols=4, fontsize=9)
    fig.suptitle(f"Convergence with the request count (grey band: within {tolerance_pct:g}%)")
    return set_finding(fig, _finding(curves, tolerance_pct))


def _finding(curves: dict[tuple[str, str], pd.DataFrame], tolerance_pct: float) -> str:
    """Per scenario, the count from which every cell's rate and memory stayed in the band."""
    parts = []
    for r in per_scenario(table(curves, tolerance_pct)).itertuples(index=False):
        if r.converged_from >= r.requests:  # only the last reading is within: not settled
            parts.append(f"{r.scenario}: not every curve settled before {r.requests:,} requests")
        else:
            curves_ = "its one curve" if r.cells == 1 else f"all {r.cells} curves"
            parts.append(f"{r.scenario}: {curves_} within {tolerance_pct:g}% from request "
                         f"{r.converged_from:,} of {r.requests:,} on")  # fmt: skip
    return "; ".join(parts) if parts else "No curve to show"
