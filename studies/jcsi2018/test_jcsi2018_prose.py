"""The JCSI 2018 notebook's computed prose, on results recorded from real runs: its method,
the machine's state, the validity and calibration notes, the headline (a smoke run's none), the
executed report, and the example blocks of the README and docs (its tables:
test_jcsi2018_tables.py)."""

import json

import pandas as pd
import pytest

from conftest import committed_run, record_params
from hostbench.analysis import intervals, wording
from hostbench.analysis import prose as report
from hostbench.analysis import tables as analysis
from hostbench.paths import ROOT
from hostbench.readmes import RUNS_PAGE
from hostbench.studies import study_of

STUDY = study_of(__file__)
jcsi2018 = STUDY.analysis
RUN3 = STUDY.fixtures_dir / "3blocks"


@pytest.fixture(scope="module")
def run3():
    """A real 3-block run (nginx, kestrel, nginx-uds; html, text), recorded on a busy machine."""
    return {
        "results": analysis.load_results(RUN3),
        "params": analysis.load_params(RUN3),
        "ratios": intervals.paired_ratios(analysis.load_results(RUN3, valid_only=False), "nginx"),
    }


def test_method_is_written_from_params_json(run3):
    text = jcsi2018.method(run3["params"])
    p = run3["params"]
    assert f"{p.repetitions} blocks. Each block" in text and f"seed {p.seed}" in text
    assert f"{p.duration_s:g} s of k6 load at concurrency 8" in text
    assert f"every {p.sample_interval_s:g} s" in text
    assert f"within {p.steady_tolerance_pct:g}%" in text
    # Recorded before the quiet gate and min_duration_s existed: described as it then ran.
    assert "records the CPU of processes the harness did not start" in text
    assert "shorter than 0 s" in text


def test_study_run_from_notebook_parameters_reads_the_profile_or_takes_params(tmp_path):
    from hostbench.errors import BadInput
    from hostbench.harness.notebook import StudyRun
    from hostbench.params import StudyParams

    run = StudyRun.from_parameters("jcsi2018", "quick", None, "x", str(tmp_path))
    assert run.params.smoke and run.params.tools == ["k6"]  # quick extends paper
    assert run.out_dir == tmp_path / "x"
    # One mode: nothing to interleave it with, so its windows are its own (params refuse it).
    given = {**run.params.to_dict(), "modes": ["kestrel"], "baseline": None, "focus": [],
             "interleave_slice_s": None}  # fmt: skip
    # Params from papermill are reproduce's, validated there: taken as they are, not again.
    validated = StudyParams.from_dict(given).to_dict()
    taken = StudyRun.from_parameters("jcsi2018", "quick", validated, "x")
    assert taken.params == StudyParams.from_dict(given) and taken.params.modes == ["kestrel"]
    with pytest.raises(BadInput, match="study 'jcsi2018' has no profile 'fast'"):
        StudyRun.from_parameters("jcsi2018", "fast", None, "x")


def test_the_example_numbers_in_the_readme_and_docs_are_the_example_runs():
    generated = STUDY.module("generated")
    run_dir = committed_run(STUDY)
    fresh = generated.sections(ROOT)
    names = [name for name, *_ in fresh]
    assert names == [generated.METHOD, generated.STUDY_README, RUNS_PAGE, generated.PAGE], (
        "its run is committed"
    )
    for name, new, start, end in fresh:
        text = (ROOT / name).read_text()
        written = text[text.index(start) : text.index(end) + len(end)]
        assert written == new, f"{name}'s example numbers are stale: python -m hostbench docs"
    # The example has a two-hosts sub-study: the README's line carries what loopback cost.
    assert (run_dir.parent / f"{run_dir.name}-two-hosts" / "results.csv").exists()
    assert "(two hosts / loopback)" in generated.line(run_dir)


def test_the_example_blocks_replace_only_what_is_between_their_markers(tmp_path):
    from hostbench.readmes import replace_in

    generated = STUDY.module("generated")
    (tmp_path / "docs").mkdir()
    runs = tmp_path / "data" / "runs"
    runs.mkdir(parents=True)
    (runs / STUDY.paper_run).symlink_to(committed_run(STUDY))
    readme = f"# x\n\n{generated.LINE_START}\nSTALE\n{generated.LINE_END}\n\nrest\n"
    page = f"# y\n{generated.START}\nSTALE\n{generated.END}\ntail\n"
    (tmp_path / RUNS_PAGE).write_text(readme)
    (tmp_path / generated.PAGE).write_text(page)
    for name, block, start, end in generated.sections(tmp_path):  # as `hostbench docs` does
        (tmp_path / name).write_text(replace_in((tmp_path / name).read_text(), block, start, end))
    text = (tmp_path / RUNS_PAGE).read_text()
    assert text.startswith("# x\n\n") and text.endswith("\n\nrest\n") and "STALE" not in text
    assert "Details: [docs/example.md](example.md)." in text  # from docs/, beside it
    text = (tmp_path / generated.PAGE).read_text()
    assert text.startswith("# y\n") and text.endswith("\ntail\n") and "| Kestrel | HTML |" in text
    with pytest.raises(ValueError, match="markers not found"):
        replace_in("no markers", "x", generated.START, generated.END)


def test_machine_state_reads_each_runs_readings(run3):
    text = report.machine_state(run3["results"])
    load = run3["results"]["load_avg_1m"]
    assert f"{load.min():.1f}-{load.max():.1f}" in text
    assert f"up to {run3['results']['cpu_steal_pct'].max():.1f}%" in text
    assert "predate the foreign-CPU reading" in text  # the recorded run has no foreign_cores
    busy = run3["results"].assign(foreign_cores=[0.05] * (len(run3["results"]) - 1) + [0.42])
    env = {"git_commit": "abc1234+dirty", "git_diff_sha256": "feed"}
    text = report.machine_state(busy, env)
    assert "median of 0.05 and at most 0.42 cores" in text
    assert "commit `abc1234`, **with uncommitted changes** (diff sha256 `feed`)" in text
    assert "uncommitted" not in report.machine_state(busy, {"git_commit": "abc1234"})


def test_an_interval_prints_the_same_in_table_sentence_and_headline(run3):
    ratios = run3["ratios"]
    r = ratios.set_index(["mode", "scenario"]).loc[("kestrel", "text")]
    printed = wording.ratio_text(r.ratio, r.ci_low, r.ci_high)
    table = wording.with_ratio_text(ratios).set_index(["mode", "scenario"])
    assert table.loc[("kestrel", "text"), "ours (95% CI)"] == printed
    assert f"text {printed}" in jcsi2018.headline(ratios)
    sentence = jcsi2018.ratio_sentences(ratios)
    assert wording.ci_text(r.ci_low, r.ci_high) in sentence
    assert f"{wording.pct_text(r.ratio)} of the baseline" in sentence
    cells = [wording.PCT_FORMATS[c](r[c]) for c in ("ratio_pct", "ci_low_pct", "ci_high_pct")]
    assert printed == f"{cells[0]} (95% CI {cells[1][:-1]}-{cells[2]})"


def test_a_smoke_run_writes_no_finding(tmp_path):
    record_params(tmp_path, smoke=True)
    assert report.write_headline(tmp_path, "Kestrel as % of nginx: text 250%") == (
        report.SMOKE_HEADLINE
    )
    assert (
        tmp_path / "headline.txt"
    ).read_text().strip() == "smoke run: checks the pipeline, not evidence"
    record_params(tmp_path, smoke=False)
    assert report.write_headline(tmp_path, "a finding") == "a finding"


@pytest.mark.live
def test_the_batch_index_never_quotes_a_smoke_run(tmp_path):
    from hostbench.reproduce import DONE_FILE, write_index

    for study, smoke in (("jcsi2018", True), ("selfhost-2012", False)):
        folder = tmp_path / study
        folder.mkdir()
        record_params(folder, smoke=smoke)
        (folder / "headline.txt").write_text(f"{study}: 250% of the baseline\n")
        (folder / DONE_FILE).write_text('{"wall_s": 60}')
    page = write_index(tmp_path, "quick").read_text()
    assert "jcsi2018: 250%" not in page and report.SMOKE_HEADLINE in page
    assert "selfhost-2012: 250%" in page


def test_validity_note_counts_left_out_runs_and_reruns(run3):
    all_runs = analysis.load_results(RUN3, valid_only=False)
    assert report.validity_note(all_runs) == f"All {len(all_runs)} runs are valid."
    marked = all_runs.assign(
        valid=[False] + [True] * (len(all_runs) - 1),
        invalid_reason=["machine busy: 0.42 cores used by other processes"]
        + [""] * (len(all_runs) - 1),
        attempt=[1] * (len(all_runs) - 1) + [2],
    )
    note = report.validity_note(marked)
    assert f"1 of {len(all_runs)} runs left out" in note and "1 run(s) were measured again" in note


def test_calibration_note_says_what_was_computed():
    findings = pd.DataFrame([
        dict(mode="kestrel", scenario="text", tool="k6", levels="1, 2, 4", blocks=3, knee=2,
             highest=4, cpu_busy_peak_pct=97.2, cpu_reached_100=False),
        dict(mode="nginx", scenario="text", tool="k6", levels="1, 2, 4", blocks=3,
             knee=float("nan"), highest=4, cpu_busy_peak_pct=99.7, cpu_reached_100=True),
        dict(mode="caddy", scenario="text", tool="k6", levels="2, 8", blocks=1,
             knee=float("nan"), highest=8, cpu_busy_peak_pct=80.0, cpu_reached_100=False),
    ])  # fmt: skip
    lines = report.calibration_note(findings).splitlines()
    assert "stops growing measurably at 2" in lines[0] and "peaked at 97% (not 100%)" in lines[0]
    assert "no knee within the range" in lines[1] and "peaked at 100%." in lines[1]
    assert "a level with 1 valid block (the others left out): no interval" in lines[2]


@pytest.mark.live
@pytest.mark.timeout(3600)  # the session's batch of every study's quick profile
def test_the_paper_reports_figures_results_and_executed_notebook(batch):
    """The quick batch's report of this study: the paper's figures, every row, the C# tour."""
    from hostbench.harness.tour import NOTEBOOK

    out = batch / STUDY.id
    executed = json.loads((out / STUDY.notebook).read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert [o for o in outputs if o["output_type"] == "error"] == []
    assert [o for o in outputs if o.get("name") == "stderr"] == []  # no progress dump on the page
    page = (out / "report.html").read_text()
    assert "Fig. 9" in page and "<Figure size" not in page
    modes = json.loads((out / "params.json").read_text())["modes"]
    expected = ["topology", "models", "all-models", "relative", "cpu", "cpu-per-request",
                "latency"]  # fmt: skip
    for name in expected:
        for ext in ("png", "svg"):
            path = out / "figures" / f"{name}.{ext}"
            assert path.stat().st_size > 1000, path
    assert page.count("data:image/png;base64") >= len(expected)  # each one inline, too
    results = (out / "results.csv").read_text().splitlines()
    assert len(results) == 1 + len(modes) * 4  # header + every mode x the paper's 4 scenarios
    # The C# tour ran first, on the .net-csharp kernel (tests/test_tour.py checks its contents).
    assert (out / "app_work.csv").exists()
    assert "The C# tour did not run" not in page
    tour = json.loads((out / NOTEBOOK.name).read_text())
    assert not [
        o for c in tour["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]


def test_method_says_how_the_compared_modes_windows_were_laid_out(run3):
    from hostbench.params import StudyParams

    p = run3["params"]
    assert p.interleave_slice_s is None  # recorded back to back
    assert "windows back to back in an order that puts each mode" in jcsi2018.method(p)
    shared = StudyParams.from_dict({**p.to_dict(), "interleave_slice_s": 0.25, "focus": []})
    text = jcsi2018.method(shared)
    assert "back to back" not in text
    assert "whose slice of 0.25 s it is" in text
    assert f"each mode gets {p.duration_s:g} s of every window" in text


def test_method_says_how_the_modes_warmed_up_as_the_results_record_it(run3):
    from hostbench.params import StudyParams

    # A run measured before the column existed warmed up alone.
    assert "warmup_together" not in run3["results"]
    assert not analysis.warmed_up_together(run3["results"])
    rows = run3["results"].assign(warmup_together=False)
    assert not analysis.warmed_up_together(rows)
    assert analysis.warmed_up_together(rows.assign(warmup_together=True))
    p = StudyParams.from_dict({**run3["params"].to_dict(), "interleave_slice_s": 0.25})
    alone, shared = jcsi2018.method(p), jcsi2018.method(p, together=True)
    assert "warms up until three 1 s windows agree" in alone and "together" not in alone
    assert "warms the compared modes up together, in the window's slices" in shared
    assert "three 1 s windows" not in shared and "methods a second in three readings" in shared


def test_the_readmes_paper_profile_line_is_written_from_the_profile():
    from hostbench.analysis import window_design
    from hostbench.params import StudyParams

    generated = STUDY.module("generated")
    paper = StudyParams.from_file(STUDY.params_path("paper"))
    block = generated.profile_block()
    assert f"Windows {window_design.in_words(paper)};" in block
    for name in paper.sub_studies:
        sub = window_design.short(paper.sub_study(name))
        # Each sub-study sits in the group of its own layout, which says whether it is the
        # main study's.
        group = next(g for g in block.split("; ") if f"`{name}`" in g)
        assert f"with windows {sub}" in group
        same = sub == window_design.short(paper)
        assert ("as the main study's" if same else "unlike the main study's") in group
    quick = StudyParams.from_file(STUDY.params_path("quick"))  # its windows counted, not typed
    assert f"({len(quick.cells()) * quick.repetitions} of a mode each)" in block
    readme = (STUDY.folder / "README.md").read_text()
    assert block in readme, "stale: python -m hostbench docs"


def test_the_example_block_prints_a_small_steal_time_as_it_is_not_as_0():
    generated = STUDY.module("generated")
    run_dir = committed_run(STUDY)
    steal = analysis.load_results(run_dir, valid_only=False)["cpu_steal_pct"].max()
    assert 0 < steal < 0.5, "the example run's steal time rounds to 0 in whole percents"
    assert f"stole up to {steal:.1f}% of the CPU time" in generated.block(run_dir)
    assert [report.share_text(v) for v in (0.0, 0.04, 0.4, 2.34)] == ["0.0", "0.04", "0.4", "2.3"]
