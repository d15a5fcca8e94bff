"""The A/A check's arithmetic (hostbench/analysis/aa.py) on constructed runs with a known
answer: intervals over all blocks and over disjoint groups of 3, and the sentence from them."""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import aa


def _runs(twin_ratio: dict[str, float], blocks: int = 6, spread: float = 0.01) -> pd.DataFrame:
    """kestrel at 1000 rps and kestrel-twin at its ratio per scenario, -+spread on the log
    scale from block to block."""
    rows = []
    for block in range(1, blocks + 1):
        for scenario, ratio in twin_ratio.items():
            twin = 1000.0 * ratio * np.exp(spread * (-1) ** block)
            rows += [("kestrel", scenario, "k6", 8, block, 1000.0),
                     ("kestrel-twin", scenario, "k6", 8, block, twin)]  # fmt: skip
    return pd.DataFrame(rows, columns=["mode", "scenario", "tool", "concurrency", "block", "rps"])


def test_an_equal_twin_holds_100_percent_and_a_biased_one_does_not():
    table = aa.aa_intervals(_runs({"text": 1.0, "html": 1.08}))
    assert sorted(table["span"].unique()) == ["1-3", "4-6", "all"]
    assert len(table) == 2 * 3  # two scenarios: all blocks, and two groups of three
    text, html = (table[table["scenario"] == s] for s in ("text", "html"))
    assert not text["excludes_100"].any()
    assert html["excludes_100"].all()
    whole = html[html["span"] == "all"].iloc[0]
    assert whole["n"] == 6 and whole["agrees_within_pct"] > 8


def test_the_intervals_asked_again_are_those_of_the_results_as_they_are_now():
    # aa_intervals keeps its table by the results' content (kept.py): the caller's edits to a
    # table it got, or to the results, are never what the next caller gets.
    runs = _runs({"text": 1.0})
    first = aa.aa_intervals(runs)
    first.loc[:, "excludes_100"] = True
    assert not aa.aa_intervals(runs)["excludes_100"].any()
    runs.loc[runs["mode"] == "kestrel-twin", "rps"] *= 1.2
    assert aa.aa_intervals(runs)["excludes_100"].all()


def test_the_summary_counts_the_intervals_it_states():
    sentence = aa.summary(_runs({"text": 1.0, "html": 1.08, "json": 1.0}))
    assert "2 of 6 95% intervals of 3 blocks excluded 100% (at a 5% rate, 0.3 would)" in sentence
    assert "1 of 3 exclude it" in sentence and "6 blocks" in sentence


def test_scenarios_that_move_together_from_block_to_block_correlate():
    # _runs moves every scenario's twin the same way in each block: they correlate fully.
    together = _runs({"text": 1.0, "html": 1.0}, blocks=8)
    assert aa.scenario_correlation(together) == pytest.approx(1.0)
    # HTML's twin in a pattern orthogonal to text's over 8 blocks (+--++--+ against -+-+-+-+).
    apart = together.copy()
    html_twin = (apart["scenario"] == "html") & (apart["mode"] == "kestrel-twin")
    apart.loc[html_twin, "rps"] = 1000.0 * np.exp(
        0.01 * (-1.0) ** (apart.loc[html_twin, "block"] // 2)
    )
    assert aa.scenario_correlation(apart) == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(aa.scenario_correlation(_runs({"text": 1.0}, blocks=8)))  # one scenario


def test_the_summary_says_what_the_counts_independence_rests_on():
    # _runs moves every scenario alike from block to block: fully correlated, which the
    # sentence says, with each scenario's count and bound (2 of 2: 100%; 0 of 2: 77.7%).
    sentence = aa.summary(_runs({"text": 1.0, "html": 1.08, "json": 1.0}))
    assert "block ratios themselves correlate at r = 1.00 on average" in sentence
    assert (
        "(HTML 2 of 2, JSON 0 of 2, text 0 of 2 excluded 100%), bound each scenario's rate at "
        "77.7-100.0%" in sentence
    )
    # Each cluster (a group of 3 blocks) has HTML excluded and the others not: the clusters
    # are alike, the ICC negative, counted as 0: the clustered bound is the independent one.
    assert "intraclass correlation of -0.50, counted as 0 (design effect 1.00)" in sentence


def test_the_false_positive_bound_has_its_closed_form():
    # None seen: 1 - 0.05 ** (1 / n); 30 intervals bound the rate at about 10%, 8 at 31%.
    for total in (8, 30, 59):
        assert aa.rate_upper_bound(0, total) == pytest.approx(1 - 0.05 ** (1 / total), abs=1e-9)
    assert round(aa.rate_upper_bound(0, 8), 2) == 0.31
    # One seen in 8: P(X <= 1 | p) = (1 - p) ** 8 + 8 p (1 - p) ** 7 is 5% at the bound.
    p = aa.rate_upper_bound(1, 8)
    assert (1 - p) ** 8 + 8 * p * (1 - p) ** 7 == pytest.approx(0.05, abs=1e-9)
    assert aa.rate_upper_bound(8, 8) == 1.0


def test_the_summary_states_the_bound_and_rounds_agreement_outwards():
    sentence = aa.summary(_runs({"text": 1.0, "html": 1.0}, blocks=6, spread=0.0113))
    # 1 - 0.05 ** (1 / 4) is 52.71%: a bound is rounded up, never down to 52.7%. None
    # excluded, no correlation to estimate: the 2 clusters are counted (1 - 0.05 ** (1 / 2)).
    assert "52.8% were the intervals independent" in sentence
    assert "the clusters are counted, not the intervals (design effect 2)" in sentence
    assert "bound that rate at 77.7% at most" in sentence
    assert "excludes 100% between two identical launches" in sentence
    assert "29 independent intervals with none excluding 100% would bound it at 10%" in sentence
    total, excluded = aa.needed_at(aa.NOMINAL_RATE, 0.10)
    assert f", and {total} with {excluded} excluding it, as intervals that hold" in sentence


def test_intervals_that_hold_their_level_need_three_times_as_many_to_bound_the_rate():
    # At a 5% rate seen, the fewest intervals whose bound reaches 10%: one fewer does not.
    total, excluded = aa.needed_at(0.05, 0.10)
    assert excluded == round(0.05 * total) and aa.rate_upper_bound(excluded, total) <= 0.10
    assert aa.rate_upper_bound(round(0.05 * (total - 1)), total - 1) > 0.10
    assert total > 3 * aa.needed_at(0.0, 0.10)[0]  # none seen: the closed form's 29
    assert aa.needed_at(0.0, 0.10) == (29, 0)
    with pytest.raises(ValueError, match="never bounds"):
        aa.needed_at(0.10, 0.10)


def test_method_md_names_each_design_and_says_where_a_run_stopped_short(tmp_path):
    # The committed back-to-back run, cut to its first 3 blocks as if stopped there; the other
    # designs have no run in this folder.
    import csv

    from hostbench.paths import RUNS
    from hostbench.studies import STUDIES

    aa_block = STUDIES[aa.CLAIMS_STUDY].module("generated").aa_block

    run_id = aa.RUNS["back to back"].run_id
    run = tmp_path / run_id
    run.mkdir()
    for name in ("params.json", "environment.json"):
        (run / name).write_bytes((RUNS / run_id / name).read_bytes())
    with open(RUNS / run_id / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    with open(run / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if int(r["block"]) <= 3)
    block = aa_block(tmp_path)
    assert "(3 blocks; " in block
    assert ("The run stopped after 3 of its 6 blocks; `benchmarks/aa_check.py --design "
            "'back to back'` resumes it once its folders are unpacked (`scripts/archive-runs.sh "
            "unpack data/runs/example-aa`).") in block  # fmt: skip
    for design, run in aa.RUNS.items():
        if design != "back to back":
            assert f"Windows {run.words}: no committed run yet (`benchmarks/aa_check.py --design " \
                   f"'{design}'`)." in block  # fmt: skip


def test_a_grown_plan_reports_its_added_blocks_apart():
    # Planned for 6 blocks, grown to 12: HTML's twin 8% off in the first 6 blocks only.
    runs = _runs({"text": 1.0, "html": 1.0}, blocks=12)
    early = (runs["mode"] == "kestrel-twin") & (runs["scenario"] == "html") & (runs["block"] <= 6)
    runs.loc[early, "rps"] *= 1.08
    sentence = aa.summary(runs, first_plan=6)
    assert "The plan grew after its first 6 blocks had been looked at" in sentence
    assert "blocks 1-6, planned from the start, 2 of 4" in sentence
    assert "blocks 7-12, added after that look, 0 of 4" in sentence
    assert "The plan grew" not in aa.summary(runs, first_plan=12)
    assert "The plan grew" not in aa.summary(runs)


def test_the_first_plan_is_read_from_the_progress_log(tmp_path):
    runs = _runs({"text": 1.0, "html": 1.0}, blocks=9).assign(window=1)
    # 2 modes x 2 scenarios x 1 window a block: "[1/24]" planned 6 blocks.
    (tmp_path / "progress.log").write_text("[1/24] kestrel__text: 1 rps\n[2/24] x: 1 rps\n")
    assert aa.first_plan_blocks(tmp_path, runs) == 6
    assert aa.first_plan_blocks(tmp_path / "none", runs) is None
