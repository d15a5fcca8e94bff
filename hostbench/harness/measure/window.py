"""One measured window, whatever its design: what every design shares.

A window loads one mode (back to back, run.py) or several in slices (one k6 run switching
target, interleave.py; alternating short runs, alternate.py). Each design implements
WindowDesign in its own module and builds its rows here: what a run is (RunSpec) and where
it runs (where.py: Where, which also reads each target's CPU trees over a shared window), the
quiet gate, the target's own counter, the machine's state, the row as results.csv holds it
(window_row) and the rules of its validity (judged). A change to a row's columns is made here alone.
"""

import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Protocol

import psutil

from ... import results
from ...catalog import Mode, Scenario, get_mode, get_scenario
from ...errors import HostbenchError
from ...load import Load
from ...params import StudyParams, fingerprint
from ..launch.modes import Target
from .limits import loadgen_limited_row
from .loadgen import LoadResult
from .where import LOOPBACK, Where

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


class WindowDesign(Protocol):
    """How a window lays out the load on its modes: one mode a window, back to back, or
    several modes in slices of one window, by one k6 run switching target or by alternating
    short runs (designs.py: BACK_TO_BACK_DESIGN, SWITCHING_DESIGN, ALTERNATING_DESIGN). Every
    window a study measures, warms up for or reads back goes through its design."""

    name: str  # as interleave.json and the run's design say it

    def windows(self, specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
        """A block's runs of this design grouped into its windows, in order."""
        ...

    def warm_up(
        self,
        window: Sequence[RunSpec],
        block: Sequence[RunSpec],
        targets: dict[str, Target],
        launch_dir: Path,
        params: StudyParams,
        where: Where,
        ready: dict,
        again: bool = False,
    ) -> None:
        """Prepare (check, warm up) what `window` needs that `ready` (by member and cell key)
        lacks, on the launched `targets` (by member), its files under launch_dir; `block`:
        the block's runs still to measure; `again`: the window's runs are re-runs whose
        warm-up never settled, warmed up anew."""
        ...

    def measure(
        self,
        specs: Sequence[RunSpec],
        targets: Sequence[Target],
        ready: Sequence[dict],
        run_dirs: Sequence[Path],
        params: StudyParams,
        say=print,
        where: Where = LOOPBACK,
    ) -> list[dict]:
        """One window of `specs`, each on its launched target `targets[i]` as `prepare`
        left it (`ready[i]`), its files in `run_dirs[i]`: one row per spec (window_row),
        judged and saved (judged)."""
        ...

    def read_back(self, window: list[RunSpec], study_dir: Path, params: StudyParams):
        """A window's finished rows by key (with the re-runs measured at once), and what is
        still to measure of it (the window at its next attempt; [] when done)."""
        ...


def quiet_gate(params: StudyParams, say=print, where: Where = LOOPBACK) -> dict:
    """Wait (params.quiet_wait_s at most) for a quiet machine before a window, as the
    params ask: the machines `where` runs on (this one, which its namespaces share, or
    both ssh hosts, read there). Returns the quiet columns of the window's row (NaN: the
    gate was off)."""
    if params.quiet_max_cores is None:
        return {"quiet_wait_s": 0.0, "quiet_before_cores": math.nan}
    return where.wait_until_quiet(
        params.quiet_max_cores, params.quiet_max_steal_pct, params.quiet_wait_s, say
    )


def server_stats(target: Target) -> dict | None:
    """The app's own counters (GET /__stats); None for a server without them. One line if
    the app stopped answering, or died."""
    try:
        return target.server_stats()
    except (OSError, ValueError):
        raise_if_dead(target)
        raise HostbenchError(f"{target.mode}: the test app stopped answering /__stats") from None


def served(target: Target, stats_key: str | None = None) -> int | None:
    """The requests the app counted, all of them or of one endpoint (`stats_key`); None for
    a server without a counter."""
    stats = server_stats(target)
    if stats is None:
        return None
    return int(stats["total"] if stats_key is None else stats["endpoints"].get(stats_key, 0))


def raise_if_dead(target: Target) -> None:
    """One line if a process of `target` exited: no row is written for it."""
    died = target.exited()
    if died:
        raise HostbenchError(f"{target.mode}: {died} during the run; no row was written")


def quiesce(target: Target, limit_s: float = 3.0) -> None:
    """Wait until the app's counter stops moving: requests the stopped warm-up left in flight
    (up to concurrency x pipeline depth) must not be counted in the measured load."""
    deadline = time.monotonic() + limit_s
    last = served(target)
    while last is not None and time.monotonic() < deadline:
        time.sleep(QUIET_S)
        now = served(target)
        if now == last:
            return
        last = now


def server_affinity(target: Target, where: Where) -> str:
    """The CPU ids the app may run on, read back from the kernel, as "0,1" ("" for none, or
    on another host)."""
    pids = target.groups.get("server")
    return where.server_cpus(pids[0]) if pids else ""


def watched_groups(target: Target) -> set[str]:
    """The process groups whose CPU a window of `target` must read: its own and the load
    generator's."""
    return {group for group, pids in target.groups.items() if pids} | {"loadgen"}


def machine_state() -> dict:
    """The machine's load and clock as a window starts, as row columns."""
    freq = psutil.cpu_freq()
    return {
        "load_avg_1m": os.getloadavg()[0],
        "cpu_freq_mhz": freq.current if freq else math.nan,
    }


def rest_memory_mb(target: Target, where: Where) -> float:
    """The server tree's RSS in MiB now (read where it runs); NaN without one
    (an external server). run.prepare reads it before the launch's first load: at rest."""
    pids = target.groups.get("server", [])
    if not pids:
        return math.nan
    return where.server_rss_mb(pids)


def memory_columns(readings: list[tuple[float, float]]) -> dict:
    """A target's memory columns from its server tree read at the window's start and end (no
    samples in between: the curve of a window shared by several trees is not drawn)."""
    rss = [r for r, _ in readings]
    anon = [a for _, a in readings]
    return {
        "rss_server_mb": max(rss),
        "rss_server_mean_mb": sum(rss) / len(rss),
        "rss_server_peak_mb": max(rss),
        "rss_server_anon_mean_mb": sum(anon) / len(anon),
    }


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


# The test app's GET /__transport, as result columns (hostbench reads them back for every run).
TRANSPORT_COLUMNS = {
    "transport_io_queue_count": "ioQueueCount",
    "transport_inline_scheduling": "unsafePreferInlineScheduling",
    "transport_wait_for_data": "waitForDataBeforeAllocatingBuffer",
    "transport_inline_completions": "inlineCompletionsEngine",
    "transport_inline_completions_env": "inlineCompletionsEnv",
    "runtime_version": "runtime",
}


def window_row(spec: RunSpec, params: StudyParams, where: Where, ready: dict, load: Load,
               started_at: str, measured: dict, server_requests: int | None,
               machine: tuple[dict, dict, dict], server_cpus: str) -> dict:  # fmt: skip
    """A window's row of `spec` as results.csv holds it, but for its validity (judged):
    `ready`, what run.prepare returned for it; `measured`, the load tool's counts
    (LOAD_RESULT_FIELDS); `machine`, the CPU monitor's, the quiet gate's and the machine
    state's columns; `server_cpus`, server_affinity's."""
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
        **{column: ready[column] for column in (*TRANSPORT_COLUMNS, *results.TLS_COLUMNS)},
        **{c.name: ready[c.name] for c in results.RUNTIME_VARIANT_COLUMNS},
        "loadgen_cpus": ",".join(str(c) for c in loadgen_cpus) or "all",
        "server_cpus": server_cpus,
        **state,
        "fingerprint": fingerprint(settings),
        "settings": settings,
    }
    # Whether the load generator, not the target, limited throughput (limits.py says how).
    row["loadgen_limited"] = loadgen_limited_row(row, loadgen_cpus or None)
    return row


def judged(row: dict, reasons: list[str], params: StudyParams, run_dir: Path) -> dict:
    """The row with its validity (`reasons`, and whether the machine was busy), saved."""
    reasons.append(busy_reason(row, params))
    row["invalid_reason"] = "; ".join(r for r in reasons if r)
    row["valid"] = not row["invalid_reason"]
    _save_row(row, run_dir)
    return row


def _save_row(row: dict, run_dir: Path) -> None:
    """The row as row.json, written whole or not at all; a key results.csv does not declare
    fails first (results.row_text)."""
    results.row_text(row)
    tmp = run_dir / (ROW_FILE + ".tmp")
    tmp.write_text(json.dumps(row, indent=2))
    os.replace(tmp, run_dir / ROW_FILE)
