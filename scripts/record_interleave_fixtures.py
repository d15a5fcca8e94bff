#!/usr/bin/env python3
"""Record real interleaved k6 outputs for the parser tests (tests/fixtures/loadgen/k6-interleaved/).

One k6 process (4 VUs, 0.25 s slices, about 2 s) over two targets of build/testapp/TestApp
on loopback, in two cases: `ok` (two apps, GET /text) and `mixed` (target 0 an app's
/text, target 1 a port nothing listens on: transport errors in its slices only). Each case
folder holds k6's raw files, interleave.json (the slices' order) and meta.json (the apps'
own request counts).

Usage: .venv/bin/python scripts/record_interleave_fixtures.py
"""

import json
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hostbench.harness.launch import web  # noqa: E402
from hostbench.harness.launch.processes import ManagedProcess  # noqa: E402
from hostbench.harness.launch.tools import find_tool  # noqa: E402
from hostbench.harness.measure.k6_interleaved import InterleavedK6  # noqa: E402
from hostbench.harness.measure.slices import slice_schedule  # noqa: E402
from hostbench.load import Load  # noqa: E402
from hostbench.paths import ROOT  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "loadgen" / "k6-interleaved"
VUS, SLICE_S, WINDOW_S, SEED = 4, 0.25, 2.0, 7


def served(base: str) -> int:
    return json.loads(web.get(base + "/__stats").body)["endpoints"]["/text"]


def record(case: str, bases: list[str]) -> None:
    schedule = slice_schedule(len(bases), SLICE_S, WINDOW_S, SEED)
    gen = InterleavedK6([b + "/text" for b in bases], schedule)
    before = {b: served(b) for b in bases if web.answers_ok(b + "/health")}
    with tempfile.TemporaryDirectory(prefix="interleave-") as tmp:
        gen.run(Load("k6", VUS, schedule.duration_s, path="/text"), Path(tmp))
        dest = FIXTURES / case
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(tmp, dest, ignore=shutil.ignore_patterns("stderr.txt", "stdout.txt"))
    meta = {
        "vus": VUS,
        "schedule": {"slice_s": SLICE_S, "seed": SEED, "order": list(schedule.order)},
        "tool_version": gen.version(),
        # The apps' own count of /text in the window; null for the port nothing answers.
        "server_requests": [served(b) - before[b] if b in before else None for b in bases],
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{case}: server counts {meta['server_requests']}")


def main():
    app = find_tool("TestApp")
    bases = [f"http://127.0.0.1:{web.free_port()}" for _ in range(2)]
    refused = f"http://127.0.0.1:{web.free_port()}"
    with tempfile.TemporaryDirectory(prefix="interleave-apps-") as logs, ExitStack() as up:
        for n, base in enumerate(bases):
            ready = lambda b=base: web.answers_ok(b + "/health")  # noqa: E731
            app_log = Path(logs) / f"app{n}.log"
            argv = [app, "--urls", base]
            up.enter_context(ManagedProcess(f"TestApp{n}", argv, app_log, ready=ready))
        record("ok", bases)
        record("mixed", [bases[0], refused])


if __name__ == "__main__":
    main()
