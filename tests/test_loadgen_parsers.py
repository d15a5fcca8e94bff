"""Parsers of the load tools, on outputs recorded from real runs against TestApp.

The fixtures come from scripts/record_loadgen_fixtures.py (2 s, concurrency 4):
`ok` GETs /text, `non2xx` a path that 404s, `refused` a port nothing listens on.
The expected numbers below are read off the raw files by eye (the tools' own
summaries), so a parser that misreads a field fails here. Re-recording changes
them: update the numbers from the new raw files.
"""

import json
import math
from pathlib import Path

import pytest

from hostbench.errors import BadInput, HostbenchError, ToolMissing
from hostbench.harness.measure import loadgen
from hostbench.harness.measure.loadgen import LoadGenerator, get_generator
from hostbench.harness.measure.tool_output import (
    LoadResult,
    parse_ab,
    parse_bombardier,
    parse_k6,
    parse_wrk,
)
from hostbench.load import TOOLS, Load

FIXTURES = Path(__file__).parent / "fixtures" / "loadgen"


def read(tool: str, case: str, name: str) -> str:
    return (FIXTURES / tool / case / name).read_text()


def parse(tool: str, case: str) -> LoadResult:
    if tool == "k6":
        return parse_k6(read(tool, case, "summary.json"))
    if tool == "bombardier":
        return parse_bombardier(read(tool, case, "stdout.txt"))
    if tool == "wrk":
        return parse_wrk(read(tool, case, "summary.json"))
    return parse_ab(read(tool, case, "stdout.txt"), read(tool, case, "percentiles.csv"))


OK_CASES = [("k6", "ok"), ("bombardier", "ok"), ("wrk", "ok"), ("wrk", "pipeline"), ("ab", "ok")]


@pytest.mark.parametrize("tool,case", OK_CASES)
def test_ok_runs_are_consistent(tool, case):
    r = parse(tool, case)
    assert r.tool == tool
    assert r.requests > 1000
    assert 1.9 < r.duration_s < 2.2
    assert r.rps == pytest.approx(r.requests / r.duration_s)
    assert 0 < r.latency_p50_ms <= r.latency_p90_ms <= r.latency_p99_ms <= r.latency_max_ms
    assert 0 < r.latency_mean_ms <= r.latency_max_ms
    assert r.non_2xx == 0 and r.errors == 0
    # Every response of /text carries its 62-byte body plus headers.
    assert r.bytes_read > 62 * r.requests


def test_k6_ok():
    r = parse("k6", "ok")
    assert r.requests == 16585
    assert r.duration_s == pytest.approx(2.004285255)
    assert r.latency_mean_ms == pytest.approx(0.42415291769671243)
    assert r.latency_p50_ms == pytest.approx(0.280952)
    assert r.latency_p90_ms == pytest.approx(0.7472994)
    assert r.latency_p99_ms == pytest.approx(2.82157876)
    assert r.latency_max_ms == pytest.approx(26.143811)
    assert r.bytes_read == 3250660


def test_bombardier_ok_converts_microseconds():
    r = parse("bombardier", "ok")
    assert r.requests == 15501
    assert r.duration_s == pytest.approx(2.000172823)
    assert r.latency_mean_ms == pytest.approx(0.5136545384168763)
    assert (r.latency_p50_ms, r.latency_p90_ms, r.latency_p99_ms) == pytest.approx(
        (0.379, 0.797, 3.041)
    )
    assert r.latency_max_ms == pytest.approx(24.124)
    assert r.bytes_read == 3038196


def test_wrk_ok_matches_its_own_report():
    r = parse("wrk", "ok")
    assert r.requests == 18550
    assert r.duration_s == pytest.approx(2.009211)
    assert (r.latency_p50_ms, r.latency_p90_ms, r.latency_p99_ms) == pytest.approx(
        (0.229, 6.088, 54.741)
    )
    assert r.latency_max_ms == pytest.approx(80.823)
    assert r.bytes_read == 3635800
    stdout = read("wrk", "ok", "stdout.txt")
    assert "18550 requests in 2.01s" in stdout
    assert f"Requests/sec: {r.rps:9.2f}" in stdout


def test_wrk_pipeline_counts_each_response():
    assert parse("wrk", "pipeline").requests == 81192
    assert "local depth = 4" in read("wrk", "pipeline", "script.lua")


def test_ab_ok_uses_csv_percentiles_and_mean_time_per_request():
    r = parse("ab", "ok")
    assert r.requests == 12824
    assert r.duration_s == 2.001
    assert r.latency_mean_ms == 0.624  # "Time per request: 0.624 [ms] (mean)"
    assert (r.latency_p50_ms, r.latency_p90_ms, r.latency_p99_ms, r.latency_max_ms) == (
        0.294,
        1.235,
        5.071,
        72.716,
    )
    assert r.bytes_read == 2821280
    assert "Requests per second:    6409.85" in read("ab", "ok", "stdout.txt")
    assert r.rps == pytest.approx(6409.85, rel=1e-3)


@pytest.mark.parametrize(
    "tool,expected", [("k6", 18753), ("bombardier", 19688), ("wrk", 29820), ("ab", 12271)]
)
def test_404s_are_non_2xx_not_errors(tool, expected):
    r = parse(tool, "non2xx")
    assert r.requests == expected
    assert r.non_2xx == expected
    assert r.errors == 0
    assert r.latency_p50_ms <= r.latency_p99_ms <= r.latency_max_ms


@pytest.mark.parametrize(
    "tool,expected", [("k6", 29872), ("bombardier", 81105), ("ab", 70724 + 35362)]
)
def test_refused_connections_are_errors_with_no_latency(tool, expected):
    r = parse(tool, "refused")
    assert r.requests == 0
    assert r.errors == expected
    assert r.non_2xx == 0
    assert r.rps == 0
    assert r.bytes_read == 0
    assert math.isnan(r.latency_p50_ms) and math.isnan(r.latency_max_ms)


def test_k6_check_failures_equal_non_2xx_plus_errors():
    for case in ("ok", "non2xx", "refused"):
        checks = json.loads(read("k6", case, "summary.json"))["metrics"]["checks"]["values"]
        r = parse("k6", case)
        assert checks["fails"] == r.non_2xx + r.errors


def test_ab_counts_receive_errors_out_of_complete_requests():
    stdout = read("ab", "refused", "stdout.txt")
    assert "Complete requests:      " in stdout
    assert "(Connect: 0, Receive: " in stdout


def test_unparseable_output_raises_value_error():
    with pytest.raises(ValueError):
        parse_ab("Benchmarking 127.0.0.1 (be patient)...", "")
    with pytest.raises(ValueError):
        parse_k6("not json")
    with pytest.raises(KeyError):
        parse_bombardier('{"spec": {}}')


# ------------------------------------------------------------- registry


def test_registry_names():
    assert list(TOOLS) == ["ab", "bombardier", "k6", "wrk"]
    for name in TOOLS:
        assert get_generator(name).name == name


def test_unknown_tool_lists_allowed():
    with pytest.raises(BadInput, match=r"unknown tool 'x'; allowed: ab, bombardier, k6, wrk"):
        get_generator("x")


def test_missing_tool_is_one_line(monkeypatch, tmp_path):
    # wrk lives in /usr/bin only: with an empty PATH find_tool cannot see it.
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissing, match=r"^wrk not found: install it with apt-get install wrk"):
        get_generator("wrk").version()


# ------------------------------------------------------------- run() with a stand-in tool


class StandIn(LoadGenerator):
    """A shell command in place of a load tool, to test run()'s process handling."""

    name = "standin"

    def __init__(self, script: str):
        super().__init__()
        self.script = script

    def version(self):
        return "standin 1"

    def command(self, load, out_dir):
        return ["/bin/sh", "-c", self.script]

    def parse(self, load, out_dir):
        return parse_wrk((out_dir / "summary.json").read_text())


# What a stand-in is asked to fire: one connection for a second (its script decides).
ONE_SECOND = Load("bombardier", 1, 1, base_url="http://x")


@pytest.mark.live
def test_run_keeps_raw_output_and_parses(tmp_path, group_gone):
    summary = (FIXTURES / "wrk" / "ok" / "summary.json").resolve()
    pids = []
    r = StandIn(f"echo out; echo err >&2; cp {summary} summary.json").run(
        ONE_SECOND, tmp_path, on_start=pids.append
    )
    assert r.requests == 18550 and r.tool_version == "standin 1"
    assert (tmp_path / "stdout.txt").read_text() == "out\n"
    assert (tmp_path / "stderr.txt").read_text() == "err\n"
    assert "/bin/sh -c" in (tmp_path / "command.txt").read_text()
    assert Load.from_json((tmp_path / "load.json").read_text()) == ONE_SECOND
    assert len(pids) == 1 and group_gone(pids[0])


@pytest.mark.live
def test_nonzero_exit_is_one_line_with_path(tmp_path):
    with pytest.raises(HostbenchError) as info:
        StandIn("echo 'bad flag' >&2; exit 3").run(ONE_SECOND, tmp_path)
    message = str(info.value)
    assert "standin exited with code 3: bad flag" in message
    assert str(tmp_path) in message and "\n" not in message


@pytest.mark.live
def test_unparseable_output_is_hostbench_error(tmp_path):
    with pytest.raises(HostbenchError, match="could not parse standin output.*raw output in"):
        StandIn("echo '{' > summary.json").run(ONE_SECOND, tmp_path)


@pytest.mark.live
def test_hung_tool_is_killed_with_its_children(tmp_path, monkeypatch, group_gone):
    monkeypatch.setattr(loadgen, "GRACE_S", 0.5)
    pids = []
    with pytest.raises(HostbenchError, match="still running"):
        half_second = Load("bombardier", 1, 0.5, base_url="http://x")
        StandIn("sleep 60 & sleep 60").run(half_second, tmp_path, on_start=pids.append)
    assert group_gone(pids[0])


@pytest.mark.live
def test_interrupt_kills_the_tool(tmp_path, group_gone):
    pids = []

    def interrupt(pid):
        pids.append(pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        StandIn("sleep 60").run(ONE_SECOND, tmp_path, on_start=interrupt)
    assert group_gone(pids[0])


@pytest.mark.live
def test_k6_script_is_the_papers(tmp_path):
    gen = get_generator("k6")
    gen.executable = lambda: Path("/usr/bin/k6")  # command() only needs a path
    load = Load("k6", 8, 15, path="/text", base_url="http://127.0.0.1:5000")
    argv = gen.command(load, tmp_path)
    script = (tmp_path / "script.js").read_text()
    assert "http.get(URL)" in script and '"is status 200": (r) => r.status === 200' in script
    assert "vus: 8," in script and 'duration: "15000ms"' in script
    assert 'const URL = "http://127.0.0.1:5000/text";' in script
    assert '"p(50)", "p(90)", "p(99)"' in script
    assert "--no-usage-report" in argv and gen.env()["K6_NO_USAGE_REPORT"] == "true"


TESTAPI = {"path": "/api/testapi", "base_url": "http://127.0.0.1:5000"}


@pytest.mark.live
@pytest.mark.parametrize(
    "load, expected, absent",
    [
        (Load("ab", 100, 30, requests=100000, keepalive=False, **TESTAPI),
         ["-n", "100000", "-c", "100"], ["-k", "-t"]),  # the 2012 article, no keep-alive
        (Load("ab", 8, 5, **TESTAPI), ["-t", "5", "-k"], []),
        (Load("bombardier", 125, 60, requests=5000000, **TESTAPI), ["-c", "125", "-n", "5000000"],
         ["-d"]),
        (Load("bombardier", 2, 10, **TESTAPI), ["-c", "2", "-d", "10000ms"], ["-n"]),
    ],
)  # fmt: skip
def test_request_counts_and_keep_alive_reach_the_command(tmp_path, load, expected, absent):
    gen = get_generator(load.tool)
    gen.executable = lambda: Path(f"/usr/bin/{load.tool}")
    argv = gen.command(load, tmp_path)
    joined = " ".join(argv)
    assert " ".join(expected) in joined or all(e in argv for e in expected)
    assert not [a for a in absent if a in argv]
    assert argv[-1] == "http://127.0.0.1:5000/api/testapi"
