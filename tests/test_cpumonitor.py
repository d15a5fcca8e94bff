"""CpuMonitor on real processes: a CPU-burning child must show up in its group."""

import subprocess
import sys
import time

import psutil
import pytest

from hostbench.harness.measure.cpumonitor import CpuMonitor

BURN = "import time\nend = time.time() + 10\nwhile time.time() < end: pass\n"


@pytest.mark.live
def test_a_busy_process_tree_is_measured_in_cores(tmp_path):
    # A parent that only waits, with a busy child: the tree must count the child.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess,sys; subprocess.run([sys.executable,'-c',{BURN!r}])",
        ]
    )
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"])
    try:
        time.sleep(0.3)
        (child,) = psutil.Process(parent.pid).children()
        monitor = CpuMonitor(tmp_path / "samples.csv", interval_s=0.25)
        monitor.watch("server", parent.pid)
        monitor.watch("proxy", idle.pid)
        used0, t0 = sum(child.cpu_times()[:2]), time.monotonic()
        with monitor:
            time.sleep(3)
        # What the child really used, in cores: on a busy machine it gets less than one.
        truth = (sum(child.cpu_times()[:2]) - used0) / (time.monotonic() - t0)
        s = monitor.summary(drop_s=0.5)
    finally:
        parent.kill()
        idle.kill()
        parent.wait()
        idle.wait()
    assert s["cpu_samples"] >= 8
    assert truth > 0.1 and abs(s["cpu_server_cores"] - truth) < 0.25 * truth + 0.05
    assert s["cpu_server_cores"] < 1.3  # one busy thread is at most about one core
    assert s["cpu_proxy_cores"] < 0.2
    assert s["cpu_total_pct"] > 100 / s["machine_cores"] * truth * 0.6
    assert s["rss_server_mb"] > 1
    lines = (tmp_path / "samples.csv").read_text().splitlines()
    assert lines[0].startswith("t_s,cpu_total_pct,cpu0_pct")
    assert len(lines) == s["cpu_samples"] + 1


def test_unknown_group_and_bad_interval(tmp_path):
    with pytest.raises(ValueError, match="unknown process group 'db'"):
        CpuMonitor(tmp_path / "s.csv").watch("db", 1)
    with pytest.raises(ValueError):
        CpuMonitor(tmp_path / "s.csv", interval_s=0)


# Holds 20 MB, then after 1.5 s 120 MB more (touched, so resident) until it is killed.
GROW = (
    "import time\n"
    "a = bytearray(20 * 2**20)\n"
    "time.sleep(1.5)\n"
    "b = bytearray(120 * 2**20)\n"
    "time.sleep(30)\n"
)


@pytest.mark.live
def test_server_memory_is_reported_as_steady_mean_steady_max_and_peak(tmp_path):
    grower = subprocess.Popen([sys.executable, "-c", GROW])
    try:
        time.sleep(0.3)
        monitor = CpuMonitor(tmp_path / "samples.csv", interval_s=0.2)
        monitor.watch("server", grower.pid)
        with monitor:
            time.sleep(3.5)
        s = monitor.summary(drop_s=0.5)
    finally:
        grower.kill()
        grower.wait()
    samples = [r["rss_server_mb"] for r in monitor.rows]
    assert min(samples) < 100 < max(samples)  # it grew while we watched
    assert s["rss_server_peak_mb"] == max(samples) > 120
    # The mean lies between the two plateaus; the steady max is the plateau after growing.
    assert min(samples) < s["rss_server_mean_mb"] < s["rss_server_mb"] <= s["rss_server_peak_mb"]
    header = (tmp_path / "samples.csv").read_text().splitlines()[0]
    assert "rss_server_mb" in header and "rss_server_anon_mb" in header
    # Without the pages mapped from files (python's binary and libraries, a few MB) what is
    # left is the process's own memory: the 20 MB it held throughout and more.
    mapped = s["rss_server_mean_mb"] - s["rss_server_anon_mean_mb"]
    assert 1 < mapped < 40 and s["rss_server_anon_mean_mb"] > 20
