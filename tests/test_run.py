"""One full run per load tool on the real app: the row the notebooks plot, checked."""

import csv
import math

import pytest

from hostbench.errors import ToolMissing
from hostbench.modes import LaunchOptions
from hostbench.run import RunSpec, count_diff_pct, execute
from hostbench.tools import find_tool


@pytest.mark.parametrize("tool", ["k6", "bombardier", "wrk", "ab"])
def test_a_run_measures_load_counts_and_cpu(tool, tmp_path):
    spec = RunSpec("kestrel", "json", tool, 4, 1, duration_s=2, warmup_s=1)
    row = execute(spec, tmp_path / spec.key, LaunchOptions(), sample_interval_s=0.25)
    assert row["rps"] > 0 and row["errors"] == 0 and row["non_2xx"] == 0
    assert abs(row["count_diff_pct"]) <= 2, (row["requests"], row["server_requests"])
    assert row["cpu_samples"] >= 4 and row["cpu_server_cores"] > 0
    assert row["cpu_loadgen_cores"] > 0 and math.isnan(row["cpu_proxy_cores"])
    assert 0 < row["cpu_total_pct"] <= 100 and row["rss_server_mb"] > 10
    assert row["latency_p50_ms"] <= row["latency_p99_ms"] <= row["latency_max_ms"]
    with open(tmp_path / spec.key / "cpu_samples.csv") as f:
        samples = list(csv.DictReader(f))
    assert len(samples) == row["cpu_samples"] and "server_cores" in samples[0]
    assert (tmp_path / spec.key / "row.json").exists()


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
