"""What the notebooks show besides charts: tables, notes and sentences computed from the runs.

The notebook stays thin (parameters, narrative, calls); the tables and the
sentences whose numbers come from the results are built here, where they are
tested. Prose numbers are computed, never typed.
"""

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..catalog import MODES, mode_label, runnable_here, scenario_label
from ..results import invalid_rows
from . import tables


def _number(value) -> str:
    """Numbers as a reader wants them: thousands separated, two decimals for small ones."""
    if pd.isna(value):
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def table(df: pd.DataFrame, formats: Mapping[str, object] | None = None):
    """A table for the page: no index, text left-aligned, numbers readable, nothing cut.

    Text is escaped: a cell that holds markup (a response body, a header) shows it as text.
    formats: a column's own format ("{:.1f}%" or a function) where the default won't do.
    """
    df = df.reset_index() if df.index.name or df.index.names[0] else df
    numbers = df.select_dtypes("number").columns
    counts = df.select_dtypes("integer").columns  # blocks, connections, errors: whole
    texts = df.columns.difference(numbers)
    styler = (
        df.style.hide(axis="index")
        .format(escape="html", subset=texts)
        .format(_number, subset=numbers)
        .format("{:,}", subset=counts)
        .set_properties(**{"text-align": "left", "vertical-align": "top"})
        .set_table_styles([{"selector": "th", "props": [("text-align", "left")]}])
    )
    for column, fmt in (formats or {}).items():
        if column in df.columns:
            styler = styler.format(fmt, subset=[column], na_rep="n/a", escape="html")
    return styler


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
    are tables.invalid_reasons. all_results: every row (load_results(valid_only=False))."""
    left_out = len(invalid_rows(all_results))
    reruns = tables.invalid_reasons(all_results)
    reruns = reruns.loc[reruns["why"].str.startswith("re-run"), "runs"].sum()
    again = f" {reruns} run(s) were re-runs of a run the machine disturbed." if reruns else ""
    if left_out == 0:
        return f"All {len(all_results)} runs are valid.{again}"
    return (
        f"**{left_out} of {len(all_results)} runs left out** of the analysis; `results.csv` "
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
                f"throughput stops growing at {r.knee:.0f} (no higher level's mean above its 95% "
                f"interval over {r.blocks} blocks)"
            )
        busy = f"CPU busy peaked at {r.cpu_busy_peak_pct:.0f}%" + (
            "" if r.cpu_reached_100 else " (not 100%)"
        )
        label = f"{mode_label(r.mode)}, {scenario_label(r.scenario)}, {r.tool} ({r.levels})"
        lines.append(f"- **{label}**: {knee}; {busy}.")
    return "\n".join(lines)


def machine_state(results: pd.DataFrame, env: dict | None = None) -> str:
    """How quiet the machine was while the runs ran, from each row's readings, and which code
    measured them (environment.json: a tree with uncommitted changes is named) (Markdown)."""
    load = results["load_avg_1m"]
    steal = pd.to_numeric(results["cpu_steal_pct"], errors="coerce")
    freq = pd.to_numeric(results["cpu_freq_mhz"], errors="coerce").dropna()
    clock = f"; the CPU clock read {freq.min():,.0f}-{freq.max():,.0f} MHz" if len(freq) else ""
    text = (
        f"During the runs, the 1-minute load average at each run's start was "
        f"{load.min():.1f}-{load.max():.1f} and the hypervisor stole up to "
        f"{steal.max():.1f}% of the CPU time{clock}."
    )
    foreign = pd.to_numeric(results.get("foreign_cores", pd.Series(dtype=float)), errors="coerce")
    if foreign.notna().any():
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
