"""`reproduce --render-only`: a complete run re-rendered from its own data measures nothing,
and a run with a window still to measure is refused in one line, before anything starts."""

import json
import shutil
import tarfile

import pandas as pd
import psutil
import pytest

from hostbench.analysis import tables
from hostbench.analysis.digits import csv_differences
from hostbench.errors import BadInput
from hostbench.harness.study import RENDER_ONLY, run_study
from hostbench.paths import RUNS

RUN = RUNS / "example-selfhost-2012-paper"  # the smallest committed example: 26 windows


def _copy(tmp_path, unpack: bool, run=RUN):
    folder = tmp_path / run.name
    shutil.copytree(run, folder)
    if unpack:  # as scripts/archive-runs.sh unpack does, without starting a process
        with tarfile.open(folder / "runs.tar.gz") as archive:
            archive.extractall(folder, filter="data")
    return folder


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


# Windows back to back; and interleaved, with whole windows measured again (jcsi2018's
# paper run): a re-render keeps every attempt, as the measurement wrote it.
@pytest.mark.parametrize("run", [RUN, RUNS / "example-paper"], ids=lambda r: r.name)
def test_a_complete_run_is_rendered_from_its_own_rows(tmp_path, monkeypatch, run):
    if not (run / "runs.tar.gz").is_file():
        pytest.skip(f"{run.name} is not committed")
    folder = _copy(tmp_path, unpack=True, run=run)
    monkeypatch.setenv(RENDER_ONLY, "1")
    before = _children()
    path = run_study(tables.load_params(folder), folder.name, tmp_path, progress=False)
    assert not _children() - before  # nothing launched
    again, committed = pd.read_csv(path), pd.read_csv(run / "results.csv")
    pd.testing.assert_frame_equal(again, committed)


def test_a_window_still_to_measure_is_refused_in_one_line(tmp_path, monkeypatch):
    if not (RUN / "runs.tar.gz").is_file():
        pytest.skip(f"{RUN.name} is not committed")
    folder = _copy(tmp_path, unpack=False)  # its windows' folders are still packed
    monkeypatch.setenv(RENDER_ONLY, "1")
    before = _children()
    with pytest.raises(BadInput, match=r"\d+ window\(s\) not measured.*never measures"):
        run_study(tables.load_params(folder), folder.name, tmp_path, progress=False)
    assert not _children() - before
    assert (folder / "results.csv").read_bytes() == (RUN / "results.csv").read_bytes()


@pytest.mark.live  # executes the study's notebook
def test_a_re_render_writes_the_runs_ratios_anew(tmp_path, monkeypatch):
    if not (RUN / "runs.tar.gz").is_file():
        pytest.skip(f"{RUN.name} is not committed")
    from hostbench.reproduce import reproduce

    monkeypatch.setenv(RENDER_ONLY, "1")  # as reproduce sets it; gone after the test
    folder = _copy(tmp_path, unpack=True)
    stale = folder / "ratios.csv"
    stale.write_text(stale.read_text().replace("kestrel", "kestrel-stale"))  # an older analysis
    reproduce("selfhost-2012", "paper", run_id=folder.name, runs_dir=tmp_path, render_only=True)
    # As numbers, at the precision it is written at: another processor's last digits differ.
    assert csv_differences(stale, RUN / "ratios.csv") == []


@pytest.mark.live  # executes the study's notebook
def test_a_re_render_that_fails_leaves_the_runs_notebook_as_it_was(tmp_path, monkeypatch):
    if not (RUN / "runs.tar.gz").is_file():
        pytest.skip(f"{RUN.name} is not committed")
    from hostbench.errors import HostbenchError
    from hostbench.reproduce import reproduce

    monkeypatch.setenv(RENDER_ONLY, "1")
    folder = _copy(tmp_path, unpack=True)
    shutil.rmtree(next(folder.glob("*__*")))  # a window's data lost: refused in the notebook
    notebook = folder / "03-selfhost-2012.ipynb"
    before = notebook.read_bytes()
    with pytest.raises(HostbenchError, match=r"window\(s\) not measured"):
        reproduce("selfhost-2012", "paper", run_id=folder.name, runs_dir=tmp_path, render_only=True)
    assert notebook.read_bytes() == before
    assert (folder / "03-selfhost-2012.rendering.ipynb").is_file()  # the failed one, to look at


@pytest.mark.live  # executes the study's notebook
def test_a_run_measured_with_an_older_profile_is_re_rendered_with_its_own_settings(
    tmp_path, monkeypatch
):
    if not (RUN / "runs.tar.gz").is_file():
        pytest.skip(f"{RUN.name} is not committed")
    from hostbench.reproduce import reproduce

    monkeypatch.setenv(RENDER_ONLY, "1")
    folder = _copy(tmp_path, unpack=True)
    recorded = json.loads((folder / "params.json").read_text())
    recorded["warmup_s"] += 7  # what the profile said when it was measured, not what it says now
    (folder / "params.json").write_text(json.dumps(recorded))
    reproduce("selfhost-2012", "paper", run_id=folder.name, runs_dir=tmp_path, render_only=True)
    executed = json.loads((folder / "03-selfhost-2012.ipynb").read_text())
    injected = next(
        c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])
    )
    assert f'"warmup_s": {recorded["warmup_s"]}' in "".join(injected["source"])
