"""One run: a hosting mode, a scenario, a load tool and a concurrency, in one block; its
windows back to back.

Launch the target, check one response, warm up until throughput is steady (discarded; its
curve is kept), then each measured window: wait for a quiet machine, fire the load while the
CPU monitor samples, and cross-check the client's request count against the server's own
counter. The result is one tidy row per window (window.py: its columns and validity),
written last and atomically; a row whose number cannot be trusted (errors, a busy machine, a
run too short or never steady, CPU not read) is kept, invalid, with its reasons.
"""

import csv
import json
import os
import shutil
import subprocess
import time
from contextlib import nullcontext
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ... import results
from ...errors import HostbenchError
from ...load import Load
from ...params import StudyParams
from ...warmup import JIT_SETTLED_METHODS, STEADY_WINDOWS, WINDOW_S
from ..launch.modes import Target
from .checks import validate
from .loadgen import LoadGenerator, generator_for
from .progress import FILE as PROGRESS_FILE
from .progress import ProgressMonitor
from .where import LOOPBACK, Where
from .window import (
    ROW_FILE,
    TRANSPORT_COLUMNS,
    RunSpec,
    invalid_reason,
    judged,
    machine_state,
    measure_reasons,
    quiesce,
    quiet_gate,
    raise_if_dead,
    rest_memory_mb,
    server_affinity,
    server_stats,
    watched_groups,
    window_row,
)


def read_json(path: Path, remedy: str) -> dict | None:
    """A JSON record the harness wrote, None if absent; a damaged one is one clear error."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise HostbenchError(f"{path} is damaged ({type(e).__name__}); {remedy}") from None


def completed_row(run_dir: Path) -> dict | None:
    """The row of a completed run, None if none (with the columns added since, as it had
    them: results.upgraded)."""
    row = read_json(run_dir / ROW_FILE, "delete that run folder to measure it again")
    return None if row is None else results.upgraded(row)


def steady(rates: list[float], tolerance_pct: float) -> bool:
    """The last STEADY_WINDOWS rates all lie within tolerance_pct of their mean."""
    if len(rates) < STEADY_WINDOWS:
        return False
    last = rates[-STEADY_WINDOWS:]
    mean = sum(last) / len(last)
    return mean > 0 and all(abs(r - mean) <= tolerance_pct / 100 * mean for r in last)


def jit_settled(compiled: list[int | None]) -> bool:
    """In each of the last STEADY_WINDOWS windows the JIT compiled at most
    JIT_SETTLED_METHODS methods (None: a server without a JIT, always settled)."""
    last = compiled[-STEADY_WINDOWS:]
    return len(last) == STEADY_WINDOWS and all(n is None or n <= JIT_SETTLED_METHODS for n in last)


def warm_up(
    generator: LoadGenerator,
    target: Target,
    load: Load,
    tolerance_pct: float,
    out_dir: Path,
    netns: str | None = None,
    host=None,
) -> dict:
    """Fire `load`'s warm-up until throughput is steady (within tolerance_pct) and the JIT
    has settled, or for its warmup_s at most; discarded.

    Throughput per window comes from the app's own counter, so every tool warms
    up the same way; the methods compiled per window from the .NET app's JIT count
    (the Go servers have none). A server without a counter warms up for the whole
    maximum. The curve goes to out_dir/curve.csv.
    """
    if load.warmup_s <= 0:
        return {"warmup_s": 0.0, "warmup_steady": False}
    proc = generator.process(load.warmup(), out_dir, netns, host)
    curve: list[tuple[float, float, int | None]] = []
    reached = False
    with proc:
        t0 = last_t = time.monotonic()
        last = server_stats(target)
        while proc.running() and time.monotonic() - t0 < load.warmup_s + 5:
            try:
                proc.wait(WINDOW_S)
            except subprocess.TimeoutExpired:  # the window is over: read the counter
                pass
            now, stats = time.monotonic(), server_stats(target)
            if stats is None or last is None:
                continue
            rate = (int(stats["total"]) - int(last["total"])) / (now - last_t)
            jit = stats.get("jit_methods")
            compiled = None if jit is None else int(jit) - int(last.get("jit_methods") or 0)
            curve.append((round(now - t0, 3), rate, compiled))
            last_t, last = now, stats
            if steady([r for _, r, _ in curve], tolerance_pct) and jit_settled(
                [n for _, _, n in curve]
            ):
                reached = True
                break
        elapsed = time.monotonic() - t0
    with open(out_dir / "curve.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t_s", "rps", "jit_compiled"])
        writer.writerows((t, r, "" if n is None else n) for t, r, n in curve)
    return {"warmup_s": round(elapsed, 2), "warmup_steady": reached if curve else None}


# What a launch ran, beside its transport settings: the app's GET /__transport keys of how it
# was compiled and which GC it runs (runtime_variants.py), as result columns
# (results.RUNTIME_VARIANT_COLUMNS, with startup_ms: the launch's readiness probe's).
RAN_COLUMNS = {"build": "build", "gc": "gc"}


def _transport_info(target: Target, run_dir: Path) -> dict:
    """The socket-transport settings the app reports (saved as transport.json), what it ran
    (RAN_COLUMNS) and its startup (startup_ms), as columns; empty values for a server that
    does not report them (the Go servers, an external one)."""
    startup_s = target.startup_s
    launch = {"startup_ms": None if startup_s is None else round(startup_s * 1000, 1)}
    try:
        info = target.transport_info()
    except (OSError, ValueError):
        info = None
    if info is None:
        return {**dict.fromkeys(TRANSPORT_COLUMNS), **dict.fromkeys(RAN_COLUMNS), **launch}
    (run_dir / "transport.json").write_text(json.dumps(info, indent=2) + "\n")
    reported = {**TRANSPORT_COLUMNS, **RAN_COLUMNS}
    return {**{column: info.get(key) for column, key in reported.items()}, **launch}


def tls_columns(url: str, where: Where = LOOPBACK) -> dict:
    """The TLS version and cipher `url` negotiates (results.TLS_COLUMNS), probed once with
    Python's ssl from where the load runs (its namespace, its ssh host); empty for plain
    HTTP. HostbenchError when an https URL does not answer TLS."""
    if urlsplit(url).scheme != "https":
        return dict.fromkeys(results.TLS_COLUMNS, "")
    answer = where.tls(url)
    if "error" in answer:
        raise HostbenchError(f"{url} did not answer TLS: {answer['error']}")
    return dict(zip(results.TLS_COLUMNS, (answer["version"], answer["cipher"]), strict=True))


def server_cpus(load: Load) -> list[int] | None:
    """The CPUs the app and proxy may use: apart from the load generator's when it is
    pinned; None (anywhere) otherwise."""
    if not load.cpus:
        return None
    return [c for c in sorted(os.sched_getaffinity(0)) if c not in load.cpus]


def launched(spec: RunSpec, launch_dir: Path, params: StudyParams, where: Where = LOOPBACK):
    """A context manager that starts `spec`'s mode (with its variant's settings) in
    launch_dir and yields its Target; what it started stops however the block ends. One
    launch serves every window of its mode and variant in a block, of every scenario."""
    launch_dir.mkdir(parents=True, exist_ok=True)
    options = params.options_for(spec.variant)
    return where.launch(spec.mode, launch_dir, options, server_cpus(spec.load))


def prepare(
    spec: RunSpec,
    target: Target,
    warmup_dir: Path,
    params: StudyParams,
    where: Where = LOOPBACK,
    warm: bool = True,
) -> dict:
    """Make a launched target ready for `spec`'s windows: read its memory at rest (the
    launch's first cell: before any load), check one response, read its transport settings,
    build and GC (RUNTIME_VARIANT_COLUMNS) and the path's round trip, and warm it up with
    spec's load until steady (artifacts in warmup_dir; `warm` False: the caller warms it up
    with its window's other modes, interleave.warm_up_together, and adds those columns).
    Returns the columns every window of this cell in this launch carries."""
    if target.rss_at_rest_mb is None:  # the launch's first cell: no load has reached it yet
        target.rss_at_rest_mb = rest_memory_mb(target, where)
    at_rest = {"rss_server_rest_mb": target.rss_at_rest_mb}
    validate(spec.scenario, target.get(spec.scenario.path))
    warmup_dir.mkdir(parents=True, exist_ok=True)
    transport = {**_transport_info(target, warmup_dir), **at_rest, **tls_columns(target.url, where)}
    rtt_ms = where.round_trip_ms(target.url)  # the load's way to the target checked first
    if not warm:
        return {"rtt_ms": rtt_ms, **transport}
    load = spec.load.aimed_at(target.url)
    warmed = warm_up(generator_for(load), target, load, params.steady_tolerance_pct, warmup_dir,
                     where.client_netns, where.loadgen_host)  # fmt: skip
    raise_if_dead(target)
    return {"rtt_ms": rtt_ms, **warmed, "warmup_together": False, **transport}


def execute(
    spec: RunSpec,
    run_dir: Path,
    params: StudyParams,
    say=print,
    where: Where = LOOPBACK,
) -> dict:
    """Run `spec` as a launch of its own with one window: launch, prepare, measure, stop
    (its launch's files, the warm-up in warmup/, in run_dir too), where `where` says.
    Returns its row."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # leftovers of an interrupted attempt: start clean
    with launched(spec, run_dir, params, where) as target:
        ready = prepare(spec, target, run_dir / "warmup", params, where)
        return measure_window(spec, target, ready, run_dir, params, say, where)


def measure_window(
    spec: RunSpec,
    target: Target,
    ready: dict,
    run_dir: Path,
    params: StudyParams,
    say=print,
    where: Where = LOOPBACK,
) -> dict:
    """One measured window of `spec` on a launched, prepared target (`ready`: what
    `prepare` returned): wait for a quiet machine, fire the load while the CPU monitor
    samples, cross-check the counts. Keeps its artifacts in `run_dir`; returns (and saves)
    its row.

    `say` gets a line while the window waits for a quiet machine."""
    run_dir.mkdir(parents=True, exist_ok=True)
    scenario = spec.scenario
    quiet = quiet_gate(params, say, where)
    load = spec.load.aimed_at(target.url)
    raise_if_dead(target)
    quiesce(target)
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    state = machine_state()
    target.reset_server_stats()
    result, cpu, watched = _fire(load, target, run_dir, params, where, scenario.stats_key)
    raise_if_dead(target)
    stats = server_stats(target)
    affinity = server_affinity(target, where)

    if result.requests == 0:
        raise HostbenchError(f"{spec.key}: the load tool completed no request ({run_dir})")
    server_requests = stats["endpoints"].get(scenario.stats_key, 0) if stats else None
    measured = {k: v for k, v in asdict(result).items() if k != "cpu_s"}
    row = window_row(spec, params, where, ready, load, started_at, measured, server_requests,
                     (cpu, quiet, state), affinity)  # fmt: skip
    reasons = [invalid_reason(row), *measure_reasons(row, params, watched)]
    return judged(row, reasons, params, run_dir)


def _fire(load: Load, target: Target, run_dir: Path, params: StudyParams, where: Where,
          stats_key: str) -> tuple:  # fmt: skip
    """Run the load at `target` while the CPU monitor watches the target's processes and the
    load generator (read where they run: where.cpu_monitor): the tool's result, the CPU
    summary and the process groups watched."""
    monitor = where.cpu_monitor(run_dir / "cpu_samples.csv", params.sample_interval_s)
    watched = watched_groups(target)
    for group, pids in target.groups.items():
        for pid in pids:
            monitor.watch(group, pid)
    # Off unless the params ask: one GET /__stats per interval (progress.py).
    progress = (
        ProgressMonitor(run_dir / PROGRESS_FILE, target, stats_key, params.progress_interval_s)
        if params.progress_interval_s
        else nullcontext()
    )
    with monitor, progress:
        result = generator_for(load).run(
            load,
            run_dir / "load",
            on_start=lambda pid: monitor.watch("loadgen", pid),
            netns=where.client_netns,
            host=where.loadgen_host,
        )
        monitor.exited("loadgen", result.cpu_s)
    return result, monitor.summary(), watched
