"""go-vs-dotnet-2017: how requests/s and memory converge with the request count, on a real
recorded run with progress on (fixtures/convergence/, its README says how), and the
convergence profile that records the article's counts."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import committed_run
from hostbench.analysis import convergence, tables
from hostbench.analysis.figure_words import caption_text
from hostbench.catalog import mode_label
from hostbench.errors import BadInput
from hostbench.params import StudyParams, load_yaml
from hostbench.studies import study_of

STUDY = study_of(__file__)
go_vs_dotnet = STUDY.analysis
RUN = STUDY.fixtures_dir / "convergence"
TOL = convergence.TOLERANCE_PCT / 100


@pytest.fixture(scope="module")
def results():
    return tables.load_results(RUN / "results.csv", valid_only=False)


@pytest.fixture(scope="module")
def curves(results, tmp_path_factory):
    # A copy: reading a run's progress also writes its convergence.csv into the run folder.
    run = tmp_path_factory.mktemp("convergence") / "run"
    shutil.copytree(RUN, run)
    curves = go_vs_dotnet.convergence_curves(results, run)
    assert (run / convergence.CURVES_FILE).is_file()
    return curves


def test_the_recorded_run_has_a_curve_per_cell_ending_at_the_servers_count(results, curves):
    recorded = StudyParams.from_run(RUN)
    assert recorded.progress_interval_s is not None
    assert set(curves) == {(r.mode, r.scenario) for r in results.itertuples()}
    for r in results.itertuples():
        c = curves[(r.mode, r.scenario)]
        # The server's counter, read while the load ran, ends at the run's own count.
        assert c["requests"].is_monotonic_increasing and c["elapsed_s"].is_monotonic_increasing
        assert c["requests"].iloc[-1] == r.server_requests == r.requests
        # Its whole-run rate is the client's, but for the last reading's lag after the load.
        assert c["rate"].iloc[-1] == pytest.approx(r.rps, rel=0.05)


def test_each_curve_ends_at_one_and_the_count_found_is_where_both_enter_the_band_for_good(
    curves,
):
    for c in curves.values():
        assert c["rate_rel"].iloc[-1] == 1.0 and c["memory_rel"].iloc[-1] == 1.0
        found = convergence.converged_from(c)
        assert found["converged_from"] == max(found["rate_from"], found["memory_from"])
        for column, start in (
            ("rate_rel", found["rate_from"]),
            ("memory_rel", found["memory_from"]),
        ):
            inside = np.abs(c[column] - 1) <= TOL
            assert inside[c["requests"] >= start].all()  # from the count on, within
            before = c[c["requests"] < start]
            assert before.empty or not inside[before.index[-1]]  # the reading before, not
    # A reading within the band before the count found: the band was left again after it.
    c = curves[("iris-mvc", "templates")]
    early = c[np.abs(c["rate_rel"] - 1) <= TOL]["requests"].iloc[0]
    assert early < convergence.converged_from(c)["rate_from"]


def test_the_table_and_words_give_each_scenarios_count_the_largest_of_its_cells(curves):
    cells = convergence.table(curves)
    per = convergence.per_scenario(cells).set_index("scenario")
    for scenario, group in cells.groupby("scenario"):
        assert per.loc[scenario, "converged_from"] == group["converged_from"].max()
    # Kestrel on values converged before its run's end: the count is not simply the last.
    kestrel = cells[(cells["mode"] == "kestrel") & (cells["scenario"] == "values")].iloc[0]
    assert 0 < kestrel["converged_share"] < 1
    text = go_vs_dotnet.convergence_text(curves)
    for scenario, row in per.iterrows():
        if row["converged_from"] < row["requests"]:
            assert f"`{scenario}`: every one of its {row['cells']} cells within" in text
            assert f"from {row['converged_from']:,} requests on" in text
        else:  # only its last reading within: the run says nothing about a shorter count
            assert f"`{scenario}`: not settled within" in text
    assert "`templates`: not settled" in text and "`values`: every one" in text
    shown = go_vs_dotnet.convergence_table(curves)
    # In the study's order: values first, Iris MVC (the baseline) first within it.
    assert len(shown) == len(cells)
    assert tuple(shown.iloc[0][["scenario", "server"]]) == (
        "values",
        mode_label("iris-mvc"),
    )


def test_a_run_without_progress_says_so_in_one_line(results, tmp_path):
    assert go_vs_dotnet.convergence_curves(results, tmp_path) == {}
    text = go_vs_dotnet.convergence_text({})
    assert "\n" not in text and "no progress" in text and "`convergence`" in text


def test_the_figure_draws_each_cell_on_a_log_axis_of_requests(curves):
    fig = go_vs_dotnet.convergence_figure(curves)
    axes = fig.axes
    assert len(axes) == 2 and all(ax.get_xscale() == "log" for ax in axes)
    for ax in axes:
        # one line per cell, and the line at 1.0
        assert len(ax.get_lines()) == len(curves) + 1
        ends = [line.get_ydata()[-1] for line in ax.get_lines()[: len(curves)]]
        assert ends == [1.0] * len(curves)
    # The caption opens with the counts the curves settle from, as the text says them.
    caption = caption_text(fig)
    for scenario, count in go_vs_dotnet.converged_counts(curves).items():
        assert (
            f" from request {count:,} of " in caption
            if count
            else f"{scenario}: not every curve settled" in caption
        ), caption


def test_a_progress_file_without_its_columns_is_one_line(tmp_path):
    path = tmp_path / "progress.csv"
    path.write_text("elapsed_s,requests\n1.0,10\n")
    with pytest.raises(BadInput, match=r"^\S+ lacks rss_mb, rss_anon_mb; expected the columns"):
        convergence.load_progress(path)
    with pytest.raises(BadInput, match="run with progress_interval_s set"):
        convergence.load_progress(tmp_path / "none" / "progress.csv")


def test_the_curves_file_gives_back_the_curves_it_was_written_from(curves, tmp_path):
    path = convergence.write_curves(curves, tmp_path)
    assert path.name == convergence.CURVES_FILE
    back = convergence.read_curves(tmp_path)
    assert list(back) == list(curves)
    for cell, c in curves.items():
        pd.testing.assert_frame_equal(back[cell], c, check_dtype=False)
    # A run folder without its progress files (archived) still gives its curves from the file.
    results = tables.load_results(RUN / "results.csv", valid_only=False)
    assert list(go_vs_dotnet.convergence_curves(results, tmp_path)) == list(curves)
    with pytest.raises(BadInput, match=r"^no convergence\.csv in \S+: it is written by a run"):
        convergence.read_curves(tmp_path / "none")


def test_the_convergence_profile_runs_each_cell_once_at_the_articles_counts_with_progress():
    conv = StudyParams.from_file(STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE))
    assert conv.progress_interval_s is not None and conv.repetitions == 1
    article = go_vs_dotnet.published().groupby("scenario")["requests"].first()
    assert {s: conv.requests_for(s) for s in article.index} == article.to_dict()
    assert conv.interleave_slice_s is None  # each run alone, bounded by its count
    assert not load_yaml(STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE)).get("smoke")
    # Every cell reached the article's count before duration_s in the committed run.
    rates = tables.load_results(committed_run(STUDY, go_vs_dotnet.EVIDENCE.name), valid_only=False)
    assert (rates["requests"] == [conv.requests_for(s) for s in rates["scenario"]]).all()
    assert rates["duration_s"].max() < conv.duration_s


@pytest.fixture(scope="module")
def evidence():
    committed_run(STUDY, go_vs_dotnet.EVIDENCE.name)  # none committed yet (a copied study): skip
    return go_vs_dotnet.evidence_curves()


def test_the_committed_convergence_run_is_the_profile_measured_alone(evidence):
    run = committed_run(STUDY, go_vs_dotnet.EVIDENCE.name)
    recorded = StudyParams.from_run(run)
    conv = StudyParams.from_file(STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE))
    assert (recorded.cells(), recorded.requests) == (conv.cells(), conv.requests)
    rows = tables.load_results(run, valid_only=False)
    assert rows["foreign_cores"].max() <= 0.1  # measured alone: nothing else used a core
    assert set(evidence) == {(m, sc) for m, _, sc, _, _ in conv.cells()}
    assert tables.load_environment(run)["git_diff_sha256"] is None  # from a clean tree


def test_no_shorter_profile_while_the_evidence_needs_most_of_the_articles_counts(evidence):
    """The README's reason for no request-counted profile shorter than the article's: in the
    committed convergence run some scenario settled only after more than half of its counts,
    so fewer requests would save little. Should a new run settle sooner everywhere, this
    fails: say so in the README then."""
    conv = StudyParams.from_file(STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE))
    needed = go_vs_dotnet.converged_counts(evidence)
    shares = [(needed[s] or conv.requests_for(s)) / conv.requests_for(s) for s in needed]
    assert max(shares) > 0.5
    assert go_vs_dotnet.CONVERGED_PROFILE not in STUDY.profiles()
    readme = (STUDY.folder / "README.md").read_text()
    assert f"No `{go_vs_dotnet.CONVERGED_PROFILE}` profile" in readme


def test_the_page_says_where_a_runs_counts_stand_against_the_evidence(evidence):
    conv = StudyParams.from_file(STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE))
    text = go_vs_dotnet.convergence_text(evidence, conv, own=False)
    assert f"`data/runs/{go_vs_dotnet.EVIDENCE.name}/`" in text
    assert text.count("requests per run, the article's count.") == 3
    fewer = conv.to_dict() | {"requests": {s: 1000 for s in conv.scenarios}}
    short = go_vs_dotnet.counts_text(evidence, StudyParams.from_dict(fewer))
    needed = go_vs_dotnet.converged_counts(evidence)
    below = sum(1000 < needed[s] for s in conv.scenarios if needed.get(s))
    assert short.count("may differ from them") == below > 0
    # A timed run counted nothing: it says for how long each server was loaded instead.
    paper = StudyParams.from_file(STUDY.params_path("paper"))
    timed = go_vs_dotnet.counts_text(evidence, paper)
    assert "timed, not counted" in timed and f"{paper.duration_s:g} s" in timed


def test_the_readme_states_the_convergence_runs_measured_wall_time():
    readme = (STUDY.folder / "README.md").read_text()
    run = committed_run(STUDY, go_vs_dotnet.EVIDENCE.name)
    wall = json.loads((run / "reproduce.json").read_text())["wall_s"]
    assert f"- `convergence`: the committed run took {wall / 60:.0f} min" in readme
    assert f"within {convergence.TOLERANCE_PCT:g}%" in readme  # the tolerance the code uses
