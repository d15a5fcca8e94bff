"""What the notebooks show besides charts: tables, notes and sentences computed from the runs.

The notebook stays thin (parameters, narrative, calls); the tables and the
sentences whose numbers come from the results are built here, where they are
tested. Prose numbers are computed, never typed.
"""

import html
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ..catalog import MODES, mode_label, runnable_here, scenario_label
from ..results import invalid_rows
from . import invalid_runs, tables

# Column names as a reader sees them: prose.table shows every column through this one map
# (names not in it are shown as they are, so a study's own tables name their columns in
# words). The results schema may take these over; until then this is the only copy.
COLUMN_NAMES = {
    "mode": "hosting mode",
    "baseline": "baseline",
    "tool": "load tool",
    "n": "blocks",
    "rps": "requests/s",
    "rps_mean": "requests/s (mean)",
    "rps_std": "requests/s (sd)",
    "rps_min": "requests/s (lowest)",
    "rps_max": "requests/s (highest)",
    "rps_ci_low": "requests/s: 95% CI low",
    "rps_ci_high": "requests/s: 95% CI high",
    "latency_mean_ms": "latency mean [ms]",
    "latency_p50_ms_mean": "latency p50 [ms]",
    "latency_p99_ms_mean": "latency p99 [ms]",
    "latency_p99_ms": "latency p99 [ms]",
    "cpu_total_pct": "machine busy [%]",
    "cpu_total_pct_mean": "machine busy [%]",
    "cpu_busy_pct": "machine busy [%]",
    "cpu_server_cores_mean": "app [cores]",
    "cpu_proxy_cores_mean": "proxy [cores]",
    "cpu_loadgen_cores_mean": "load generator [cores]",
    "server_cores": "app [cores]",
    "proxy_cores": "proxy [cores]",
    "loadgen_cores": "load generator [cores]",
    "other_cores": "rest of the system [cores]",
    "server_us_per_request": "app [µs per request]",
    "proxy_us_per_request": "proxy [µs per request]",
    "loadgen_us_per_request": "load generator [µs per request]",
    "knee": "knee",
    "left_out_invalid": "runs left out",
    "ratio": "ratio",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "ratio_pct": "% of the baseline",
    "ci_low_pct": "95% CI low [%]",
    "ci_high_pct": "95% CI high [%]",
    "ratio_low_pct": "low [% of the baseline]",
    "ratio_high_pct": "high [% of the baseline]",
    "qualifier": "the paper's words",
    "derived": "derived",
    "article_ratio": "the article",
    "article_ratio_pct": "the article [%]",
    "warmup_s_mean": "warm-up, mean [s]",
    "warmup_max_s": "warm-up, at most [s]",
    "steady": "steady warm-ups",
    "non_2xx": "non-2xx responses",
    "count_diff_pct_max": "largest count difference [%]",
    "max_abs_count_diff_pct": "largest count difference [%]",
    "pipeline": "requests per write (pipeline)",
    "app_cores": "app [cores]",
    "wrk_cores": "wrk [cores]",
}
# What a dash means in a column, said under the table where one shows.
DASH_MEANS = {
    "cpu_proxy_cores_mean": "no proxy in this mode",
    "proxy_cores": "no proxy in this mode",
    "proxy_us_per_request": "no proxy in this mode",
    "rps_std": "one block: no spread",
    "rps_ci_low": "one block: no interval",
    "rps_ci_high": "one block: no interval",
    "ci_low": "one block: no interval",
    "ci_high": "one block: no interval",
    "ci_low_pct": "one block: no interval",
    "ci_high_pct": "one block: no interval",
}
DASH = "–"  # a missing value on the page, never "NaN"
LONG_TEXT = 40  # characters: a text column with longer cells may break them anywhere


def column_name(column: str) -> str:
    """A column as a reader sees it (COLUMN_NAMES), e.g. rps_mean -> "requests/s (mean)"."""
    return COLUMN_NAMES.get(column, column)


def _number(value) -> str:
    """Numbers as a reader wants them: thousands separated, two decimals for small ones."""
    if pd.isna(value):
        return DASH
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def _labels(values: pd.Series, label) -> pd.Series:
    # Ids the catalog knows shown by their labels; anything else as it is.
    return values.map(lambda v: label(v) if isinstance(v, str) else v).astype(object)


def table(
    df: pd.DataFrame,
    formats: Mapping[str, object] | None = None,
    dash_means: Mapping[str, str] | None = None,
):
    """A table for the page: no index, text left-aligned, numbers readable, nothing cut.

    Columns are shown by their names in words (COLUMN_NAMES), hosting modes and scenarios by
    their labels, yes/no for flags, and a dash for a missing value, with what the dash means
    under the table (DASH_MEANS, or `dash_means` by column). Text is escaped: a cell that
    holds markup (a response body, a header) shows it as text. A labelled index becomes the
    first column(s). formats: a column's own format ("{:.1f}%" or a function) where the
    default won't do, by its name in the frame.
    """
    labelled = any(df.index.names) or not pd.api.types.is_integer_dtype(df.index)
    if labelled:  # group labels are columns; row numbers are never shown
        df = df.reset_index(names=[n or "" for n in df.index.names])
    df = df.reset_index(drop=True)  # a fresh row index (a concat repeats numbers)
    for column, label in (("mode", mode_label), ("baseline", mode_label),
                          ("scenario", scenario_label)):  # fmt: skip
        if column in df.columns:
            df[column] = _labels(df[column], label)
    for column in df.columns:  # flags, also with a missing one (an object column)
        values = df[column].dropna()
        if len(values) and values.map(lambda v: isinstance(v, bool | np.bool_)).all():
            df[column] = df[column].map({True: "yes", False: "no"})
    means = {**DASH_MEANS, **(dash_means or {})}
    notes = {}
    for column in df.columns:
        if df[column].isna().any() and column in means:
            notes.setdefault(means[column], []).append(column_name(column))
    names = {}
    for column in df.columns:
        name = column_name(column)
        names[column] = name if name not in names.values() and name not in df.columns else column
    formats = {names.get(c, c): f for c, f in (formats or {}).items() if c in df.columns}
    df = df.rename(columns=names)
    numbers = df.select_dtypes("number").columns
    counts = df.select_dtypes("integer").columns  # blocks, connections, errors: whole
    texts = df.columns.difference(numbers)
    # Numbers never break; long text (a response body, a command) may break anywhere, so an
    # unbroken run of characters never widens the table past the page (report.css styles
    # the two classes; classes, not rules keyed to the table's random id).
    kinds = pd.DataFrame("", index=df.index, columns=df.columns)
    for column in df.columns:
        if column in numbers:
            kinds[column] = "num"
        elif df[column].astype(str).str.len().max() > LONG_TEXT:
            kinds[column] = "long"
    styler = (
        Styler(df, cell_ids=False, uuid_len=12)
        .hide(axis="index")
        .format(escape="html", subset=texts, na_rep=DASH)
        .format(_number, subset=numbers)
        .format("{:,}", subset=counts)
        .set_td_classes(kinds)
        .set_table_styles(
            [{"selector": "th, td", "props": [("text-align", "left"), ("vertical-align", "top")]}]
        )
    )
    for column, fmt in formats.items():
        styler = styler.format(fmt, subset=[column], na_rep=DASH, escape="html")
    if notes:
        caption = "; ".join(f"{DASH} {what} ({', '.join(cols)})" for what, cols in notes.items())
        styler = styler.set_caption(html.escape(caption))
    return styler


class Listing:
    """A long text (a script, a config) on the page: folded under a one-line summary, shown
    as it is when opened, so it never buries the page's narrative."""

    def __init__(self, text: str, summary: str):
        self.text, self.summary = text, summary

    def _repr_html_(self) -> str:
        return (
            f"<details><summary>{html.escape(self.summary)}</summary>"
            f"<pre>{html.escape(self.text)}</pre></details>"
        )

    def __repr__(self) -> str:
        return f"{self.summary}\n{self.text}"


def modes_table(requested: list[str]) -> pd.DataFrame:
    """Every mode, whether this study runs it, and why not when it can't run here."""
    here = set(runnable_here())
    rows = []
    for name, mode in MODES.items():
        if name in requested and name in here:
            status = "runs in this study"
        elif name not in here:
            status = "not on this OS: HTTP.sys and IIS exist only on Windows"
        elif mode.launch == "external":
            status = "for a server you start yourself (docs/windows.md)"
        else:
            status = "runs here, not requested"
        rows.append((name, mode.summary, status))
    return pd.DataFrame(rows, columns=["mode", "what it is", "in this study"])


# What a smoke run (the quick profiles, params `smoke: true`) says instead of a finding.
SMOKE_HEADLINE = "smoke run: checks the pipeline, not evidence"


def smoke_note(what: str = "verdicts") -> str:
    """The line a smoke run's page shows where `what` would be (Markdown)."""
    return (
        f"*{SMOKE_HEADLINE[0].upper()}{SMOKE_HEADLINE[1:]}: its runs are too short and too few "
        f"to judge anything, so this page gives no {what}. Run the `paper` profile for them.*"
    )


def write_headline(run_dir: str | Path, text: str) -> str:
    """headline.txt for the batch index: `text`, or SMOKE_HEADLINE for a smoke run (its
    params.json says so); returns what was written."""
    line = SMOKE_HEADLINE if tables.is_smoke(run_dir) else text
    (Path(run_dir) / "headline.txt").write_text(line + "\n")
    return line


def validity_note(all_results: pd.DataFrame) -> str:
    """How many runs were left out, and why, as one sentence (Markdown); the reasons by kind
    are invalid_runs.invalid_reasons. all_results: every row (load_results(valid_only=False)); a
    launch's windows, combined into one row there, count as the runs results.csv holds."""
    left_out = len(invalid_rows(all_results))
    runs = int(all_results["windows"].sum()) if "windows" in all_results else len(all_results)
    reruns = invalid_runs.invalid_reasons(all_results)
    reruns = reruns.loc[reruns["why"] == invalid_runs.RERUN_KIND, "runs"].sum()
    again = (f" {reruns} run(s) were measured again at once, after the machine was busy or a "
             "warm-up never settled." if reruns else "")  # fmt: skip
    if left_out == 0:
        return f"All {runs} runs are valid.{again}"
    return (
        f"**{left_out} of {runs} runs left out** of the analysis; `results.csv` "
        f"keeps them with the reason in `invalid_reason`, by kind below.{again}"
    )


def calibration_note(findings: pd.DataFrame) -> str:
    """The load sweep in words, per mode (tables.calibration_findings): where throughput
    stopped growing beyond its interval, if anywhere, and how busy the CPU got (Markdown)."""
    lines = []
    for r in findings.itertuples(index=False):
        if r.blocks < 2:
            knee = (
                f"a level with {r.blocks} valid block (the others left out): no interval for "
                "it, so no level is called the knee"
            )
        elif pd.isna(r.knee):
            knee = (
                f"throughput still grew beyond the 95% interval up to {r.highest}, the highest "
                "level tried: no knee within the range"
            )
        else:
            knee = (
                f"throughput stops growing measurably at {r.knee:.0f} (no higher level's mean "
                f"above its 95% interval over {r.blocks} blocks)"
            )
            best = getattr(r, "best", r.knee)
            if pd.notna(best) and best > r.knee:
                knee += (
                    f", though the highest mean is at {best:.0f} ({r.best_rps:,.0f} requests/s), "
                    "inside that interval"
                )
        busy = f"CPU busy peaked at {r.cpu_busy_peak_pct:.0f}%" + (
            "" if r.cpu_reached_100 else " (not 100%)"
        )
        label = f"{mode_label(r.mode)}, {scenario_label(r.scenario)}, {r.tool} ({r.levels})"
        lines.append(f"- **{label}**: {knee}; {busy}.")
    return "\n".join(lines)


def span(values, spec: str) -> str:
    """Values' range as "low-high" in the format spec, or one number where both print the
    same (a range of one value says nothing more)."""
    values = pd.to_numeric(pd.Series(values), errors="coerce").dropna()
    low, high = format(values.min(), spec), format(values.max(), spec)
    return low if low == high else f"{low}-{high}"


def share_text(pct: float) -> str:
    """A small share in percent, such as the steal time, to one decimal: "0.4", "2.3"; one
    under 0.05 but not zero to its first significant digit ("0.03"), so it never prints as 0."""
    text = f"{pct:.1f}"
    return f"{pct:.1g}" if pct > 0 and float(text) == 0 else text


def machine_state(results: pd.DataFrame, env: dict | None = None) -> str:
    """How quiet the machine was while the runs ran, from each row's readings, and which code
    measured them (environment.json: a tree with uncommitted changes is named) (Markdown)."""
    load = results["load_avg_1m"]
    steal = pd.to_numeric(results["cpu_steal_pct"], errors="coerce")
    freq = pd.to_numeric(results["cpu_freq_mhz"], errors="coerce").dropna()
    clock = f"; the CPU clock read {span(freq, ',.0f')} MHz" if len(freq) else ""
    text = (
        f"During the runs, the 1-minute load average at each run's start was "
        f"{span(load, '.1f')} and the hypervisor stole up to "
        f"{share_text(steal.max())}% of the CPU time{clock}."
    )
    foreign = pd.to_numeric(results.get("foreign_cores", pd.Series(dtype=float)), errors="coerce")
    if foreign.notna().any() and f"{foreign.max():.2f}" == "0.00":
        text += " Processes the harness did not start used no CPU worth counting (under 0.005 "
        text += "cores) during any run."
    elif foreign.notna().any():
        cores = results.get("machine_cores", pd.Series(dtype=float)).max()
        of = f" of {cores:.0f}" if pd.notna(cores) else ""
        text += (
            f" Processes the harness did not start used a median of {foreign.median():.2f} "
            f"and at most {foreign.max():.2f} cores{of} during a run."
        )
    else:
        text += " These results predate the foreign-CPU reading: a machine doing other work "
        text += "shows only in the numbers above."
    commit = (env or {}).get("git_commit")
    if commit:
        text += f" Measured with hostbench at commit `{commit.removesuffix('+dirty')}`"
        diff = (env or {}).get("git_diff_sha256")
        if commit.endswith("+dirty"):
            named = f" (diff sha256 `{diff}`)" if diff else ""
            text += f", **with uncommitted changes**{named}: nobody else can rebuild that code."
        else:
            text += "."
    return text


def cpu_cost_sentence(results: pd.DataFrame) -> str:
    """Where a request's CPU goes, per mode: the app's and the proxy's CPU time per request
    (tables.cpu_per_request, mean over blocks), in one sentence (Markdown). One load setup."""
    cost = tables.cpu_per_request(results)
    parts = []
    for r in cost.itertuples(index=False):
        proxy = r.proxy_us_per_request
        extra = "" if pd.isna(proxy) else f" + the proxy {proxy:,.0f} µs"
        parts.append(f"{mode_label(r.mode)}: the app {r.server_us_per_request:,.0f} µs{extra}")
    return "CPU time per request (mean over blocks): " + "; ".join(parts) + "."
