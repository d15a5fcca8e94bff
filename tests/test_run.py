"""One full run per load tool on the real app: the row the notebooks plot, checked."""

import csv
import math
import os
import signal
import threading
import time

import psutil
import pytest

from conftest import SHORT_RUNS
from hostbench.errors import HostbenchError, ToolMissing
from hostbench.harness.launch.tools import find_tool
from hostbench.harness.measure.run import JIT_SETTLED_METHODS, RunSpec, execute, jit_settled, steady
from hostbench.harness.measure.window import count_diff_pct, invalid_reason
from hostbench.load import read_load
from hostbench.params import StudyParams


def params(**changes) -> StudyParams:
    base = {
        "modes": ["kestrel"],
        "scenarios": ["json"],
        "tools": ["bombardier"],
        "concurrency": [4],
        "duration_s": 2,
        "warmup_s": 1,
        "repetitions": 1,
        "sample_interval_s": 0.25,
        **SHORT_RUNS,
    }
    return StudyParams.from_dict({**base, **changes})


@pytest.mark.live
@pytest.mark.parametrize("tool", ["k6", "bombardier", "wrk", "ab"])
def test_a_run_measures_load_counts_and_cpu(tool, tmp_path):
    p = params(tools=[tool])
    spec = RunSpec.of_cell(p, "kestrel", "json", tool, 4, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    assert row["rps"] > 0 and row["errors"] == 0 and row["non_2xx"] == 0
    assert row["valid"] and row["invalid_reason"] == ""
    assert abs(row["count_diff_pct"]) <= 2, (row["requests"], row["server_requests"])
    assert row["cpu_samples"] >= 4 and row["cpu_server_cores"] > 0
    assert row["cpu_loadgen_cores"] > 0 and math.isnan(row["cpu_proxy_cores"])
    assert 0 < row["cpu_total_pct"] <= 100 and row["rss_server_mb"] > 10
    assert row["latency_p50_ms"] <= row["latency_p99_ms"] <= row["latency_max_ms"]
    assert (row["block"], row["position"]) == (1, 1) and row["started_at"].endswith("+00:00")
    assert row["load_avg_1m"] >= 0 and row["cpu_steal_pct"] >= 0
    assert row["settings"]["tool"] == tool and len(row["fingerprint"]) == 12
    with open(tmp_path / spec.key / "cpu_samples.csv") as f:
        samples = list(csv.DictReader(f))
    assert len(samples) == row["cpu_samples"] and "server_cores" in samples[0]
    assert (tmp_path / spec.key / "row.json").exists()
    # The load it fired is recorded beside its command: the run's load, aimed at the app.
    fired = read_load(tmp_path / spec.key / "load")
    assert fired == spec.load.aimed_at(fired.base_url) and fired.base_url.startswith("http://")
    assert read_load(tmp_path / spec.key / "warmup") == fired.warmup()
    assert (row["duration_target_s"], row["warmup_max_s"]) == (fired.duration_s, fired.warmup_s)


@pytest.mark.live
@pytest.mark.alone  # steady within 25%: another test's load moves the rate by more
def test_warm_up_stops_at_steady_state_and_keeps_its_curve(tmp_path):
    p = params(warmup_s=30, steady_tolerance_pct=25)
    spec = RunSpec.of_cell(p, "kestrel", "text", "bombardier", 8, 1, 1)
    # A generous tolerance so a steady state comes well before the maximum.
    row = execute(spec, tmp_path / spec.key, p)
    assert row["warmup_steady"] is True and row["warmup_s"] < 29
    with open(tmp_path / spec.key / "warmup" / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    curve = [float(r["rps"]) for r in rows]
    compiled = [int(r["jit_compiled"]) for r in rows]
    assert len(curve) >= 3 and steady(curve, 25) and jit_settled(compiled)
    assert compiled[0] > JIT_SETTLED_METHODS  # a fresh app compiles far more in its first second
    # It stopped at the first window where both held.
    assert not (steady(curve[:-1], 25) and jit_settled(compiled[:-1])) or len(curve) == 3


def test_the_jit_has_settled_when_three_windows_compiled_few_methods():
    assert not jit_settled([10, 10])
    assert jit_settled([900, 40, 12, 3])
    assert not jit_settled([900, 40, 12, JIT_SETTLED_METHODS + 1])
    assert jit_settled([None, None, None])  # a server without a JIT (the Go servers)


def test_steady_needs_three_windows_within_the_tolerance():
    assert not steady([100, 100], 5)
    assert steady([10, 100, 102, 98], 5)
    assert not steady([16e3, 19.5e3, 32e3, 51e3, 54e3], 5)  # still climbing (JIT tiering)
    assert steady([16e3, 19.5e3, 32e3, 51e3, 53.9e3, 54.9e3], 5)


@pytest.mark.live
def test_pinning_sets_the_affinity_the_row_records(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    cpu = sorted(os.sched_getaffinity(0))[-1]
    p = params(modes=["nginx"], scenarios=["text"], loadgen_cpus=[cpu])
    spec = RunSpec.of_cell(p, "nginx", "text", "bombardier", 4, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    others = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != cpu)
    assert row["loadgen_cpus"] == str(cpu) and row["server_cpus"] == others  # read from /proc
    command = (tmp_path / spec.key / "load" / "command.txt").read_text()
    assert command.startswith("bombardier") or "bombardier" in command
    assert read_load(tmp_path / spec.key / "load").cpus == (cpu,)
    assert row["valid"]


@pytest.mark.live
def test_an_app_killed_during_the_load_gives_one_line_and_no_row(tmp_path):
    p = params(scenarios=["text"], duration_s=3, warmup_s=0)
    spec = RunSpec.of_cell(p, "kestrel", "text", "bombardier", 4, 1, 1)
    run_dir = tmp_path / spec.key

    def kill_app_under_load():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (run_dir / "load" / "command.txt").exists():
            time.sleep(0.05)
        time.sleep(0.5)
        # This test's own app only: never another test's (or a measurement's) beside it.
        for child in psutil.Process().children(recursive=True):
            try:
                if child.name() == "TestApp":
                    child.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass

    killer = threading.Thread(target=kill_app_under_load)
    killer.start()
    with pytest.raises(HostbenchError) as err:
        execute(spec, run_dir, p)
    killer.join()
    message = str(err.value)
    assert "TestApp exited with code" in message and "no row was written" in message
    assert "\n" not in message
    assert not (run_dir / "row.json").exists()


def test_invalid_reason_names_errors_non_2xx_and_count_mismatch():
    row = {"errors": 0, "non_2xx": 0, "requests": 100, "server_requests": 100, "concurrency": 4}
    assert invalid_reason(row) == ""
    assert invalid_reason({**row, "requests": 102}) == ""  # in flight when the tool stopped
    assert invalid_reason({**row, "errors": 3}) == "3 transport errors"
    assert invalid_reason({**row, "non_2xx": 2, "requests": 90}) == (
        "2 non-2xx responses; client counted 90, server 100"
    )


def test_count_diff_pct():
    assert count_diff_pct(102, 100) == pytest.approx(2.0)
    assert count_diff_pct(0, 0) == 0.0
    assert math.isnan(count_diff_pct(5, None))


def test_a_missing_tool_is_one_line_saying_how_to_install_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ToolMissing) as err:
        find_tool("wrk")
    assert (
        str(err.value)
        == "wrk not found: install it with apt-get install wrk (done by `make setup` as root)"
    )


@pytest.mark.live
@pytest.mark.parametrize("mode", ["kestrel", "iris-mvc"])
def test_progress_counts_the_servers_requests_while_the_load_runs(mode, tmp_path):
    p = params(
        modes=[mode], scenarios=["values"], requests=30000, duration_s=60, progress_interval_s=0.5
    )
    spec = RunSpec.of_cell(p, mode, "values", "bombardier", 4, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    with open(tmp_path / spec.key / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    counts = [int(r["requests"]) for r in rows]
    elapsed = [float(r["elapsed_s"]) for r in rows]
    # The server's own count, growing with time, ends at the run's: the reading at the end
    # comes after the load, and the harness's GET /__stats are not counted.
    assert counts == sorted(counts) and elapsed == sorted(elapsed)
    assert counts[-1] == row["server_requests"] == row["requests"] == 30000
    assert all(0 < float(r["rss_anon_mb"]) < float(r["rss_mb"]) for r in rows)
    assert row["settings"]["progress_interval_s"] == 0.5  # in the run's fingerprint


@pytest.mark.live
def test_a_run_without_progress_writes_none(tmp_path):
    p = params(duration_s=2)
    spec = RunSpec.of_cell(p, "kestrel", "json", "bombardier", 4, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    assert not (tmp_path / spec.key / "progress.csv").exists()
    assert "progress_interval_s" not in row["settings"]
