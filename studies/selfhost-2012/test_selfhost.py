"""selfhost-2012: the article's settings in the params and in every row, and the notebook's
tables beside the published numbers (read from reference/, never written down). The notebook
runs end to end in tests/test_studies.py (the quick batch).
"""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from conftest import profile_params, run_command, stated, stated_rounds
from hostbench.analysis import intervals, prose, tables
from hostbench.analysis.figures import caption_text
from hostbench.analysis.reference import load_reference
from hostbench.catalog import mode_label
from hostbench.harness.study import run_study
from hostbench.load import Load
from hostbench.studies import study_of

STUDY = study_of(__file__)
sh = STUDY.analysis
SH_RESULTS = STUDY.fixtures_dir / "quick-results.csv"
VERDICTS = set(intervals.VERDICTS)


def test_paper_profile_states_the_articles_settings():
    p = profile_params(STUDY.id, "paper")
    article = sh.ARTICLE
    assert stated(article, "load_tool").startswith("Apache Bench") and p.tools == ["ab"]
    assert p.concurrency == [int(stated(article, "ab_concurrency"))]
    assert p.requests == int(stated(article, "ab_requests"))
    assert p.keepalive is False  # ab without -k, as the article's command
    assert p.repetitions == stated_rounds(article)
    assert p.scenarios == sorted(set(load_reference(article)["scenario"]))
    assert p.modes[:2] == [sh.SELF_HOST, sh.IIS_ANALOG] and p.baseline == sh.IIS_ANALOG


# ------------------------------------------------------------------ the rows, live


@pytest.mark.live
def test_selfhost_rows_carry_the_articles_settings(tmp_path):
    c = int(stated(sh.ARTICLE, "ab_concurrency"))
    params = profile_params(STUDY.id, "quick", modes=["kestrel"], baseline=None, focus=[],
                            requests=3 * c, warmup_s=0, repetitions=1)  # fmt: skip
    run_dir = run_study(params, "sh", tmp_path, progress=False).parent
    rows = pd.read_csv(run_dir / "results.csv")
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["tool"] == "ab" and row["concurrency"] == c
    assert row["requests_target"] == 3 * c and row["requests"] == 3 * c  # ab -n: all of them
    assert (
        not row["keepalive"] and not json.loads((run_dir / "params.json").read_text())["keepalive"]
    )
    argv = run_command(run_dir, row["run_key"])
    assert argv[argv.index("-n") + 1] == str(3 * c) and argv[argv.index("-c") + 1] == str(c)
    assert "-k" not in argv and "-t" not in argv and argv[-1].endswith("/api/testapi")
    # ab's "Time per request" (mean) is concurrency x time / requests: the article's column.
    # Our rps divides by ab's "Time taken", printed to the millisecond: on a run of a few
    # tens of ms that rounding alone moves it by over 1%.
    rounding = 0.0005 / row["duration_s"]
    assert row["latency_mean_ms"] == pytest.approx(1000.0 * c / row["rps"], rel=0.01 + rounding)
    setup = sh.setup_table(run_dir).set_index("")
    assert setup.loc["concurrency (-c)", "the article"] == stated(sh.ARTICLE, "ab_concurrency")
    assert setup.loc["requests per test (-n)", "this run"] == f"{3 * c:,}"
    assert setup.loc["keep-alive", "this run"].startswith("no")


# ------------------------------------------------------------------ the tables, recorded


@pytest.fixture(scope="module")
def sh_results():
    return tables.load_results(SH_RESULTS)


def _published_rps(article: str) -> pd.Series:
    ref = load_reference(article)
    return ref[ref["metric"] == "rps"].set_index("setup")["value"]


def test_selfhost_table_shows_the_published_rows_and_our_best_blocks(sh_results):
    ref = load_reference(sh.ARTICLE)
    table = sh.results_table(sh_results)
    article = table[table[""] == "the article"].set_index("setup")
    for r in ref[ref["metric"] == "rps"].itertuples():
        assert article.loc[r.setup, "requests/s"] == r.value
    for r in ref[ref["metric"] == "time_per_request_ms"].itertuples():
        assert article.loc[r.setup, "time per request [ms]"] == r.value
    assert (article["note"] == sh.NOT_RUNNABLE).all() and article["blocks"].isna().all()
    ours = table[table[""] == "this machine"].set_index("setup")
    best = sh_results.loc[sh_results.groupby("mode", observed=True)["rps"].idxmax()]
    for r in best.itertuples():
        label = sh.mode_label(str(r.mode))
        assert ours.loc[label, "requests/s"] == r.rps  # the best block, as the article took
        assert ours.loc[label, "time per request [ms]"] == r.latency_mean_ms
    html = prose.table(table, sh.FORMATS).to_html()
    first = ref[ref["metric"] == "rps"].iloc[0]["value"]
    assert f"{first:,.2f}" in html


def test_selfhost_advantage_beside_the_articles(sh_results):
    ref = load_reference(sh.ARTICLE)
    rps = ref[ref["metric"] == "rps"].set_index("setup")["value"]
    gains = ref[ref["metric"] == "rps_gain_pct"]
    table = sh.advantage_table(sh_results)
    article = table[table["source"] == "the article"]
    assert len(article) == len(gains)
    for g, row in zip(gains.itertuples(), article.to_dict("records"), strict=True):
        assert row["gain %"] == pytest.approx(100 * (rps[g.setup] / rps[g.relative_to] - 1))
        assert f"{g.value:g}%" in row["in words"]
    paired = intervals.paired_ratios(sh_results, sh.IIS_ANALOG)
    ours = paired[paired["mode"] == sh.SELF_HOST].iloc[0]
    row = table[table["source"] == "this machine"].iloc[0]
    assert row["gain %"] == pytest.approx(ours["ratio_pct"] - 100)
    assert row["CI low %"] == pytest.approx(ours["ci_low_pct"] - 100)
    headline = sh.headline(sh_results)
    assert all(f"+{g.value:g}%" in headline for g in gains.itertuples())
    assert intervals.interval_text(ours["ratio"], ours["ci_low"], ours["ci_high"]) in headline
    sentence = sh.advantage_sentence(sh_results)
    assert intervals.describe(ours["ratio"], ours["ci_low"], ours["ci_high"]).split(":")[0] in (
        sentence
    )


def test_selfhost_claims_and_figures(sh_results):
    claims = sh.claims(sh_results)
    assert set(claims["verdict"]) <= VERDICTS
    assert (claims["verdict"].iloc[-2:] == intervals.NOT_TESTABLE).all()
    paired = intervals.paired_ratios(sh_results, sh.IIS_ANALOG)
    ours = paired[paired["mode"] == sh.SELF_HOST].iloc[0]
    assert claims["verdict"].iloc[0] == intervals.claim_verdict(
        ours["ci_low"], ours["ci_high"], "higher", n=ours["n"]
    )
    for fig in (sh.results_figure(sh_results), sh.advantage_figure(sh_results)):
        assert isinstance(fig, Figure) and fig.axes
    # The results figure's caption opens with the best requests/s it draws, the analog first.
    caption = caption_text(sh.results_figure(sh_results))
    best = sh._best(sh_results).loc[sh.IIS_ANALOG, "rps"]
    assert caption.startswith(
        f"Best requests/s here, as the article's table orders them: "
        f"{mode_label(sh.IIS_ANALOG)} {best:,.0f}, "
    ), caption


# ab's consumer in the analysis: this study reads its ab options back (hostbench.load).


def _recorded_folder(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """A run folder holding this study's recorded results (fixtures/quick-results.csv)."""
    study = tmp_path / "study"
    study.mkdir()
    shutil.copy(SH_RESULTS, study / "results.csv")
    return study, tables.load_results(study, valid_only=False)


def test_load_commands_describe_the_recorded_load_and_show_command_txt_as_written(tmp_path):
    study, results = _recorded_folder(tmp_path)
    first = results.iloc[0]
    load = Load("ab", int(first["concurrency"]), 300, requests=100000, warmup_s=10,
                keepalive=False, path="/api/testapi", base_url="http://127.0.0.1:4")  # fmt: skip
    folder = study / first["run_key"] / "load"
    folder.mkdir(parents=True)
    load.write(folder)
    command = f"/usr/bin/ab -n 100000 -c 100 -e {folder}/percentiles.csv {load.url}"
    (folder / "command.txt").write_text(command + "\n")
    row = tables.load_commands(study).iloc[0]
    assert (
        row["load"]
        == load.describe()
        == (
            "100 connections, 100,000 requests (at most 300 s), a new connection per request, "
            "warm-up up to 10 s"
        )
    )
    # The tool and the run's files by their names: a page never shows this machine's folders.
    assert row["command"] == f"ab -n 100000 -c 100 -e percentiles.csv {load.url}"
    assert sh.ab_options(tables.run_load(study, first["run_key"])) == "ab -n 100,000 -c 100"
    figure = sh.results_figure(results, study)
    assert figure.get_suptitle() == "GET /api/testapi, ab -n 100,000 -c 100"
    assert sh.results_figure(results).get_suptitle() == "GET /api/testapi"  # no folder


def test_the_selfhost_papers_load_is_the_articles_ab_command():
    p = profile_params(STUDY.id, "paper")
    load = p.load("testapi", "ab", 100)
    assert sh.ab_options(load) == "ab -n 100,000 -c 100"  # the article's, no -k
