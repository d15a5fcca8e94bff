"""Interleaved windows: the compared targets alternated in short slices within one k6 run.

The VM's speed drifts by about ±15% from one 30 s stretch to the next (docs/method.md), so
two windows 15 s apart see different machines. Here two or more warm targets share one
window instead: one k6 process with the study's virtual users sends each request to the
target whose turn it is, by wall-clock slice of `slice_s` seconds from the window's start.
The slices come in rounds, one slice per target in a random order per round (seeded and
recorded; slices.py), so every target gets the same total time and no target is always first.

Each target's rate is its requests over its own slices' time, counted twice: by k6 (a
request tagged with its target; a threshold on the tag makes k6 summarise each target
apart; the script and its reading are k6_interleaved.py's) and by the app's own /__stats
counter, read before and after. The two must agree within COUNT_TOLERANCE_PCT, else the
target's count is not trusted (invalid, as a window's is today). CPU per request comes from
each target's own process trees.

A study opts in with `interleave_slice_s` (measure_interleaved: one row per mode of the
window, with the columns of any window); benchmarks/interleave_components.py measures what
the slice length does to the ratio and where the design's variance lives.
"""

import csv
import json
import math
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from ...errors import BadInput, HostbenchError
from ...load import TOOLS, Load
from ...params import StudyParams, fingerprint
from ...warmup import STEADY_WINDOWS, WINDOW_S
from ..launch.modes import Target
from .k6_interleaved import InterleavedK6
from .run import jit_settled, steady
from .slices import SliceSchedule, slice_schedule
from .where import LOOPBACK, Where
from .window import (
    LOAD_RESULT_FIELDS,
    RunSpec,
    count_diff_pct,
    judged,
    machine_state,
    measure_reasons,
    memory_columns,
    quiesce,
    quiet_gate,
    raise_if_dead,
    served,
    server_affinity,
    server_stats,
    watched_groups,
    window_row,
)

COUNT_TOLERANCE_PCT = 1.0  # k6's and the app's count of one target must agree this well
SCHEDULE_FILE = "interleave.json"  # beside load.json: the targets and the slices' order
SWITCHING = "one run switching target"  # its design (alternate.py's: alternating runs)


@dataclass
class InterleavedWindow:
    """What one interleaved window measured: a row per target, and the window's own."""

    targets: list[dict]  # per target: requests, seconds, rps, counts, CPU, validity
    window: dict  # the schedule, the load generator's CPU, the machine
    schedule: SliceSchedule = field(repr=False)

    @property
    def valid(self) -> bool:
        return all(t["valid"] for t in self.targets)


def answer_reasons(row: dict, within: str) -> list[str]:
    """What spoils any target's count, either design: transport errors, non-2xx answers, no
    response `within` its time ("slices", "runs"), or an app counter that could not be read
    (then its two counts cannot be compared)."""
    reasons = []
    if row["errors"]:
        reasons.append(f"{row['errors']} transport errors")
    if row["non_2xx"]:
        reasons.append(f"{row['non_2xx']} non-2xx responses")
    if row["requests"] == 0:
        reasons.append(f"no response in its {within}")
    if row["server_requests"] is None:
        reasons.append("the app's counter could not be read")
    return reasons


def target_reasons(row: dict) -> str:
    """Why a target's count is not a clean count of successful responses ("" if it is):
    answer_reasons, or k6's and the app's counts more than COUNT_TOLERANCE_PCT apart (k6
    waits for the requests in flight, so they agree but for a stray request)."""
    reasons = answer_reasons(row, "slices")
    if row["server_requests"] is not None and not abs(row["count_diff_pct"]) <= COUNT_TOLERANCE_PCT:
        reasons.append(f"k6 counted {row['requests']}, the app {row['server_requests']} "
                       f"(more than {COUNT_TOLERANCE_PCT:g}% apart)")  # fmt: skip
    return "; ".join(reasons)


def target_row(i, target, url, schedule, counted, seconds, served, used, memory) -> dict:
    """One target's record of an interleaved window, either design: its share of the slices
    and `seconds` of time, what the tool counted (`counted`, a LoadResult), the app's count
    from its counter before and after (`served`), its trees' CPU seconds (`used`) and
    memory readings."""
    server = None if None in served else served[1] - served[0]
    own_s = used.get("server", 0.0) + used.get("proxy", 0.0)
    return {
        "target": i,
        "mode": target.mode,
        "url": url,
        "slices": schedule.order.count(i),
        "seconds": seconds,
        **{k: v for k, v in asdict(counted).items() if k not in ("cpu_s", "duration_s")},
        "server_requests": server,
        "count_diff_pct": count_diff_pct(counted.requests, server),
        "cpu_server_s": used.get("server", math.nan),
        "cpu_proxy_s": used.get("proxy", math.nan),
        "cpu_us_per_request": own_s / counted.requests * 1e6 if counted.requests else math.nan,
        **memory_columns(memory),
    }


def window_record(started_at: str, schedule: SliceSchedule, own: dict, requests: int,
                  loadgen_s: float, machine: dict) -> dict:  # fmt: skip
    """An interleaved window's own record, either design: when it started, its schedule,
    what its design records of itself (`own`), the requests of all targets, the load
    generator's CPU seconds and the CPU monitor's summary (`machine`: its server group
    unwatched, each target's trees are read apart)."""
    return {
        "started_at": started_at,
        "slice_s": schedule.slice_s,
        "schedule_seed": schedule.seed,
        "rounds": schedule.rounds,
        "window_s": schedule.duration_s,
        **own,
        "requests": requests,
        "cpu_loadgen_s": loadgen_s,
        "cpu_total_pct": machine["cpu_total_pct"],
        "foreign_cores": machine["foreign_cores"],
        "cpu_steal_pct": machine["cpu_steal_pct"],
        "measured_s": machine["measured_s"],
        "cpu": machine,
    }


def interleaved_window(
    targets: Sequence[Target],
    load: Load,
    schedule: SliceSchedule,
    out_dir: Path,
    stats_key: str,
    sample_interval_s: float = 0.5,
    where: Where = LOOPBACK,
) -> InterleavedWindow:
    """Fire `load` (k6: its virtual users and path; its duration is the schedule's) over
    `targets`, launched and warm, in `schedule`'s slices. Keeps the raw files in out_dir
    (load/ as any run's, interleave.json, cpu_samples.csv).

    `where`: k6 runs where the load generator lives (the client namespace, the load host,
    its script copied there), aimed at each target's URL as seen from there; the targets'
    trees are read where they run (this machine's process table, which its namespaces share,
    or the server host's, read there)."""
    if not TOOLS[load.tool].switches_target:
        raise BadInput(f"{load.tool} cannot switch target within a run: its windows alternate "
                       "short runs (alternate.py)")  # fmt: skip
    if len(targets) != schedule.targets:
        raise HostbenchError(f"{len(targets)} targets for a schedule of {schedule.targets}")
    out_dir = Path(out_dir).resolve()  # k6 runs in its own folder and is given paths
    out_dir.mkdir(parents=True, exist_ok=True)
    urls = [t.url.rstrip("/") + load.path for t in targets]
    generator = InterleavedK6(urls, schedule)
    # The whole window, over every target: the load's own URL and warm-up are not used.
    load = replace(load, duration_s=schedule.duration_s, base_url=None, warmup_s=0.0)
    (out_dir / SCHEDULE_FILE).write_text(json.dumps(
        {**asdict(schedule), "design": SWITCHING, "modes": [t.mode for t in targets],
         "urls": urls}, indent=1) + "\n"
    )  # fmt: skip
    for target in targets:
        raise_if_dead(target)
        quiesce(target)  # what a warm-up or the window before left in flight is not counted
    served0 = [served(t, stats_key) for t in targets]
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    monitor = where.window_monitor(targets, out_dir / "cpu_samples.csv", sample_interval_s)
    with monitor:
        trees = where.target_trees(targets, monitor)
        result = generator.run(load, out_dir / "load",
                               on_start=lambda pid: monitor.watch("loadgen", pid),
                               netns=where.client_netns, host=where.loadgen_host)  # fmt: skip
        monitor.exited("loadgen", result.cpu_s)
        trees.stop()
    cpu_s, memory = trees.read()
    for target in targets:
        raise_if_dead(target)
    served1 = [served(t, stats_key) for t in targets]
    per_target = generator.parse_targets(out_dir / "load")
    rows = []
    for i, (target, counted) in enumerate(zip(targets, per_target, strict=True)):
        row = target_row(i, target, urls[i], schedule, counted, schedule.seconds(i),
                         (served0[i], served1[i]), cpu_s[i], memory[i])  # fmt: skip
        row["invalid_reason"] = target_reasons(row)
        row["valid"] = not row["invalid_reason"]
        rows.append(row)
    window = window_record(started_at, schedule, {"k6_duration_s": result.duration_s},
                           result.requests, result.cpu_s, monitor.summary())  # fmt: skip
    return InterleavedWindow(rows, window, schedule)


K6_START_S = 1.5  # k6's start-up, before the first slice of a warm-up together
# A warm-up together reads each mode's rate over at least this much of its own slices: over
# 0.5 s, a fresh app's relative rate moved by 20-40% from one reading to the next here
# (another app's JIT and GC work falling in its slices); over 1 s, by 6-7% (sd) once the
# JITs settled (_settled).
MIN_OWN_S = 1.0
WARMUP_FILE = "warmed_up_together.txt"  # in the warm-up folder of a mode warmed up with others


def can_warm_up_together(tool: str, where: Where) -> bool:
    """Whether a window's modes can warm up in one run of `tool` in the window's slices:
    a tool that switches target, its slices on the clock of the reader of the apps' counters
    (Where.warms_up_together)."""
    return where.warms_up_together(tool)


def warm_up_together(
    targets: Sequence[Target],
    load: Load,
    slice_s: float,
    tolerance_pct: float,
    out_dirs: Sequence[Path],
    seed: int,
    where: Where = LOOPBACK,
) -> list[dict]:
    """Warm the launched `targets` up together, as their window will load them: one k6 run
    in slices of `slice_s`, until every target got steady (each stays in turn, warm, until the
    others are), or until each had `load.warmup_s` of its own slices.

    A target's windows are periods of whole rounds, of at least warmup.WINDOW_S and
    MIN_OWN_S of its own slices; its rate there is its counter's growth over the time of its
    own slices in them (the slices counted from a start this process sets, on its own
    clock). Its curve also has that rate relative to the period's geometric mean over the
    targets: the machine's speed moves by 10-20% from one second to the next here (as a
    warm-up alone's curve shows), and all targets alike within a period. A target is ready
    when `_settled` says so.

    Discarded, as a warm-up alone; each target's curve goes to its out_dirs[i]/curve.csv,
    the k6 run's files to out_dirs[0]. Returns per target what `run.warm_up` returns, its
    warmup_s the time of its own slices."""
    n = len(targets)
    if load.warmup_s <= 0 or not can_warm_up_together(load.tool, where):
        raise HostbenchError(f"{load.tool}, warmup_s {load.warmup_s:g}: the modes of a window "
                             "cannot warm up together here")  # fmt: skip
    schedule = slice_schedule(n, slice_s, n * load.warmup_s, seed)
    per_round = n * schedule.slice_s
    shortest = max(WINDOW_S, n * MIN_OWN_S)
    period = per_round * max(1, math.ceil(shortest / per_round - 1e-9))
    start = time.time() + K6_START_S
    urls = [t.url.rstrip("/") + load.path for t in targets]
    generator = InterleavedK6(urls, schedule, start_ms=round(start * 1000))
    start = round(start * 1000) / 1000
    run = replace(load, duration_s=K6_START_S + schedule.duration_s, base_url=None,
                  warmup_s=0.0, requests=None)  # fmt: skip
    for out_dir in out_dirs:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    (Path(out_dirs[0]) / SCHEDULE_FILE).write_text(json.dumps(
        {**asdict(schedule), "design": SWITCHING, "start_epoch_s": start,
         "modes": [t.mode for t in targets], "urls": urls}, indent=1) + "\n"
    )  # fmt: skip
    for out_dir in out_dirs[1:]:
        (Path(out_dir) / WARMUP_FILE).write_text(
            f"warmed up together with {', '.join(t.mode for t in targets)}: the k6 run's "
            f"files are in {out_dirs[0]}\n"
        )
    curves: list[list[tuple[float, float, int | None, float]]] = [[] for _ in targets]
    steady_at: dict[int, float] = {}  # target: when it first got steady
    proc = generator.process(run, Path(out_dirs[0]), where.client_netns)
    with proc:
        time.sleep(max(0.0, start - time.time()))
        last = [(time.time(), server_stats(t)) for t in targets]
        k = 1
        while proc.running() and time.time() - start < schedule.duration_s:
            try:
                proc.wait(max(0.0, start + k * period - time.time()))
            except subprocess.TimeoutExpired:  # the period is over: read the counters
                pass
            k += 1
            read = {}  # target: its period's (time, rate, methods compiled)
            for i, target in enumerate(targets):
                asked, stats = time.time(), server_stats(target)
                now = (asked + time.time()) / 2  # the app answers in 1-20 ms under load
                then, before = last[i]
                last[i] = (now, stats)
                own = schedule.seconds_between(i, then - start, now - start)
                if stats is None or before is None or own <= 0:
                    continue
                rate = (int(stats["total"]) - int(before["total"])) / own
                jit = stats.get("jit_methods")
                compiled = None  # per WINDOW_S, as a warm-up alone counts it
                if jit is not None:
                    jitted = int(jit) - int(before.get("jit_methods") or 0)
                    compiled = round(jitted * WINDOW_S / (now - then))
                read[i] = (round(now - start, 3), rate, compiled)
            rates = [r for _, r, _ in read.values()]
            mean = 0.0  # no rate read, or a target served nothing: no relative rate
            if rates and all(rates):
                mean = math.exp(sum(math.log(r) for r in rates) / len(rates))
            for i, (t, rate, compiled) in read.items():
                curves[i].append((t, rate, compiled, rate / mean if mean else 0.0))
                if i not in steady_at and _settled(curves[i], tolerance_pct):
                    steady_at[i] = t  # ready, as a warm-up alone stops; kept in turn, warm
            if len(steady_at) == n:
                break
        elapsed = time.time() - start
    for target in targets:
        raise_if_dead(target)
    out = []
    for i, (curve, out_dir) in enumerate(zip(curves, out_dirs, strict=True)):
        with open(Path(out_dir) / "curve.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["t_s", "rps", "jit_compiled", "relative_rps"])
            writer.writerows((t, r, "" if m is None else m, round(x, 4)) for t, r, m, x in curve)
        own_s = schedule.seconds_between(i, 0.0, min(elapsed, schedule.duration_s))
        settled = (i in steady_at) if curve else None
        out.append({"warmup_s": round(own_s, 2), "warmup_steady": settled})
    return out


def _settled(curve: list[tuple[float, float, int | None, float]], tolerance_pct: float) -> bool:
    """Whether a warm-up together's curve ends settled: a .NET app's JIT compiled at most
    JIT_SETTLED_METHODS methods a second in each of its last readings (run.jit_settled); a
    server without a JIT count, its rate relative to the others' steady (run.steady).

    A .NET app is not also held to the rate rule: a reading of 1 s of its own slices is
    made of 4-10 slices, and its rate relative to the others' moves by 6-7% (sd) from one
    reading to the next from that alone, long after the JIT settled (six modes of jcsi2018
    here, 19 readings after it). Three readings within 5% of their mean is then a matter of
    chance: warmed up together until it happened for all six, a scenario took 114 s. The
    interleaved window's own 15 s per mode average that out (1.6% for 0.25 s slices)."""
    relative, compiled = [x for *_, x in curve], [m for _, _, m, _ in curve]
    last = compiled[-STEADY_WINDOWS:]
    if len(last) == STEADY_WINDOWS and all(m is not None for m in last):
        return jit_settled(compiled)
    return steady(relative, tolerance_pct) and jit_settled(compiled)


INTERLEAVED_FILE = "interleaved.txt"  # in the run folder of a mode whose window others hold


def measure_interleaved(
    specs: list[RunSpec],
    targets: list[Target],
    ready: list[dict],
    run_dirs: list[Path],
    params: StudyParams,
    say=print,
    fire=interleaved_window,
    where: Where = LOOPBACK,
) -> list[dict]:
    """One interleaved window of `specs` (every compared mode of one cell, each on its
    launched, prepared target; `ready[i]` what `prepare` returned for specs[i]): wait for a
    quiet machine, fire the load over the targets in slices of params.interleave_slice_s,
    each getting the load's duration_s in all (`fire`: the window of the tool's design, k6's
    here, alternate.alternating_window for the others). One row per mode, with
    the columns of any window: its rate over its own slices' time, its cores per second
    of them (so cores / rps is its CPU per request, as for any row), the window's machine.
    The raw files go to the first mode's run folder; the others' say where they are. `where`:
    the topology's places, as measure_window takes them (interleaved_window)."""
    for run_dir in run_dirs:
        if run_dir.exists():
            shutil.rmtree(run_dir)  # an interrupted attempt's leftovers: start clean
        run_dir.mkdir(parents=True)
    quiet = quiet_gate(params, say, where)
    first, load = specs[0], specs[0].load
    # Seeded by the window's identity: a resumed study slices its windows as before.
    seed = int(fingerprint({"key": first.key})[:8], 16)
    total_s = len(specs) * load.duration_s
    schedule = slice_schedule(len(specs), params.interleave_slice_s, total_s, seed)
    state = machine_state()
    window = fire(targets, load, schedule, run_dirs[0], first.scenario.stats_key,
                  params.sample_interval_s, where)  # fmt: skip
    for run_dir in run_dirs[1:]:
        (run_dir / INTERLEAVED_FILE).write_text(
            f"measured in one interleaved window with {first.key}: its raw files are there\n"
        )
    for spec, counted in zip(specs, window.targets, strict=True):
        if counted["requests"] == 0:
            raise HostbenchError(f"{spec.key}: {load.tool} completed no request in its slices "
                                 f"({run_dirs[0]})")  # fmt: skip
    rows = []
    for spec, target, own, counted, run_dir in zip(specs, targets, ready, window.targets,
                                                  run_dirs, strict=True):  # fmt: skip
        seconds = counted["seconds"]  # the time it had: its rate is requests / seconds
        measured = {k: seconds if k == "duration_s" else counted[k] for k in LOAD_RESULT_FIELDS}
        cpu = {
            **window.window["cpu"],
            # Per second of its own slices: its trees' CPU over the whole window (idle in the
            # others' slices, costing a little) over the time it had.
            "cpu_server_cores": counted["cpu_server_s"] / seconds,
            "cpu_proxy_cores": counted["cpu_proxy_s"] / seconds,
            **{k: counted[k] for k in ("rss_server_mb", "rss_server_mean_mb",
                                       "rss_server_peak_mb", "rss_server_anon_mean_mb")},
        }  # fmt: skip
        row = window_row(spec, params, where, own, load, window.window["started_at"], measured,
                         counted["server_requests"], (cpu, quiet, state),
                         server_affinity(target, where))  # fmt: skip
        reasons = [counted["invalid_reason"], *measure_reasons(row, params, watched_groups(target))]
        rows.append(judged(row, reasons, params, run_dir))
    return rows
