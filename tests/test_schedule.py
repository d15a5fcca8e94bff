"""The schedule of a study: launches kept warm, compared windows back to back in a balanced
order, a busy window re-done at once, the launch as the unit of the interval, the blocks a
target half-width calls for, one measurement per machine at a time, foreign CPU read right."""

import math
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pandas as pd
import psutil
import pytest
import yaml

from conftest import SHORT_RUNS
from hostbench.analysis import intervals, student_t
from hostbench.harness.design import blocks_needed
from hostbench.harness.measure.cpumonitor import CpuMonitor
from hostbench.harness.study import run_order
from hostbench.params import StudyParams
from hostbench.results import per_launch, read_results

BASE = {
    "modes": ["nginx", "kestrel"],
    "scenarios": ["text", "html"],
    "tools": ["bombardier"],
    "concurrency": [2],
    "duration_s": 1,
    "warmup_s": 0,
    "min_duration_s": 1,
    "repetitions": 4,
}


def _params(**changes) -> StudyParams:
    return StudyParams.from_dict({**BASE, **changes})


def test_compared_windows_run_back_to_back_in_a_balanced_order():
    specs = run_order(_params(windows=3), seed=5)
    assert len(specs) == 4 * 2 * 2 * 3  # blocks x scenarios x modes x windows
    for block in range(1, 5):
        in_block = [s for s in specs if s.block == block]
        for scenario in ("text", "html"):
            runs = [s for s in in_block if s.scenario.id == scenario]
            # A sub-block's windows are consecutive: nothing else runs between them.
            places = [in_block.index(s) for s in runs]
            assert places == list(range(places[0], places[0] + len(runs)))
            # Round by round, each mode once: A B, then B A, then A B (each pair adjacent).
            rounds = [runs[i : i + 2] for i in range(0, len(runs), 2)]
            assert [sorted(s.mode.id for s in r) for r in rounds] == [["kestrel", "nginx"]] * 3
            assert [r[0].mode.id for r in rounds] != [rounds[0][0].mode.id] * 3
            assert [[s.window for s in r] for r in rounds] == [[1, 1], [2, 2], [3, 3]]
    # Across the study, each mode comes first in a pair equally often.
    firsts = Counter(
        specs[i].mode.id
        for i in range(0, len(specs), 2)
        if specs[i].scenario == specs[i + 1].scenario
    )
    assert firsts["kestrel"] == firsts["nginx"]
    assert len({s.key for s in specs}) == len(specs)  # every window its own folder


def test_modes_off_the_focus_get_one_window_a_block():
    p = _params(modes=["nginx", "kestrel", "caddy", "yarp"], windows=2, focus=["kestrel"])
    specs = run_order(p, seed=1)
    per_cell = Counter((s.mode.id, s.scenario.id, s.block) for s in specs)
    assert {per_cell[m, "text", 1] for m in ("nginx", "kestrel")} == {2}
    assert {per_cell[m, "text", 1] for m in ("caddy", "yarp")} == {1}
    # Blocks beyond the first ones (a target's) measure the focus alone.
    more = run_order(p, seed=1, blocks=6)
    assert {s.mode.id for s in more if s.block > 4} == {"nginx", "kestrel"}
    assert more[: len(specs)] == specs  # the first blocks' order is kept
    # The focus pair's two windows of a round stay next to each other.
    text = [s for s in specs if s.block == 1 and s.scenario.id == "text"]
    focus = [i for i, s in enumerate(text) if s.mode.id in ("nginx", "kestrel")]
    assert focus[1] == focus[0] + 1
    # An added block's windows are 4 of a first one's 6, the focus's (the time cap counts so).
    per_block = Counter(s.block for s in more)
    assert per_block[5] / per_block[1] == 4 / 6


def test_a_focus_on_the_baseline_or_an_unknown_mode_is_one_line():
    with pytest.raises(Exception, match="names the baseline 'nginx'"):
        _params(baseline="nginx", focus=["nginx"])
    with pytest.raises(Exception, match="names 'iris', not one of the modes"):
        _params(focus=["iris"])


def _two_level(launches: int, windows: int, sd_between: float, sd_within: float, seed=0):
    """Results of `launches` blocks x `windows` windows of kestrel and nginx, kestrel's true
    ratio 1.5; each launch moves the ratio by N(0, sd_between), each window its own rate by
    N(0, sd_within)."""
    rng = np.random.default_rng(seed)
    rows = []
    for block in range(1, launches + 1):
        shift = rng.normal(0, sd_between)
        for window in range(1, windows + 1):
            for mode, log_rate in (("nginx", 9.0), ("kestrel", 9.0 + math.log(1.5) + shift)):
                rate = math.exp(log_rate + rng.normal(0, sd_within))
                rows.append({"mode": mode, "variant": "", "scenario": "text", "tool": "k6",
                             "concurrency": 8, "block": block, "window": window, "rps": rate,
                             "requests": int(rate * 15), "valid": True})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_launch_is_the_unit_of_the_interval_of_a_two_level_design():
    sd_between, sd_within, windows = 0.03, 0.07, 3
    df = _two_level(400, windows, sd_between, sd_within)
    launches = per_launch(df)
    assert len(launches) == 800 and set(launches["windows"]) == {windows}
    ratio = intervals.paired_ratios(df, "nginx").iloc[0]
    assert ratio["n"] == 400  # launches, not windows
    # The half-width follows both components: sd of a launch's log ratio is
    # sqrt(sd_between^2 + 2 sd_within^2 / windows).
    sd = math.sqrt(sd_between**2 + 2 * sd_within**2 / windows)
    expected = student_t.t_quantile(0.975, 399) * sd / math.sqrt(400)
    half = (math.log(ratio["ci_high"]) - math.log(ratio["ci_low"])) / 2
    assert half == pytest.approx(expected, rel=0.12)
    assert math.log(ratio["ratio"]) == pytest.approx(math.log(1.5), abs=3 * expected)
    # Windows taken as independent would claim a narrower interval than the launches allow.
    as_windows = df.assign(block=df["block"] * 10 + df["window"], window=1)
    narrow = intervals.paired_ratios(as_windows, "nginx").iloc[0]
    assert narrow["n"] == 1200 and narrow["ci_high"] - narrow["ci_low"] < (
        ratio["ci_high"] - ratio["ci_low"]
    )


def test_invalid_windows_are_left_out_of_their_launch():
    df = _two_level(3, 2, 0.0, 0.05)
    df.loc[0, "valid"] = False
    df.loc[0, "rps"] = 1.0  # a busy window's rate must not pull its launch down
    launches = per_launch(df)
    nginx_1 = launches[(launches["mode"] == "nginx") & (launches["block"] == 1)]
    assert sorted(nginx_1["windows"]) == [1, 1] and nginx_1["rps"].min() == 1.0
    assert nginx_1.loc[nginx_1["valid"], "rps"].iloc[0] > 1000
    assert intervals.paired_ratios(df, "nginx").attrs["left_out_invalid"] == 1


def _focus_rows(shared: bool) -> pd.DataFrame:
    # Two blocks of two windows; yarp (outside focus) only in the first. The machine is 20%
    # slower in each block's second window; each mode's rates otherwise exact.
    rows = []
    for block in (1, 2):
        for window, speed in ((1, 1.0), (2, 0.8)):
            for mode, rate in (("kestrel", 1000.0), ("nginx", 300.0), ("yarp", 400.0)):
                if mode == "yarp" and window == 2:
                    continue
                start = f"2026-11-27T10:{block}{window}:00" + ("" if shared else f".{len(mode)}")
                rows.append({"mode": mode, "variant": "", "scenario": "text", "tool": "wrk",
                             "concurrency": 8, "block": block, "window": window,
                             "started_at": start, "rps": rate * speed * (1.01 if block == 2 else 1),
                             "valid": True})  # fmt: skip
    return pd.DataFrame(rows)


def test_a_mode_outside_focus_is_paired_within_the_interleaved_window_it_shared():
    ratios = intervals.paired_ratios(_focus_rows(shared=True), "kestrel").set_index("mode")
    # yarp ran only in the fast window: paired there, 40% of Kestrel, not 40% / sqrt(0.8).
    assert ratios.loc["yarp", "ratio"] == pytest.approx(0.4)
    assert ratios.loc["nginx", "ratio"] == pytest.approx(0.3)  # in both windows: as it was
    launches = per_launch(_focus_rows(shared=True)).set_index(["mode", "block"])
    assert launches.loc[("kestrel", 1), "rps"] == pytest.approx(1000 * math.sqrt(0.8))
    # Back to back, windows share no time: no drift is taken from them.
    apart = intervals.paired_ratios(_focus_rows(shared=False), "kestrel").set_index("mode")
    assert apart.loc["yarp", "ratio"] == pytest.approx(0.4 / math.sqrt(0.8))


def _rows_with_spread(blocks: int, spread: float) -> list[dict]:
    rows = []
    for b in range(1, blocks + 1):
        shift = spread * (1 if b % 2 else -1)
        for mode, rate in (("nginx", 1000.0), ("kestrel", 1500.0 * math.exp(shift))):
            rows.append({"mode": mode, "variant": "", "scenario": "text", "tool": "bombardier",
                         "concurrency": 2, "block": b, "rps": rate, "valid": True})  # fmt: skip
    return rows


def test_a_target_half_width_sets_the_blocks_once_by_steins_rule():
    p = _params(scenarios=["text"], repetitions=3, target_halfwidth_pct=5, max_repetitions=40)
    rows = _rows_with_spread(3, 0.05)
    design = blocks_needed(rows, p, minutes_per_block=1.0)
    logs = [math.log(1.5) + 0.05 * (1 if b % 2 else -1) for b in (1, 2, 3)]
    s = float(np.std(logs, ddof=1))
    wanted = math.ceil((student_t.t_quantile(0.975, 2) * s / math.log(1.05)) ** 2)
    assert design["wanted_blocks"] == wanted and design["blocks"] == wanted > 3
    # Capped by the blocks allowed and by the time: never below the first blocks.
    first = {"scenarios": ["text"], "repetitions": 3, "target_halfwidth_pct": 5}
    capped = blocks_needed(rows, _params(**first, max_repetitions=6), 1.0)
    assert capped["blocks"] == 6 and "max_repetitions 6" in capped["decision"]
    timed = blocks_needed(rows, _params(**first, max_minutes=10), 2.0)
    assert timed["blocks"] == 5 and "max_minutes 10" in timed["decision"]
    # Added blocks that measure a quarter of a block's windows go four times as fast:
    # 3 first blocks take 6 of the 10 minutes, the other 4 hold 8 added blocks.
    quarter = blocks_needed(rows, _params(**first, max_minutes=10), 2.0, added_share=0.25)
    assert quarter["blocks"] == 11 and quarter["added_block_share"] == 0.25
    # A spread already within the target keeps the first blocks.
    assert blocks_needed(_rows_with_spread(3, 0.001), p, 1.0)["blocks"] == 3


# ---------------------------------------------------------------------- live

BURN = """
import sys, time
duty, path = float(sys.argv[1]), sys.argv[2]
open(path, "w").write("ready")
end = time.time() + 600  # killed by the fixture when its test ends
while time.time() < end:
    t = time.time()
    while time.time() - t < 0.02 * duty: pass
    time.sleep(0.02 * (1 - duty))
"""


@pytest.fixture
def orphan_burner(tmp_path):
    """Start a burner of about `duty` cores that is not the harness's descendant (its parent
    exits at once), as another user's program would be; yields its psutil.Process."""
    started = []

    def start(duty: float) -> psutil.Process:
        pidfile, ready = tmp_path / "burner.pid", tmp_path / "burner.ready"
        script = tmp_path / "burn.py"
        script.write_text(BURN)
        subprocess.run(["sh", "-c", f'"{sys.executable}" "{script}" {duty} "{ready}" & '
                        f'echo $! > "{pidfile}"'], check=True)  # fmt: skip
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc = psutil.Process(int(pidfile.read_text()))
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def _monitored(seconds: float, tmp_path) -> CpuMonitor:
    monitor = CpuMonitor(tmp_path / "samples.csv")
    with monitor:
        time.sleep(seconds)
    return monitor


@pytest.mark.live
def test_foreign_cpu_reads_a_known_load(tmp_path, orphan_burner):
    # Read from the processes' own counters, a foreign figure is never below zero (the old
    # machine-minus-ours difference read -0.15 cores on an idle machine, and was clipped).
    assert _monitored(2, tmp_path).summary()["foreign_cores"] >= 0
    burner = orphan_burner(0.3)
    cpu0 = sum(burner.cpu_times()[:2])
    t0 = time.monotonic()
    monitor = _monitored(3, tmp_path)
    used = (sum(burner.cpu_times()[:2]) - cpu0) / (time.monotonic() - t0)
    assert 0.05 < used < 0.5  # the burner ran (about 0.3 cores on a quiet machine)
    seen = {pid: cores for _, pid, cores in monitor.foreign_processes()}
    assert seen[burner.pid] == pytest.approx(used, abs=0.05)
    # On a quiet machine (CI) the burner is all of it; other work only adds to it.
    assert monitor.summary()["foreign_cores"] >= seen[burner.pid] - 1e-9


def _cli(*args):
    return subprocess.Popen([sys.executable, "-m", "hostbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


@pytest.mark.live
def test_a_busy_window_is_measured_again_at_once_beside_its_pair(tmp_path, orphan_burner):
    params = {**BASE, "scenarios": ["text"], "repetitions": 1, "windows": 2,
              "quiet_max_cores": 0.2, "quiet_wait_s": 1, "busy_reruns": 1}  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    orphan_burner(0.9)  # busy through every window, whatever the load takes
    cli = _cli("run", str(path), "--run-id", "busy", "--runs-dir", str(tmp_path), "--no-progress")
    _, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, err
    rows = read_results(tmp_path / "busy").sort_values("started_at")
    keys = rows["run_key"].tolist()
    # Every window busy: each is followed at once by its one re-do, then the next window.
    assert len(keys) == 8
    for first, again in zip(keys[0::2], keys[1::2], strict=True):
        assert again == first + "__a2"
    assert not rows["valid"].any()
    assert (rows["foreign_cores"] > 0.2).all()


@pytest.mark.live
def test_a_window_whose_warm_up_never_settled_is_warmed_up_and_measured_again(tmp_path):
    """A warm-up of 2 s is shorter than the 3 steady seconds it needs: it always runs out
    unsteady, so each window is warmed up again in its launch and re-done at once, then kept
    invalid when the re-dos run out."""
    # No quiet gate (test_quiet.py tests it): on a busy machine it would wait 120 s a window.
    params = {**BASE, "modes": ["kestrel"], "scenarios": ["text"], "repetitions": 1,
              "warmup_s": 2, "busy_reruns": 1, "quiet_max_cores": None}  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    cli = _cli("run", str(path), "--run-id", "unsteady", "--runs-dir", str(tmp_path),
               "--no-progress")  # fmt: skip
    _, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, err
    rows = read_results(tmp_path / "unsteady").sort_values("started_at")
    keys = rows["run_key"].tolist()
    assert len(keys) == 2 and keys[1] == keys[0] + "__a2", keys
    assert rows["invalid_reason"].str.startswith("warm-up not steady").all()
    warmups = sorted(p.name for p in (tmp_path / "unsteady").glob("launch__r1/kestrel/warmup__*"))
    assert len(warmups) == 2 and warmups[1].endswith("__a2"), warmups


@pytest.mark.live
def test_two_studies_started_at_once_never_measure_at_the_same_time(tmp_path):
    params = {**BASE, "modes": ["kestrel"], "scenarios": ["text"], "duration_s": 2,
              "repetitions": 2, **SHORT_RUNS}  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    clis = [_cli("run", str(path), "--run-id", run_id, "--runs-dir", str(tmp_path),
                 "--no-progress") for run_id in ("one", "two")]  # fmt: skip
    for cli in clis:
        _, err = cli.communicate(timeout=300)
        assert cli.returncode == 0, err
    spans = []
    for run_id in ("one", "two"):
        rows = read_results(tmp_path / run_id)
        assert rows["valid"].all(), rows["invalid_reason"].tolist()
        for r in rows.itertuples():
            start = pd.Timestamp(r.started_at).timestamp()
            spans.append((start, start + r.duration_s, run_id))
    spans.sort()
    for (_, end, a), (start, _, b) in zip(spans, spans[1:], strict=False):
        assert a == b or start >= end - 0.05, spans  # a window never overlaps the other's
    logs = "".join((tmp_path / r / "progress.log").read_text() for r in ("one", "two"))
    assert "waiting for the machine: run " in logs


@pytest.mark.live
def test_a_target_adds_blocks_of_the_focus_once_and_a_resume_keeps_them(tmp_path):
    params = {**BASE, "modes": ["nginx", "kestrel", "caddy"], "scenarios": ["text"],
              "repetitions": 2, "focus": ["kestrel"], "target_halfwidth_pct": 0.01,
              "max_repetitions": 3, **SHORT_RUNS}  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    args = ("run", str(path), "--run-id", "t", "--runs-dir", str(tmp_path), "--no-progress")
    cli = _cli(*args)
    _, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, err
    design = yaml.safe_load((tmp_path / "t" / "design.json").read_text())
    assert design["blocks"] == 3 and "capped at 3 by max_repetitions 3" in design["decision"]
    rows = read_results(tmp_path / "t")
    third = rows[rows["block"] == 3]
    assert sorted(third["mode"]) == ["kestrel", "nginx"]  # the added block: the focus alone
    assert set(rows.loc[rows["block"] < 3, "mode"]) == {"nginx", "kestrel", "caddy"}
    assert "target half-width 0.01%" in (tmp_path / "t" / "progress.log").read_text()
    again = _cli(*args)  # resumed: nothing measured twice, the decision kept
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert read_results(tmp_path / "t")["run_key"].tolist() == rows["run_key"].tolist()
