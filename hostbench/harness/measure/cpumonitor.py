"""CPU-saturation readings while load runs.

The paper tuned its virtual users so the CPU stayed at 100% (section 2.1);
this monitor says whether ours did, and which process tree used it: the
server (the app), the proxy and the load generator, in cores.

The numbers of a run are exact whatever its length: each is the difference of
the kernel's counters at the run's start and end (the machine's busy and stolen
time, each tree's CPU seconds, the harness's own), with a last reading at stop.
The periodic samples in between only draw the curve (cpu_samples.csv). What the
machine did besides the watched trees and the harness is `foreign_cores`: the
CPU used by processes the harness did not start.
"""

import collections
import csv
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

GROUPS = ("server", "proxy", "loadgen")


@dataclass
class ProcessTree:
    """CPU seconds seen per pid of one process tree, to turn totals into per-tick deltas."""

    roots: list[psutil.Process] = field(default_factory=list)
    seen: dict[int, float] = field(default_factory=dict)
    total_s: float = 0.0  # CPU seconds used since watched, summed over the ticks

    def processes(self) -> list[psutil.Process]:
        procs = []
        for root in self.roots:
            try:
                procs.append(root)
                procs.extend(root.children(recursive=True))
            except psutil.NoSuchProcess:
                pass
        return procs

    def tick(self) -> float:
        """CPU seconds used since the last tick (added to total_s)."""
        used = self.cpu_seconds_since_last()
        self.total_s += used
        return used

    def cpu_seconds_since_last(self) -> float:
        now = self.seen_now()
        # A process first seen now was born since the last tick (or is the first tick's
        # baseline): count only what it used after we first saw it.
        total = sum(used - self.seen.get(pid, used) for pid, used in now.items())
        self.seen = now
        return total

    def seen_now(self) -> dict[int, float]:
        """CPU seconds so far of each live process of the tree, by pid."""
        now = {}
        for p in self.processes():
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            now[p.pid] = t.user + t.system
        return now

    def rss_mb(self) -> float:
        return self.memory_mb()[0]

    def memory_mb(self) -> tuple[float, float]:
        """The tree's resident memory in MiB: all of it (RSS), and without the pages mapped
        from files (NaN where the kernel does not say which those are)."""
        rss = file_backed = 0
        for p in self.processes():
            try:
                rss += p.memory_info().rss
            except psutil.NoSuchProcess:
                continue
            mapped = _file_backed_bytes(p.pid)
            file_backed = math.nan if mapped is None else file_backed + mapped
        return rss / 2**20, (rss - file_backed) / 2**20


def _file_backed_bytes(pid: int) -> int | None:
    """A process's resident pages mapped from files: `RssFile` of /proc/PID/status, its own
    binary and the libraries and assemblies it maps (for .NET the runtime and the shared
    framework). None where the kernel does not say (not Linux, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"RssFile:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def machine_shares(before, after, cores: int) -> dict:
    """The machine between two psutil.cpu_times(): busy % of all cores, stolen %, and the
    cores spent in processes (NaN each when no time passed)."""
    delta = {f: getattr(after, f) - getattr(before, f) for f in before._fields}
    # guest time is already counted in user time (Linux), so it is not added again.
    total = sum(v for f, v in delta.items() if f not in ("guest", "guest_nice"))
    if total <= 0:
        return {"busy_pct": math.nan, "steal_pct": math.nan, "process_cores": math.nan}
    idle, steal = delta["idle"] + delta.get("iowait", 0.0), delta.get("steal", 0.0)
    # Processes' time only (user, nice, system): interrupt time (irq, softirq) is mostly the
    # loopback traffic of our own load, which no process is charged for.
    process_s = delta["user"] + delta.get("nice", 0.0) + delta["system"]
    return {
        "busy_pct": 100.0 * (total - idle - steal) / total,
        "steal_pct": 100.0 * steal / total,
        "process_cores": process_s / total * cores,
    }


def process_cpu_seconds() -> dict[int, tuple[str, float, float]]:
    """Every process's name, CPU seconds so far and start time (which tells a pid reused
    from the process it was), by pid."""
    out = {}
    for p in psutil.process_iter(["name", "cpu_times", "create_time"]):
        times = p.info["cpu_times"]
        if times is not None:
            out[p.pid] = (p.info["name"] or "?", times.user + times.system, p.info["create_time"])
    return out


def harness_pids() -> set[int]:
    """The harness and everything it started (its descendants): never foreign."""
    me = psutil.Process()
    pids = {me.pid}
    try:
        pids.update(p.pid for p in me.children(recursive=True))
    except psutil.NoSuchProcess:
        pass
    return pids


def foreign_by_process(before: dict, after: dict, own: set[int]) -> list[tuple[str, int, float]]:
    """(name, pid, CPU seconds) of each process not in `own` between two readings of
    process_cpu_seconds; one born in between counts from zero.

    Foreign CPU is read from the processes' own counters, the same accounting as our own
    trees': the machine's process time minus ours mixed two accountings (interrupt time the
    kernel charges to a process in one and not in the other) and read -0.15 to +0.04 cores
    on an idle machine (docs/method.md). Processes that start and end between the two
    readings are not seen."""
    out = []
    for pid, (name, used, born) in after.items():
        if pid in own:
            continue
        # A kernel worker renames itself as it works: the same process is the same start time.
        start = before[pid][1] if pid in before and before[pid][2] == born else 0.0
        if used > start:
            out.append((name, pid, used - start))
    return out


def foreign_seconds(before: dict, after: dict, own: set[int]) -> float:
    return sum(used for _, _, used in foreign_by_process(before, after, own))


class CpuMonitor:
    """Samples system and per-group CPU every `interval_s` in a background thread.

    Use as a context manager around the measured load; call `watch(group, pid)`
    for each process tree (the load generator's pid arrives once it started).
    """

    def __init__(self, samples_path: Path, interval_s: float = 0.5):
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.samples_path = Path(samples_path)
        self.interval_s = interval_s
        self.cores = psutil.cpu_count() or os.cpu_count() or 1
        self.trees = {g: ProcessTree() for g in GROUPS}
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._self = psutil.Process()
        self._exited: dict[str, float] = {}
        # The server's memory when watched and at stop: (RSS, RSS without mapped files).
        self.rss_edges: list[tuple[float, float]] = []

    def watch(self, group: str, pid: int):
        if group not in self.trees:
            raise ValueError(f"unknown process group {group!r}; allowed: {', '.join(GROUPS)}")
        with self._lock:
            try:
                proc = psutil.Process(pid)
            except psutil.NoSuchProcess:
                return
            tree = self.trees[group]
            tree.roots.append(proc)
            tree.seen.update(ProcessTree(roots=[proc]).seen_now())  # baseline: count from now on
            self._rss_at(tree)

    def exited(self, group: str, cpu_s: float) -> None:
        """The CPU seconds of a group whose processes have exited and been reaped (the load
        generator: its rusage), which no reading of live processes can see any more."""
        with self._lock:
            self._exited[group] = cpu_s

    def _rss_at(self, tree: "ProcessTree") -> None:
        if tree is self.trees["server"]:
            self.rss_edges.append(tree.memory_mb())

    def start(self) -> "CpuMonitor":
        psutil.cpu_percent(percpu=True)  # baseline for the first interval
        self._machine0 = psutil.cpu_times()
        self._processes0 = process_cpu_seconds()
        self._t0 = self._last = time.monotonic()
        self._self_cpu0 = sum(self._self.cpu_times()[:2])
        for tree in self.trees.values():  # count from the start, whenever watched
            tree.seen.update(tree.seen_now())
        self._thread = threading.Thread(target=self._loop, name="cpu-monitor", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        with self._lock:  # the last reading: what was used since the last tick
            for tree in self.trees.values():
                tree.tick()
            self._rss_at(self.trees["server"])
        self._machine1 = psutil.cpu_times()
        self._processes1 = process_cpu_seconds()
        self.elapsed_s = time.monotonic() - self._t0
        self.sampler_cores = (sum(self._self.cpu_times()[:2]) - self._self_cpu0) / max(
            self.elapsed_s, 1e-9
        )
        self._write_samples()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _loop(self):
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self):
        now = time.monotonic()
        dt, self._last = now - self._last, now
        per_core = psutil.cpu_percent(percpu=True)
        row = {
            "t_s": round(now - self._t0, 3),
            "cpu_total_pct": sum(per_core) / len(per_core),
            **{f"cpu{i}_pct": v for i, v in enumerate(per_core)},
        }
        with self._lock:
            for group, tree in self.trees.items():
                row[f"{group}_cores"] = tree.tick() / dt if tree.roots else None
            row["rss_server_mb"], row["rss_server_anon_mb"] = self.trees["server"].memory_mb()
        self.rows.append(row)

    def _write_samples(self):
        if not self.rows:
            return
        self.samples_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.samples_path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)

    def group_cores(self, group: str) -> float:
        """A group's CPU over the whole run, in cores; NaN when nothing of it was watched."""
        tree = self.trees[group]
        if group in self._exited:
            used = self._exited[group]
        elif tree.roots:
            used = tree.total_s
        else:
            return math.nan
        return used / max(self.elapsed_s, 1e-9)

    def machine(self) -> dict:
        """The machine between start and stop: busy % of all cores, stolen %, and the cores
        used by processes other than the harness and what it started (foreign_processes)."""
        shares = machine_shares(self._machine0, self._machine1, self.cores)
        foreign = foreign_seconds(self._processes0, self._processes1, harness_pids())
        return {
            "busy_pct": shares["busy_pct"],
            "steal_pct": shares["steal_pct"],
            "foreign_cores": foreign / self.elapsed_s if self.elapsed_s > 0 else math.nan,
        }

    def foreign_processes(self) -> list[tuple[str, int, float]]:
        """(name, pid, cores) of each process outside the harness's tree that used CPU between
        start and stop, busiest first."""
        used = foreign_by_process(self._processes0, self._processes1, harness_pids())
        return sorted(((n, p, s / max(self.elapsed_s, 1e-9)) for n, p, s in used),
                      key=lambda item: -item[2])  # fmt: skip

    def summary(self, drop_s: float = 1.0) -> dict:
        """The run's CPU and memory: exact totals from the counters at start and stop.

        The server's memory (RSS of its process tree), over the samples and the readings at
        start and stop: `rss_server_mean_mb` their mean, `rss_server_mb` the largest at
        steady state (the first and last `drop_s` seconds are ramps; all readings when the
        run is shorter), `rss_server_peak_mb` the largest of all. `rss_server_anon_mean_mb`:
        the mean without the pages mapped from files (the binaries: for .NET the runtime
        and the shared framework), what a figure "excluding the framework" compares with.
        """
        end = self.rows[-1]["t_s"] if self.rows else 0.0
        steady = [r for r in self.rows if drop_s <= r["t_s"] <= end - drop_s]
        watched = bool(self.trees["server"].roots)
        sampled = [(r["rss_server_mb"], r["rss_server_anon_mb"]) for r in self.rows if watched]
        steady_rss = [r["rss_server_mb"] for r in steady if watched]
        readings = sampled + self.rss_edges
        rss_all = [rss for rss, _ in readings]
        anon_all = [anon for _, anon in readings]
        machine = self.machine()
        busy_max = max((r["cpu_total_pct"] for r in steady), default=machine["busy_pct"])
        return {
            "cpu_total_pct": machine["busy_pct"],
            "cpu_total_pct_max": busy_max,
            "cpu_server_cores": self.group_cores("server"),
            "cpu_proxy_cores": self.group_cores("proxy"),
            "cpu_loadgen_cores": self.group_cores("loadgen"),
            "foreign_cores": machine["foreign_cores"],
            "cpu_steal_pct": machine["steal_pct"],
            "rss_server_mb": max(steady_rss or rss_all, default=math.nan),
            "rss_server_mean_mb": sum(rss_all) / len(rss_all) if rss_all else math.nan,
            "rss_server_peak_mb": max(rss_all, default=math.nan),
            "rss_server_anon_mean_mb": sum(anon_all) / len(anon_all) if anon_all else math.nan,
            "cpu_samples": len(self.rows),
            "cpu_sampler_cores": getattr(self, "sampler_cores", math.nan),
            "machine_cores": self.cores,
            "measured_s": round(self.elapsed_s, 3),
        }


# /proc/stat's first line, in its order (what machine_shares reads by name).
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest",
               "guest_nice")  # fmt: skip
_CpuTimes = collections.namedtuple("_CpuTimes", STAT_FIELDS)


def stat_times(stat: list[float]) -> _CpuTimes:
    """/proc/stat's first line, in seconds as a host's helper read it, as psutil.cpu_times()
    names them (fields an older kernel lacks are 0)."""
    return _CpuTimes(*(list(stat) + [0.0] * len(STAT_FIELDS))[: len(STAT_FIELDS)])


def host_foreign(before: dict, after: dict) -> tuple[float, float]:
    """(cores used by processes the harness did not start there, % stolen) of an ssh host
    between two readings of its processes (remote.Connection.processes)."""
    seconds = after["t"] - before["t"]
    if seconds <= 0:
        return math.nan, math.nan
    used = foreign_seconds(before["procs"], after["procs"], before["ours"] | after["ours"])
    shares = machine_shares(stat_times(before["stat"]), stat_times(after["stat"]), after["cores"])
    return used / seconds, shares["steal_pct"]


@dataclass
class RemoteCpu:
    """The server host's CPU and memory per process tree, read there at the load's start and
    stop; the same columns as CpuMonitor.summary (the load tool's CPU: its rusage there).

    The hosts in `others` (the load host) are read at start and stop too: their foreign CPU is
    added to the server host's `foreign_cores` (CPU of processes the harness did not start, on
    either machine) and `cpu_steal_pct` is the larger host's."""

    conn: object  # the server host: launch.remote.Connection
    others: tuple = ()  # other hosts of the study (the load host): Connections
    roots: dict[str, list[int]] = field(default_factory=dict)
    _exited: dict[str, float] = field(default_factory=dict)

    def watch(self, group: str, pid: int):
        if group != "loadgen":  # the load tool's pid is on the other host: its rusage counts
            self.roots.setdefault(group, []).append(pid)

    def exited(self, group: str, cpu_s: float) -> None:
        self._exited[group] = cpu_s

    def _read(self) -> dict:
        pids = [p for pids in self.roots.values() for p in pids]
        return self.conn.helper("tree", *pids)

    def __enter__(self):
        self._start = self._read()
        self._others = [[host.processes()] for host in self.others]
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self._stop = self._read()
            for readings, host in zip(self._others, self.others, strict=True):
                readings.append(host.processes())
        return False

    def seconds(self, pids: list[int]) -> float:
        """CPU seconds the trees of `pids` used between start and stop."""
        used = 0.0
        for pid in pids:
            before = self._start["trees"][str(pid)]["cpu_s"]
            after = self._stop["trees"][str(pid)]["cpu_s"]
            # A process born during the load counts from zero; one gone at stop is not seen.
            used += sum(s - before.get(p, 0.0) for p, s in after.items())
        return used

    def memory_mb(self, pids: list[int]) -> list[tuple[float, float]]:
        """The trees of `pids` at start and at stop: (RSS, RSS without the pages mapped from
        files) in MiB each; NaN without a tree."""
        if not pids:
            return [(math.nan, math.nan)] * 2
        out = []
        for reading in (self._start, self._stop):
            trees = [reading["trees"][str(p)] for p in pids]
            rss, mapped = sum(t["rss"] for t in trees), sum(t["rss_file"] for t in trees)
            out.append((rss / 2**20, (rss - mapped) / 2**20))
        return out

    def _cores(self, group: str, elapsed: float) -> float:
        if group in self._exited:
            return self._exited[group] / elapsed
        if not self.roots.get(group):
            return math.nan
        return self.seconds(self.roots[group]) / elapsed

    def summary(self) -> dict:
        elapsed = max(self._stop["t"] - self._start["t"], 1e-9)
        cores = self._stop["cores"]
        shares = machine_shares(stat_times(self._start["stat"]), stat_times(self._stop["stat"]),
                                cores)  # fmt: skip
        cpu = {g: self._cores(g, elapsed) for g in ("server", "proxy", "loadgen")}
        # Processes on the server host other than the watched trees (the load tool is not there).
        ours = sum(v for g, v in cpu.items() if g != "loadgen" and not math.isnan(v))
        foreign, steal = max(0.0, shares["process_cores"] - ours), shares["steal_pct"]
        for before, after in self._others:
            other_cores, other_steal = host_foreign(before, after)
            foreign += other_cores
            if math.isnan(steal) or other_steal > steal:  # the larger, NaN only if both are
                steal = other_steal
        server = self.roots.get("server", [])
        memory = self.memory_mb(server) if server else []
        rss = [r for r, _ in memory]
        anon = [a for _, a in memory]
        return {
            "cpu_total_pct": shares["busy_pct"],
            "cpu_total_pct_max": shares["busy_pct"],
            "cpu_server_cores": cpu["server"],
            "cpu_proxy_cores": cpu["proxy"],
            "cpu_loadgen_cores": cpu["loadgen"],
            "foreign_cores": foreign,
            "cpu_steal_pct": steal,
            "rss_server_mb": max(rss, default=math.nan),
            "rss_server_mean_mb": sum(rss) / len(rss) if rss else math.nan,
            "rss_server_peak_mb": max(rss, default=math.nan),
            "rss_server_anon_mean_mb": sum(anon) / len(anon) if anon else math.nan,
            "cpu_samples": 0,
            "cpu_sampler_cores": math.nan,
            "machine_cores": cores,
            "measured_s": round(elapsed, 3),
        }
