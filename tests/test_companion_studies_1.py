"""The companion studies linux-proxies-2021 and selfhost-2012: the article's settings in the
params and in every row, and the notebook tables beside the published numbers. Their
notebooks run end to end in tests/test_notebooks.py (the quick batch).

Published numbers and settings are read from data/reference here too, never written down.
"""

import json
import math
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from hostbench.analysis import intervals, prose, tables
from hostbench.analysis import linux_proxies as lp
from hostbench.analysis import selfhost as sh
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.harness.params import StudyParams, load_yaml
from hostbench.harness.study import run_study
from hostbench.studies import get_study

FIXTURES = Path(__file__).parent / "fixtures" / "results"
LP_RESULTS = FIXTURES / "linux-proxies-quick.csv"
SH_RESULTS = FIXTURES / "selfhost-quick.csv"
VERDICTS = {
    intervals.SUPPORTED,
    intervals.NOT_SUPPORTED,
    intervals.UNDECIDED,
    intervals.NOT_TESTABLE,
}


def _setting(article: str, item: str) -> str:
    return load_setup(article).set_index("item").loc[item, "value"]


def _rounds(article: str) -> int:
    # "warm-up, then mean of 3 rounds", "best of 3": the number the article states
    return int(re.search(r"(\d+)", _setting(article, "rounds")).group(1))


def _params(study: str, profile: str, **overrides) -> StudyParams:
    return StudyParams.from_file(get_study(study).params_path(profile), overrides)


def _rows(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "results.csv")


def _command(run_dir: Path, run_key: str) -> list[str]:
    return shlex.split((run_dir / run_key / "load" / "command.txt").read_text())


# ------------------------------------------------------------------ the params


def test_paper_profiles_state_the_articles_settings():
    p = _params("linux-proxies-2021", "paper")
    article = lp.ARTICLE
    assert p.tools == [_setting(article, "load_tool")]
    assert p.concurrency[0] == lp.article_connections() == int(_setting(article, "connections"))
    assert p.duration_s == float(_setting(article, "duration"))
    assert p.repetitions == _rounds(article)  # the article's rounds are our blocks
    assert p.scenarios == sorted(set(load_reference(article)["scenario"]))
    assert p.options.app_args == ["--log-level", "Information"]  # the template's logging
    assert p.keepalive and p.requests is None and p.warmup_s > 0
    assert {"kestrel", "nginx", "caddy"} <= set(p.modes) and p.baseline == "kestrel"

    p = _params("selfhost-2012", "paper")
    article = sh.ARTICLE
    assert _setting(article, "load_tool").startswith("Apache Bench") and p.tools == ["ab"]
    assert p.concurrency == [int(_setting(article, "ab_concurrency"))]
    assert p.requests == int(_setting(article, "ab_requests"))
    assert p.keepalive is False  # ab without -k, as the article's command
    assert p.repetitions == _rounds(article)
    assert p.scenarios == sorted(set(load_reference(article)["scenario"]))
    assert p.modes[:2] == [sh.SELF_HOST, sh.IIS_ANALOG] and p.baseline == sh.IIS_ANALOG


@pytest.mark.parametrize("study", ["linux-proxies-2021", "selfhost-2012"])
def test_quick_profiles_extend_paper_with_only_what_differs(study):
    folder = get_study(study).params_dir
    raw = (folder / "quick.yaml").read_text()
    assert re.search(r"^extends: paper$", raw, re.M)
    quick, paper = load_yaml(folder / "quick.yaml"), load_yaml(folder / "paper.yaml")
    differing = {k for k in quick if quick[k] != paper.get(k)}
    # The load's size and the smoke run's gates; never the article's settings.
    smoke = {"smoke", "quiet_max_cores", "require_steady", "min_duration_s"}
    assert differing <= {"description", "duration_s", "warmup_s", "repetitions", "requests", *smoke}
    assert quick["smoke"] is True
    assert _params(study, "quick").repetitions >= 2  # the fewest blocks with an interval


# ------------------------------------------------------------------ the rows, live


@pytest.mark.live
def test_linux_proxies_rows_carry_the_articles_settings(tmp_path):
    params = _params("linux-proxies-2021", "quick", modes=["kestrel"], duration_s=1,
                     warmup_s=0, repetitions=1, min_duration_s=1)  # fmt: skip
    run_dir = run_study(params, "lp", tmp_path, progress=False).parent
    rows = _rows(run_dir)
    c = lp.article_connections()
    assert sorted(rows["concurrency"]) == sorted(params.concurrency) and c in set(
        rows["concurrency"]
    )
    assert set(rows["tool"]) == {_setting(lp.ARTICLE, "load_tool")}
    assert set(rows["duration_target_s"]) == {1.0} and rows["requests_target"].isna().all()
    assert rows["keepalive"].all() and rows["valid"].all()
    recorded = json.loads((run_dir / "params.json").read_text())
    assert recorded["app_args"] == ["--log-level", "Information"] and recorded["keepalive"]
    key = f"kestrel__api-test__bombardier__c{c}__r1"
    argv = _command(run_dir, key)
    assert argv[argv.index("-c") + 1] == str(c) and argv[argv.index("-d") + 1] == "1000ms"
    assert "-n" not in argv and argv[-1].endswith("/api/test")
    # The app ran with the template's logging: Information lines in its log.
    assert "info: Microsoft.Hosting.Lifetime" in (run_dir / key / "app.log").read_text()
    setup = lp.setup_table(run_dir).set_index("")
    assert setup.loc["connections", "the article"] == _setting(lp.ARTICLE, "connections")
    assert setup.loc["connections", "this run"] == ", ".join(map(str, params.concurrency))
    assert setup.loc["logging", "this run"] == "--log-level Information"


@pytest.mark.live
def test_selfhost_rows_carry_the_articles_settings(tmp_path):
    c = int(_setting(sh.ARTICLE, "ab_concurrency"))
    params = _params("selfhost-2012", "quick", modes=["kestrel"], baseline=None, requests=3 * c,
                     warmup_s=0, repetitions=1)  # fmt: skip
    run_dir = run_study(params, "sh", tmp_path, progress=False).parent
    rows = _rows(run_dir)
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["tool"] == "ab" and row["concurrency"] == c
    assert row["requests_target"] == 3 * c and row["requests"] == 3 * c  # ab -n: all of them
    assert (
        not row["keepalive"] and not json.loads((run_dir / "params.json").read_text())["keepalive"]
    )
    argv = _command(run_dir, row["run_key"])
    assert argv[argv.index("-n") + 1] == str(3 * c) and argv[argv.index("-c") + 1] == str(c)
    assert "-k" not in argv and "-t" not in argv and argv[-1].endswith("/api/testapi")
    # ab's "Time per request" (mean) is concurrency x time / requests: the article's column.
    assert row["latency_mean_ms"] == pytest.approx(1000.0 * c / row["rps"], rel=0.01)
    setup = sh.setup_table(run_dir).set_index("")
    assert setup.loc["concurrency (-c)", "the article"] == _setting(sh.ARTICLE, "ab_concurrency")
    assert setup.loc["requests per test (-n)", "this run"] == f"{3 * c:,}"
    assert setup.loc["keep-alive", "this run"].startswith("no")


# ------------------------------------------------------------------ the tables, recorded


@pytest.fixture(scope="module")
def lp_results():
    return tables.load_results(LP_RESULTS)


@pytest.fixture(scope="module")
def sh_results():
    return tables.load_results(SH_RESULTS)


def _published_rps(article: str) -> pd.Series:
    ref = load_reference(article)
    return ref[ref["metric"] == "rps"].set_index("setup")["value"]


def test_linux_proxies_ranking_shows_the_published_rows_beside_ours(lp_results):
    table = lp.ranking_table(lp_results)
    published = _published_rps(lp.ARTICLE)
    article_rows = table[table["the article's setup"] != ""].set_index("the article's setup")
    assert article_rows["article: avg rps"].to_dict() == published.to_dict()
    assert list(article_rows.index) == list(published.sort_values(ascending=False).index)
    windows = article_rows[article_rows.index.str.startswith("Windows")]
    assert len(windows) and (windows["note"] == lp.NOT_RUNNABLE).all()
    assert windows["ours: mean rps"].isna().all()
    c = lp.article_connections()
    at_c = lp_results[lp_results["concurrency"] == c]
    mean = at_c.groupby("mode", observed=True)["rps"].mean()
    assert article_rows.loc["Linux + Kestrel", "ours: mean rps"] == pytest.approx(mean["kestrel"])
    assert table.loc[table["note"] == lp.ADDED, "our mode"].tolist() == [
        "Kestrel + nginx (TCP, keep-alive)"
    ]
    html = prose.table(table, lp.FORMATS).to_html()
    assert f"{published['Linux + Kestrel']:,.0f}" in html and lp.NOT_RUNNABLE in html


def test_linux_proxies_ratios_put_the_articles_beside_our_paired_ones(lp_results):
    ref = load_reference(lp.ARTICLE)
    linux = ref[(ref["metric"] == "rps") & ~ref["os"].str.startswith("Windows")]
    rps = linux.set_index("mode")["value"]
    ratios = lp.ratio_table(lp_results)
    c = lp.article_connections()
    nginx = ratios[(ratios["mode"] == "nginx") & (ratios["baseline"] == "kestrel")]
    nginx = nginx.set_index("connections")
    assert nginx.loc[c, "article %"] == pytest.approx(100 * rps["nginx"] / rps["kestrel"])
    assert math.isnan(nginx.loc[max(nginx.index), "article %"])  # the article ran one count
    paired = intervals.paired_ratios(lp_results, "kestrel")
    ours = paired[(paired["mode"] == "nginx") & (paired["concurrency"] == c)].iloc[0]
    assert nginx.loc[c, "ours %"] == pytest.approx(ours["ratio_pct"])
    assert (
        nginx.loc[c, "in words"]
        == intervals.describe(ours["ratio"], ours["ci_low"], ours["ci_high"]).split(":")[0]
    )
    caddy = ratios[(ratios["mode"] == "caddy") & (ratios["baseline"] == "nginx")]
    caddy = caddy.set_index("connections")
    assert caddy.loc[c, "article %"] == pytest.approx(100 * rps["caddy"] / rps["nginx"])
    text = lp.ratio_sentences(ratios)
    assert f"The article: {100 * rps['nginx'] / rps['kestrel']:.0f}%" in text
    assert f"{rps['nginx']:,.0f} / {rps['kestrel']:,.0f} rps" in text


def test_linux_proxies_connections_are_paired_within_mode_and_block(lp_results):
    table = lp.connections_table(lp_results).set_index("mode")
    low, high = lp.article_connections(), int(lp_results["concurrency"].max())
    kestrel = lp_results[lp_results["mode"] == "kestrel"].pivot_table(
        index="block", columns="concurrency", values="rps"
    )
    by_block = kestrel[high] / kestrel[low]
    geometric = math.exp(sum(math.log(r) for r in by_block) / len(by_block))
    assert table.loc["Kestrel", "ours %"] == pytest.approx(100 * geometric)
    assert table.loc["Kestrel", "blocks"] == len(by_block)


def test_linux_proxies_claims_and_headline_follow_the_intervals(lp_results):
    claims = lp.claims_table(lp_results)
    assert set(claims["verdict"]) <= VERDICTS
    windows = claims[claims["the article's claim"].str.contains("Windows")]
    assert len(windows) == 3 and (windows["verdict"] == intervals.NOT_TESTABLE).all()
    rps = _published_rps(lp.ARTICLE)
    assert (
        f"{rps['Linux + Kestrel']:,.0f} vs {rps['Linux + Nginx']:,.0f}"
        in (claims["the article's claim"].iloc[0])
    )
    ratios = lp.ratio_table(lp_results)
    c = lp.article_connections()
    caddy = ratios[(ratios["mode"] == "caddy") & (ratios["baseline"] == "nginx")]
    caddy = caddy[caddy["connections"] == c].iloc[0]
    same = claims[claims["the article's claim"].str.startswith("Nginx and Caddy are basically")]
    margin = lp.SAME_MARGIN_PCT / 100
    expected = intervals.claim_verdict(
        caddy["CI low %"] / 100, caddy["CI high %"] / 100, "same", margin
    )
    assert same["verdict"].iloc[0] == expected
    headline = lp.headline(lp_results)
    assert headline.startswith(f"{c} connections: ")
    assert f"article {100 * rps['Linux + Nginx'] / rps['Linux + Kestrel']:.0f}%" in headline


def test_linux_proxies_figures(lp_results):
    for fig in (
        lp.ranking_figure(lp_results),
        lp.ratio_figure(lp.ratio_table(lp_results)),
        lp.connections_figure(lp_results),
    ):
        assert isinstance(fig, Figure) and fig.axes


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
    claims = sh.claims_table(sh_results)
    assert set(claims["verdict"]) <= VERDICTS
    assert (claims["verdict"].iloc[-2:] == intervals.NOT_TESTABLE).all()
    paired = intervals.paired_ratios(sh_results, sh.IIS_ANALOG)
    ours = paired[paired["mode"] == sh.SELF_HOST].iloc[0]
    assert claims["verdict"].iloc[0] == intervals.claim_verdict(
        ours["ci_low"], ours["ci_high"], "higher"
    )
    for fig in (sh.results_figure(sh_results), sh.advantage_figure(sh_results)):
        assert isinstance(fig, Figure) and fig.axes


@pytest.mark.parametrize(
    "low, high, expect, verdict",
    [
        (1.1, 1.3, "higher", intervals.SUPPORTED),
        (0.7, 0.9, "higher", intervals.NOT_SUPPORTED),
        (0.9, 1.2, "higher", intervals.UNDECIDED),
        (0.2, 0.4, "lower", intervals.SUPPORTED),
        (0.95, 1.05, "same", intervals.SUPPORTED),
        (0.5, 1.5, "same", intervals.UNDECIDED),
        (1.02, 1.05, "same", intervals.NOT_SUPPORTED),
        (math.nan, math.nan, "higher", intervals.UNDECIDED),
    ],
)
def test_claim_verdicts_follow_the_interval(low, high, expect, verdict):
    assert intervals.claim_verdict(low, high, expect) == verdict


def test_interval_text_is_describes_interval():
    assert intervals.interval_text(0.33, 0.301, 0.3601) == "95% CI 30-37%"
    assert intervals.interval_text(0.33, math.nan, math.nan) == "one block only, no interval"
