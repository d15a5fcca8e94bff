"""One run: a hosting mode, a scenario, a load tool, a concurrency, one repetition.

Launch the target, check one response, warm up (discarded), then the measured
load while the CPU monitor samples, and cross-check the client's request count
against the server's own counter. The result is one tidy row.
"""

import json
import math
import os
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .cpumonitor import CpuMonitor
from .errors import HostbenchError
from .loadgen import get_generator
from .modes import LaunchOptions, get_mode
from .scenarios import get_scenario

ROW_FILE = "row.json"  # written last, atomically: its presence marks a completed run


@dataclass(frozen=True)
class RunSpec:
    mode: str
    scenario: str
    tool: str
    concurrency: int
    repetition: int
    duration_s: float
    warmup_s: float

    @property
    def key(self) -> str:
        """Folder name of this run: readable, unique within a study, stable across resumes."""
        return f"{self.mode}__{self.scenario}__{self.tool}__c{self.concurrency}__r{self.repetition}"


def count_diff_pct(client: int, server: int | None) -> float:
    """Client minus server request count, in % of the server's count."""
    if server is None:
        return math.nan
    if server == 0:
        return 0.0 if client == 0 else math.inf
    return (client - server) / server * 100


def completed_row(run_dir: Path) -> dict | None:
    path = run_dir / ROW_FILE
    return json.loads(path.read_text()) if path.exists() else None


def execute(
    spec: RunSpec, run_dir: Path, opts: LaunchOptions, sample_interval_s: float = 0.5
) -> dict:
    """Run `spec`, keeping its artifacts in `run_dir`; returns (and saves) its row."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # leftovers of an interrupted attempt: start clean
    run_dir.mkdir(parents=True)
    mode, scenario = get_mode(spec.mode), get_scenario(spec.scenario)
    generator = get_generator(spec.tool)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")

    with mode.launch(run_dir, opts) as target:
        url = target.url + scenario.path
        scenario.validate(target.get(scenario.path))
        if spec.warmup_s > 0:
            generator.run(
                url,
                concurrency=spec.concurrency,
                duration_s=spec.warmup_s,
                out_dir=run_dir / "warmup",
            )
        target.reset_server_stats()
        monitor = CpuMonitor(run_dir / "cpu_samples.csv", interval_s=sample_interval_s)
        for group, pids in target.groups.items():
            for pid in pids:
                monitor.watch(group, pid)
        with monitor:
            result = generator.run(
                url,
                concurrency=spec.concurrency,
                duration_s=spec.duration_s,
                out_dir=run_dir / "load",
                on_start=lambda pid: monitor.watch("loadgen", pid),
            )
        stats = target.server_stats()

    if result.requests == 0:
        raise HostbenchError(f"{spec.key}: the load tool completed no request ({run_dir})")
    server_requests = stats["endpoints"].get(scenario.stats_key, 0) if stats else None
    row = {
        "run_key": spec.key,
        **asdict(spec),
        "duration_target_s": spec.duration_s,
        "started_at": started_at,
        **asdict(result),  # its duration_s is the measured one
        "server_requests": server_requests,
        "count_diff_pct": count_diff_pct(result.requests, server_requests),
        **monitor.summary(),
    }
    tmp = run_dir / (ROW_FILE + ".tmp")
    tmp.write_text(json.dumps(row, indent=2))
    os.replace(tmp, run_dir / ROW_FILE)
    return row
