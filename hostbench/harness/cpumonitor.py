"""CPU-saturation readings while load runs.

The paper tuned its virtual users so the CPU stayed at 100% (section 2.1);
this monitor says whether ours did, and which process tree used it: the
server (the app), the proxy and the load generator, in cores.
"""

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
class _Tree:
    """CPU seconds seen per pid of one process tree, to turn totals into per-tick deltas."""

    roots: list[psutil.Process] = field(default_factory=list)
    seen: dict[int, float] = field(default_factory=dict)

    def processes(self) -> list[psutil.Process]:
        procs = []
        for root in self.roots:
            try:
                procs.append(root)
                procs.extend(root.children(recursive=True))
            except psutil.NoSuchProcess:
                pass
        return procs

    def cpu_seconds_since_last(self) -> float:
        total, now = 0.0, {}
        for p in self.processes():
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            now[p.pid] = t.user + t.system
            # A process first seen now was born since the last tick (or is the first
            # tick's baseline): count only what it used after we first saw it.
            total += now[p.pid] - self.seen.get(p.pid, now[p.pid])
        self.seen = now
        return total

    def rss_mb(self) -> float:
        rss = 0
        for p in self.processes():
            try:
                rss += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return rss / 2**20


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
        self.trees = {g: _Tree() for g in GROUPS}
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._self = psutil.Process()

    def watch(self, group: str, pid: int):
        if group not in self.trees:
            raise ValueError(f"unknown process group {group!r}; allowed: {', '.join(GROUPS)}")
        with self._lock:
            try:
                proc = psutil.Process(pid)
            except psutil.NoSuchProcess:
                return
            self.trees[group].roots.append(proc)
            self.trees[group].cpu_seconds_since_last()  # baseline: count from now on

    def start(self) -> "CpuMonitor":
        psutil.cpu_percent(percpu=True)  # baseline for the first interval
        self._t0 = self._last = time.monotonic()
        self._self_cpu0 = sum(self._self.cpu_times()[:2])
        self._thread = threading.Thread(target=self._loop, name="cpu-monitor", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
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
                row[f"{group}_cores"] = tree.cpu_seconds_since_last() / dt if tree.roots else None
            row["rss_server_mb"] = self.trees["server"].rss_mb()
        self.rows.append(row)

    def _write_samples(self):
        if not self.rows:
            return
        self.samples_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.samples_path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)

    def summary(self, drop_s: float = 1.0) -> dict:
        """Steady-state means: the first and last `drop_s` seconds are ramp-up/down.

        The server's memory (RSS of its process tree): `rss_server_mean_mb` the mean and
        `rss_server_mb` the largest sample at steady state, `rss_server_peak_mb` the largest
        sample of the whole load, ramps included.
        """
        end = self.rows[-1]["t_s"] if self.rows else 0.0
        steady = [r for r in self.rows if drop_s <= r["t_s"] <= end - drop_s] or self.rows

        def mean(key):
            values = [r[key] for r in steady if r.get(key) is not None]
            return sum(values) / len(values) if values else math.nan

        return {
            "cpu_total_pct": mean("cpu_total_pct"),
            "cpu_total_pct_max": max((r["cpu_total_pct"] for r in steady), default=math.nan),
            "cpu_server_cores": mean("server_cores"),
            "cpu_proxy_cores": mean("proxy_cores"),
            "cpu_loadgen_cores": mean("loadgen_cores"),
            "rss_server_mb": max((r["rss_server_mb"] for r in steady), default=math.nan),
            "rss_server_mean_mb": mean("rss_server_mb"),
            "rss_server_peak_mb": max((r["rss_server_mb"] for r in self.rows), default=math.nan),
            "cpu_samples": len(self.rows),
            "cpu_sampler_cores": getattr(self, "sampler_cores", math.nan),
            "machine_cores": self.cores,
        }
