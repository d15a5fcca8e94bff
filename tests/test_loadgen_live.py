"""Each load tool for ~2 s against the real TestApp on loopback.

The client's count of responses is checked against the server's own count
(GET /__stats, reset before each run). Tools stop differently at the end of the
duration: k6 and bombardier wait for requests in flight, wrk and ab abandon them,
so the server may have answered up to concurrency x pipeline more than the
client counted.
"""

import json

import pytest

from hostbench.errors import HostbenchError
from hostbench.harness.launch import web
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.harness.launch.tools import find_tool
from hostbench.harness.measure.loadgen import get_generator
from hostbench.load import Load, read_load

pytestmark = pytest.mark.live  # every test here starts real processes

CONCURRENCY = 4
DURATION_S = 2.0


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    # find_tool raises ToolMissing ("TestApp not found: ... `make setup` ...") if unbuilt.
    exe = find_tool("TestApp")
    base = f"http://127.0.0.1:{web.free_port()}"
    log = tmp_path_factory.mktemp("testapp") / "testapp.log"
    ready = lambda: web.answers_ok(base + "/health")  # noqa: E731
    with ManagedProcess("TestApp", [exe, "--urls", base], log, ready=ready):
        yield base


def served(base: str, path: str) -> int:
    return json.loads(web.get(base + "/__stats").body)["endpoints"][path]


@pytest.mark.parametrize(
    "tool,pipeline", [("k6", 1), ("bombardier", 1), ("wrk", 1), ("wrk", 4), ("ab", 1)]
)
def test_counts_match_the_server(app, tool, pipeline, tmp_path, group_gone):
    gen = get_generator(tool)
    web.request("POST", app + "/__stats/reset")
    pids = []
    load = Load(tool, CONCURRENCY, DURATION_S, pipeline=pipeline, path="/text", base_url=app)
    result = gen.run(load, tmp_path, on_start=pids.append)
    server = served(app, "/text")
    print(f"{tool} pipeline={pipeline}: client {result.requests}, server {server}")

    assert len(pids) == 1 and group_gone(pids[0]), f"{tool} left processes behind"
    assert result.tool == tool and result.tool_version == gen.version()
    assert result.errors == 0 and result.non_2xx == 0, result
    assert result.rps > 0
    assert 1.5 < result.duration_s < 3.5
    assert result.latency_p50_ms <= result.latency_p99_ms <= result.latency_max_ms
    assert abs(result.requests - server) <= 0.02 * server, (result.requests, server)
    # What the client did not count can only be requests it abandoned in flight.
    assert 0 <= server - result.requests <= CONCURRENCY * pipeline, (result.requests, server)
    for name in ("command.txt", "stdout.txt", "stderr.txt"):
        assert (tmp_path / name).exists()
    assert read_load(tmp_path) == load  # what it fired, beside how


def test_404s_are_counted_as_non_2xx(app, tmp_path):
    load = Load("bombardier", 2, 1, path="/no-such-page", base_url=app)
    result = get_generator("bombardier").run(load, tmp_path)
    assert result.requests > 0 and result.non_2xx == result.requests and result.errors == 0


def test_tool_failure_is_one_line_with_raw_output(tmp_path):
    # wrk gives up (exit 1) when its first connection is refused.
    refused = Load("wrk", 1, 1, path="/text", base_url=f"http://127.0.0.1:{web.free_port()}")
    with pytest.raises(HostbenchError) as info:
        get_generator("wrk").run(refused, tmp_path)
    message = str(info.value)
    assert "wrk exited with code 1" in message and "Connection refused" in message
    assert str(tmp_path) in message and "\n" not in message
