"""A run's progress, counted on the server side: its served requests and memory over time.

Only when the params ask for it (`progress_interval_s`): while the measured load runs, a
background thread reads the app's own counter (one GET /__stats, which the app does not count,
answered off the measured endpoint) and the server tree's RSS, once per interval, and a last
time when the load has ended. The rows go to progress.csv beside cpu_samples.csv; from them
the analysis reads how the cumulative mean rate and the memory converge with the request
count (hostbench.analysis.convergence), so one long run gives the whole curve.
"""

import csv
import threading
import time
from pathlib import Path

import psutil

from ..launch.modes import Target
from .cpumonitor import ProcessTree

FILE = "progress.csv"
COLUMNS = ("elapsed_s", "requests", "rss_mb", "rss_anon_mb")


class ProgressMonitor:
    """Samples `target`'s count of `stats_key` requests and its server tree's memory every
    `interval_s` seconds from start() to stop() (a context manager around the load)."""

    def __init__(self, path: Path, target: Target, stats_key: str, interval_s: float):
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.path = Path(path)
        self.target = target
        self.stats_key = stats_key
        self.interval_s = interval_s
        self.rows: list[dict] = []
        self._tree = ProcessTree(roots=[psutil.Process(p) for p in target.groups.get("server", [])])
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "ProgressMonitor":
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
        self._sample()  # the load has ended: the whole run's count
        self._write()

    def __enter__(self) -> "ProgressMonitor":
        return self.start()

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        elapsed = time.monotonic() - self._t0
        try:
            stats = self.target.server_stats()
        except (OSError, ValueError):
            return  # a missed reading leaves a gap; the run's own checks see a dead server
        if stats is None:
            return  # a server without a counter: no progress to record
        rss, anon = self._tree.memory_mb()
        self.rows.append(
            {
                "elapsed_s": round(elapsed, 3),
                "requests": int(stats["endpoints"].get(self.stats_key, 0)),
                "rss_mb": round(rss, 3),
                "rss_anon_mb": round(anon, 3),
            }
        )

    def _write(self) -> None:
        if not self.rows:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(self.rows)
