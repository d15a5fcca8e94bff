"""The committed runs are what git tracks (hostbench.paths.committed): a reader's own runs
beside them (`make reproduce-all PROFILE=quick` writes data/runs/<batch>/, a contribution is
copied into data/runs/community/ before it is added) are never read as committed, by the
tests, the gallery or the artifact appendix."""

import os
import shutil

import pytest

from hostbench import gallery
from hostbench.analysis import machines
from hostbench.pagecheck import page_defects
from hostbench.paths import ROOT, RUNS, committed, tracked_files
from hostbench.studies import STUDIES

DEFECTIVE = "<html><body><main><p>rate NaN, read in /tmp/x</p></main></body></html>"
STUDY = "jcsi2018"
CONTRIBUTED = RUNS / gallery.COMMUNITY / f"{STUDY}-intel-xeon"  # a finished paper-profile run


@pytest.fixture
def readers_runs():
    """A reader's quick batch with a defective index page, and a contributed run copied into
    community/ but not added: both in the checkout, untracked; removed however the test ends."""
    name = f"untracked-{os.getpid()}"
    batch, contribution = RUNS / name, RUNS / gallery.COMMUNITY / f"{STUDY}-{name}"
    try:
        batch.mkdir()
        (batch / "index.html").write_text(DEFECTIVE)
        (batch / "report.html").write_text(DEFECTIVE)
        shutil.copytree(CONTRIBUTED, contribution)
        yield batch, contribution
    finally:
        shutil.rmtree(batch, ignore_errors=True)
        shutil.rmtree(contribution, ignore_errors=True)


def test_a_readers_own_runs_are_not_committed_runs(readers_runs):
    batch, contribution = readers_runs
    assert page_defects(DEFECTIVE)  # what the findings test would have failed on
    on_disk = set(RUNS.glob("*/index.html")) | set(RUNS.glob("*/report.html"))
    assert {batch / "index.html", batch / "report.html"} <= on_disk
    pages = committed(RUNS, "*/index.html") + committed(RUNS, "*/report.html")
    assert pages and not [p for p in pages if p.parent == batch]
    assert set(pages) <= {ROOT / p for p in tracked_files()}
    # A folder matches when it holds tracked files: the committed examples, not the batch.
    examples = committed(RUNS, "*")
    assert RUNS / STUDIES[STUDY].paper_run in examples and batch not in examples
    # The gallery (and the artifact appendix, from it) shows the contributed run once added.
    shown = [r.path for r in gallery.runs_of(STUDY)]
    assert CONTRIBUTED in shown and contribution not in shown
    # ... and so does each report's verdict by machine on record.
    on_record = machines.runs_on_record(STUDY)
    assert CONTRIBUTED in on_record and contribution not in on_record


def test_where_git_cannot_say_every_run_on_disk_is_listed(tmp_path):
    # A copy of runs outside the checkout (the tests' own runs dirs): listed as found.
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "params.json").write_text("{}")
    assert committed(tmp_path, "*/params.json") == [tmp_path / n / "params.json" for n in "ab"]


@pytest.mark.live  # runs git
def test_a_fresh_listing_leaves_out_what_was_never_added(readers_runs):
    batch, contribution = readers_runs
    fresh = {ROOT / p for p in tracked_files.__wrapped__()}
    assert RUNS / "README.md" in fresh
    assert CONTRIBUTED / "params.json" in fresh
    assert not [p for p in fresh if p.is_relative_to(batch) or p.is_relative_to(contribution)]
