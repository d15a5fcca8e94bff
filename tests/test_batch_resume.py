"""`make reproduce-all` interrupted and resumed with the same BATCH_ID: finished runs are kept,
nothing is run twice, and a batch never mixes profiles."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from conftest import QUICK_SHORTER, interruptible
from hostbench.params import StudyParams
from hostbench.reproduce import BATCH_FILE, DONE_FILE, reproduce_all
from hostbench.studies import available


def _quick_size(study) -> tuple[bool, int]:
    """(whether it has sub-studies, its runs) of a study's quick profile."""
    quick = StudyParams.from_file(study.params_path("quick"))
    return bool(quick.sub_studies), len(quick.cells()) * quick.repetitions


# The study with the smallest quick profile (no sub-studies, the fewest runs): a short batch.
SMALLEST = min(available(), key=_quick_size)
STUDY, RUNS = SMALLEST.id, _quick_size(SMALLEST)[1]
pytestmark = pytest.mark.timeout(1800)


# Its quick profile's runs shortened, as the session's batch is (conftest.QUICK_SHORTER): what
# this test checks is which runs are kept, redone and refused, which short runs show as long
# ones do.
SHORTER = list(QUICK_SHORTER)


def _batch(runs, *more):
    return interruptible(
        [sys.executable, "-m", "hostbench", "reproduce-all", "--profile", "quick",
         "--batch-id", "b1", "--runs-dir", str(runs), "--study", STUDY,
         *(arg for s in SHORTER for arg in ("--set", s)), *more],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _rows(study_dir):
    with open(study_dir / "results.csv") as f:
        return list(csv.DictReader(f))


@pytest.mark.live
def test_an_interrupted_batch_resumes_where_it_stopped(tmp_path, group_gone):
    runs = tmp_path / "runs"
    folder = runs / "b1" / STUDY
    cli = _batch(runs)
    deadline = time.monotonic() + 600  # the test app is published first, if it must be
    while not list(folder.glob("*/row.json")):  # the first run completed
        assert cli.poll() is None, cli.communicate()
        assert time.monotonic() < deadline, "no run completed"
        time.sleep(0.2)
    first = [p.parent.name for p in folder.glob("*/row.json")]
    # Everything the batch started: papermill's kernel (in a session of its own), the app...
    started = psutil.Process(cli.pid).children(recursive=True)
    # Ctrl-C: the terminal signals its foreground group, which the kernel is not in.
    os.killpg(cli.pid, signal.SIGINT)
    _, err = cli.communicate(timeout=120)
    assert cli.returncode == 130, err
    assert group_gone(cli.pid), "processes of the interrupted batch are left running"
    _, left = psutil.wait_procs(started, timeout=10)  # a stopping child may take a moment
    left = [p for p in left if p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], f"left running: {[p.name() for p in left]}"
    assert not (folder / DONE_FILE).exists() and not (runs / "b1" / "index.html").exists()
    kept = {r["run_key"]: r for r in _rows(folder)}
    assert set(first) <= set(kept) and len(kept) < RUNS  # stopped midway

    # Another profile cannot resume it: one line, before anything runs.
    other = subprocess.run(
        [sys.executable, "-m", "hostbench", "reproduce-all", "--profile", "paper",
         "--batch-id", "b1", "--runs-dir", str(runs), "--study", STUDY],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert other.returncode == 2
    assert other.stderr.strip().splitlines() == [
        "error: batch b1 runs profile 'quick', not 'paper': resume it with PROFILE=quick, or "
        "start a new batch (another BATCH_ID)"
    ]

    again = _batch(runs)
    out, err = again.communicate(timeout=900)
    assert again.returncode == 0, err
    assert "resuming batch b1" in out
    rows = _rows(folder)
    keys = [r["run_key"] for r in rows]
    assert len(keys) == len(set(keys)) == RUNS  # every run once: none redone, none twice
    for key, row in kept.items():  # the runs finished before the interruption, untouched
        assert next(r for r in rows if r["run_key"] == key) == row
    assert json.loads((runs / "b1" / BATCH_FILE).read_text()) == {
        "profile": "quick",
        "set": SHORTER,
    }
    index = (runs / "b1" / "index.html").read_text()
    assert f'href="{STUDY}/report.html"' in index and (folder / "report.html").exists()
    assert (folder / "report.pdf").stat().st_size > 0  # printed beside it

    # Finished: the same command again keeps it and runs nothing.
    done = json.loads((folder / DONE_FILE).read_text())
    reproduce_all("quick", batch_id="b1", runs_dir=runs, only=[STUDY], settings=SHORTER)
    assert json.loads((folder / DONE_FILE).read_text()) == done
    assert _rows(folder) == rows


def test_a_batch_is_refused_another_profile_and_unknown_studies(tmp_path):
    from hostbench.errors import BadInput

    with pytest.raises(BadInput, match="no study 'nope' to run in a batch; allowed: "):
        reproduce_all("quick", batch_id="b2", runs_dir=tmp_path, only=["nope"])
    assert not (tmp_path / "b2").exists()  # refused before anything was made
    (tmp_path / "b2").mkdir()
    (tmp_path / "b2" / BATCH_FILE).write_text(json.dumps({"profile": "paper"}))
    with pytest.raises(BadInput, match="batch b2 runs profile 'paper', not 'quick'"):
        reproduce_all("quick", batch_id="b2", runs_dir=tmp_path, only=[STUDY])
    assert sorted(p.name for p in (tmp_path / "b2").iterdir()) == [BATCH_FILE]
