#!/usr/bin/env python3
"""Record real load-tool outputs for the parser tests in tests/fixtures/loadgen/.

Runs each tool for ~2 s at concurrency 4 against build/testapp/TestApp on
loopback, in three cases: `ok` (GET /text), `non2xx` (a path that 404s) and
`refused` (a port nothing listens on; kept only for tools that still write a
summary). wrk also gets `pipeline` (depth 4). Each case folder holds the tool's
raw files plus meta.json (what was run, the tool's version, the server's own
request count for the path).

Usage: .venv/bin/python scripts/record_loadgen_fixtures.py [tool ...]
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hostbench.errors import HostbenchError  # noqa: E402
from hostbench.harness import web  # noqa: E402
from hostbench.harness.launch.processes import ManagedProcess  # noqa: E402
from hostbench.harness.launch.tools import find_tool  # noqa: E402
from hostbench.harness.measure.loadgen import get_generator  # noqa: E402
from hostbench.load import TOOLS, Load  # noqa: E402
from hostbench.paths import ROOT  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "loadgen"
CONCURRENCY = 4
DURATION_S = 2.0


def server_count(base: str, path: str) -> int:
    return json.loads(web.get(base + "/__stats").body)["endpoints"][path]


def shorten(path: Path, keep: int = 20):
    """k6 logs one warning per failed request: keep the head of a log over 64 kB."""
    if path.stat().st_size < 65536:
        return
    lines = path.read_text(errors="replace").splitlines(keepends=True)
    if len(lines) > keep:
        cut = f"[record_loadgen_fixtures: {len(lines) - keep} more lines cut]\n"
        path.write_text("".join(lines[:keep]) + cut)


def record(tool: str, case: str, base: str, url: str, path: str, pipeline: int = 1):
    gen = get_generator(tool)
    dest = FIXTURES / tool / case
    with tempfile.TemporaryDirectory(prefix=f"loadgen-{tool}-") as tmp:
        web.request("POST", base + "/__stats/reset")
        error = None
        try:
            target = url.removesuffix(path)  # the app, or a port nothing listens on
            load = Load(
                tool, CONCURRENCY, DURATION_S, pipeline=pipeline, path=path, base_url=target
            )
            result = gen.run(load, Path(tmp))
        except HostbenchError as e:
            result, error = None, str(e)
        if error and case == "refused":
            print(f"{tool}/{case}: not kept, the tool writes no summary ({error})")
            return
        if error:
            raise SystemExit(f"{tool}/{case}: {error}")
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(tmp, dest)
    for log in dest.glob("std*.txt"):
        shorten(log)
    meta = {
        "tool": tool,
        "tool_version": gen.version(),
        "url": url,
        "concurrency": CONCURRENCY,
        "duration_s": DURATION_S,
        "pipeline": pipeline,
        "target": "build/testapp/TestApp",
        # /__stats counts only the app's own endpoints, not 404s.
        "server_requests": server_count(base, path) if case in ("ok", "pipeline") else None,
        "result": result.__dict__,
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{tool}/{case}: {result.requests} requests, server saw {meta['server_requests']}")


def main(tools: list[str]):
    app = find_tool("TestApp")
    port = web.free_port()
    base = f"http://127.0.0.1:{port}"
    refused = f"http://127.0.0.1:{web.free_port()}/text"
    with (
        tempfile.TemporaryDirectory(prefix="loadgen-testapp-") as logs,
        ManagedProcess(
            "TestApp",
            [app, "--urls", base],
            Path(logs) / "testapp.log",
            ready=lambda: web.answers_ok(base + "/health"),
        ),
    ):
        for tool in tools:
            record(tool, "ok", base, base + "/text", "/text")
            record(tool, "non2xx", base, base + "/no-such-page", "/no-such-page")
            record(tool, "refused", base, refused, "/text")
            if TOOLS[tool].pipelines:
                record(tool, "pipeline", base, base + "/text", "/text", pipeline=4)


if __name__ == "__main__":
    main(sys.argv[1:] or list(TOOLS))
