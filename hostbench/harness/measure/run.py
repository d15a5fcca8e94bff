"""One run: a hosting mode, a scenario, a load tool and a concurrency, in one block.

Wait for a quiet machine, launch the target, check one response, warm up
until throughput is steady (discarded; its curve is kept), then the measured
load while the CPU monitor samples, and cross-check the client's request count
against the server's own counter. The result is one tidy row, written last and
atomically; a row whose number cannot be trusted (errors, a busy machine, a run
too short or never steady, CPU not read) is kept, invalid, with its reasons.
"""

import csv
import json
import math
import os
import shutil
import subprocess
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from ... import results
from ...catalog import Mode, Scenario, get_mode, get_scenario
from ...errors import HostbenchError
from ...load import Load
from ...params import StudyParams, fingerprint
from ...warmup import JIT_SETTLED_METHODS, STEADY_WINDOWS, WINDOW_S
from ..launch import remote_helper
from ..launch.modes import Target, launch
from ..launch.netns import TwoHosts, call_in, check_route
from ..launch.remote import SshHosts
from .checks import validate
from .cpumonitor import CpuMonitor, RemoteCpu
from .limits import loadgen_limited_row
from .loadgen import LoadGenerator, LoadResult, generator_for
from .progress import FILE as PROGRESS_FILE
from .progress import ProgressMonitor
from .quiet import wait_until_quiet

ROW_FILE = "row.json"  # written last, atomically: its presence marks a completed run
QUIET_S = 0.2  # after the warm-up, the app's counter must stand still this long
SHORT_TOLERANCE = 0.95  # a run is too short below this share of min_duration_s
# A load tool's counts as a row holds them: LoadResult's fields but its own CPU (a column of
# the CPU monitor's, cpu_loadgen_cores).
LOAD_RESULT_FIELDS = tuple(f.name for f in fields(LoadResult) if f.name != "cpu_s")


@dataclass(frozen=True)
class RunSpec:
    mode: Mode
    scenario: Scenario
    load: Load  # what the load tool fires: its tool, connections, duration or requests, ...
    block: int  # repetitions are blocks: every cell runs once per block
    position: int = 0  # place in the block's (random) order, from 1
    variant: str = ""  # the params' named test-app settings this run uses; "" none
    attempt: int = 1  # 2, 3, ...: a re-run of a run the machine was too busy for
    window: int = 1  # 1, 2, ...: the measured windows of one cell in one block's launch

    @classmethod
    def of_cell(
        cls,
        params: StudyParams,
        mode: str,
        scenario: str,
        tool: str,
        concurrency: int,
        block: int,
        position: int = 0,
        variant: str = "",
    ) -> "RunSpec":
        """The run of one cell of `params` (by ids) in one block."""
        load = params.load(scenario, tool, concurrency)
        return cls(get_mode(mode), get_scenario(scenario), load, block, position, variant)

    @property
    def tool(self) -> str:
        return self.load.tool

    @property
    def concurrency(self) -> int:
        return self.load.concurrency

    @property
    def key(self) -> str:
        """Folder name of this run: readable, unique within a study, stable across resumes."""
        window = f"__w{self.window}" if self.window > 1 else ""
        again = f"__a{self.attempt}" if self.attempt > 1 else ""
        return f"{self.cell_key}__r{self.block}{window}{again}"

    @property
    def cell_key(self) -> str:
        """The cell's part of the key: mode (and variant), scenario, tool, connections."""
        return f"{self.member}__{self.scenario.id}__{self.tool}__c{self.concurrency}"

    @property
    def member(self) -> str:
        """What one launch starts for this run: its mode, with its variant."""
        return f"{self.mode.id}@{self.variant}" if self.variant else self.mode.id

    def columns(self) -> dict:
        """The run's identity as result columns."""
        return {
            "mode": self.mode.id,
            "scenario": self.scenario.id,
            "tool": self.tool,
            "concurrency": self.concurrency,
            "block": self.block,
            "position": self.position,
            "variant": self.variant,
            "attempt": self.attempt,
            "window": self.window,
        }


def run_settings(spec: RunSpec, params: StudyParams) -> dict:
    """Everything that shapes this run's measurement besides its mode and scenario."""
    settings = {"tool": spec.tool, "concurrency": spec.concurrency, **params.measured_settings()}
    if spec.variant:  # only then: runs of studies without variants keep their fingerprints
        settings["variant"] = {spec.variant: params.variant_settings(spec.variant)}
    return settings


def count_diff_pct(client: int, server: int | None) -> float:
    """Client minus server request count, in % of the server's count."""
    if server is None:
        return math.nan
    if server == 0:
        return 0.0 if client == 0 else math.inf
    return (client - server) / server * 100


BUSY = "machine busy"  # how an invalid reason starts when the machine was not quiet
UNSTEADY = "warm-up not steady"  # ...and when the warm-up ran out before the rate settled


def busy_reason(row: dict, params: StudyParams) -> str:
    """Why the machine was too busy during the run for its number to count ("" when quiet)."""
    if params.quiet_max_cores is None:
        return ""
    foreign, steal = row.get("foreign_cores"), row.get("cpu_steal_pct")
    if foreign is not None and foreign > params.quiet_max_cores:
        return (
            f"{BUSY}: {foreign:.2f} cores used by other processes "
            f"(quiet_max_cores {params.quiet_max_cores:g})"
        )
    if steal is not None and steal > params.quiet_max_steal_pct:
        return f"{BUSY}: {steal:.0f}% stolen (quiet_max_steal_pct {params.quiet_max_steal_pct:g})"
    return ""


def measure_reasons(row: dict, params: StudyParams, watched: set[str]) -> list[str]:
    """Why the run cannot be measured as it stands: too short, never steady, CPU not read
    (of a watched process group: server, proxy, loadgen)."""
    reasons = []
    # A duration-bounded run may end a few milliseconds early by the tool's own clock.
    if row["duration_s"] < SHORT_TOLERANCE * params.min_duration_s:
        fix = "raise requests" if row.get("requests_target") else "raise duration_s"
        reasons.append(
            f"{row['duration_s']:.2f} s: shorter than min_duration_s {params.min_duration_s:g}; "
            f"{fix}"
        )
    if params.require_steady and params.warmup_s > 0 and not row.get("warmup_steady"):
        reasons.append(f"{UNSTEADY} after {row['warmup_s']:.0f} s")
    for group in sorted(watched):
        value = row.get(f"cpu_{group}_cores")
        if value is None or not math.isfinite(value):
            reasons.append(f"CPU of the {group} not read")
    return reasons


def invalid_reason(row: dict) -> str:
    """Why a row's number is not a clean count of successful responses ("" when it is)."""
    reasons = []
    if row["errors"]:
        reasons.append(f"{row['errors']} transport errors")
    if row["non_2xx"]:
        reasons.append(f"{row['non_2xx']} non-2xx responses")
    server = row["server_requests"]
    # wrk and ab stop with up to `concurrency` requests in flight (x the pipeline depth),
    # counted by the server only.
    in_flight = row["concurrency"] * (row.get("pipeline") or 1)
    if server is not None and abs(row["requests"] - server) > in_flight:
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
        last = _server_stats(target)
        while proc.running() and time.monotonic() - t0 < load.warmup_s + 5:
            try:
                proc.wait(WINDOW_S)
            except subprocess.TimeoutExpired:  # the window is over: read the counter
                pass
            now, stats = time.monotonic(), _server_stats(target)
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


def _quiesce(target: Target, limit_s: float = 3.0) -> None:
    """Wait until the app's counter stops moving: requests the stopped warm-up left in flight
    (up to concurrency x pipeline depth) must not be counted in the measured load."""
    deadline = time.monotonic() + limit_s
    last = _served(target)
    while last is not None and time.monotonic() < deadline:
        time.sleep(QUIET_S)
        now = _served(target)
        if now == last:
            return
        last = now


def _served(target: Target) -> int | None:
    stats = _server_stats(target)
    return None if stats is None else int(stats["total"])


def _server_stats(target: Target) -> dict | None:
    try:
        return target.server_stats()
    except (OSError, ValueError):
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


# The test app's GET /__transport, as result columns (hostbench reads them back for every run).
TRANSPORT_COLUMNS = {
    "transport_io_queue_count": "ioQueueCount",
    "transport_inline_scheduling": "unsafePreferInlineScheduling",
    "transport_wait_for_data": "waitForDataBeforeAllocatingBuffer",
    "transport_inline_completions": "inlineCompletionsEngine",
    "transport_inline_completions_env": "inlineCompletionsEnv",
    "runtime_version": "runtime",
}


def _transport_info(target: Target, run_dir: Path) -> dict:
    """The socket-transport settings the app reports (saved as transport.json), as columns;
    empty values for a server that does not report them (the Go servers, an external one)."""
    try:
        info = target.transport_info()
    except (OSError, ValueError):
        info = None
    if info is None:
        return dict.fromkeys(TRANSPORT_COLUMNS)
    (run_dir / "transport.json").write_text(json.dumps(info, indent=2) + "\n")
    return {column: info.get(key) for column, key in TRANSPORT_COLUMNS.items()}


RTT_PROBES = 20  # empty requests timed before a run; their median is its rtt_ms


def empty_request_rtt_ms(url: str) -> float:
    """The median time of an empty request (GET /health, a new connection each, as the
    client would open one) from where this runs to `url`: the path's own round trip.
    Timed by the code topology ssh runs on its loadgen host (plain http.client, the least
    client time on top of the path's), so every topology's rtt_ms is timed alike."""
    answer = remote_helper.rtt(url + "/health", RTT_PROBES)
    if "error" in answer:
        raise HostbenchError(f"{url}/health did not answer: {answer['error']}")
    return answer["ms"]


@dataclass(frozen=True)
class Where:
    """Where a study's processes run: both on this machine's loopback (both None), the load
    generator and the server in two network namespaces (hosts, topology netns), or on two
    hosts over ssh (topology ssh)."""

    hosts: TwoHosts | None = None
    ssh: SshHosts | None = None

    @property
    def client_netns(self) -> str | None:
        return self.hosts.client if self.hosts else None

    @property
    def loadgen_host(self):
        return self.ssh.loadgen if self.ssh else None

    def path(self) -> str:
        return self.ssh.path() if self.ssh else self.hosts.path() if self.hosts else "loopback"


def server_cpus(load: Load) -> list[int] | None:
    """The CPUs the app and proxy may use: apart from the load generator's when it is
    pinned; None (anywhere) otherwise."""
    if not load.cpus:
        return None
    return [c for c in sorted(os.sched_getaffinity(0)) if c not in load.cpus]


def launched(spec: RunSpec, launch_dir: Path, params: StudyParams, where: Where = Where()):
    """A context manager that starts `spec`'s mode (with its variant's settings) in
    launch_dir and yields its Target; what it started stops however the block ends. One
    launch serves every window of its mode and variant in a block, of every scenario."""
    launch_dir.mkdir(parents=True, exist_ok=True)
    options = params.options_for(spec.variant)
    return launch(spec.mode, launch_dir, options, cpus=server_cpus(spec.load),
                  hosts=where.hosts, ssh=where.ssh)  # fmt: skip


def prepare(
    spec: RunSpec,
    target: Target,
    warmup_dir: Path,
    params: StudyParams,
    where: Where = Where(),
    warm: bool = True,
) -> dict:
    """Make a launched target ready for `spec`'s windows: check one response, read its
    transport settings and the path's round trip, and warm it up with spec's load until
    steady (artifacts in warmup_dir; `warm` False: the caller warms it up with its window's
    other modes, interleave.warm_up_together, and adds those columns). Returns the columns
    every window of this cell in this launch carries."""
    validate(spec.scenario, target.get(spec.scenario.path))
    warmup_dir.mkdir(parents=True, exist_ok=True)
    transport = _transport_info(target, warmup_dir)
    if where.hosts:
        check_route(where.hosts, urlsplit(target.url).hostname)  # the load crosses the veth
    if where.ssh:  # load goes only to the server host's inventory address, timed from loadgen
        if urlsplit(target.url).hostname != where.ssh.server_address:
            raise HostbenchError(f"{target.url}: not the inventory's server host "
                                 f"{where.ssh.server_address}; no load sent")  # fmt: skip
        rtt_ms = where.ssh.loadgen.rtt_ms(target.url + "/health", RTT_PROBES)
    else:
        rtt_ms = call_in(where.client_netns, empty_request_rtt_ms, target.url)
    if not warm:
        return {"rtt_ms": rtt_ms, **transport}
    load = spec.load.aimed_at(target.url)
    warmed = warm_up(generator_for(load), target, load, params.steady_tolerance_pct, warmup_dir,
                     where.client_netns, where.loadgen_host)  # fmt: skip
    _raise_if_dead(target)
    return {"rtt_ms": rtt_ms, **warmed, "warmup_together": False, **transport}


def execute(
    spec: RunSpec,
    run_dir: Path,
    params: StudyParams,
    say=print,
    hosts: TwoHosts | None = None,
    ssh: SshHosts | None = None,
) -> dict:
    """Run `spec` as a launch of its own with one window: launch, prepare, measure, stop
    (its launch's files, the warm-up in warmup/, in run_dir too). Returns its row."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # leftovers of an interrupted attempt: start clean
    where = Where(hosts, ssh)
    with launched(spec, run_dir, params, where) as target:
        ready = prepare(spec, target, run_dir / "warmup", params, where)
        return measure_window(spec, target, ready, run_dir, params, say, where)


def quiet_gate(params: StudyParams, say=print, where: Where = Where()) -> dict:
    """Wait (params.quiet_wait_s at most) for a quiet machine before a window, as the
    params ask: this one (its namespaces share it), or under topology ssh both hosts, read
    there. Returns the quiet columns of the window's row (NaN: the gate was off)."""
    if params.quiet_max_cores is None:
        return {"quiet_wait_s": 0.0, "quiet_before_cores": math.nan}
    hosts = where.ssh.both if where.ssh else ()
    return wait_until_quiet(
        params.quiet_max_cores, params.quiet_max_steal_pct, params.quiet_wait_s, say, hosts
    )


def measure_window(
    spec: RunSpec,
    target: Target,
    ready: dict,
    run_dir: Path,
    params: StudyParams,
    say=print,
    where: Where = Where(),
) -> dict:
    """One measured window of `spec` on a launched, prepared target (`ready`: what
    `prepare` returned): wait for a quiet machine, fire the load while the CPU monitor
    samples, cross-check the counts. Keeps its artifacts in `run_dir`; returns (and saves)
    its row.

    `say` gets a line while the window waits for a quiet machine."""
    run_dir.mkdir(parents=True, exist_ok=True)
    scenario, ssh = spec.scenario, where.ssh
    quiet = quiet_gate(params, say, where)
    load = spec.load.aimed_at(target.url)
    _raise_if_dead(target)
    _quiesce(target)
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    state = _machine_state()
    target.reset_server_stats()
    result, cpu, watched = _fire(load, target, run_dir, params, where, scenario.stats_key)
    _raise_if_dead(target)
    stats = _server_stats(target)
    server_pid = target.groups["server"][0] if target.groups.get("server") else None
    server_affinity = _affinity(server_pid) if server_pid and not ssh else ""

    if result.requests == 0:
        raise HostbenchError(f"{spec.key}: the load tool completed no request ({run_dir})")
    server_requests = stats["endpoints"].get(scenario.stats_key, 0) if stats else None
    measured = {k: v for k, v in asdict(result).items() if k != "cpu_s"}
    row = _row(spec, params, where, ready, load, started_at, measured, server_requests,
               (cpu, quiet, state), server_affinity)  # fmt: skip
    reasons = [invalid_reason(row), *measure_reasons(row, params, watched)]
    return _judged(row, reasons, params, run_dir)


def _row(spec: RunSpec, params: StudyParams, where: Where, ready: dict, load: Load,
         started_at: str, measured: dict, server_requests: int | None,
         machine: tuple[dict, dict, dict], server_cpus: str) -> dict:  # fmt: skip
    """A window's row of `spec` as results.csv holds it, but for its validity: `measured`,
    the load tool's counts (LoadResult's fields); `machine`, the CPU monitor's, the quiet
    gate's and the machine state's columns."""
    cpu, quiet, state = machine
    settings = run_settings(spec, params)
    loadgen_cpus = list(load.cpus or [])
    row = {
        "run_key": spec.key,
        **spec.columns(),
        "started_at": started_at,
        "topology": params.topology,
        "request_path": where.path(),
        "rtt_ms": ready["rtt_ms"],
        "duration_target_s": load.duration_s,
        "requests_target": load.requests,
        "pipeline": load.pipeline,
        "keepalive": load.keepalive,
        "warmup_max_s": load.warmup_s,
        "warmup_s": ready["warmup_s"],
        "warmup_steady": ready["warmup_steady"],
        "warmup_together": ready["warmup_together"],
        **measured,  # its duration_s is the measured one
        "server_requests": server_requests,
        "count_diff_pct": count_diff_pct(measured["requests"], server_requests),
        **cpu,
        **quiet,
        **{column: ready[column] for column in TRANSPORT_COLUMNS},
        "loadgen_cpus": ",".join(str(c) for c in loadgen_cpus) or "all",
        "server_cpus": server_cpus,
        **state,
        "fingerprint": fingerprint(settings),
        "settings": settings,
    }
    # Whether the load generator, not the target, limited throughput (limits.py says how).
    row["loadgen_limited"] = loadgen_limited_row(row, loadgen_cpus or None)
    return row


def _judged(row: dict, reasons: list[str], params: StudyParams, run_dir: Path) -> dict:
    """The row with its validity (`reasons`, and whether the machine was busy), saved."""
    reasons.append(busy_reason(row, params))
    row["invalid_reason"] = "; ".join(r for r in reasons if r)
    row["valid"] = not row["invalid_reason"]
    _save_row(row, run_dir)
    return row


def _fire(load: Load, target: Target, run_dir: Path, params: StudyParams, where: Where,
          stats_key: str) -> tuple:  # fmt: skip
    """Run the load at `target` while the CPU monitor watches the target's processes and the
    load generator (read on the server host under ssh, never this machine's /proc): the
    tool's result, the CPU summary and the process groups watched."""
    if where.ssh:  # the load host's foreign CPU and steal are read there too
        monitor = RemoteCpu(where.ssh.server, others=(where.ssh.loadgen,))
    else:
        monitor = CpuMonitor(run_dir / "cpu_samples.csv", interval_s=params.sample_interval_s)
    watched = {group for group, pids in target.groups.items() if pids} | {"loadgen"}
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


def _save_row(row: dict, run_dir: Path) -> None:
    """The row as row.json, written whole or not at all; a key results.csv does not declare
    fails first (results.row_text)."""
    results.row_text(row)
    tmp = run_dir / (ROW_FILE + ".tmp")
    tmp.write_text(json.dumps(row, indent=2))
    os.replace(tmp, run_dir / ROW_FILE)
