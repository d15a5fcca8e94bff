"""results.csv: every column declared once, and the one way rows are written and read back.

Each column has a type, a unit, a one-sentence meaning and a display format (as pyperf
declares its metadata keys). The harness writes rows through `write_results`, which refuses a
key it does not know (naming the closest column) or a value of the wrong type; the analysis
reads through `read_results`, which gives each column its type. `docs/results.md` is
generated from COLUMNS (`python -m hostbench docs`).

Missing values: the file has an empty cell; read back, it is NaN in a float column, <NA> in an
int or bool column, None in a CPU-list column (`pd.isna` is true for each). A str column has
no missing value: its empty cell is "", which the harness writes for "none" (no variant, no
invalid reason). Only columns declared `nullable` may be empty, floats aside (NaN: not
measured). Results written before a column existed simply lack it.

Which rows count is `is_valid`, the one validity filter.
"""

import csv
import difflib
import os
from pathlib import Path

import numpy as np
import pandas as pd

from . import environment_keys
from .column_types import BOOL, CPUS, FLOAT, INT, STR, Column
from .errors import BadInput

RESULTS_FILE = "results.csv"
_c = Column  # the declarations below, one per line where they fit

# What a launch ran and what it cost before any load (hostbench/runtime_variants.py): how the
# test app was compiled and its GC as it reported them, its startup and its memory at rest
# (harness/measure/run.py's prepare reads them into each launch's `ready`; window_row copies
# them into every row of the launch); under load, its memory is rss_server_*'s.
RUNTIME_VARIANT_COLUMNS: tuple[Column, ...] = (
    _c("build", STR, "",
       "How the test app was compiled, as it reported it (GET /__transport): jit, or aot (Native "
       "AOT); empty: a server that does not report it (Go, external)."),
    _c("gc", STR, "",
       "The garbage collector the test app ran with, as it reported it: workstation, server, or "
       "datas (server GC adapting its heaps to the load); empty: not reported."),
    _c("startup_ms", FLOAT, "ms",
       "From the server's start to its first 200 to GET /health (the launch's readiness probe, "
       "polled every 5 ms); NaN: a server the harness did not start.", ".1f"),
    _c("rss_server_rest_mb", FLOAT, "MiB",
       "The server's resident memory at rest: once it answered its readiness probe, before "
       "any other request of its launch (the warm-up's included); NaN: not read (a server the "
       "harness did not start).", ".1f"),
)  # fmt: skip


# In the order of results.csv.
COLUMNS: tuple[Column, ...] = (
    _c("run_key", STR, "",
       "The run's folder name: `mode[@variant]__scenario__tool__cN__rB[__aK]`."),
    _c("mode", STR, "", "The hosting mode (a catalog id, e.g. kestrel, nginx)."),
    _c("variant", STR, "", "The params' named test-app settings the run used; empty: none."),
    _c("scenario", STR, "", "The endpoint and payload the load requested (a catalog id)."),
    _c("tool", STR, "", "The load generator (ab, bombardier, k6 or wrk)."),
    _c("tool_version", STR, "", "The load generator's own version line."),
    _c("concurrency", INT, "connections", "Connections (virtual users) the load kept open.", "d"),
    _c("block", INT, "", "The block (repetition) the run belongs to, from 1.", "d"),
    _c("position", INT, "", "The run's place in its block's order, from 1.", "d"),
    _c("attempt", INT, "", "1, or 2, 3, ... for a re-run of a run the machine was too busy for.",
       "d"),
    _c("window", INT, "",
       "The measured window of its cell in its block's launch, from 1: a block launches each "
       "mode once and measures `windows` windows of each cell on it (docs/method.md).", "d"),
    _c("started_at", STR, "ISO 8601, UTC", "When the run's quiet-machine wait ended."),
    _c("topology", STR, "",
       "Where the load generator and the server ran: local (loopback), netns or ssh "
       "(docs/hosts.md)."),
    _c("request_path", STR, "",
       "What the requests crossed from the load generator to the server: loopback, a veth, "
       "or ssh <loadgen host> -> <server host>."),
    _c("rtt_ms", FLOAT, "ms",
       "Median time of an empty request (GET /health, a new connection) just before the run.",
       ".3f"),
    _c("tls_version", STR, "", "The TLS version one probe of the mode's https URL negotiated at "
       "launch (Python's ssl, e.g. TLSv1.3); empty: plain HTTP."),
    _c("tls_cipher", STR, "", "The cipher suite that probe negotiated; empty: plain HTTP."),
    _c("duration_target_s", FLOAT, "s", "How long the params let the measured load run.", "g"),
    _c("requests_target", INT, "requests",
       "The fixed request count of the load (ab/bombardier -n); empty: it ran for a duration.",
       ",d", nullable=True),
    _c("pipeline", INT, "requests per write", "Requests wrk sent per write (1: no pipelining).",
       "d"),
    _c("keepalive", BOOL, "", "Whether the load reused connections (False: one per request, so "
       "over TLS a handshake per request)."),
    _c("warmup_max_s", FLOAT, "s", "The longest warm-up the params allowed.", "g"),
    _c("warmup_s", FLOAT, "s",
       "How long the warm-up ran before the measured load (warmed up together: the time of "
       "the mode's own slices in it).", ".1f"),
    _c("warmup_steady", BOOL, "",
       "Whether warm-up throughput got steady; empty: the server has no counter to tell.",
       nullable=True),
    _c("warmup_together", BOOL, "",
       "Whether the mode warmed up together with its interleaved window's other modes, in "
       "the window's slices (one k6 run), rather than alone before it.", nullable=True),
    _c("duration_s", FLOAT, "s",
       "How long the measured load ran, by the tool's clock; in an interleaved window "
       "(interleave_slice_s), the time of this mode's own slices (alternating runs: its runs' "
       "durations).", ".2f"),
    _c("requests", INT, "requests", "Responses the load tool counted.", ",d"),
    _c("rps", FLOAT, "requests/s", "Throughput: requests / duration_s.", ",.0f"),
    _c("latency_mean_ms", FLOAT, "ms", "Mean response time the load tool measured.", ".2f"),
    _c("latency_p50_ms", FLOAT, "ms", "Median response time.", ".2f"),
    _c("latency_p90_ms", FLOAT, "ms", "90th percentile of the response time.", ".2f"),
    _c("latency_p99_ms", FLOAT, "ms", "99th percentile of the response time.", ".2f"),
    _c("latency_max_ms", FLOAT, "ms", "The slowest response.", ".1f"),
    _c("non_2xx", INT, "responses", "Responses whose status was not 2xx.", ",d"),
    _c("errors", INT, "", "Transport errors (connect, read, write, timeout) the tool counted.",
       ",d"),
    _c("bytes_read", INT, "bytes", "Bytes the load tool received.", ",d"),
    _c("server_requests", INT, "requests",
       "Requests the app's own counter saw; empty: the server has no counter.", ",d",
       nullable=True),
    _c("count_diff_pct", FLOAT, "%", "Client count minus server count, in % of the server's.",
       ".2f"),
    _c("valid", BOOL, "",
       "Whether the run's number counts (False: left out, invalid_reason says why); empty: "
       "no verdict recorded, which counts (see is_valid).", nullable=True),
    _c("invalid_reason", STR, "", "Why the run is invalid, reasons joined by '; '; empty: valid."),
    _c("cpu_total_pct", FLOAT, "% of all cores", "How busy the whole machine was.", ".1f"),
    _c("cpu_total_pct_max", FLOAT, "% of all cores", "The busiest CPU sample at steady state.",
       ".1f"),
    _c("cpu_server_cores", FLOAT, "cores",
       "CPU the server's process tree used; in an interleaved window, its CPU over the whole "
       "window per second of its own slices, so cores / rps is its CPU per request as in any "
       "window.", ".2f"),
    _c("cpu_proxy_cores", FLOAT, "cores",
       "CPU the reverse proxy used (interleaved: as cpu_server_cores); NaN: no proxy.", ".2f"),
    _c("cpu_loadgen_cores", FLOAT, "cores", "CPU the load generator used.", ".2f"),
    _c("rss_server_mb", FLOAT, "MiB", "The server's largest resident memory at steady state.",
       ".1f"),
    _c("rss_server_mean_mb", FLOAT, "MiB", "The server's mean resident memory over the run.",
       ".1f"),
    _c("rss_server_peak_mb", FLOAT, "MiB", "The server's largest resident memory of the run.",
       ".1f"),
    _c("rss_server_anon_mean_mb", FLOAT, "MiB",
       "The server's mean resident memory without the pages mapped from files (its binaries: "
       "for .NET the runtime and framework); NaN: the kernel does not say (not Linux).", ".1f"),
    _c("transport_io_queue_count", INT, "queues",
       "Kestrel's socket-transport I/O queues as the app reported them; empty: not reported.",
       "d", nullable=True),
    _c("transport_inline_scheduling", BOOL, "",
       "Kestrel's UnsafePreferInlineScheduling as the app reported it; empty: not reported.",
       nullable=True),
    _c("transport_wait_for_data", BOOL, "",
       "Kestrel's WaitForDataBeforeAllocatingBuffer as reported; empty: not reported.",
       nullable=True),
    _c("transport_inline_completions", BOOL, "",
       "Whether the sockets engine ran completions inline; empty: not reported.", nullable=True),
    _c("transport_inline_completions_env", BOOL, "",
       "Whether DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS was 1 in the app; empty: not "
       "reported.", nullable=True),
    _c("runtime_version", STR, "",
       "The .NET runtime the test app ran on, as it reported it (Environment.Version, e.g. "
       "8.0.31; params key runtimes); empty: a server that does not report it (Go, external) "
       "or a run recorded before the column existed (environment.json's dotnet.runtimes lists "
       "the installed ones)."),
    *RUNTIME_VARIANT_COLUMNS,
    _c("cpu_samples", INT, "samples", "CPU monitor samples taken during the measured load.", "d"),
    _c("cpu_sampler_cores", FLOAT, "cores", "CPU the harness's own monitor used.", ".3f"),
    _c("machine_cores", INT, "cores", "Logical CPUs of the machine.", "d"),
    _c("loadgen_cpus", CPUS, "CPU ids", "The CPUs the load generator was pinned to, or all."),
    _c("server_cpus", CPUS, "CPU ids",
       "The CPUs the server could run on, read back from the kernel; empty: not read.",
       nullable=True),
    _c("loadgen_limited", BOOL, "",
       "Whether the load generator, not the target, limited throughput "
       "(harness/measure/limits.py)."),
    _c("load_avg_1m", FLOAT, "", "The machine's 1-minute load average at the run's start.", ".2f"),
    _c("cpu_freq_mhz", FLOAT, "MHz", "The CPU clock at the run's start.", ",.0f"),
    _c("cpu_steal_pct", FLOAT, "% of all cores",
       "CPU time the hypervisor stole (topology ssh: the larger host's).", ".1f"),
    _c("foreign_cores", FLOAT, "cores",
       "CPU used by processes the harness did not start (topology ssh: on both hosts).", ".2f"),
    _c("quiet_wait_s", FLOAT, "s", "How long the run waited for a quiet machine.", ".1f"),
    _c("quiet_before_cores", FLOAT, "cores",
       "CPU other processes used just before the run; NaN: the gate was off.", ".2f"),
    _c("measured_s", FLOAT, "s", "How long the CPU monitor measured.", ".2f"),
    _c("fingerprint", STR, "", "A hash of the settings that shaped the run (params.json's)."),
)  # fmt: skip
BY_NAME = {c.name: c for c in COLUMNS}
NAMES = [c.name for c in COLUMNS]
# Keys a run's row.json holds that results.csv leaves out (too nested for a cell).
RECORD_ONLY = ("settings",)
# Names older results used, and the column each became.
RENAMED = {"repetition": "block"}
# Columns added after runs were recorded, and what a run recorded before each one had.
ADDED = {
    "warmup_together": False,
    "runtime_version": "",
    "build": "",
    "gc": "",
    "startup_ms": float("nan"),
    "rss_server_rest_mb": float("nan"),
    "tls_version": "",
    "tls_cipher": "",
}
TLS_COLUMNS = ("tls_version", "tls_cipher")  # what a launch's TLS probe fills in (run.py)


def upgraded(row: dict) -> dict:
    """A run's recorded row (row.json) with the columns added since it was written, at the
    value such a run had (ADDED): a resumed or re-rendered study writes every column."""
    return {**{k: v for k, v in ADDED.items() if k not in row}, **row}


def column(name: str) -> Column:
    """The declaration of column `name`; BadInput names the closest one when unknown."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise BadInput(f"unknown results column {name!r}{_closest(name)}") from None


def _closest(name: str) -> str:
    near = difflib.get_close_matches(str(name), NAMES, n=1)  # the likeliest misspelling
    return f" (did you mean {near[0]!r}?)" if near else f"; columns: {', '.join(NAMES)}"


# ------------------------------------------------------------------ writing


def row_text(row: dict) -> dict[str, str]:
    """A run's row as results.csv's cells; BadInput names an unknown key, a missing column or a
    value of the wrong type."""
    unknown = [k for k in row if k not in BY_NAME and k not in RECORD_ONLY]
    if unknown:
        raise BadInput(f"row of {row.get('run_key', '?')}: unknown column {unknown[0]!r}"
                       f"{_closest(unknown[0])}")  # fmt: skip
    lacking = [c.name for c in COLUMNS if c.name not in row]
    if lacking:
        raise BadInput(f"row of {row.get('run_key', '?')} lacks column(s): {', '.join(lacking)}")
    return {c.name: c.type.text(_value(c, row[c.name], f"row of {row.get('run_key', '?')}"))
            for c in COLUMNS}  # fmt: skip


def _value(c: Column, raw, where: str):
    try:
        value = c.type.value(raw)
    except ValueError as e:
        raise BadInput(f"{where}: column {c.name!r} holds {c.type.name} values; {e}") from None
    if value is None and not c.nullable:
        raise BadInput(f"{where}: column {c.name!r} is empty; it needs a {c.type.name} value")
    return value


def write_results(path: Path, rows: list[dict]) -> Path:
    """results.csv at `path` from the rows, every column in COLUMNS order; replaced atomically
    (an interrupted write leaves the old file)."""
    path = Path(path)
    texts = [row_text(row) for row in rows]  # every row checked before anything is written
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=NAMES)
        writer.writeheader()
        writer.writerows(texts)
    os.replace(tmp, path)
    return path


# ------------------------------------------------------------------ reading


def read_results(path: str | Path) -> pd.DataFrame:
    """results.csv (or the run folder holding it) with each column of its declared type.

    Columns the file lacks (results written before they existed) stay absent; a column the
    schema does not know is refused, naming the closest one."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.is_file():
        raise BadInput(f"no results file at {path}")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    raw = raw.rename(columns=RENAMED)
    unknown = [name for name in raw.columns if name not in BY_NAME]
    if unknown:
        raise BadInput(f"{path}: unknown column {unknown[0]!r}{_closest(unknown[0])}")
    raw.index = range(2, len(raw) + 2)  # an error names the file's line
    return typed(raw, str(path), where="line").reset_index(drop=True)


def typed(df: pd.DataFrame, source: str = "results", where: str = "row") -> pd.DataFrame:
    """df with each schema column it has given its declared type (text or values as they
    came); other columns are left as they are. BadInput names a column and row that does not
    hold its type, or is empty where it may not be."""
    df = df.rename(columns={old: new for old, new in RENAMED.items() if new not in df.columns})
    columns = {}
    for name in df.columns:
        column = df[name]
        c = BY_NAME.get(name)
        dtype = None if c is None else (c.type.nullable_dtype if c.nullable else c.type.dtype)
        if (
            c is None
            or isinstance(column.dtype, pd.CategoricalDtype)  # not ours, or ordered
            or (dtype != "object" and str(column.dtype) == dtype)
        ):  # typed already
            columns[name] = column
            continue
        columns[name] = pd.Series(_values(c, column, f"{source}, {where}"), index=df.index,
                                  dtype=dtype)  # fmt: skip
    # One frame built at once: setting a copy's columns one by one took most of the time.
    return pd.DataFrame(columns, index=df.index).__finalize__(df)


def _values(c: Column, column: pd.Series, where: str) -> list:
    """The column's values, each typed as _value types it, but once a distinct text: a
    results.csv repeats its modes, scenarios and counts down thousands of rows. Cells other
    than text (a frame of Python values) each on their own: 1 and True are one key."""
    cells = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(cells, skipna=False) == "string":
        try:
            typed_once = {raw: _value(c, raw, where) for raw in dict.fromkeys(cells)}
            return [typed_once[raw] for raw in cells]
        except BadInput:  # the first cell that does not hold its type, named by its row
            pass
    return [
        _value(c, raw, f"{where} {index}") for index, raw in zip(column.index, cells, strict=True)
    ]


# ------------------------------------------------------------------ validity


def is_valid(df: pd.DataFrame) -> pd.Series:
    """Which rows count: every row but those whose `valid` is False.

    A missing verdict counts: results without a `valid` column (written before the harness
    judged runs) and an empty cell alike, since only the harness's explicit False says a
    number cannot be trusted. The one validity filter: tables, intervals and each study's
    analysis use it."""
    if "valid" not in df.columns:
        return pd.Series(True, index=df.index)
    valid = df["valid"]
    if not pd.api.types.is_bool_dtype(valid):  # text as written, not typed yet
        valid = typed(df[["valid"]])["valid"]
    invalid = valid.eq(False).fillna(False)  # <NA> counts: see above
    return ~invalid.astype(bool)


def valid_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[is_valid(df)]  # the rows that count


def invalid_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[~is_valid(df)]  # the rows left out (`valid` False)


# ------------------------------------------------------------------ launches

# The identity of a block's launch of one cell: its windows become one row (per_launch).
LAUNCH_KEY = ("mode", "variant", "scenario", "tool", "concurrency", "block")
# The launches of a block that may share windows (interleaved: one started_at).
WINDOW_GROUP = ("scenario", "tool", "concurrency", "block")
# What per_launch reads of a window besides its launch and validity: which, when, its rate.
WINDOW, STARTED_AT, RATE = "window", "started_at", "rps"
WINDOW_COLUMNS = (WINDOW, STARTED_AT, RATE)
# Counts over a launch's windows add up; the largest latency is the largest of any window.
SUMMED = ("duration_s", "requests", "non_2xx", "errors", "bytes_read", "server_requests",
          "measured_s", "cpu_samples", "quiet_wait_s")  # fmt: skip
LARGEST = ("latency_max_ms", "cpu_total_pct_max", "rss_server_peak_mb", "foreign_cores",
           "cpu_steal_pct")  # fmt: skip


def per_launch(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and block: the valid windows of a block's launch combined, since the
    launch is the independent unit of every interval (docs/method.md). rps is the geometric
    mean of the windows' rates (the intervals work on log rates); counts are summed; the
    largest latency, peak, foreign CPU and steal are the largest; every other number is the
    mean; the rest is the first window's. `windows` counts them. Invalid windows stay rows of
    their own (left out by is_valid as ever). Results with one window per launch (every
    study measured before windows existed) come back as they are, with windows = 1.

    A launch measured in only some of its block's windows (a mode outside `focus`, or a
    window left out) has its rates taken to the block's mean window first (_to_mean_window),
    so its ratio to a launch measured in every window pairs the same windows, and the drift
    between windows minutes apart does not enter it."""
    df = df.copy()
    key = [c for c in LAUNCH_KEY if c in df.columns]
    valid = is_valid(df)
    kept = df[valid]
    if WINDOW not in df.columns or not kept.duplicated(key).any():  # one window a launch
        if "windows" not in df.columns:
            df["windows"] = 1
        return df
    kept = _to_mean_window(kept, key)
    agg = {}
    for name in kept.columns:
        if name in key:
            continue
        kind = pd.api.types
        numeric = kind.is_numeric_dtype(kept[name]) and not kind.is_bool_dtype(kept[name])
        if name == RATE:
            agg[name] = lambda x: float(np.exp(np.log(x.astype(float)).mean()))
        elif numeric and name in SUMMED:
            agg[name] = "sum"
        elif numeric and name in LARGEST:
            agg[name] = "max"
        elif numeric and name not in (WINDOW, "position", "attempt"):
            agg[name] = "mean"
        else:
            agg[name] = "first"
    grouped = kept.groupby(key, observed=True, sort=False, dropna=False)
    launches = grouped.agg(agg).assign(windows=grouped.size())
    launches = launches.reset_index()[[*kept.columns, "windows"]]
    for name in kept.columns:  # the combined values keep their columns' types
        if launches[name].dtype != kept[name].dtype:
            try:
                launches[name] = launches[name].astype(kept[name].dtype)
            except (TypeError, ValueError):
                pass
    invalid = df[~valid].assign(windows=1)
    return pd.concat([launches, invalid], ignore_index=True)


def _to_mean_window(kept: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """kept with the rates of each launch missing some of its block's shared windows divided
    by those windows' drift. A shared window is one the launches of a block ran in together,
    interleaved (one `started_at`); a window's drift is how far its log rate lay from the
    launch's mean over the block's shared windows, averaged over the launches measured in
    every one (the drifts add up to 0, so such a launch keeps its mean). Windows back to back
    share no time, so no drift is taken from them; nor where no launch saw every window."""
    if STARTED_AT not in kept.columns:
        return kept
    group = [c for c in WINDOW_GROUP if c in kept.columns]
    by = lambda names: [kept[c] for c in names]  # noqa: E731 (NaN keys are keys too)
    logs = np.log(kept[RATE].astype(float))
    launches = kept.assign(_log=logs).groupby(by(key), dropna=False, observed=True)
    seen = launches[STARTED_AT].transform("nunique")
    every = kept.groupby(by(group), dropna=False, observed=True)[STARTED_AT].transform("nunique")
    partial = seen < every
    full = ~partial
    if not partial.any() or not full.any():
        return kept
    own_mean = launches["_log"].transform("mean")
    where = [*group, STARTED_AT]
    drift = (logs - own_mean)[full].groupby([kept.loc[full, c] for c in where], dropna=False,
                                            observed=True).mean().rename("_drift")  # fmt: skip
    rows = kept[where].merge(drift.reset_index(), on=where, how="left")["_drift"]
    adjust = pd.Series(rows.to_numpy(), index=kept.index).fillna(0.0).where(partial, 0.0)
    return kept.assign(**{RATE: np.exp(logs - adjust)})


# ------------------------------------------------------------------ docs


def markdown() -> str:
    """docs/results.md: the columns of results.csv."""
    lines = [
        "# results.csv",
        "",
        "One row per run, written by the harness and read by the analysis through",
        "`hostbench/results.py`, where each column is declared once. Generated by",
        "`python -m hostbench docs`; do not edit by hand.",
        "",
        "An empty cell is a missing value: NaN in a float column, `<NA>` in an int or bool",
        'column, None in a CPU-list column; in a str column it is "" (none). Only the columns',
        "marked *may be empty* have missing values (floats: NaN, not measured). A row counts",
        "unless `valid` is False: an empty `valid`, or a file without the column, counts.",
        "",
        "| column | type | unit | meaning |",
        "|---|---|---|---|",
    ]
    for c in COLUMNS:
        kind = f"{c.type.name}, may be empty" if c.nullable else c.type.name
        lines.append(f"| `{c.name}` | {kind} | {c.unit} | {c.meaning} |")
    return "\n".join(lines) + "\n\n" + environment_keys.markdown()
