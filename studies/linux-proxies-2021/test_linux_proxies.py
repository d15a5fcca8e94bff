"""linux-proxies-2021: the article's settings in the params and in every row, and the notebook's
tables beside the published numbers (read from reference/, never written down). The notebook
runs end to end in tests/test_studies.py (the quick batch).
"""

import json
import math
import re

import pandas as pd
import pytest
from matplotlib.figure import Figure

from conftest import profile_params, run_command, stated, stated_rounds
from hostbench.analysis import intervals, prose, tables
from hostbench.analysis.figures import caption_text
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.harness.study import run_study
from hostbench.studies import study_of

STUDY = study_of(__file__)
lp = STUDY.analysis
LP_RESULTS = STUDY.fixtures_dir / "quick-results.csv"
VERDICTS = set(intervals.VERDICTS)


def test_paper_profile_states_the_articles_settings():
    p = profile_params(STUDY.id, "paper")
    article = lp.ARTICLE
    assert p.tools == [stated(article, "load_tool")]
    assert p.concurrency[0] == lp.article_connections() == int(stated(article, "connections"))
    assert p.duration_s == float(stated(article, "duration"))
    assert p.repetitions == stated_rounds(article)  # the article's rounds are our blocks
    assert p.scenarios == sorted(set(load_reference(article)["scenario"]))
    assert p.options.app_args == ["--log-level", "Information"]  # the template's logging
    assert p.keepalive and p.requests is None and p.warmup_s > 0
    assert {"kestrel", "nginx", "caddy"} <= set(p.modes) and p.baseline == "kestrel"
    # The second concurrency is the article's closing remark, recorded with its quote.
    assert p.concurrency[1] == lp.closing_note_connections() == 125
    assert str(lp.closing_note_connections()) in _quote(article, "connections_closing_note")
    assert "much higer throughput" in lp.closing_note()  # quoted as written, typo included


def _quote(article: str, item: str) -> str:
    return load_setup(article).set_index("item").loc[item, "quote"]


def test_the_params_and_readme_claim_no_nginx_configuration_for_the_article():
    # The article names Nginx and Caddy but states no configuration: ours are ours.
    assert (
        "configuration not stated"
        in load_setup(lp.ARTICLE).set_index("item").loc["proxies", "note"]
    )
    for text in (STUDY.params_path("paper").read_text(), (STUDY.folder / "README.md").read_text()):
        assert not re.search(r"article's default config|as the article's: no upstream", text)
        assert "states no" in text or "states none" in text
    assert "fresh launch" in (STUDY.folder / "README.md").read_text()


# ------------------------------------------------------------------ the rows, live


@pytest.mark.live
def test_linux_proxies_rows_carry_the_articles_settings(tmp_path):
    params = profile_params(STUDY.id, "quick", modes=["kestrel"], sub_studies={}, focus=[],
                            duration_s=1, warmup_s=0, repetitions=1, min_duration_s=1)  # fmt: skip
    run_dir = run_study(params, "lp", tmp_path, progress=False).parent
    rows = pd.read_csv(run_dir / "results.csv")
    c = lp.article_connections()
    assert sorted(rows["concurrency"]) == sorted(params.concurrency) and c in set(
        rows["concurrency"]
    )
    assert set(rows["tool"]) == {stated(lp.ARTICLE, "load_tool")}
    assert set(rows["duration_target_s"]) == {1.0} and rows["requests_target"].isna().all()
    assert rows["keepalive"].all() and rows["valid"].all()
    recorded = json.loads((run_dir / "params.json").read_text())
    assert recorded["app_args"] == ["--log-level", "Information"] and recorded["keepalive"]
    key = f"kestrel__api-test__bombardier__c{c}__r1"
    argv = run_command(run_dir, key)
    assert argv[argv.index("-c") + 1] == str(c) and argv[argv.index("-d") + 1] == "1000ms"
    assert "-n" not in argv and argv[-1].endswith("/api/test")
    # The app ran with the template's logging: Information lines in its log.
    launch = run_dir / "launch__r1" / "kestrel"  # the block's launch of the mode
    assert "info: Microsoft.Hosting.Lifetime" in (launch / "app.log").read_text()
    setup = lp.setup_table(run_dir).set_index("")
    assert setup.loc["reverse proxies", "the article"].endswith("configuration not stated)")
    assert "fresh launch" in setup.loc["rounds", "this run"]
    assert setup.loc["connections", "the article"] == stated(lp.ARTICLE, "connections")
    assert setup.loc["connections", "this run"] == ", ".join(map(str, params.concurrency))
    assert setup.loc["logging", "this run"] == "--log-level Information"


# ------------------------------------------------------------------ the tables, recorded


@pytest.fixture(scope="module")
def lp_results():
    return tables.load_results(LP_RESULTS)


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
    claims = lp.claims(lp_results)
    assert set(claims["verdict"]) <= VERDICTS
    windows = claims[claims["the article's claim"].str.contains("Windows")]
    assert len(windows) == 3 and (windows["verdict"] == intervals.NOT_TESTABLE).all()
    text = " ".join(claims["the article's claim"])
    assert "default configuration" not in text and "(its configuration not stated)" in text
    assert f"to {lp.closing_note_connections()} connections" in text
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
        caddy["CI low %"] / 100, caddy["CI high %"] / 100, "same", margin, n=caddy["blocks"]
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


def test_the_ranking_and_connections_captions_say_what_they_draw(lp_results):
    table = lp.ranking_table(lp_results)
    ours = table[table["our mode"] != ""].sort_values("ours: mean rps", ascending=False)
    first = ours.iloc[0]
    caption = caption_text(lp.ranking_figure(lp_results))
    assert caption.startswith(
        f"Mean requests/s here, highest first: {first['our mode']} {first['ours: mean rps']:,.0f}"
    ), caption
    compared = ours[ours["note"] != lp.ADDED]
    same = (
        compared["our mode"].tolist() == compared.sort_values("article's rank")["our mode"].tolist()
    )
    assert ("the order of the article's Linux setups" in caption) == same
    caption = caption_text(lp.connections_figure(lp_results))
    high = int(lp_results["concurrency"].max())
    assert caption.startswith(f"At {high} connections, as % of the same mode at "), caption
    for _, r in lp.connections_table(lp_results).iterrows():
        assert f"{r['mode']} {intervals.pct_cell(r['ours %'])} (95% CI " in caption


def test_the_hosts_page_params_for_two_machines_are_valid_and_the_articles_settings():
    """docs/hosts.md's params file for this article under ssh validates, and it is the paper
    profile with only the topology changed and the additions out."""
    import yaml

    from hostbench.params import StudyParams
    from hostbench.paths import ROOT

    text = (ROOT / "docs" / "hosts.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S)
    example = next(yaml.safe_load(b) for b in blocks if "inventory:" in b and "modes:" in b)
    params = StudyParams.from_dict(example)  # raises (one line) on a key ssh does not run
    assert params.topology == "ssh" and params.inventory == "hosts.ini"
    paper = profile_params(STUDY.id, "paper")
    assert set(params.modes) < set(paper.modes)
    for key in ("scenarios", "tools", "concurrency", "duration_s", "warmup_s", "repetitions"):
        assert getattr(params, key) == getattr(paper, key), key
    assert params.to_dict()["app_args"] == paper.to_dict()["app_args"]
    assert params.baseline_mode == paper.baseline_mode


def test_the_reference_holds_the_articles_numbers_by_setup():
    by_setup = load_reference(STUDY.id).set_index("setup")["value"]
    assert by_setup["Linux + Nginx"] == 3509
    assert by_setup["Windows + IIS Out of Process"] == 2820
