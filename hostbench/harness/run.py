"""One run: a hosting mode, a scenario, a load tool and a concurrency, in one block.

Launch the target, check one response, warm up until throughput is steady
(discarded; its curve is kept), then the measured load while the CPU monitor
samples, and cross-check the client's request count against the server's own
counter. The result is one tidy row, written last and atomically.
"""

import csv
import http.client
import json
import math
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import psutil

from ..catalog import get_mode, get_scenario
from ..errors import HostbenchError
from .checks import validate
from .cpumonitor import CpuMonitor
from .loadgen import LoadGenerator, get_generator
from .modes import Target, launch
from .params import StudyParams, fingerprint

ROW_FILE = "row.json"  # written last, atomically: its presence marks a completed run
WINDOW_S = 1.0  # warm-up throughput is read from the app's counter once per window
STEADY_WINDOWS = 3  # steady: this many consecutive windows agree within the tolerance
LOADGEN_LIMITED = 0.9  # share of its CPUs a load generator uses when it is the bottleneck


@dataclass(frozen=True)
class RunSpec:
    mode: str
    scenario: str
    tool: str
    concurrency: int
    block: int  # repetitions are blocks: every cell runs once per block
    position: int = 0  # place in the block's (random) order, from 1

    @property
    def key(self) -> str:
        """Folder name of this run: readable, unique within a study, stable across resumes."""
        return f"{self.mode}__{self.scenario}__{self.tool}__c{self.concurrency}__r{self.block}"


def run_settings(spec: RunSpec, params: StudyParams) -> dict:
    """Everything that shapes this run's measurement besides its mode and scenario."""
    return {"tool": spec.tool, "concurrency": spec.concurrency, **params.measured_settings()}


def count_diff_pct(client: int, server: int | None) -> float:
    """Client minus server request count, in % of the server's count."""
    if server is None:
        return math.nan
    if server == 0:
        return 0.0 if client == 0 else math.inf
    return (client - server) / server * 100


def invalid_reason(row: dict) -> str:
    """Why a row's number is not a clean count of successful responses ("" when it is)."""
    reasons = []
    if row["errors"]:
        reasons.append(f"{row['errors']} transport errors")
    if row["non_2xx"]:
        reasons.append(f"{row['non_2xx']} non-2xx responses")
    server = row["server_requests"]
    # wrk and ab stop with up to `concurrency` requests in flight, counted by the server only.
    if server is not None and abs(row["requests"] - server) > row["concurrency"]:
        reasons.append(f"client counted {row['requests']}, server {server}")
    return "; ".join(reasons)


def read_json(path: Path, remedy: str) -> dict | None:
    """A JSON record the harness wrote, None if absent; a damaged one is one clear error."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise HostbenchError(f"{path} is damaged ({type(e).__name__}); {remedy}") from None


def completed_row(run_dir: Path) -> dict | None:
    """The row of a completed run, None if none."""
    return read_json(run_dir / ROW_FILE, "delete that run folder to measure it again")


def steady(rates: list[float], tolerance_pct: float) -> bool:
    """The last STEADY_WINDOWS rates all lie within tolerance_pct of their mean."""
    if len(rates) < STEADY_WINDOWS:
        return False
    last = rates[-STEADY_WINDOWS:]
    mean = sum(last) / len(last)
    return mean > 0 and all(abs(r - mean) <= tolerance_pct / 100 * mean for r in last)


def warm_up(
    generator: LoadGenerator,
    target: Target,
    url: str,
    spec: RunSpec,
    params: StudyParams,
    out_dir: Path,
) -> dict:
    """Load until throughput is steady, or for params.warmup_s at most; discarded.

    Throughput per window comes from the app's own counter, so every tool warms
    up the same way. A server without a counter warms up for the whole maximum.
    The curve goes to out_dir/curve.csv.
    """
    if params.warmup_s <= 0:
        return {"warmup_s": 0.0, "warmup_steady": False}
    proc = generator.process(
        url,
        concurrency=spec.concurrency,
        duration_s=params.warmup_s,
        out_dir=out_dir,
        cpus=params.loadgen_cpus,
        keepalive=params.keepalive,
    )
    curve: list[tuple[float, float]] = []
    reached = False
    with proc:
        t0 = last_t = time.monotonic()
        last_count = _served(target)
        while proc.running() and time.monotonic() - t0 < params.warmup_s + 5:
            try:
                proc.wait(WINDOW_S)
            except subprocess.TimeoutExpired:  # the window is over: read the counter
                pass
            now, count = time.monotonic(), _served(target)
            if count is None or last_count is None:
                continue
            curve.append((round(now - t0, 3), (count - last_count) / (now - last_t)))
            last_t, last_count = now, count
            if steady([r for _, r in curve], params.steady_tolerance_pct):
                reached = True
                break
        elapsed = time.monotonic() - t0
    with open(out_dir / "curve.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t_s", "rps"])
        writer.writerows(curve)
    return {"warmup_s": round(elapsed, 2), "warmup_steady": reached if curve else None}


def _served(target: Target) -> int | None:
    stats = _server_stats(target)
    return None if stats is None else int(stats["total"])


def _server_stats(target: Target) -> dict | None:
    try:
        return target.server_stats()
    except (OSError, ValueError, http.client.HTTPException):
        _raise_if_dead(target)
        raise HostbenchError(f"{target.mode}: the test app stopped answering /__stats") from None


def _raise_if_dead(target: Target) -> None:
    died = target.exited()
    if died:
        raise HostbenchError(f"{target.mode}: {died} during the run; no row was written")


def _affinity(pid: int) -> str:
    """CPU ids a process may run on, read back from the kernel, as "0,1"."""
    try:
        return ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
    except OSError:
        return ""


def _machine_state() -> dict:
    freq = psutil.cpu_freq()
    return {
        "load_avg_1m": os.getloadavg()[0],
        "cpu_freq_mhz": freq.current if freq else math.nan,
    }


def _steal_pct(before, after) -> float:
    """CPU time stolen by the hypervisor, in % of all CPU time between two cpu_times()."""
    total = sum(after) - sum(before)
    steal = getattr(after, "steal", 0.0) - getattr(before, "steal", 0.0)
    return 100.0 * steal / total if total > 0 else math.nan


def execute(spec: RunSpec, run_dir: Path, params: StudyParams) -> dict:
    """Run `spec`, keeping its artifacts in `run_dir`; returns (and saves) its row."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # leftovers of an interrupted attempt: start clean
    run_dir.mkdir(parents=True)
    mode, scenario = get_mode(spec.mode), get_scenario(spec.scenario)
    generator = get_generator(spec.tool)
    settings = run_settings(spec, params)
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    state = _machine_state()
    cpus = sorted(os.sched_getaffinity(0))
    # Pinned apart from the load generator when the params say so; else anywhere.
    server_cpus = [c for c in cpus if c not in params.loadgen_cpus] if params.loadgen_cpus else None
    loadgen_pids: list[int] = []

    with launch(mode, run_dir, params.options, cpus=server_cpus) as target:
        url = target.url + scenario.path
        validate(scenario, target.get(scenario.path))
        warm = warm_up(generator, target, url, spec, params, run_dir / "warmup")
        _raise_if_dead(target)
        target.reset_server_stats()
        monitor = CpuMonitor(run_dir / "cpu_samples.csv", interval_s=params.sample_interval_s)
        for group, pids in target.groups.items():
            for pid in pids:
                monitor.watch(group, pid)

        def on_start(pid: int):
            loadgen_pids.append(pid)
            monitor.watch("loadgen", pid)

        times_before = psutil.cpu_times()
        with monitor:
            result = generator.run(
                url,
                concurrency=spec.concurrency,
                duration_s=params.duration_s,
                out_dir=run_dir / "load",
                on_start=on_start,
                cpus=params.loadgen_cpus,
                requests=params.requests,
                keepalive=params.keepalive,
            )
        times_after = psutil.cpu_times()
        _raise_if_dead(target)
        stats = _server_stats(target)
        server_pid = target.groups["server"][0] if target.groups.get("server") else None
        server_affinity = _affinity(server_pid) if server_pid else ""

    if result.requests == 0:
        raise HostbenchError(f"{spec.key}: the load tool completed no request ({run_dir})")
    server_requests = stats["endpoints"].get(scenario.stats_key, 0) if stats else None
    cpu = monitor.summary()
    loadgen_cpus = params.loadgen_cpus or cpus
    row = {
        "run_key": spec.key,
        **asdict(spec),
        "started_at": started_at,
        "duration_target_s": params.duration_s,
        "requests_target": params.requests,
        "keepalive": params.keepalive,
        "warmup_max_s": params.warmup_s,
        **warm,
        **asdict(result),  # its duration_s is the measured one
        "server_requests": server_requests,
        "count_diff_pct": count_diff_pct(result.requests, server_requests),
        **cpu,
        "loadgen_cpus": ",".join(str(c) for c in params.loadgen_cpus or []) or "all",
        "server_cpus": server_affinity,
        # The load generator used (nearly) all the CPUs it may use: it, not the target,
        # may be what limits throughput.
        "loadgen_limited": bool(cpu["cpu_loadgen_cores"] >= LOADGEN_LIMITED * len(loadgen_cpus)),
        **state,
        "cpu_steal_pct": _steal_pct(times_before, times_after),
        "fingerprint": fingerprint(settings),
        "settings": settings,
    }
    row["invalid_reason"] = invalid_reason(row)
    row["valid"] = not row["invalid_reason"]
    tmp = run_dir / (ROW_FILE + ".tmp")
    tmp.write_text(json.dumps(row, indent=2))
    os.replace(tmp, run_dir / ROW_FILE)
    return row
