"""Two runtimes of Kestrel in one interleaved window, on the real test app and k6: each row
records the runtime it ran on, read from the app, and both counts of each target agree. The
harness publishes each runtime's self-contained build first, as a study does (about 30 s each
the first time). 2 s of load a runtime: eight 0.25 s slices each, which the counts and
the runtimes read as 5 s did (test_interleave_live runs 2 s interleaved windows too)."""

import json

import pytest

from conftest import SHORT_RUNS
from hostbench.harness.measure.interleave import COUNT_TOLERANCE_PCT
from hostbench.harness.notebook import ensure_testapp
from hostbench.harness.run_folder import ENVIRONMENT_FILE
from hostbench.harness.study import run_study
from hostbench.params import StudyParams
from hostbench.results import read_results

pytestmark = pytest.mark.live  # starts real processes

RUNTIMES = ["net8.0", "net10.0"]


def test_two_runtimes_share_one_interleaved_window_and_each_row_names_its_runtime(tmp_path):
    params = StudyParams.from_dict({
        "modes": ["kestrel"], "scenarios": ["text"], "tools": ["k6"], "concurrency": [4],
        "duration_s": 2, "warmup_s": 0, "repetitions": 1, "interleave_slice_s": 0.25,
        "runtimes": RUNTIMES, "seed": 5, **SHORT_RUNS,
    })  # fmt: skip
    for runtime in params.runtime_builds:
        ensure_testapp(runtime)
    rows = read_results(run_study(params, "rt", runs_dir=tmp_path, progress=False))
    assert sorted(rows["variant"]) == ["net10", "net8"] and set(rows["mode"]) == {"kestrel"}
    assert rows["started_at"].nunique() == 1  # one window, both runtimes in it
    for r in rows.itertuples():
        assert r.valid, r.invalid_reason
        assert r.duration_s == 2.0 and r.requests > 0
        assert abs(r.count_diff_pct) <= COUNT_TOLERANCE_PCT, r.run_key
    version = dict(zip(rows["variant"], rows["runtime_version"], strict=True))
    assert version["net8"].startswith("8.0.") and version["net10"].startswith("10.0."), version
    record = json.loads((tmp_path / "rt" / ENVIRONMENT_FILE).read_text())
    assert record["testapp_runtimes"] == {"net8.0": version["net8"],
                                          "net10.0": version["net10"]}  # fmt: skip
