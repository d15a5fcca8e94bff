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


def test_the_summary_counts_the_intervals_it_states():
    sentence = aa.summary(_runs({"text": 1.0, "html": 1.08, "json": 1.0}))
    assert "2 of 6 95% intervals of 3 blocks excluded 100% (at a 5% rate, 0.3 would)" in sentence
    assert "1 of 3 exclude it" in sentence and "6 blocks" in sentence


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
    assert "4 intervals bound the false-positive rate at 53% at most" in sentence
    assert "29 intervals with none excluding 100% would bound it at 10%" in sentence
