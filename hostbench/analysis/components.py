"""The interleaved design's variance, from benchmarks/interleave_components.py's chunks: per
compared mode, scenario and slice length, the ratio with its 95% interval, the sd of a
chunk's log ratio within a run, between runs of a launch and between launches (a nested
ANOVA), and the bias against the longest slice. docs/method.md quotes it (`method_block`)."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..catalog import mode_label, scenario_label
from ..load import TOOLS
from . import window_design
from .intervals import blocks_for_halfwidth
from .student_t import t_quantile

CHUNKS_FILE = "chunks.csv"
SEED_FILE = "seed.json"
CHUNK = ["launch", "run", "scenario", "slice_s", "chunk"]  # what names one chunk in chunks.csv
QUIET_MAX_CORES = 0.1  # a chunk whose foreign CPU was above this is left out (docs/method.md)


def unit_means(d: pd.DataFrame) -> tuple[str, pd.Series]:
    """The independent units of a set of log ratios and each unit's mean: launches when
    there are 2 or more, else the runs of the one launch, else its chunks."""
    if d["launch"].nunique() >= 2:
        runs = d.groupby(["launch", "run"])["value"].mean()
        return "launches", runs.groupby(level="launch").mean()
    if d["run"].nunique() >= 2:
        return "runs", d.groupby("run")["value"].mean()
    return "chunks", d["value"]


def interval(means: pd.Series) -> tuple[float, float, float]:
    """The mean of unit means and its 95% t interval (NaN bounds with one unit)."""
    n, centre = len(means), float(means.mean())
    if n < 2:
        return centre, math.nan, math.nan
    half = t_quantile(0.975, n - 1) * float(means.std(ddof=1)) / math.sqrt(n)
    return centre, centre - half, centre + half


def components(d: pd.DataFrame) -> dict:
    """The variance components of `value` (a log ratio) nested as chunks in runs in
    launches, by the balanced nested ANOVA's mean squares (average group sizes when a chunk
    was left out): sd_chunk within a run, sd_run between runs of a launch, sd_launch between
    launches; a component the data cannot tell from zero is 0, one it cannot estimate NaN.
    With one run per launch, runs and launches are one level: sd_launch holds both."""
    runs = d.groupby(["launch", "run"])["value"]
    n_launch = d["launch"].nunique()
    n_run = runs.ngroups
    c = len(d) / n_run  # chunks per run
    r = n_run / n_launch  # runs per launch
    ss_chunk = float(((d["value"] - runs.transform("mean")) ** 2).sum())
    df_chunk = len(d) - n_run
    run_means = runs.mean()
    launch_of_run = run_means.groupby(level="launch").transform("mean")
    ss_run = c * float(((run_means - launch_of_run) ** 2).sum())
    df_run = n_run - n_launch
    launch_means = run_means.groupby(level="launch").mean()
    ss_launch = r * c * float(((launch_means - launch_means.mean()) ** 2).sum())
    df_launch = n_launch - 1
    ms_chunk = ss_chunk / df_chunk if df_chunk > 0 else math.nan
    ms_run = ss_run / df_run if df_run > 0 else math.nan
    ms_launch = ss_launch / df_launch if df_launch > 0 else math.nan
    var_run = (ms_run - ms_chunk) / c
    var_launch = (ms_launch - (ms_run if df_run > 0 else ms_chunk)) / (r * c)

    def sd(var: float) -> float:
        return math.nan if math.isnan(var) else math.sqrt(max(0.0, var))

    return {"sd_chunk": sd(ms_chunk), "sd_run": sd(var_run), "sd_launch": sd(var_launch)}


def kept(chunks: pd.DataFrame, quick: bool) -> pd.Series:
    """Which rows belong to a chunk that counts: every target counted cleanly and, unless a
    smoke run, the machine was quiet."""
    ok = chunks.groupby(CHUNK)["valid"].transform("all")
    if not quick:
        ok &= chunks["foreign_cores"] <= QUIET_MAX_CORES
    return ok


def valid_chunks(chunks: pd.DataFrame, quick: bool) -> pd.DataFrame:
    """The chunks that count (`kept`): one row per chunk and compared mode, its log ratio as
    `value`."""
    rows = chunks[kept(chunks, quick) & chunks["log_ratio"].notna()]
    return rows.rename(columns={"log_ratio": "value"})


def rates_together(chunks: pd.DataFrame, baseline: str, quick: bool = False) -> pd.DataFrame:
    """Per compared mode, scenario and slice length: how much each of the two modes' own
    rates spread over the chunks that count (the sd of its log) and how closely they moved
    together (the correlation of their logs). The log ratio's variance is the two rates'
    less twice their covariance: what the machine's drift does to both modes alike cancels
    in the ratio; what it does to one mode only stays in it, however close the slices."""
    logs = np.log(chunks[kept(chunks, quick)].pivot_table(index=CHUNK, columns="mode",
                                                          values="rate"))  # fmt: skip
    out = []
    for mode in (m for m in logs.columns if m != baseline):
        for (scenario, slice_s), g in logs.groupby(level=["scenario", "slice_s"]):
            out.append({
                "mode": mode, "scenario": scenario, "slice_s": slice_s,
                "sd_rate": float(g[mode].std()), "sd_rate_baseline": float(g[baseline].std()),
                "rates_correlation": float(g[mode].corr(g[baseline])),
            })  # fmt: skip
    return pd.DataFrame(out)


def summarise(chunks: pd.DataFrame, quick: bool = False) -> pd.DataFrame:
    """Per compared mode, scenario and slice length: the ratio with its 95% interval, the
    three components, and the bias against the longest slice with its interval."""
    d = valid_chunks(chunks, quick)
    out = []
    for (mode, scenario), by_mode in d.groupby(["mode", "scenario"]):
        longest = by_mode["slice_s"].max()
        base = by_mode[by_mode["slice_s"] == longest]
        for slice_s, g in by_mode.groupby("slice_s"):
            unit, means = unit_means(g)
            centre, low, high = interval(means)
            # The bias: this slice's log ratio less the longest slice's, unit by unit.
            _, base_means = unit_means(base)
            paired = (means - base_means).dropna() if unit != "chunks" else pd.Series([])
            bias, bias_low, bias_high = interval(paired) if len(paired) else (math.nan,) * 3
            out.append({
                "mode": mode, "scenario": scenario, "slice_s": slice_s, "chunks": len(g),
                "units": f"{len(means)} {unit}", "ratio": math.exp(centre),
                "ci_low": math.exp(low), "ci_high": math.exp(high), **components(g),
                "bias": math.exp(bias), "bias_low": math.exp(bias_low),
                "bias_high": math.exp(bias_high),
            })  # fmt: skip
    return pd.DataFrame(out)


def table(summary: pd.DataFrame, baseline: str) -> str:
    """The summary as Markdown tables, one per compared mode."""
    parts = []
    for mode, s in summary.groupby("mode", sort=False):
        longest = s["slice_s"].max()
        parts.append(f"{mode_label(mode)} / {mode_label(baseline)}:\n")
        parts.append(
            f"| scenario | slice s | chunks (units) | ratio (95% CI) | sd within a run "
            f"| sd between runs | sd between launches | against {longest:g} s slices (95% CI) |"
        )
        parts.append("|---|---:|---:|---|---:|---:|---:|---|")
        for r in s.itertuples():
            bias = _ci(r.bias, r.bias_low, r.bias_high) if r.slice_s != longest else "-"
            parts.append(
                f"| {scenario_label(r.scenario)} | {r.slice_s:g} | {r.chunks} ({r.units}) "
                f"| {_ci(r.ratio, r.ci_low, r.ci_high)} | {_num(r.sd_chunk)} | {_num(r.sd_run)} "
                f"| {_num(r.sd_launch)} | {bias} |"
            )
        parts.append("")
    return "\n".join(parts)


def read(folder: Path) -> tuple[pd.DataFrame, dict]:
    """A measured folder's chunks and the settings it was measured with (seed.json)."""
    return pd.read_csv(folder / CHUNKS_FILE), json.loads((folder / SEED_FILE).read_text())


def variance_drop(summary: pd.DataFrame) -> pd.DataFrame:
    """Per compared mode, scenario and slice: how many times smaller the variance of a
    chunk's log ratio is than at the longest slice (back to back): within a run
    (`variance_drop`), and in all, its three components together (`total_drop`; a component
    the data cannot estimate counts as 0)."""
    out = summary.copy()
    parts = out[["sd_chunk", "sd_run", "sd_launch"]].fillna(0.0)
    out["sd_total"] = (parts**2).sum(axis=1) ** 0.5
    longest = out.groupby(["mode", "scenario"])["slice_s"].transform("max")
    for sd, drop in (("sd_chunk", "variance_drop"), ("sd_total", "total_drop")):
        at_longest = out[out["slice_s"] == longest].set_index(["mode", "scenario"])[sd]
        ref = out.set_index(["mode", "scenario"]).index.map(at_longest)
        out[drop] = (ref.to_numpy() / out[sd]) ** 2
    return out


def _fold(x: float) -> str:
    """How many times smaller a variance is ("35 times smaller"), or larger when it grew."""
    times, which = (x, "smaller") if x >= 1 else (1 / x, "larger")
    return f"{times:.0f} times {which}" if times >= 10 else f"{times:.2g} times {which}"


def block_spread(row, windows: int) -> float:
    """The sd of a block's log ratio in a study whose block is one launch with `windows`
    interleaved windows of the cell (each as long as a chunk's share of a mode): the launch's
    and the run's components whole, the chunks' averaged over the windows."""
    parts = [0.0 if math.isnan(x) else x for x in (row.sd_launch, row.sd_run)]
    return math.sqrt(parts[0] ** 2 + parts[1] ** 2 + row.sd_chunk**2 / windows)


def predicted_halfwidth_pct(row, windows: int, blocks: int) -> float:
    """The 95% half-width (%) these components predict for `blocks` blocks."""
    half = t_quantile(0.975, blocks - 1) * block_spread(row, windows) / math.sqrt(blocks)
    return 100 * (math.exp(half) - 1)


def schedule_text(summary: pd.DataFrame, study: str, params, tool: str = "k6") -> str:
    """What the components, measured with `tool`, predict for a study's interleaved profile
    (`params`, a StudyParams) that loads with it: the half-width of its focus ratios after
    its first blocks, and the blocks Stein's rule would then set for its target."""
    rows = summary[summary["slice_s"] == window_design.slice_s(params)]
    if rows.empty or params.target_halfwidth_pct is None or tool not in params.tools:
        return ""
    n0, w, target = params.repetitions, params.windows, params.target_halfwidth_pct
    parts = []
    for r in rows.itertuples():
        spread = block_spread(r, w)
        parts.append(
            f"{scenario_label(r.scenario)} ±{predicted_halfwidth_pct(r, w, n0):.1f}% after "
            f"{n0} blocks, {blocks_for_halfwidth(spread, n0, target)} blocks for ±{target:g}%"
        )
    return (
        f"For {study}'s paper profile ({window_design.slice_s(params):g} s slices, {w} "
        f"window{'s' if w > 1 else ''} a block, {n0} blocks first, "
        f"target ±{target:g}%), these components predict: {'; '.join(parts)} "
        f"(Stein's rule, docs above; capped by max_repetitions {params.max_repetitions} and "
        f"max_minutes {params.max_minutes:g})."
    )


def tool_and_connections(setup: dict) -> tuple[str, int]:
    """The load tool and its connections (k6: VUs) a folder was measured with (seed.json)."""
    # The first characterisation (k6) recorded no tool, and its VUs as "vus".
    return setup.get("tool", "k6"), setup.get("connections", setup.get("vus"))


def method_block(folder: Path, shown_as: str, profiles: dict | None = None) -> str:
    """docs/method.md's account of the characterisation in `folder` (named `shown_as`): what
    was measured, the table, how much of the variance each slice length removes, and what it
    predicts for each interleaved profile in `profiles` (study id -> StudyParams)."""
    chunks, setup = read(folder)
    summary = variance_drop(summarise(chunks, quick=bool(setup.get("quick"))))
    baseline = setup["modes"][1]
    slices = ", ".join(f"{s:g}" for s in setup["slices"])
    tool, connections = tool_and_connections(setup)
    if TOOLS[tool].switches_target:
        fired = f"{tool}, {connections} VUs"
    else:
        fired = f"{tool} at {connections} connections, one run per slice"
    head = (
        f"Measured alone here (`{shown_as}`; `benchmarks/interleave_components.py "
        f"--analyse` prints it again): {setup['launches']} fresh launches of "
        f"{' and '.join(mode_label(m) for m in setup['modes'])}, each warmed up, then "
        f"{setup['runs']} runs per launch, each a pass over "
        f"{', '.join(scenario_label(s) for s in setup['scenarios'])} and slices of {slices} s "
        f"in a random order, {setup['chunks']} interleaved chunks of {setup['chunk_s']:g} s "
        f"each ({fired}; every mode half of each chunk). A chunk counts when "
        f"both counts agreed and the machine was quiet ({len(valid_chunks(chunks, False))} of "
        f"{len(chunks) // chunks['mode'].nunique()} chunks). The log ratio's sd per chunk is "
        "split into its part within a run, between runs of one launch and between launches "
        "(nested ANOVA; 0 when the data cannot tell it from 0):"
    )
    longest = summary["slice_s"].max()
    drops: dict[str, list[str]] = {"variance_drop": [], "total_drop": []}
    for (_, scenario), g in summary.groupby(["mode", "scenario"], sort=False):
        shorter = g[g["slice_s"] < longest]
        for drop, said in drops.items():
            pieces = ", ".join(f"{_fold(getattr(r, drop))} at {r.slice_s:g} s"
                               for r in shorter.itertuples())  # fmt: skip
            said.append(f"{scenario_label(scenario)}: {pieces}")
    tail = (
        f"Against {longest:g} s slices (one mode after the other, as back-to-back windows), "
        f"the variance of a chunk's log ratio within a run is "
        f"{'; '.join(drops['variance_drop'])}. In all (within a run, between runs and "
        f"between launches together) it is {'; '.join(drops['total_drop'])}."
    )
    if not TOOLS[tool].switches_target:
        tail += " " + gaps_text(chunks)
    schedules = [schedule_text(summary, sid, p, tool) for sid, p in (profiles or {}).items()]
    return "\n\n".join(p for p in [head, table(summary, baseline).rstrip(), tail, *schedules]
                       if p)  # fmt: skip


def spread_block(folders: list[Path], shown_as: list[str]) -> str:
    """docs/method.md's comparison of characterisations that differ in one setting each (the
    pair, the tool and its design, the connections, the test app's environment), one row per
    folder and scenario: where the ratio's spread lies, within a run or between launches."""
    rows = []
    for folder, name in zip(folders, shown_as, strict=True):
        chunks, setup = read(folder)
        tool, connections = tool_and_connections(setup)
        design = ("one run switching target" if TOOLS[tool].switches_target
                  else "alternating runs")  # fmt: skip
        env = " ".join(f"{k}={v}" for k, v in (setup.get("app_env") or {}).items())
        pair = " / ".join(mode_label(m) for m in setup["modes"])
        processor = setup.get("cpu_model", "not recorded")
        per_launch = (f"{setup['launches']} x {setup['chunks']} chunks of "
                      f"{setup['chunk_s']:g} s")  # fmt: skip
        # How quiet: other processes' CPU and steal at their worst over the folder's chunks.
        quiet = (f"others at most {chunks['foreign_cores'].max():.2f} cores, steal at most "
                 f"{chunks['cpu_steal_pct'].max():.1f}%")  # fmt: skip
        quick = bool(setup.get("quick"))
        summary = summarise(chunks, quick).merge(
            rates_together(chunks, setup["modes"][1], quick), on=["mode", "scenario", "slice_s"]
        )
        for r in summary.itertuples():
            rows.append(
                f"| `{name}` | {processor} | {pair} | {tool}, {connections} "
                f"{'VUs' if tool == 'k6' else 'connections'}, {design} in {r.slice_s:g} s "
                f"slices | {env or 'defaults'} | {scenario_label(r.scenario)} | {per_launch} | "
                f"{r.chunks} ({quiet}) | "
                f"{_ci(r.ratio, r.ci_low, r.ci_high)} | {_num(r.sd_chunk)} | "
                f"{_num(r.sd_launch)} | {_num(r.sd_rate, 3)} / {_num(r.sd_rate_baseline, 3)} | "
                f"{_num(r.rates_correlation, 2)} |"
            )
    return "\n".join([
        "Measured alone here, each launch fresh, one run per launch "
        "(`benchmarks/interleave_components.py`; with one run a launch, the between-launches "
        "sd holds what would lie between runs). A chunk counts when both counts agreed and the "
        f"machine was quiet (other processes at most {QUIET_MAX_CORES:g} cores). The sd are "
        "of logs: a chunk's log ratio, and each mode's own log rate (the ratio's first mode, "
        "then its second), which the two modes' correlation over the chunks links to the "
        "ratio's:",
        "",
        "| folder | processor | ratio | load | the test app's environment | scenario "
        "| launches x chunks | chunks kept (the machine) | ratio (95% CI) | sd within a run "
        "| sd between launches | each mode's rate: sd between chunks | the rates' correlation |",
        "|---|---|---|---|---|---|---|---|---|---:|---:|---:|---:|",
        *rows,
    ])  # fmt: skip


def gaps_text(chunks: pd.DataFrame) -> str:
    """Alternating runs: the time a chunk lost between its runs (the tool's start-up and
    exit, outside every run's clock), on average per slice length."""
    per_chunk = chunks.groupby(CHUNK).agg(gap=("gap_total_s", "first"), runs=("seconds", "sum"))
    gaps = per_chunk["gap"].groupby(level="slice_s").mean()
    chunk_s = round(float(per_chunk["runs"].median()), 1)
    said = ", ".join(f"{g:.2f} s at {s:g} s slices" for s, g in gaps.items())
    return (
        f"Between its runs, outside every run's clock (the tool's start-up and exit), a "
        f"chunk of {chunk_s:g} s of runs lost on average {said}."
    )


def _num(x: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}f}"


def _ci(centre: float, low: float, high: float) -> str:
    if math.isnan(centre):
        return "n/a"
    if math.isnan(low):
        return f"{centre:.3f} (no interval)"
    return f"{centre:.3f} ({low:.3f}-{high:.3f})"
