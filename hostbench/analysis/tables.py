"""Tables from results.csv: summaries, % of baseline, the paper side by side, CPU saturation.

Input is the harness's tidy contract (one row per run, the columns hostbench.results
declares); every function returns a tidy DataFrame for the notebooks to show or plot. No
plotting here.
"""

import copy
import json
import re
import shlex
from pathlib import Path

import pandas as pd

from .. import results as schema
from ..catalog import MODES, SCENARIOS
from ..errors import BadInput
from ..load import LOAD_FILE, Load, read_load
from ..params import PARAMS_FILE, StudyParams, settings_text
from ..programs import proxies
from .digits import write_csv
from .kept import content_key, keep

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


def load_results(path_or_run_dir: str | Path, valid_only: bool = True) -> pd.DataFrame:
    """Read a run's results.csv (or the file itself), typed (hostbench.results), checked and
    with mode/scenario ordered.

    Typed, with the run's plan (PLAN), once per content of the file and its params.json
    (kept.py); the caller gets its own copy."""
    path = Path(path_or_run_dir)
    file = path / schema.RESULTS_FILE if path.is_dir() else path

    def made() -> pd.DataFrame:
        df = prepare(schema.read_results(path), str(path), valid_only)
        df.attrs[PLAN] = _plan_of(file.parent)
        return df

    key = ("results", content_key(file, file.parent / PARAMS_FILE), valid_only)
    return keep(key, made).copy()


# attrs key of a run's results: its sequential.Plan, or its two_stage.TwoStage (None: a
# fixed-length run). Every interval drawn from a run that stopped when decided is a repeated
# one, every one of a two-stage run Stein's (intervals.paired_ratios reads it), so its
# headline, tables and ratios.csv state the intervals its verdicts are judged by.
PLAN = "plan"


def _plan_of(run_dir: Path):
    from .sequential import Plan
    from .two_stage import TwoStage

    if not (run_dir / PARAMS_FILE).is_file():
        return None
    params = load_params(run_dir)
    return Plan.of(params) or TwoStage.of(params, run_dir)


def prepare(df: pd.DataFrame, source: str = "results", valid_only: bool = True) -> pd.DataFrame:
    """Type the columns (hostbench.results), check them and give mode and scenario their
    display order (paper order first).

    Rows marked invalid (errors, non-2xx responses, counts that disagree) are left out
    unless valid_only is False (schema.is_valid: a missing verdict counts); how many is in
    the result's attrs["left_out_invalid"].
    """
    df = schema.typed(df, source)  # also names older results' columns as today's
    df = schema.per_launch(df)  # the launch is the unit: its windows become one row
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise BadInput(f"{source} lacks column(s): {', '.join(missing)}")
    left_out = 0
    if valid_only:
        valid = schema.is_valid(df)
        left_out = int((~valid).sum())
        df = df[valid].copy()
    df.attrs["left_out_invalid"] = left_out + df.attrs.get("left_out_invalid", 0)
    df["mode"] = _ordered(df["mode"], MODE_ORDER)
    df["scenario"] = _ordered(df["scenario"], SCENARIO_ORDER)
    return df


def ordered_modes(values: pd.Series) -> pd.Series:
    """Mode ids in their display order (as prepare gives the mode column)."""
    return _ordered(values, MODE_ORDER)


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


def response_checks(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Whether every number is a real count of successful responses, per group of runs (`by`,
    e.g. ["mode"]; None: one row for all runs): runs, transport errors and non-2xx responses
    summed, and the largest client-server count difference in % (count_diff_pct, either
    sign)."""
    df = df.assign(_all="all runs")
    keys = by or ["_all"]
    diff = pd.to_numeric(df["count_diff_pct"], errors="coerce").abs()
    out = (
        df.assign(_diff=diff)
        .groupby(keys, observed=True, sort=True)
        .agg(
            runs=("rps", "size"),
            errors=("errors", "sum"),
            non_2xx=("non_2xx", "sum"),
            count_diff_pct_max=("_diff", "max"),
        )
    )
    out = out.reset_index()
    return out.rename(columns={"_all": "runs checked"})


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


def shares_windows(df: pd.DataFrame) -> bool:
    """Whether some modes were measured in one interleaved window (their rows share its
    start): the machine's readings of that window are theirs alike."""
    if "started_at" not in df.columns or "mode" not in df.columns:
        return False
    return bool((df.groupby(_window_of(df))["mode"].nunique() > 1).any())


def _window_of(df: pd.DataFrame) -> pd.Series:
    """Which window each row was measured in: its start, which the modes of an interleaved
    window share; a row without one is a window of its own."""
    if "started_at" not in df.columns:
        return df["run_key"]
    return df["started_at"].astype(object).where(df["started_at"].notna(), df["run_key"])


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
    # Sampling of the total and of processes differs slightly; never report negative "other".
    out["other_cores"] = _rest_of_window(df, busy_cores, out).clip(lower=0.0)
    for group in (*CPU_GROUPS, "other"):
        out[f"{group}_share_pct"] = 100.0 * out[f"{group}_cores"] / out["machine_cores"]
    cores = out[[f"{g}_cores" for g in (*CPU_GROUPS, "other")]].fillna(0.0)
    out["busiest"] = cores.idxmax(axis=1).str.removesuffix("_cores")
    out["saturated"] = out["cpu_total_pct"] >= threshold_pct
    return out.reset_index(drop=True)


def _rest_of_window(df: pd.DataFrame, busy_cores: pd.Series, cores: pd.DataFrame) -> pd.Series:
    """The cores the watched processes leave of the machine's busy time, per window.

    A window one mode had alone: its busy cores less its watched ones. An interleaved window
    (rows sharing its start): the busy and load generator cores are the window's, while each
    mode's app and proxy cores are per second of its own slices, and the modes had equal time,
    so the window's rest is its busy cores less the load generator's and the mean of the
    modes' own; every mode of the window gets that one value."""
    own = cores[[f"{g}_cores" for g in CPU_GROUPS if g != "loadgen"]].fillna(0.0).sum(axis=1)
    loadgen = cores["loadgen_cores"].fillna(0.0)
    by_window = _window_of(df).to_numpy()
    return (
        busy_cores.groupby(by_window).transform("mean")
        - loadgen.groupby(by_window).transform("mean")
        - own.groupby(by_window).transform("mean")
    )


def _record(run_dir: str | Path, name: str) -> dict:
    run_dir = Path(run_dir)
    if run_dir.is_file():  # results.csv, as a study's measure() returns it: its run folder
        run_dir = run_dir.parent
    path = run_dir / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"no {name} at {path.parent}: run the study first") from None


def load_environment(run_dir: str | Path, as_recorded: bool = False) -> dict:
    """The machine a study ran on (environment.json): over ssh the server host's, with the
    versions read on each host (`where_it_ran`; as_recorded: the file as it is); each tool's
    version as a reader wants it (version_text)."""
    env = _record(run_dir, "environment.json")
    if not as_recorded:
        env = where_it_ran(env)
    if isinstance(env.get("tools"), dict):
        env["tools"] = {name: version_text(v) for name, v in env["tools"].items()}
    return env


# The processor beside its model name, where environment.json records them
# (harness/environment.py's cpu_identity; older runs lack them).
CPU_IDENTITY = ("cpu_vendor", "cpu_family", "cpu_model_number", "cpu_stepping")
_IDENTITY_WORDS = {"cpu_vendor": "", "cpu_family": "family ", "cpu_model_number": "model ",
                   "cpu_stepping": "stepping "}  # fmt: skip


# What environment.json reads of each host over ssh (launch/remote_helper.py's machine).
HOST_MACHINE = ("os", "kernel", "cpu_model", "cpu_cores_logical", "memory_gib", *CPU_IDENTITY)


def processor(env: dict) -> str:
    """The processor as recorded: its model name, and its vendor, family, model and stepping
    where recorded: "Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 106, stepping
    6)"; "not recorded" without a model name."""
    name = env.get("cpu_model") or "not recorded"
    known = processor_identity(env)
    return f"{name} ({', '.join(known)})" if known else name


def processor_identity(env: dict, keys: tuple[str, ...] = CPU_IDENTITY) -> list[str]:
    """The identity environment.json records beside the model name, in words ("family 6",
    "model 106"); none of what it does not record."""
    return [f"{_IDENTITY_WORDS[key]}{env[key]}" for key in keys
            if env.get(key) not in (None, "", "unknown")]  # fmt: skip


def where_it_ran(env: dict) -> dict:
    """Over ssh (environment.json's `hosts`) a study ran on two hosts, not on the machine the
    harness ran from. The server host's machine and .NET runtimes, the proxies' versions read
    there and the load host's tools stand in for that machine's, so every table and sentence
    naming "the machine" names the server host; `load_host` is the load host's machine, for
    those that name both. Without `hosts`, env as it is."""
    hosts = env.get("hosts")
    if not hosts:
        return env
    server, loadgen = hosts["server"], hosts["loadgen"]
    return {
        **env,
        **{key: server.get(key) for key in HOST_MACHINE},
        "cpu_cores_physical": None,  # not read over ssh
        "dotnet": {**env.get("dotnet", {}), "runtimes": server.get("dotnet_runtimes", "unknown")},
        "tools": {**env.get("tools", {}), **server.get("tools", {}), **loadgen.get("tools", {})},
        "load_host": {key: loadgen.get(key) for key in HOST_MACHINE},
    }


def version_text(raw: str) -> str:
    """A tool's version line without its banner and version-control keywords:
    "This is ApacheBench, Version 2.3 <$Revision: 1903618 $>" -> "ApacheBench, Version 2.3"."""
    text = re.sub(r"<?\$(?:Revision|Id|Rev)\b[^$]*\$>?", "", str(raw))
    text = re.sub(r"^This is ", "", text.strip())
    return " ".join(text.split()).rstrip(",;:")


def _load_folder(run_dir: str | Path, run_key: str) -> Path:
    """Where a run's load is recorded: its load/ folder, or, for a window of alternating
    runs (a folder per run in load/, measure/alternate.py), its first run's folder."""
    folder = Path(run_dir) / run_key / "load"
    if (folder / LOAD_FILE).is_file():
        return folder
    runs = sorted(p for p in folder.glob("*") if (p / LOAD_FILE).is_file())
    return runs[0] if runs else folder


def run_load(run_dir: str | Path, run_key: str) -> Load | None:
    """The load a run fired, typed (its load.json): for a window of alternating runs, one of
    them (one slice); None for a run recorded before runs kept one, or for a mode measured
    in another mode's interleaved window (that mode's folder holds the window's load)."""
    return read_load(_load_folder(run_dir, run_key))


def proxy_versions(env: dict) -> str:
    """The reverse proxies' versions an environment record names (hostbench/programs), "; "-joined
    (records made before the yarp mode have no yarp entry)."""
    tools = env["tools"]
    return "; ".join(tools[p.name] for p in proxies() if p.name in tools)


def load_commands(run_dir: str | Path) -> pd.DataFrame:
    """The load of one run per tool and concurrency, as the study fired it: in words from
    the run's load.json ("(not recorded)" for a run without one), and its command.txt as
    written, but for the tool and the files in the run folder by their names (a page never
    shows this machine's folders; ports differ between runs)."""
    run_dir = Path(run_dir)
    results = load_results(run_dir, valid_only=False)
    # Of an interleaved window's rows only the first mode's folder holds its load: a row
    # whose folder records one comes first.
    recorded = [(_load_folder(run_dir, key) / LOAD_FILE).is_file() for key in results["run_key"]]
    first = (results.assign(_recorded=recorded)
             .sort_values("_recorded", ascending=False, kind="stable")
             .drop_duplicates(["tool", "concurrency"])
             .sort_values(["tool", "concurrency"]))  # fmt: skip
    rows = []
    for r in first.itertuples(index=False):
        load = run_load(run_dir, r.run_key)
        folder = _load_folder(run_dir, r.run_key)
        path = folder / "command.txt"
        command = ""
        if path.is_file():  # the tool by its name, not the folder it was run from
            # The run's own files by name, wherever the folder was when it ran (a committed
            # run was measured in another checkout than the one reading it).
            text = re.sub(rf"\S*/{re.escape(r.run_key)}/load/(\d+-t\d+/)?", "",
                          path.read_text())  # fmt: skip
            # Over ssh, the load host's copy of that folder (launch.remote.Connection.folder).
            text = re.sub(r"\S*/hostbench\.\w+/\d+-load/", "", text)
            argv = shlex.split(text)
            command = shlex.join([Path(argv[0]).name, *argv[1:]]) if argv else ""
        described = load.describe() if load else "(not recorded)"
        if load and folder.name != "load":  # one of a window's alternating runs
            described = f"{described}: each of the window's alternating runs, one slice"
        rows.append((r.tool, r.concurrency, described, command or "(not recorded)"))
    return pd.DataFrame(rows, columns=["tool", "concurrency", "load", "command"])


def warmup_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per mode and concurrency: how many runs' warm-ups reached steady throughput before
    their limit (warmup_max_s), and how long they took."""
    df = prepare(df)
    steady = df["warmup_steady"].fillna(False).astype(bool)  # <NA>: no counter, not steady
    out = df.assign(steady=steady).groupby(["mode", "concurrency"], observed=True, sort=True)
    out = out.agg(
        runs=("steady", "size"),
        steady=("steady", "sum"),
        warmup_s_mean=("warmup_s", "mean"),
        warmup_max_s=("warmup_max_s", "max"),
    )
    return out.reset_index()


def warmed_up_together(df: pd.DataFrame) -> bool:
    """Whether the run's interleaved modes warmed up together in their window's slices
    (results column warmup_together; runs measured before it existed warmed up alone)."""
    return "warmup_together" in df and bool(df["warmup_together"].fillna(False).any())


# What ratios.csv compares: the rate, and the server side's CPU time per request, which a
# hypervisor's steal cannot bend (a stolen tick is no CPU second of the app's).
RATIO_MEASURES = ("rps", "cpu_us_per_request")


def with_cpu_per_request(df: pd.DataFrame) -> pd.DataFrame:
    """df with cpu_us_per_request: the CPU the app and its proxy used per request served, in
    microseconds (NaN where the app's CPU was not read)."""
    proxy = pd.to_numeric(df.get("cpu_proxy_cores"), errors="coerce")
    proxy = proxy.fillna(0.0) if proxy is not None else 0.0
    server = pd.to_numeric(df["cpu_server_cores"], errors="coerce")
    return df.assign(cpu_us_per_request=(server + proxy) / df["rps"].astype(float) * 1e6)


def write_ratios(run_dir: str | Path, baseline: str | None = None) -> Path:
    """ratios.csv beside results.csv: every mode to the baseline, paired within blocks, 95% CI,
    for each measure of RATIO_MEASURES (the `measure` column); a run that stopped when
    decided states its repeated intervals (sequential.py), as its claims do.

    baseline: default the study's own (params.json), else its first mode.
    """
    from .intervals import paired_ratios

    run_dir = Path(run_dir)
    results = load_results(run_dir, valid_only=False)  # paired_ratios counts the invalid ones
    if baseline is None:
        baseline = load_params(run_dir).baseline_mode
    ratios = pd.concat(
        [
            paired_ratios(with_cpu_per_request(results), baseline, metric=measure).assign(
                measure=measure
            )
            for measure in RATIO_MEASURES
        ],
        ignore_index=True,
    )
    ratios = ratios[["measure", *[c for c in ratios.columns if c != "measure"]]]
    return write_csv(ratios, run_dir / "ratios.csv")  # at the declared precision


def measured_text(results_path: str | Path) -> str:
    """What a study measured, in a line: its windows, the launches and blocks they ran in,
    and where the results are."""
    path = Path(results_path)
    rows = schema.read_results(path)
    blocks = rows["block"].nunique() if "block" in rows.columns else 0
    line = (f"{len(rows)} windows in {blocks} block{'s' if blocks != 1 else ''}; results in "
            f"{path.parent.name}/{path.name}")  # fmt: skip
    changed = command_line_text(path)
    return f"{line}; {changed}" if changed else line


def command_line_text(run_dir: str | Path) -> str:
    """The keys `--set` changed over the profile, as typed ("set on the command line:
    duration_s=5, modes=[kestrel,nginx]"), from params.json; "" where none were."""
    settings = load_params(run_dir).set_on_command_line
    return f"set on the command line: {settings_text(settings)}" if settings else ""


def read_ratios(path: str | Path, measure: str = "rps") -> pd.DataFrame:
    """One measure's rows of a ratios.csv (write_ratios), without the measure column."""
    ratios = pd.read_csv(path)
    if "measure" not in ratios.columns:  # written before ratios.csv had measures: rps only
        return ratios
    return ratios[ratios["measure"] == measure].drop(columns="measure").reset_index(drop=True)


def load_params(run_dir: str | Path) -> StudyParams:
    """The params a study ran with (its params.json), typed and validated: validated once per
    content of the file (kept.py), each caller's params built from those values."""
    run_dir = Path(run_dir)
    if run_dir.is_file():  # results.csv, as a study's measure() returns it
        run_dir = run_dir.parent
    key = ("params", content_key(run_dir / PARAMS_FILE))
    values = keep(key, lambda: StudyParams.from_run(run_dir).to_dict())
    return StudyParams.from_validated(copy.deepcopy(values))


def load_app_work(run_dir: str | Path) -> pd.DataFrame | None:
    """The C# tour's in-process cost per payload (app_work.csv), or None where it did not run."""
    path = Path(run_dir) / "app_work.csv"
    return pd.read_csv(path) if path.exists() else None


def is_smoke(run_dir: str | Path) -> bool:
    """Whether a run was a smoke run (params.json's `smoke`, set by the quick profiles): it
    checks the pipeline, and its numbers are not evidence."""
    return load_params(run_dir).smoke


# Calibration: the machine counts as busy when it is at least this % busy (the paper wanted 100).
SATURATED_PCT = 90.0


def calibration(df: pd.DataFrame) -> pd.DataFrame:
    """The concurrency sweep, per mode, scenario, tool and level: the mean requests/s over
    blocks with its 95% interval (intervals.mean_interval; NaN with one block), latency and
    CPU. `knee` marks the lowest level from which throughput no longer grows: every higher
    level's mean lies at or below its interval's top (find_knee). `saturated`: the machine
    was at least SATURATED_PCT busy on average."""
    from .intervals import mean_interval

    df = prepare(df)
    rows = []
    for keys, runs in df.groupby(GROUP, observed=True, sort=True):
        n, mean, low, high = mean_interval(runs["rps"])
        low = max(low, 0.0) if pd.notna(low) else low  # requests/s are never negative
        rows.append({
            **dict(zip(GROUP, keys, strict=True)), "blocks": n, "rps_mean": mean,
            "rps_ci_low": low, "rps_ci_high": high,
            "latency_p99_ms_mean": runs["latency_p99_ms"].mean(),
            "cpu_total_pct_mean": runs["cpu_total_pct"].mean(),
            "cpu_server_cores_mean": runs["cpu_server_cores"].mean(),
            "cpu_proxy_cores_mean": runs["cpu_proxy_cores"].mean(),
            "cpu_loadgen_cores_mean": runs["cpu_loadgen_cores"].mean(),
        })  # fmt: skip
    out = pd.DataFrame(rows)
    out["mode"] = _ordered(out["mode"], MODE_ORDER)
    out["scenario"] = _ordered(out["scenario"], SCENARIO_ORDER)
    out = out.sort_values(["mode", "scenario", "tool", "concurrency"]).reset_index(drop=True)
    out["knee"] = False
    for _, sweep in out.groupby(["mode", "scenario", "tool"], observed=True):
        knee = find_knee(sweep)
        if knee is not None:
            out.loc[knee, "knee"] = True
    out["saturated"] = out["cpu_total_pct_mean"] >= SATURATED_PCT
    return out


def find_knee(sweep: pd.DataFrame):
    """The index of the lowest level whose higher levels all have a mean at or below its
    interval's top, or None: one block (no interval), or throughput still grew beyond the
    interval up to the highest level (the highest itself has nothing above it to test)."""
    sweep = sweep.sort_values("concurrency")
    if sweep["rps_ci_high"].isna().any():
        return None
    for i, (index, level) in enumerate(sweep.iterrows()):
        higher = sweep["rps_mean"].iloc[i + 1 :]
        if len(higher) and (higher <= level["rps_ci_high"]).all():
            return index
    return None


def calibration_findings(table: pd.DataFrame) -> pd.DataFrame:
    """Per sweep (mode, scenario, tool) of a calibration table: the levels tried, blocks per
    level, the knee's concurrency (NaN: none found), and the machine's busy % averaged over
    a level's runs at its highest level (`cpu_busy_peak_pct`), and whether that is 100%."""
    rows = []
    for keys, sweep in table.groupby(["mode", "scenario", "tool"], observed=True, sort=True):
        knee = sweep.loc[sweep["knee"], "concurrency"]
        peak = sweep["cpu_total_pct_mean"].max()
        best = sweep.loc[sweep["rps_mean"].idxmax()]
        rows.append({
            **dict(zip(["mode", "scenario", "tool"], keys, strict=True)),
            "levels": ", ".join(str(c) for c in sorted(sweep["concurrency"])),
            "blocks": int(sweep["blocks"].min()),
            "knee": knee.iloc[0] if len(knee) else float("nan"),
            "highest": sweep["concurrency"].max(),
            "cpu_busy_peak_pct": peak,
            "cpu_reached_100": round(peak) >= 100,  # as it prints: "100%"
            "best": best["concurrency"],
            "best_rps": best["rps_mean"],
        })  # fmt: skip
    return pd.DataFrame(rows)
