"""linux-proxies-2021: the article's settings in the params and in every row, and the notebook's
tables beside the published numbers (read from reference/, never written down). The notebook
runs end to end in tests/test_studies.py (the quick batch).
"""

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from conftest import committed_run, profile_params, run_command, stated, stated_rounds
from hostbench.analysis import (
    intervals,
    machines,
    prose,
    tables,
    verdicts,
    window_design,
    wording,
)
from hostbench.analysis.claims import AGAINST, CLAIM, OURS, SENSITIVITY, VERDICT, judge
from hostbench.analysis.claims import of_run as claims_of_run
from hostbench.analysis.figure_words import caption_text
from hostbench.analysis.reference import load_claims, load_reference, load_setup
from hostbench.analysis.sequential import Plan
from hostbench.catalog import mode_label
from hostbench.harness.study import run_study
from hostbench.paths import ROOT
from hostbench.studies import study_of

STUDY = study_of(__file__)
lp = STUDY.analysis
LP_RESULTS = STUDY.fixtures_dir / "quick-results.csv"


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
                            duration_s=1, warmup_s=0, repetitions=1, min_duration_s=1,
                            interleave_slice_s=None)  # one mode: nothing to interleave  # fmt: skip
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
        == wording.describe(ours["ratio"], ours["ci_low"], ours["ci_high"]).split(":")[0]
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


def test_linux_proxies_headline_follows_the_intervals(lp_results):
    rps = _published_rps(lp.ARTICLE)
    c = lp.article_connections()
    headline = lp.headline(lp_results)
    assert headline.startswith(f"{c} connections: ")
    assert f"article {100 * rps['Linux + Nginx'] / rps['Linux + Kestrel']:.0f}%" in headline


# ------------------------------------------------------------------ the claims


@pytest.fixture
def paper_run() -> Path:
    """The committed run the tests read; they skip where it is not (a copied study)."""
    return committed_run(STUDY)


def _claims_file() -> pd.DataFrame:
    return load_claims(STUDY.id)


def test_the_claims_read_the_articles_numbers_at_its_connections():
    claims = _claims_file()
    rps = load_reference(lp.ARTICLE)
    rps = rps[(rps["metric"] == "rps") & ~rps["os"].str.startswith("Windows")]
    rps = rps.set_index("mode")["value"]
    size = claims[claims["kind"] == "size"].iloc[0]
    # Its two averages divided, to three figures: no "about" (the article gives raw req/s).
    assert (size["mode"], size["relative_to"]) == ("nginx", "kestrel")
    assert size["value"] == float(f"{rps['nginx'] / rps['kestrel']:.3g}") == 0.329
    same = claims[claims["kind"] == "equivalence"].iloc[0]
    assert (same["mode"], same["relative_to"], same["value"]) == ("caddy", "nginx", 1)
    faster = claims[claims["claim"].str.startswith("On Linux, Kestrel alone")]
    assert sorted(faster["mode"]) == ["caddy", "nginx"] and set(faster["side"]) == {"below"}
    # Every testable claim at the article's connections, the closing remark's at its own
    # against the article's, Kestrel against itself.
    testable = claims[claims["kind"] != "not testable"]
    closing = testable[testable["relative_concurrency"].notna()]
    assert len(closing) == 1
    closing = closing.iloc[0]
    assert (closing["mode"], closing["relative_to"], closing["side"]) == ("kestrel", "kestrel",
                                                                          "above")  # fmt: skip
    assert closing["concurrency"] == lp.closing_note_connections()
    assert closing["relative_concurrency"] == lp.article_connections()
    others = testable.drop(closing.name)
    assert (others["concurrency"] == lp.article_connections()).all()
    # The Windows claims say why.
    untestable = claims[claims["kind"] == "not testable"]
    assert len(untestable) == 4 and untestable["note"].str.len().gt(0).all()
    assert untestable["note"].str.contains("Windows").all()
    # The postscript: each Linux setup returning the trace id against itself returning the time.
    traced = claims[claims["variant"] != ""]
    assert traced["claim"].str.startswith(TRACED).all() and len(traced) == 6
    # Its "slight better throughput on each" twice: its direction on each setup, and how
    # slight as the same within the rule's tolerance.
    kinds = traced.groupby("claim", sort=False)[["kind", "side"]].first()
    assert kinds.to_numpy().tolist() == [["direction", "above"], ["equivalence", ""]]
    assert (traced["mode"] == traced["relative_to"]).all()
    assert set(traced["variant"]) == {lp.TRACE_ID} and set(traced["relative_variant"]) == {
        lp.DATE_BODY
    }
    sub = profile_params(STUDY.id, "paper").sub_studies[lp.TRACE_ID]
    assert set(sub["variants"]) == {lp.TRACE_ID, lp.DATE_BODY}
    assert sorted(sub["modes"]) == sorted(traced["mode"].unique())


def _verdict(table: pd.DataFrame, start: str) -> str:
    rows = table[table[CLAIM].str.startswith(start)]
    assert len(rows) == 1, (start, list(rows[CLAIM]))
    return rows[VERDICT].iloc[0]


def test_the_committed_run_gets_one_verdict_per_claim(paper_run):
    table = claims_of_run(STUDY.id, paper_run)
    claims = _claims_file()
    assert list(table[CLAIM]) == list(dict.fromkeys(claims["claim"]))  # one row per claim
    assert _verdict(table, "On Linux, Kestrel alone") == verdicts.SUPPORTED
    # Nginx at 21% (20-22%) of Kestrel against the article's 32.9%: 0.60-0.66x of its value.
    assert _verdict(table, "Nginx serves") == verdicts.SMALLER
    # Caddy's size too (3485 / 10667 = 0.327 in the article): 0.56-0.62x of its value.
    assert _verdict(table, "Caddy serves 3,485 req/s") == verdicts.SMALLER
    # Caddy at 93% (91-96%) of Nginx against the article's 99%: 0.91-0.96x, within 1/1.15.
    assert _verdict(table, "Nginx and Caddy perform") == verdicts.REPRODUCED
    assert _verdict(table, "Going from") == verdicts.SUPPORTED
    assert list(table[VERDICT]).count(verdicts.NOT_TESTABLE) == 4
    size = table[table[CLAIM].str.startswith("Nginx serves")].iloc[0]
    # From its printed ends (Stein's interval: the run is two-stage), 0.59-0.67x, in their
    # direction: 1 - 0.59 and 1 - 0.67.
    assert "(0.59-0.67x): agrees to within 41% below, differs by at least 33%" in size[AGAINST]
    # The two-hosts sub-study beside it (kestrel and nginx) judges the claims it ran again.
    assert "the two-hosts sub-study" in size[SENSITIVITY]


def test_the_committed_runs_other_nginx_decides_the_size_claim_and_its_row_says_so(paper_run):
    """The article's Nginx has two stand-ins (STAND_INS): with an upstream keep-alive pool
    nginx serves about half of Kestrel, larger than the article's 0.329x, where the guide's
    nginx is smaller. The row said "holds under all 1" (the sub-study alone was tried)."""
    table = claims_of_run(STUDY.id, paper_run).set_index(CLAIM)
    results = tables.load_results(paper_run, valid_only=False)
    other = lp.STAND_INS["nginx"][0]
    ratio = intervals.paired_ratios(results[results["mode"].isin(["kestrel", other])], "kestrel")
    keepalive = ratio[(ratio["mode"] == other) & (ratio["concurrency"] == 2)].iloc[0]
    assert keepalive["ci_low"] > 0.329 * 1.15  # larger than the article's, by the data
    size = table.loc[table.index.str.startswith("Nginx serves")].iloc[0]
    assert size[VERDICT] == verdicts.SMALLER
    assert size[SENSITIVITY].startswith(
        f"depends on the analog: {mode_label(other)} in place of {mode_label('nginx')}: "
        f"{verdicts.LARGER} ({wording.pct_text(keepalive['ratio'])}, "
    )
    assert "holds under 1: the two-hosts sub-study" in size[SENSITIVITY]


@pytest.mark.parametrize(
    ("keepalive", "opening"),
    [
        (0.329 * 1.05, "holds under all 1: "),  # the other nginx agrees
        (
            0.329 * 1.5,
            f"depends on the analog: {mode_label('nginx-keepalive')} in place of "
            f"{mode_label('nginx')}: {verdicts.LARGER}",
        ),  # fmt: skip
    ],
)
def test_an_analog_of_the_claims_subject_is_judged_in_its_place(keepalive, opening):
    """Constructed blocks: nginx reproduces the article's 0.329x of Kestrel; nginx with the
    pool, the article's Nginx too, agrees or not: the sensitivity column's first words say."""
    runs = _runs(nginx=0.329)
    pooled = runs[runs["mode"] == "nginx"].assign(mode="nginx-keepalive")
    pooled["rps"] *= keepalive / 0.329
    table = lp.claims(pd.concat([runs, pooled]), profile_params(STUDY.id, "paper"))
    row = table[table[CLAIM].str.startswith("Nginx serves")].iloc[0]
    assert row[VERDICT] == verdicts.REPRODUCED
    assert row[SENSITIVITY].startswith(opening), row[SENSITIVITY]
    # A claim that does not name nginx is not judged under it.
    going = table[table[CLAIM].str.startswith("Going from")].iloc[0]
    assert going[SENSITIVITY] == "no other analog or sub-study ran it"


def test_an_analog_a_sub_study_ran_is_judged_there_too():
    """The main run without the other nginx, a sub-study with it: judged in the sub-study."""
    runs = _runs(nginx=0.329)
    pooled = runs[runs["mode"] == "nginx"].assign(mode="nginx-keepalive")
    pooled["rps"] *= 1.5
    params = profile_params(STUDY.id, "paper")
    table = lp.claims(runs, params, {"two-hosts": pd.concat([runs, pooled])})
    row = table[table[CLAIM].str.startswith("Nginx serves")].iloc[0]
    assert row[SENSITIVITY].startswith(
        "depends on the analog and the sub-study: "
        f"{mode_label('nginx-keepalive')} in place of {mode_label('nginx')}, in the two-hosts "
        f"sub-study: {verdicts.LARGER} ({wording.pct_text(0.329 * 1.5)}, "
    )
    assert row[SENSITIVITY].endswith("; holds under 1: the two-hosts sub-study")


TRACE = "Returning the request's trace id"
# The postscript's claims: its direction ("slight better throughput on each"), and TRACE.
TRACED = ("The trace id gives", TRACE)


def _traced(trace_over_date: float, blocks: int = 3, swing: float = 0.01) -> pd.DataFrame:
    """A trace-id sub-study's blocks: Kestrel, nginx and Caddy (10,000, 2,500 and 2,300 req/s),
    each launched with either body, the trace id's at `trace_over_date` x the time's (-+swing
    on the log scale from block to block)."""
    rows = []
    for block in range(1, blocks + 1):
        gain = trace_over_date * math.exp((-1) ** block * swing)
        for mode, rps in (("kestrel", 10_000.0), ("nginx", 2_500.0), ("caddy", 2_300.0)):
            rows += [(mode, lp.DATE_BODY, block, rps), (mode, lp.TRACE_ID, block, rps * gain)]
    frame = pd.DataFrame(rows, columns=["mode", "variant", "block", "rps"])
    return frame.assign(scenario="api-test", tool="bombardier", concurrency=2)


@pytest.mark.parametrize(
    ("gain", "verdict"),
    [(1.03, verdicts.REPRODUCED), (1.25, verdicts.LARGER), (0.8, verdicts.SMALLER)],
)
def test_the_trace_id_claim_is_judged_on_the_sub_study_that_ran_both_bodies(gain, verdict):
    """Constructed: the main run has one launch of each setup, the trace-id sub-study two (one
    per body of api/test). The postscript's claim is judged there alone; the other claims
    never on it, since its rows are two launches of each mode."""
    params = profile_params(STUDY.id, "paper")
    main = _runs(nginx=0.329)
    table = lp.claims(main, params, {lp.TRACE_ID: _traced(gain)}).set_index(CLAIM)
    row = table.loc[table.index.str.startswith(TRACE)].iloc[0]
    assert row[VERDICT] == verdict
    assert row[OURS].startswith(
        f"the trace-id sub-study: trace-id / date on {mode_label('kestrel')}, api/test at 2: "
        f"{wording.pct_text(gain * math.exp(-0.01 / 3))} ("
    ), row[OURS]  # three blocks at -1%, +1%, -1%: their geometric mean
    assert row[OURS].count("trace-id / date on ") == 3  # each setup against itself
    assert row[SENSITIVITY] == "no other analog or sub-study ran it"
    without = lp.claims(main, params).set_index(CLAIM)
    others = ~table.index.str.startswith(TRACED)
    assert table[others].equals(without[others])  # no other row reads the sub-study
    # With no run of either body, its comparisons are named as not run.
    alone = without.loc[without.index.str.startswith(TRACE)].iloc[0]
    assert alone[VERDICT] == verdicts.NOT_ENOUGH
    nginx = mode_label("nginx")
    assert f"trace-id / date on {nginx}, api/test: not run" in alone[OURS]


def test_a_trace_id_sub_study_measured_until_decided_is_judged_by_its_repeated_intervals():
    """Constructed: 3 blocks at -+4%. Their t interval lies within the rule's +-15% of 1.00;
    the repeated interval of a sub-study measured until decided (its plan, as
    tables.load_results records it), valid over all 16 looks, is wider and decides nothing
    yet. The table printed beside the verdict states the same interval."""
    params, main = profile_params(STUDY.id, "paper"), _runs(nginx=0.329)
    fixed = _traced(1.0, swing=0.04)
    sequential = fixed.copy()
    sequential.attrs[tables.PLAN] = Plan(3, 16)
    verdict_of = {}
    for name, sub in (("fixed", fixed), ("sequential", sequential)):
        table = lp.claims(main, params, {lp.TRACE_ID: sub}).set_index(CLAIM)
        row = table.loc[table.index.str.startswith(TRACE)].iloc[0]
        verdict_of[name] = row[VERDICT]
        kestrel = lp.trace_id_table(sub).iloc[0]
        low, high = wording.ci_bounds(kestrel["CI low %"] / 100, kestrel["CI high %"] / 100)
        ours = wording.pct_text(kestrel["ours %"] / 100)
        printed = f"{mode_label('kestrel')}, api/test at 2: {ours} ({low}-{high}%, 3 blocks)"
        assert printed in row[OURS], (name, row[OURS])
    assert verdict_of == {"fixed": verdicts.REPRODUCED, "sequential": verdicts.UNDECIDED}


def test_the_trace_id_table_pairs_each_setups_bodies_within_blocks():
    table = lp.trace_id_table(_traced(1.10, blocks=4))
    assert list(table["setup"]) == [mode_label(m) for m in ("kestrel", "nginx", "caddy")]
    assert (table["connections"] == 2).all() and (table["blocks"] == 4).all()
    # -+1% in turn over 4 blocks: the geometric mean is the gain itself.
    assert table["ours %"].to_numpy() == pytest.approx(110.0)
    assert ((table["CI low %"] < 110) & (table["CI high %"] > 110)).all()
    assert set(table["in words"]) == {"faster"}


def _runs(
    nginx: float, caddy: float = 1.0, more: float = 2.0, spread: float = 0.01, blocks: int = 4
) -> pd.DataFrame:
    """Blocks of kestrel (1000 rps at 2 connections, `more` times that at 125), nginx at
    `nginx` x kestrel (-+spread on the log scale from block to block) and caddy at `caddy` x
    nginx."""
    rows = []
    for block in range(1, blocks + 1):
        sign = -1 if block % 2 else 1
        n = 1000.0 * nginx * math.exp(sign * spread)
        cells = {("kestrel", 2): 1000.0, ("kestrel", 125): 1000.0 * more * math.exp(sign * spread),
                 ("nginx", 2): n, ("caddy", 2): n * caddy}  # fmt: skip
        rows += [(m, "api-test", "bombardier", c, block, rps) for (m, c), rps in cells.items()]
    return pd.DataFrame(rows, columns=["mode", "scenario", "tool", "concurrency", "block", "rps"])


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        # Nginx / Kestrel against the article's 0.329, within and beyond the 15% tolerance.
        (dict(nginx=0.329 * 1.10), {"Nginx serves": verdicts.REPRODUCED}),
        (dict(nginx=0.329 / 1.10), {"Nginx serves": verdicts.REPRODUCED}),
        (dict(nginx=0.329 * 1.25), {"Nginx serves": verdicts.LARGER}),
        (dict(nginx=0.329 / 1.25), {"Nginx serves": verdicts.SMALLER}),
        (dict(nginx=0.329 * 1.14, spread=0.1), {"Nginx serves": verdicts.UNDECIDED}),
        # "Basically the same": Caddy at 1.00x Nginx, or 0.80x.
        (dict(nginx=0.3, caddy=1.05), {"Nginx and Caddy perform": verdicts.REPRODUCED}),
        (dict(nginx=0.3, caddy=0.80), {"Nginx and Caddy perform": verdicts.SMALLER}),
        # Kestrel alone ahead of both proxies: not where Caddy overtakes it.
        (dict(nginx=0.3), {"On Linux": verdicts.SUPPORTED}),
        (dict(nginx=0.9, caddy=1.3), {"On Linux": verdicts.NOT_SUPPORTED}),
        # More connections, more throughput: 0.9x is the other side.
        (dict(nginx=0.3, more=0.9), {"Going from": verdicts.NOT_SUPPORTED}),
        # Two blocks decide nothing, whatever the interval.
        (
            dict(nginx=0.329, blocks=2),
            {"Nginx serves": verdicts.NOT_ENOUGH, "On Linux": verdicts.NOT_ENOUGH},
        ),
    ],
)
def test_claims_on_constructed_intervals_on_each_side_of_the_tolerance(runs, expected):
    table = judge(STUDY.id, _runs(**runs), profile_params(STUDY.id, "paper"))
    for start, verdict in expected.items():
        assert _verdict(table, start) == verdict, (start, table[OURS].tolist())


# ------------------------------------------------------------------ sentences from the data


def test_the_blocks_sentence_counts_the_blocks_run_not_the_profiles_first_ones(paper_run):
    """The report said "Blocks: 3" where design.json has 6: the blocks are counted from the
    results, the profile's first blocks beside them."""
    results = tables.load_results(paper_run, valid_only=False)
    design = json.loads((paper_run / "design.json").read_text())
    params = tables.load_params(paper_run)
    sentence = lp.method_sentence(results, params)
    assert design["blocks"] == results["block"].nunique() != params.repetitions
    assert sentence.startswith(f"Blocks run: **{design['blocks']}** (the profile's first "
                               f"{design['first_blocks']}, then ")  # fmt: skip
    for mode, n in results.groupby("mode")["block"].nunique().items():
        assert f"{mode_label(mode)}" in sentence and f": {n}" in sentence
    # How the windows shared the machine, as the run's params say (its words differ by design).
    assert f"windows **{window_design.in_words(params)}**" in sentence
    interleaved = replace(params, interleave_slice_s=1.0)
    assert "slices of 1 s" in lp.method_sentence(results, interleaved)
    assert "back to back" not in lp.method_sentence(results, interleaved)
    rounds = lp.setup_table(paper_run).set_index("").loc["rounds", "this run"]
    assert rounds.startswith(f"{design['blocks']} blocks (")
    quick = tables.load_results(LP_RESULTS, valid_only=False)
    blocks = quick["block"].nunique()
    assert lp.blocks_text(quick) == f"{blocks} blocks"
    source = STUDY.notebook_path.read_text()
    assert "p.repetitions}**" not in source and "lp.method_sentence(all_runs, p)" in source


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
        assert f"{r['mode']} {wording.pct_cell(r['ours %'])} (95% CI " in caption


def test_the_hosts_page_params_for_two_machines_are_valid_and_the_articles_settings():
    """docs/hosts.md's params file for this article under ssh validates, and it is the paper
    profile with only the topology changed and the additions out."""
    import yaml

    from hostbench.params import StudyParams

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


@pytest.mark.parametrize(
    ("gain", "direction", "same"),
    [(1.03, verdicts.SUPPORTED, verdicts.REPRODUCED), (1.0, verdicts.UNDECIDED,
     verdicts.REPRODUCED), (0.95, verdicts.NOT_SUPPORTED, verdicts.REPRODUCED)],
)  # fmt: skip
def test_slight_better_throughput_on_each_is_judged_for_its_direction_and_its_size(
    gain, direction, same
):
    """'a slight better throughput on each': the trace id above the time on every setup (a
    direction, refuted by one setup below), and 'slight' as the same within the rule's
    tolerance; both on the sub-study that ran both bodies. At 0.95x the gain is slight but
    the wrong way."""
    params, main = profile_params(STUDY.id, "paper"), _runs(nginx=0.329)
    table = lp.claims(main, params, {lp.TRACE_ID: _traced(gain, swing=0.002)}).set_index(CLAIM)
    assert _verdict(table.reset_index(), TRACED[0]) == direction
    assert _verdict(table.reset_index(), TRACE) == same
    rows = _claims_file()
    words = rows[rows["claim"].str.startswith(TRACED[0])]
    assert (words["kind"] == "direction").all() and set(words["side"]) == {"above"}
    assert (words["value"] == 1).all() and "'a slight better throughput on each'" in words[
        "reading"].iloc[0]  # fmt: skip


def test_much_higher_throughput_reads_as_more_than_the_rules_tolerance():
    """'much higer throughput' has no number: read as above the most a ratio may differ and
    still count as the same (verdicts.TOLERANCE_PCT), so a gain the rule would call the same
    never supports it."""
    rows = _claims_file()
    closing = rows[rows["claim"].str.startswith("Going from")].iloc[0]
    assert "much higer throughput" in closing["quote"]
    assert closing["value"] == pytest.approx(verdicts.tolerance_edges()[1])
    assert "more than the verdict rule's tolerance" in closing["reading"]
    assert f"({verdicts.TOLERANCE_PCT:g}%," in lp.closing_note()
    results = _runs(nginx=0.329, more=1.10)  # 125 connections 1.10x 2: within the tolerance
    assert _verdict(judge(STUDY.id, results, profile_params(STUDY.id, "paper")),
                    "Going from") == verdicts.NOT_SUPPORTED  # fmt: skip
    assert (
        _verdict(
            judge(STUDY.id, _runs(nginx=0.329, more=1.5), profile_params(STUDY.id, "paper")),
            "Going from",
        )
        == verdicts.SUPPORTED
    )


def test_the_trace_id_claims_are_named_by_the_machine_their_sub_study_ran_on(paper_run):
    """The paper run's trace-id sub-study ran days later, at another commit, on a processor
    its environment.json records (the main run's predates the family field): the claims
    judged there are named by that processor, never "family not recorded"."""
    sub = tables.load_environment(paper_run.parent / f"{paper_run.name}-{lp.TRACE_ID}")
    main = tables.load_environment(paper_run)
    assert sub.get("cpu_family") is not None and main.get("cpu_family") is None
    seen = machines.seen_by_claim(STUDY.id, claims_of_run(STUDY.id, paper_run), paper_run)
    for claim in (c for c in seen if c.startswith(TRACED)):
        named = set(seen[claim][0]) | set(seen[claim][1])
        assert machines.processor(sub) in named, (claim, named)
        assert not any(name.endswith(machines.UNIDENTIFIED) for name in seen[claim][0])
