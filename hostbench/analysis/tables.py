"""Tables from results.csv: summaries, % of baseline, the paper side by side, CPU saturation.

Input is the harness's tidy contract (one row per run, hostbench.study.RESULT_COLUMNS);
every function returns a tidy DataFrame for the notebooks to show or plot. No plotting here.
"""

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..catalog import DEFAULT_BASELINE, MODES, PAPER_BASELINE, SCENARIOS
from ..errors import BadInput

# Display order: the catalog's (the paper's scenarios first, Linux modes before Windows ones).
SCENARIO_ORDER = tuple(SCENARIOS)
MODE_ORDER = tuple(MODES)

# The columns this module reads; a results file without them cannot be analysed.
REQUIRED_COLUMNS = (
    "run_key",
    "mode",
    "scenario",
    "tool",
    "concurrency",
    "block",
    "rps",
    "latency_p50_ms",
    "latency_p99_ms",
    "cpu_total_pct",
    "cpu_server_cores",
    "cpu_proxy_cores",
    "cpu_loadgen_cores",
    "machine_cores",
)
# One measurement setup: results are only comparable within the same one.
SETUP = ["scenario", "tool", "concurrency"]
GROUP = ["mode", *SETUP]
# Process groups whose CPU the harness samples, in stacking order.
CPU_GROUPS = ("server", "proxy", "loadgen")

VERDICT_HIGHER = "higher than the paper"
VERDICT_WITHIN = "within"
VERDICT_LOWER = "lower than the paper"


def load_results(path_or_run_dir: str | Path, valid_only: bool = True) -> pd.DataFrame:
    """Read a run's results.csv (or the file itself), checked and with mode/scenario ordered."""
    path = Path(path_or_run_dir)
    if path.is_dir():
        path = path / "results.csv"
    if not path.is_file():
        raise BadInput(f"no results file at {path}")
    return prepare(pd.read_csv(path), source=str(path), valid_only=valid_only)


def prepare(df: pd.DataFrame, source: str = "results", valid_only: bool = True) -> pd.DataFrame:
    """Check the columns and give mode and scenario their display order (paper order first).

    Rows marked invalid (errors, non-2xx responses, counts that disagree) are left
    out unless valid_only is False; how many is in the result's attrs["left_out_invalid"].
    """
    if "block" not in df.columns and "repetition" in df.columns:
        df = df.rename(columns={"repetition": "block"})  # results of hostbench < 0.2
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise BadInput(f"{source} lacks column(s): {', '.join(missing)}")
    df = df.copy()
    left_out = 0
    if valid_only and "valid" in df.columns:
        valid = df["valid"].astype(str).str.lower().isin(["true", "1"])
        left_out = int((~valid).sum())
        df = df[valid].copy()
    df.attrs["left_out_invalid"] = left_out + df.attrs.get("left_out_invalid", 0)
    df["mode"] = _ordered(df["mode"], MODE_ORDER)
    df["scenario"] = _ordered(df["scenario"], SCENARIO_ORDER)
    return df


def _ordered(values: pd.Series, known: tuple[str, ...]) -> pd.Series:
    # Names the harness adds later (other articles' scenarios) go after the known ones.
    present = set(values.dropna().astype(str))
    extra = sorted(present - set(known))
    return pd.Categorical(values.astype(str), categories=[*known, *extra], ordered=True)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per mode, scenario, tool and concurrency: throughput spread over repetitions, means."""
    df = prepare(df)
    out = df.groupby(GROUP, observed=True, sort=True).agg(
        rps_mean=("rps", "mean"),
        rps_std=("rps", "std"),  # NaN for a single repetition: no spread to show
        n=("rps", "count"),
        rps_min=("rps", "min"),
        rps_max=("rps", "max"),
        latency_p50_ms_mean=("latency_p50_ms", "mean"),
        latency_p99_ms_mean=("latency_p99_ms", "mean"),
        cpu_total_pct_mean=("cpu_total_pct", "mean"),
        cpu_server_cores_mean=("cpu_server_cores", "mean"),
        cpu_proxy_cores_mean=("cpu_proxy_cores", "mean"),
        cpu_loadgen_cores_mean=("cpu_loadgen_cores", "mean"),
    )
    return out.reset_index()


def relative_to_baseline(df: pd.DataFrame, baseline: str = DEFAULT_BASELINE) -> pd.DataFrame:
    """Mean rps of every mode as % of the baseline mode's mean in the same setup (baseline = 100).

    A setup (scenario, tool, concurrency) the baseline did not run gets NaN.
    """
    summary = summarize(df)
    _require_mode(summary, baseline, "baseline mode")
    base = summary.loc[summary["mode"] == baseline, [*SETUP, "rps_mean"]]
    base = base.rename(columns={"rps_mean": "baseline_rps_mean"})
    out = summary[[*GROUP, "n", "rps_mean"]].merge(base, on=SETUP, how="left")
    out["pct_of_baseline"] = 100.0 * out["rps_mean"] / out["baseline_rps_mean"]
    out.insert(0, "baseline", baseline)
    return out


def cpu_per_request(df: pd.DataFrame) -> pd.DataFrame:
    """CPU time per request, in microseconds, of each process group: where a request's cost goes.

    cores / rps = CPU-seconds per request. The server's share is the app's work plus Kestrel's;
    the proxy's is what the extra hop costs on top; both are independent of how saturated the
    machine was, so they compare across modes even when rps differ.
    """
    summary = summarize(df)
    out = summary[[*GROUP, "rps_mean"]].copy()
    for group in CPU_GROUPS:
        out[f"{group}_us_per_request"] = (
            1e6 * summary[f"cpu_{group}_cores_mean"] / summary["rps_mean"]
        )
    return out


def _require_mode(df: pd.DataFrame, mode: str, what: str) -> None:
    present = [str(m) for m in df["mode"].unique()]
    if mode not in present:
        raise BadInput(
            f"{what} {mode!r} is not in the results; modes present: {', '.join(present)}"
        )


def compare_with_paper(
    df: pd.DataFrame,
    mapping: Mapping[str, str],
    baseline: str = DEFAULT_BASELINE,
    tolerance_pct: float = 10.0,
    paper: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Our % of baseline beside the paper's range, for each of our modes mapped to a paper mode.

    mapping: our mode -> paper mode, e.g. {"kestrel": "kestrel", "nginx-uds": "iis-inprocess"}.
    Our `baseline` stands for the paper's iis-outofprocess (100% in both). tolerance_pct widens
    the paper's range by that many percentage points on each side: the paper states most values
    as "about" one number, so an exact match is not expected. paper: the table of
    hostbench.reference.paper_ratios() (read from there when not given). Modes in the mapping
    that were not run are left out, so one mapping serves machines that run fewer modes.
    """
    if paper is None:
        from .reference import paper_ratios

        paper = paper_ratios()
    paper = _with_paper_baseline(paper)
    unknown = sorted(set(mapping) - set(MODE_ORDER))
    if unknown:
        raise BadInput(f"unknown mode(s) in mapping: {', '.join(unknown)}; known: {MODE_ORDER}")
    unmapped = sorted(set(mapping.values()) - set(paper["mode"]))
    if unmapped:
        known = ", ".join(sorted(set(paper["mode"])))
        raise BadInput(f"paper mode(s) {', '.join(unmapped)} not in the paper's table: {known}")

    ours = relative_to_baseline(df, baseline)
    ours = ours[ours["mode"].astype(str).isin(list(mapping))].copy()
    if ours.empty:
        raise BadInput(f"none of the mapped modes ({', '.join(mapping)}) is in the results")
    ours["our_mode"] = ours["mode"].astype(str)
    ours["paper_mode"] = ours["our_mode"].map(mapping)
    ours["scenario"] = ours["scenario"].astype(str)

    paper = paper.rename(
        columns={
            "mode": "paper_mode",
            "ratio_low_pct": "paper_low_pct",
            "ratio_high_pct": "paper_high_pct",
        }
    ).astype({"scenario": str})
    # The paper's own hedge ("about", "up to"), when the table has it, qualifies the verdict.
    extra = ["qualifier"] if "qualifier" in paper.columns else []
    out = ours.merge(
        paper[["paper_mode", "scenario", "paper_low_pct", "paper_high_pct", *extra]],
        on=["paper_mode", "scenario"],
        how="inner",  # scenarios the paper did not measure have nothing to compare with
    )
    out = out.rename(columns={"pct_of_baseline": "ours_pct"})
    low = out["paper_low_pct"] - tolerance_pct
    high = out["paper_high_pct"] + tolerance_pct
    out["within"] = (out["ours_pct"] >= low) & (out["ours_pct"] <= high)
    out["verdict"] = np.select(
        [out["ours_pct"].isna(), out["ours_pct"] > high, out["ours_pct"] < low],
        ["n/a (no baseline run)", VERDICT_HIGHER, VERDICT_LOWER],
        default=VERDICT_WITHIN,
    )
    out["scenario"] = _ordered(out["scenario"], SCENARIO_ORDER)
    columns = [
        "paper_mode",
        "our_mode",
        "scenario",
        "tool",
        "concurrency",
        "paper_low_pct",
        "paper_high_pct",
        "ours_pct",
        "within",
        "verdict",
        *extra,
    ]
    # "mode" is still ordered: our modes in the package's order, scenarios in the paper's.
    out = out.sort_values(["mode", "scenario", "tool", "concurrency"])
    return out[columns].reset_index(drop=True)


def _with_paper_baseline(paper: pd.DataFrame) -> pd.DataFrame:
    # The paper's baseline is 100% by definition; add it so a mode can be mapped onto it.
    if PAPER_BASELINE in set(paper["mode"]):
        return paper
    base = pd.DataFrame(
        {
            "mode": PAPER_BASELINE,
            "scenario": list(SCENARIO_ORDER),
            "ratio_low_pct": 100.0,
            "ratio_high_pct": 100.0,
            "quote": "baseline (100%) by definition",
        }
    )
    return pd.concat([paper, base], ignore_index=True)


def saturation(df: pd.DataFrame, threshold_pct: float = 90.0) -> pd.DataFrame:
    """Per run: how busy the machine was, and which process group used the CPU.

    The paper chose its number of virtual users so that the CPU stayed at 100%; `saturated`
    says whether a run got there (cpu_total_pct >= threshold_pct). Cores are CPU-seconds per
    second; `other` is the rest of the busy time (kernel work outside the watched processes,
    other programs). Shares are % of all the machine's cores.
    """
    df = prepare(df)
    out = df[["run_key", *GROUP, "block", "cpu_total_pct", "machine_cores"]].copy()
    if "cpu_total_pct_max" in df.columns:
        out.insert(
            out.columns.get_loc("cpu_total_pct") + 1, "cpu_total_pct_max", df["cpu_total_pct_max"]
        )
    for group in CPU_GROUPS:
        out[f"{group}_cores"] = df[f"cpu_{group}_cores"]
    busy_cores = df["cpu_total_pct"] / 100.0 * df["machine_cores"]
    watched = out[[f"{g}_cores" for g in CPU_GROUPS]].fillna(0.0).sum(axis=1)
    # Sampling of the total and of processes differs slightly; never report negative "other".
    out["other_cores"] = (busy_cores - watched).clip(lower=0.0)
    for group in (*CPU_GROUPS, "other"):
        out[f"{group}_share_pct"] = 100.0 * out[f"{group}_cores"] / out["machine_cores"]
    cores = out[[f"{g}_cores" for g in (*CPU_GROUPS, "other")]].fillna(0.0)
    out["busiest"] = cores.idxmax(axis=1).str.removesuffix("_cores")
    out["saturated"] = out["cpu_total_pct"] >= threshold_pct
    return out.reset_index(drop=True)


def pct_change(a: float, b: float) -> float:
    """Change from a to b in % of a: pct_change(1000, 1700) == 70.0."""
    if a == 0:
        raise BadInput("pct_change: the reference value is 0")
    return 100.0 * (b - a) / a


def describe_ratio(pct_of_baseline: float, digits: int = 0) -> str:
    """A % of baseline as the paper says it: 170 -> "+70%", 85 -> "-15%", 100 -> "+0%"."""
    if pct_of_baseline is None or np.isnan(pct_of_baseline):
        return "n/a"
    change = round(pct_of_baseline - 100.0, digits)
    return f"{change:+.{digits}f}%"


def describe_range(values, digits: int = 0) -> str:
    """Several % of baseline as a range for prose: [170, 290, 310] -> "+70% to +210%"."""
    values = pd.Series(values, dtype=float).dropna()
    if values.empty:
        return "n/a"
    low, high = describe_ratio(values.min(), digits), describe_ratio(values.max(), digits)
    return low if low == high else f"{low} to {high}"


def load_environment(run_dir: str | Path) -> dict:
    """The machine a study ran on, as the harness recorded it (environment.json)."""
    path = Path(run_dir) / "environment.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"no environment record at {path}: run the study first") from None


def load_params(run_dir: str | Path) -> dict:
    """The params a study ran with, as the harness recorded them (params.json)."""
    path = Path(run_dir) / "params.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"no params record at {path}: run the study first") from None


def load_commands(run_dir: str | Path) -> pd.DataFrame:
    """The load command of one run per tool and concurrency, as the study issued it (each
    run's load/command.txt; ports differ between runs)."""
    run_dir = Path(run_dir)
    results = load_results(run_dir, valid_only=False)
    first = results.drop_duplicates(["tool", "concurrency"]).sort_values(["tool", "concurrency"])
    rows = []
    for r in first.itertuples(index=False):
        path = run_dir / r.run_key / "load" / "command.txt"
        command = "(not recorded)"
        if path.is_file():  # the tool by its name, not the path it was run from
            argv = shlex.split(path.read_text())
            # Files the tool writes into the run folder by their names in it, for reading.
            args = [a.removeprefix(f"{path.parent}/") for a in argv[1:]]
            command = shlex.join([Path(argv[0]).name, *args])
        rows.append((r.tool, r.concurrency, command))
    return pd.DataFrame(rows, columns=["tool", "concurrency", "command"])


def warmup_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per mode and concurrency: how many runs' warm-ups reached steady throughput before
    their limit (warmup_max_s), and how long they took."""
    df = prepare(df)
    steady = df["warmup_steady"].astype(str).str.lower().isin(["true", "1"])
    out = df.assign(steady=steady).groupby(["mode", "concurrency"], observed=True, sort=True)
    out = out.agg(
        runs=("steady", "size"),
        steady=("steady", "sum"),
        warmup_s_mean=("warmup_s", "mean"),
        warmup_max_s=("warmup_max_s", "max"),
    )
    return out.reset_index()


def write_ratios(run_dir: str | Path, baseline: str | None = None) -> Path:
    """ratios.csv beside results.csv: every mode to the baseline, paired within blocks, 95% CI.

    baseline: default the study's own (params.json), else the catalog's default.
    """
    from .intervals import paired_ratios

    run_dir = Path(run_dir)
    results = load_results(run_dir, valid_only=False)  # paired_ratios counts the invalid ones
    if baseline is None:
        params_path = run_dir / "params.json"
        recorded = json.loads(params_path.read_text()) if params_path.exists() else {}
        baseline = recorded.get("baseline") or DEFAULT_BASELINE
    ratios = paired_ratios(results, baseline)
    path = run_dir / "ratios.csv"
    tmp = path.with_suffix(".csv.tmp")
    ratios.to_csv(tmp, index=False)
    tmp.replace(path)
    return path


def styled(df: pd.DataFrame, formats: Mapping[str, object] | None = None, na_rep: str = "-"):
    """A table for display: numbers with thousands separators and no decimals unless
    `formats` gives a column its own format ("{:.1f}" or a function), `na_rep` where a value
    is missing (a row the article has but we cannot run), text left-aligned, no index."""
    formats = {c: f for c, f in (formats or {}).items() if c in df.columns}
    numeric = [c for c in df.columns if pd.api.types.is_float_dtype(df[c]) and c not in formats]
    text = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    styler = df.style.hide(axis="index").format(na_rep=na_rep)
    styler = styler.format("{:,.0f}", subset=numeric, na_rep=na_rep)
    for column, fmt in formats.items():
        styler = styler.format(fmt, subset=[column], na_rep=na_rep)
    headers = [
        {"selector": f"th.col_heading.col{i}", "props": "text-align: left"}
        for i, c in enumerate(df.columns)
        if c in text
    ]
    return styler.set_properties(subset=text, **{"text-align": "left"}).set_table_styles(headers)
