#!/usr/bin/env python3
"""Record real alternating-run windows for the unit tests (tests/fixtures/loadgen/alternate/).

Per tool that cannot switch target within a run (bombardier, wrk, ab): one alternating window
(4 connections, 1 s slices, 2 rounds: four short runs) over two launched Kestrel apps (mode
kestrel) on loopback, GET /text. Each tool's folder keeps the window's interleave.json (the
slices, each run's times and gap), its runs' raw files (load/NNN-tK/) and meta.json (per
target: the counts and times as the window judged them, the app's own count among them).

Usage: .venv/bin/python scripts/record_alternate_fixtures.py [tool ...]
"""

import json
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hostbench.harness.launch.modes import launch  # noqa: E402
from hostbench.harness.measure.alternate import alternating_window  # noqa: E402
from hostbench.harness.measure.slices import slice_schedule  # noqa: E402
from hostbench.load import Load, alternating_tools  # noqa: E402
from hostbench.params import LaunchOptions  # noqa: E402
from hostbench.paths import ROOT  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "loadgen" / "alternate"
CONNECTIONS, SLICE_S, WINDOW_S, SEED = 4, 1.0, 4.0, 7
KEPT = ("target", "mode", "url", "slices", "seconds", "requests", "rps", "server_requests",
        "count_diff_pct", "count_slack", "errors", "non_2xx", "valid",
        "invalid_reason")  # fmt: skip


def record(tool: str, targets, tmp: Path) -> None:
    schedule = slice_schedule(len(targets), SLICE_S, WINDOW_S, SEED)
    out = tmp / tool
    window = alternating_window(targets, Load(tool, CONNECTIONS, WINDOW_S, path="/text"),
                                schedule, out, "/text")  # fmt: skip
    dest = FIXTURES / tool
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(out, dest, ignore=shutil.ignore_patterns("cpu_samples.csv"))
    meta = {
        "connections": CONNECTIONS,
        "tool_version": window.targets[0]["tool_version"],
        "targets": [{k: t[k] for k in KEPT} for t in window.targets],
        "window": {k: window.window[k] for k in ("runs", "wall_s", "tool_s", "gap_total_s")},
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{tool}: {[(t['requests'], t['server_requests']) for t in window.targets]}, "
          f"gaps {window.window['gap_total_s']:.3f} s")  # fmt: skip


def main(tools: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="alternate-") as tmp, ExitStack() as up:
        folder = Path(tmp)
        targets = [up.enter_context(launch("kestrel", folder / f"kestrel{i}", LaunchOptions()))
                   for i in (0, 1)]  # fmt: skip
        for tool in tools:
            record(tool, targets, folder)


if __name__ == "__main__":
    main(sys.argv[1:] or list(alternating_tools()))
