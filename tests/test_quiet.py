"""Numbers a reader can trust: a quiet machine checked, exact CPU for a short run, runs in
an order that keeps each comparison's two runs together."""

import csv
import itertools
import subprocess
import sys
from collections import Counter

import pytest
import yaml

from hostbench.harness.measure.run import RunSpec, execute
from hostbench.harness.order import run_order
from hostbench.params import StudyParams
from hostbench.schedules import Williams

BURN = "import time\nend = time.time() + 120\nwhile time.time() < end: pass\n"


@pytest.fixture
def burner():
    """A process the harness did not start, using one core."""
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    yield proc
    proc.kill()
    proc.wait()


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "hostbench", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.live
@pytest.mark.alone  # the busiest process it names is the burner only on a machine it has alone
def test_doctor_says_a_busy_machine_is_not_ready(burner):
    done = _cli("doctor", "--seconds", "2")
    assert done.returncode == 1, done.stdout
    assert "busy: do not measure now" in done.stdout
    foreign = next(line for line in done.stdout.splitlines() if line.startswith("foreign CPU"))
    assert "python" in foreign  # the busiest foreign process is named


@pytest.mark.live
def test_a_busy_machine_makes_the_study_wait_then_the_run_is_invalid_and_re_run(tmp_path, burner):
    params = {
        "modes": ["kestrel"],
        "scenarios": ["text"],
        "tools": ["bombardier"],
        "concurrency": [2],
        "duration_s": 1,
        "warmup_s": 0,
        "repetitions": 1,
        "min_duration_s": 1,
        "quiet_max_cores": 0.3,
        "quiet_wait_s": 3,
        "busy_reruns": 1,
    }
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    done = _cli("run", str(path), "--run-id", "busy", "--runs-dir", str(tmp_path), "--no-progress")
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "busy" / "progress.log").read_text()
    assert "waiting for a quiet machine" in log and "python" in log
    assert "measuring anyway" in log
    assert "[1/1] kestrel__text__bombardier__c2__r1: " in log  # the re-run adds one to the total
    assert "[2/2] kestrel__text__bombardier__c2__r1__a2: " in log
    with open(tmp_path / "busy" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    # The run, then its one re-run at the end of the block: both busy, both kept, invalid.
    assert [r["attempt"] for r in rows] == ["1", "2"]
    assert rows[1]["run_key"].endswith("__a2")
    for r in rows:
        assert r["valid"] == "False" and r["invalid_reason"].startswith("machine busy: ")
        assert float(r["foreign_cores"]) > 0.3 and float(r["quiet_wait_s"]) >= 3


@pytest.mark.live
@pytest.mark.alone  # its CPU read exactly: on a machine only it uses
def test_a_short_run_is_measured_exactly_and_invalid_for_its_length(tmp_path):
    # bombardier -n 300 on the real app: over in well under a second, between two CPU samples.
    p = StudyParams.from_dict(
        {
            "modes": ["kestrel"],
            "scenarios": ["text"],
            "tools": ["bombardier"],
            "concurrency": [2],
            "requests": 300,
            "duration_s": 30,
            "warmup_s": 0,
            "repetitions": 1,
            "quiet_max_cores": None,
        }
    )
    spec = RunSpec.of_cell(p, "kestrel", "text", "bombardier", 2, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    assert row["duration_s"] < 1 and row["requests"] >= 300
    assert row["cpu_server_cores"] > 0 and row["cpu_loadgen_cores"] > 0
    assert 0 < row["cpu_total_pct"] <= 100 and row["rss_server_mean_mb"] > 10
    assert row["foreign_cores"] >= 0
    assert not row["valid"]
    assert "shorter than min_duration_s 5; raise requests" in row["invalid_reason"]


def test_williams_rows_balance_positions_and_predecessors():
    for n in range(2, 8):
        rows = Williams().rows(n)
        assert len(rows) == (n if n % 2 == 0 else 2 * n)
        for position in range(n):  # each treatment equally often in each position
            counts = Counter(row[position] for row in rows)
            assert set(counts) == set(range(n)) and len(set(counts.values())) == 1
        follows = Counter((a, b) for row in rows for a, b in itertools.pairwise(row))
        assert len(set(follows.values())) == 1 and len(follows) == n * (n - 1)


def test_compared_runs_sit_together_and_modes_rotate_through_positions():
    p = StudyParams.from_dict(
        {
            "modes": ["nginx", "kestrel", "caddy", "nginx-keepalive"],
            "scenarios": ["html", "text"],
            "tools": ["bombardier"],
            "concurrency": [8],
            "duration_s": 5,
            "warmup_s": 0,
            "repetitions": 4,
        }
    )
    specs = run_order(p, seed=7)
    assert len(specs) == 4 * 8 and specs == run_order(p, seed=7)
    for _block, runs in itertools.groupby(specs, key=lambda s: s.block):
        runs = list(runs)
        # The block is two sub-blocks of one scenario each: all four modes back to back.
        scenarios = [s.scenario.id for s in runs]
        assert scenarios[:4] == [scenarios[0]] * 4 and scenarios[4:] == [scenarios[4]] * 4
        assert {s.mode.id for s in runs[:4]} == set(p.modes)
        assert [s.position for s in runs] == list(range(1, 9))
    # Across the 4 blocks, each mode is in each place of its sub-block once, per scenario.
    for scenario in p.scenarios:
        places = Counter()
        for block in range(1, 5):
            sub = [s for s in specs if s.block == block and s.scenario.id == scenario]
            places.update((s.mode.id, i) for i, s in enumerate(sub))
        assert set(places.values()) == {1} and len(places) == 16
