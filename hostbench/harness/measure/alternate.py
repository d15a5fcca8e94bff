"""Interleaved windows for the tools that cannot switch target within a run: alternating runs.

k6 sends each request of one run to the target whose slice it is (interleave.py); bombardier,
wrk and ab fire at one URL per run. Their window has the same slices (slices.py: rounds
of one slice per target, in a seeded random order recorded in interleave.json), each slice one
short run of the tool (its own command line and parser, loadgen.py) against its slice's
target, `slice_s` seconds at the cell's connections, the runs back to back.

Each target's rate is its runs' requests over their durations, both by the tool's own count
and clock. What differs from k6's window, and is recorded for the characterisation to weigh
(benchmarks/interleave_components.py --tool):
- gaps: between one run's clock and the next's, the harness starts the tool, the tool starts
  up and exits, the harness reads its output. Each run's gap and the window's total go to
  interleave.json (and the window's record).
- connections: each run opens its own, within its own clock, so its rate pays for them.
- the count: a target's runs are the only load its app sees in the window, so the app's own
  /__stats counter, read before and after the window, counts them too. wrk and ab stop a run
  with requests in flight that the app answered and the tool never read (bombardier waits for
  them), so the two counts must agree within COUNT_TOLERANCE_PCT or, when that is more, the
  connections x pipeline depth each run may leave in flight.
- latency: percentiles do not add, so a target's are its runs' weighted by their requests (an
  approximation; its mean is exact, its max the largest).
CPU per request comes from each target's own process trees over the window, as for k6.
"""

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ...errors import BadInput, HostbenchError
from ...load import TOOLS, Load, check_slice, read_load
from ..launch.modes import Target
from .interleave import (
    COUNT_TOLERANCE_PCT,
    SCHEDULE_FILE,
    InterleavedWindow,
    answer_reasons,
    target_row,
    window_record,
)
from .loadgen import LoadResult, get_generator, load_result
from .slices import SliceSchedule
from .where import LOOPBACK, Where
from .window import quiesce, raise_if_dead, served

ALTERNATING = "alternating runs"  # interleave.json's design (k6's: interleave.SWITCHING)
RUNS_DIR = "load"  # a folder per run in it, named by run_folder


def run_folder(slice_no: int, target: int) -> str:
    """The folder of slice `slice_no`'s run (from 0) against target `target`: 001-t0, ..."""
    return f"{slice_no + 1:03d}-t{target}"


def run_load(load: Load, slice_s: float) -> Load:
    """What each short run fires: the cell's load, for one slice, with no warm-up (BadInput,
    one line, for a load or a slice alternating runs cannot make)."""
    if TOOLS[load.tool].switches_target:
        raise BadInput(f"{load.tool} switches target within one run: its windows are one run "
                       "(interleave.py), not alternating runs")  # fmt: skip
    if load.requests is not None:
        raise BadInput(f"alternating runs are timed, one slice each: a load of {load.requests} "
                       "requests cannot be cut into slices")  # fmt: skip
    check_slice(load.tool, slice_s)
    return replace(load, duration_s=slice_s, warmup_s=0.0, base_url=None)


@dataclass(frozen=True)
class Run:
    """One short run of a window: its slice and target, when the harness started it (seconds
    from the window's start) and how long its process lived, and what the tool measured."""

    slice: int
    target: int
    started_s: float
    wall_s: float
    result: LoadResult

    @property
    def ended_s(self) -> float:
        return self.started_s + self.wall_s


def gaps(runs: Sequence[Run]) -> list[float]:
    """Each run's gap: the window's time no tool clock covered before its clock stopped, i.e.
    since the run before ended (the harness reading it, starting this one) plus this run's
    process time outside its own clock (start-up, exit). They add up to the window's time up
    to its last run's end less every run's duration."""
    out, last = [], 0.0
    for run in runs:
        out.append(run.started_s - last + run.wall_s - run.result.duration_s)
        last = run.ended_s
    return out


def combined(results: Sequence[LoadResult]) -> LoadResult:
    """One target's runs as one LoadResult: its requests and counts summed over its runs'
    durations summed (rps their ratio), its mean latency the runs' weighted by their requests
    (exact), its percentiles likewise (an approximation), its max the largest."""
    if not results:
        raise HostbenchError("a target with no run in its window")
    requests = sum(r.requests for r in results)
    answered = [r for r in results if r.requests > 0]
    latency = {}
    if answered:
        weight = sum(r.requests for r in answered)
        for k in ("mean", "p50", "p90", "p99"):
            latency[k] = sum(getattr(r, f"latency_{k}_ms") * r.requests for r in answered) / weight
        latency["max"] = max(r.latency_max_ms for r in answered)
    first = results[0]
    merged = load_result(
        first.tool,
        first.tool_version,
        requests,
        sum(r.duration_s for r in results),
        latency,
        non_2xx=sum(r.non_2xx for r in results),
        errors=sum(r.errors for r in results),
        bytes_read=sum(r.bytes_read for r in results),
    )
    return replace(merged, cpu_s=sum(r.cpu_s for r in results))


def per_target(schedule: SliceSchedule, results: Sequence[LoadResult]) -> list[LoadResult]:
    """Each target's LoadResult from a window's runs (`results[i]`: the run of slice i)."""
    if len(results) != len(schedule.order):
        raise HostbenchError(f"{len(results)} runs for a schedule of {len(schedule.order)} slices")
    return [
        combined([r for r, t in zip(results, schedule.order, strict=True) if t == target])
        for target in range(schedule.targets)
    ]


def read_runs(out_dir: Path) -> tuple[SliceSchedule, list[LoadResult], dict]:
    """A window's schedule, its runs' results parsed again from their raw files by the tool's
    own parser (in slice order), and its interleave.json."""
    record = json.loads((Path(out_dir) / SCHEDULE_FILE).read_text())
    schedule = SliceSchedule(record["targets"], record["slice_s"], record["seed"],
                             tuple(record["order"]))  # fmt: skip
    generator = get_generator(record["tool"])
    results = []
    for i, target in enumerate(schedule.order):
        folder = Path(out_dir) / RUNS_DIR / run_folder(i, target)
        results.append(generator.parse(read_load(folder), folder))
    return schedule, results, record


def count_slack(server_requests: int, runs: int, load: Load) -> float:
    """How far a target's two counts may be apart: COUNT_TOLERANCE_PCT of the app's count, or,
    when more, what its runs may leave in flight as each stops (connections x pipeline depth
    per run: wrk and ab drop them, the app answered them)."""
    return max(COUNT_TOLERANCE_PCT / 100 * server_requests,
               runs * load.concurrency * load.pipeline)  # fmt: skip


def alternate_reasons(row: dict) -> str:
    """Why a target's count is not a clean count of successful responses ("" if it is):
    interleave.answer_reasons, or the tool's and the app's counts more than its count_slack
    apart."""
    reasons = answer_reasons(row, "runs")
    served = row["server_requests"]
    if served is not None and not abs(row["requests"] - served) <= row["count_slack"]:
        reasons.append(
            f"{row['tool']} counted {row['requests']}, the app {row['server_requests']} (more "
            f"than {row['count_slack']:,.0f} apart: {COUNT_TOLERANCE_PCT:g}%, or what its "
            f"{row['slices']} runs may leave in flight)"
        )
    return "; ".join(reasons)


def alternating_window(
    targets: Sequence[Target],
    load: Load,
    schedule: SliceSchedule,
    out_dir: Path,
    stats_key: str,
    sample_interval_s: float = 0.5,
    where: Where = LOOPBACK,
) -> InterleavedWindow:
    """Fire `load` (bombardier, wrk or ab: its connections, path and pipeline depth) over
    `targets`, launched and warm, one short run per slice of `schedule`, each against its
    slice's target. Keeps the raw files in out_dir: interleave.json (the schedule, each run's
    times and gap), each run's folder in load/ (as any run's load/), cpu_samples.csv."""
    each = run_load(load, schedule.slice_s)
    if len(targets) != schedule.targets:
        raise HostbenchError(f"{len(targets)} targets for a schedule of {schedule.targets}")
    out_dir = Path(out_dir).resolve()  # the tool runs in its run's folder and is given paths
    out_dir.mkdir(parents=True, exist_ok=True)
    generator = get_generator(load.tool)
    where.ready_tool(generator)  # before the window: outside its clock
    loads = [each.aimed_at(t.url) for t in targets]
    urls = [aimed.url for aimed in loads]
    record = {**asdict(schedule), "design": ALTERNATING, "tool": load.tool,
              "modes": [t.mode for t in targets], "urls": urls}  # fmt: skip
    (out_dir / SCHEDULE_FILE).write_text(json.dumps(record, indent=1) + "\n")
    for target in targets:
        raise_if_dead(target)
        quiesce(target)  # what a warm-up or the window before left in flight is not counted
    served0 = [served(t, stats_key) for t in targets]
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    monitor = where.window_monitor(targets, out_dir / "cpu_samples.csv", sample_interval_s)
    runs: list[Run] = []
    with monitor:
        # As in k6's window: each target's trees over the whole window (idle in the others'
        # runs and in the gaps), charged to its requests.
        trees = where.target_trees(targets, monitor)
        t0 = time.monotonic()
        for i, target in enumerate(schedule.order):
            start = time.monotonic()
            # Where the load generator lives: its namespace, or the load host (each run one
            # ssh command there, so the gaps between runs are longer; outside every clock).
            result = generator.run(loads[target], out_dir / RUNS_DIR / run_folder(i, target),
                                   on_start=lambda pid: monitor.watch("loadgen", pid),
                                   netns=where.client_netns, host=where.loadgen_host)  # fmt: skip
            runs.append(Run(i, target, start - t0, time.monotonic() - start, result))
        wall_s = time.monotonic() - t0
        loadgen_s = sum(run.result.cpu_s for run in runs)  # each run's rusage (there), exact
        monitor.exited("loadgen", loadgen_s)
        trees.stop()
    cpu_s, memory = trees.read()
    for target in targets:
        raise_if_dead(target)
        quiesce(target)  # the requests the last runs left in flight are counted by now
    served1 = [served(t, stats_key) for t in targets]
    between = gaps(runs)
    record["runs"] = [
        {"slice": run.slice, "target": run.target, "mode": targets[run.target].mode,
         "started_s": round(run.started_s, 4), "wall_s": round(run.wall_s, 4),
         "tool_s": run.result.duration_s, "requests": run.result.requests,
         "gap_s": round(gap, 4)}
        for run, gap in zip(runs, between, strict=True)
    ]  # fmt: skip
    record |= {"wall_s": round(wall_s, 4), "gap_total_s": round(sum(between), 4)}
    (out_dir / SCHEDULE_FILE).write_text(json.dumps(record, indent=1) + "\n")
    machine = monitor.summary()
    rows = []
    counted = per_target(schedule, [run.result for run in runs])
    for i, (target, mine) in enumerate(zip(targets, counted, strict=True)):
        # the time it had: its runs' by the tool's clock
        row = target_row(i, target, urls[i], schedule, mine, mine.duration_s,
                         (served0[i], served1[i]), cpu_s[i], memory[i])  # fmt: skip
        row["count_slack"] = count_slack(row["server_requests"] or 0, schedule.order.count(i), load)
        row["invalid_reason"] = alternate_reasons(row)
        row["valid"] = not row["invalid_reason"]
        rows.append(row)
    own = {
        "design": ALTERNATING,
        "runs": len(runs),
        "wall_s": wall_s,
        "tool_s": sum(run.result.duration_s for run in runs),
        "gap_total_s": sum(between),
        "gap_max_s": max(between),
    }
    window = window_record(started_at, schedule, own, sum(run.result.requests for run in runs),
                           loadgen_s, machine)  # fmt: skip
    return InterleavedWindow(rows, window, schedule)
