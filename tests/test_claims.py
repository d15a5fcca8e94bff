"""The claims box's sentences (hostbench.analysis.claims): each number computed from what the
sentence states beside it."""

import re

import pytest

from hostbench.analysis import claim_words, claims, claims_across_runs, verdicts, wording
from hostbench.paths import RUNS
from hostbench.studies import STUDIES

# "0.44x (0.42-0.45x): agrees to within 58% below, differs by at least 55%"
AGAINST = re.compile(
    r"^(?P<centre>[^(]+) \((?P<low>[\d.]+)-(?P<high>[\d.]+)x\): agrees to within "
    r"(?:(?P<below>[\d.]+)% below)?(?: and )?(?:(?P<above>[\d.]+)% above)?"
    r"(?:, differs by at least (?P<differs>[\d.]+)%)?$"
)


def _comparison(scenario: str, ratio: float, low: float, high: float, value: float) -> dict:
    return dict(mode="kestrel", relative_to="nginx", scenario=scenario, concurrency=float("nan"),
                n=10, ratio=ratio, ci_low=low, ci_high=high, value=value)  # fmt: skip


def _from_printed_ends(text: str) -> tuple[tuple, float | None]:
    """What a reader gets by subtracting the printed ends of an AGAINST cell from 1.00x, in
    the direction of the printed ratio: ((% below, % above) it agrees within, % it differs by),
    and what the cell states; the two must be the same."""
    match = AGAINST.match(text)
    assert match, text
    low, high = float(match["low"]), float(match["high"])
    within = (round(100 * (1 - low), 6) if low < 1 else None,
              round(100 * (high - 1), 6) if high > 1 else None)  # fmt: skip
    gap = 100 * (1 - high) if high < 1 else 100 * (low - 1) if low > 1 else None
    stated = tuple(None if match[k] is None else float(match[k]) for k in ("below", "above"))
    differs = None if match["differs"] is None else float(match["differs"])
    assert stated == within, text
    return within, differs, None if gap is None else round(gap, 6)


def test_the_gap_a_claim_over_several_comparisons_states_holds_for_each_of_them():
    # Three comparisons against 3.00: 0.43-0.45, 0.44-0.46, 0.4274-0.4488 of it. The smallest
    # gap is the highest end's, 1 - 0.46 = 54%; the largest (1 - 0.45) does not hold for the
    # one at 0.44-0.46.
    found = [_comparison("json", 1.32, 1.29, 1.35, 3.0), _comparison("xml", 1.35, 1.32, 1.38, 3.0),
             _comparison("text", 1.31, 1.2822, 1.3464, 3.0)]  # fmt: skip
    text = claim_words.against_text("size", found)
    assert text == (
        "0.44x to 0.45x (0.42-0.46x): agrees to within 58% below, differs by at least 54%"
    )
    assert _from_printed_ends(text) == ((58, None), 54, 54)


def test_a_range_of_one_value_prints_as_one_value():
    found = [_comparison("json", 1.3221, 1.29, 1.35, 3.0),
             _comparison("xml", 1.3179, 1.28, 1.36, 3.0)]  # fmt: skip
    assert claim_words.against_text("size", found).startswith("0.44x (0.42-0.46x)")


def test_a_low_end_under_one_hundredth_prints_its_first_digit_not_0():
    text = claim_words.against_text("size", [_comparison("text", 0.012, 0.0084, 0.016, 2.0)])
    assert text == "0.01x (0.004-0.01x): agrees to within 99.6% below, differs by at least 99%"


def test_a_gap_under_one_percent_is_not_stated():
    # Printed ends 1.007-1.05x: "differs by at least 0%" would tell a reader nothing.
    found = [_comparison("text", 1.03, 1.007, 1.05, 1.0), _comparison("html", 1.0, 0.9, 1.1, 1.0)]
    assert "differs" not in claim_words.against_text("equivalence", found)


def test_a_gap_on_some_comparisons_names_them_and_their_printed_ends():
    # text differs (0.77-0.90 of 1.70: at least 1 - 0.90 = 10%), JSON does not.
    found = [_comparison("text", 1.40, 1.31, 1.52, 1.70),
             _comparison("json", 1.60, 1.45, 1.80, 1.70)]  # fmt: skip
    text = claim_words.against_text("size", found)
    assert text.endswith(
        "agrees to within 23% below and 6% above, differs by at least 10% on text (0.77-0.90x)"
    )


COMMITTED = [(s, name) for s in STUDIES for name in (STUDIES[s].paper_run, STUDIES[s].claims_run)
             if (RUNS / name / "results.csv").is_file()]  # fmt: skip


@pytest.mark.parametrize(("study", "run"), COMMITTED, ids=[run for _, run in COMMITTED])
def test_every_committed_claims_box_states_what_its_printed_ends_give(study, run):
    table = claims.of_run(study, RUNS / run)
    if table is None:
        pytest.skip(f"{study} judges no claims")
    for text in table[claims.AGAINST]:
        if not text or "no interval" in text:
            continue
        match = AGAINST.match(text)
        assert match, text
        centre = match["centre"].split(" to ")
        assert len(centre) == 1 or centre[0] != centre[1], text
        if " on " in text:  # a gap on some comparisons only: their own printed ends
            continue
        _, differs, gap = _from_printed_ends(text)
        assert differs == (gap if gap is not None and gap >= 1 else None), text


def test_a_claim_resting_on_anothers_comparisons_says_so_and_is_not_counted_again():
    # jcsi2018: "the fastest" and "the slowest" both rest on Kestrel / the baseline's analog;
    # go-vs-dotnet-2017: Iris MVC's lower mean latency is .NET's lower requests/s (Little's law).
    again = {
        "jcsi2018": ("The standard model (Kestrel behind IIS, out-of-process) is the slowest",
                     "Kestrel alone is the fastest hosting model"),
        "go-vs-dotnet-2017": (
            "Iris MVC answers with a lower mean latency than ASP.NET Core MVC, on both tests",
            "Iris MVC serves more requests/s than ASP.NET Core MVC, on both tests"),
    }  # fmt: skip
    for study, (claim, earlier) in again.items():
        run = RUNS / STUDIES[study].paper_run
        table = claims.of_run(study, run)
        assert table.attrs["restated"] == {claim: earlier}
        words = table.set_index(claims.CLAIM).loc[claim, claims.WORDS]
        assert words.endswith(f'{claims.RESTATES} "{earlier}", not more evidence')
        assert f"{claim}: {table.set_index(claims.CLAIM).loc[claim, claims.VERDICT]} (the " in (
            claim_words.in_words(table)
        )
        # Counted once where runs' verdicts are set side by side.
        wide = claims_across_runs.side_by_side(study, {"a": run, "b": run})
        independent = table[claims.VERDICT].size - 1
        assert claims_across_runs.agreement(wide) == (
            f"the same verdict on {independent} of {independent} claims (1 more rests on "
            "another's comparisons, not counted again)"
        )
    # No other committed study restates a claim.
    for study in ("linux-proxies-2021", "selfhost-2012", "kestrel-transports-2018"):
        assert claims.of_run(study, RUNS / STUDIES[study].paper_run).attrs["restated"] == {}


def test_a_claim_about_what_dotnet_removed_is_not_re_run_here_not_untestable():
    table = claims.of_run(
        "kestrel-transports-2018", RUNS / STUDIES["kestrel-transports-2018"].paper_run
    )
    libuv = table[table[claims.CLAIM].str.contains("libuv|Linux transport|Linux-specific")]
    assert len(libuv) == 6 and set(libuv[claims.VERDICT]) == {verdicts.NOT_RERUN}
    assert verdicts.NOT_RERUN in verdicts.VERDICTS
    assert claim_words.in_words(table).endswith("; 6 more not re-run here")
    # What needs Windows stays not testable here.
    jcsi = claims.of_run("jcsi2018", RUNS / STUDIES["jcsi2018"].paper_run)
    untestable = int((jcsi[claims.VERDICT] == verdicts.NOT_TESTABLE).sum())
    assert untestable == 4  # HTTP.sys twice, IIS in-process twice
    assert claim_words.in_words(jcsi).endswith(f"; {untestable} more not testable here")


def test_a_printed_end_keeps_the_side_of_the_tolerance_edge_the_verdict_read():
    # ours / the article's from 0.8699 (inside 1/1.15 = 0.86957) to 0.95: reproduced. Floored
    # to two decimals the low end would read 0.86, outside the tolerance ("within ±17%").
    c = _comparison("html", 1.547, 1.70 * 0.8699, 1.70 * 0.95, 1.70)
    assert verdicts.size_verdict(c["ci_low"], c["ci_high"], c["value"], n=7) == verdicts.REPRODUCED
    text = claim_words.against_text("size", [c])
    assert "(0.8699-0.95x)" in text
    assert _from_printed_ends(text)[0] == (13.01, None) and "within 13.01% below" in text


def test_a_claim_some_run_measured_none_of_is_no_disagreement():
    # linux-proxies-2021's postscript (its trace-id sub-study) is newer than the Intel re-run:
    # side by side, that run's "not measured enough" is left out of the agreement's count.
    study = "linux-proxies-2021"
    runs = {"ours": RUNS / STUDIES[study].paper_run,
            "older": RUNS / "community" / "linux-proxies-2021-intel-xeon"}  # fmt: skip
    wide = claims_across_runs.side_by_side(study, runs)
    trace = [c for c in wide[claims.CLAIM] if c.startswith(("Returning the request's trace id",
                                                            "The trace id gives"))]  # fmt: skip
    assert len(trace) == 2 and wide.attrs[claims.NOT_RUN] == sorted(trace)
    older = claims.of_run(study, runs["older"]).set_index(claims.CLAIM)
    assert set(older.loc[trace, claims.VERDICT]) == {verdicts.NOT_ENOUGH}
    counted = len(wide) - len(trace)
    assert claims_across_runs.agreement(wide).startswith("the same verdict on ")
    assert claims_across_runs.agreement(wide).endswith(
        f" of {counted} claims (2 more not measured by every run, not counted)"
    )


def _rule_edges() -> tuple[float, float]:
    """The tolerance's edges as the rule under every claims table prints them."""
    match = re.search(r"\((?P<low>[\d.]+)-(?P<high>[\d.]+)x", wording.tolerance_text())
    assert match, wording.tolerance_text()
    return float(match["low"]), float(match["high"])


@pytest.mark.parametrize("low", [0.8699, 0.86962, 0.8697, 0.87001])
def test_a_low_end_just_inside_the_edge_prints_visibly_inside_the_rules_printed_edge(low):
    # ours / the article's from `low` (inside 1/1.15 = 0.869565) to 0.95: reproduced, and the
    # printed low end reads as no lower than the rule's printed edge (was "0.8699" beside a
    # rule that printed 0.870).
    c = _comparison("html", 1.547, 1.70 * low, 1.70 * 0.95, 1.70)
    assert verdicts.size_verdict(c["ci_low"], c["ci_high"], c["value"], n=7) == verdicts.REPRODUCED
    match = AGAINST.match(claim_words.against_text("size", [c]))
    edge_low, edge_high = _rule_edges()
    assert edge_low <= float(match["low"]) <= float(match["high"]) <= edge_high, match[0]


@pytest.mark.parametrize("high", [1.1499, 1.14999, 1.15])
def test_a_high_end_just_inside_the_edge_prints_visibly_inside_it(high):
    c = _comparison("html", 1.70, 1.70 * 0.95, 1.70 * high, 1.70)
    assert verdicts.size_verdict(c["ci_low"], c["ci_high"], c["value"], n=7) == verdicts.REPRODUCED
    match = AGAINST.match(claim_words.against_text("size", [c]))
    assert float(match["high"]) <= _rule_edges()[1], match[0]


@pytest.mark.parametrize("high", [0.8695, 0.869, 0.86])
def test_a_high_end_just_outside_the_low_edge_prints_visibly_outside_it(high):
    c = _comparison("html", 1.20, 1.70 * 0.70, 1.70 * high, 1.70)
    assert verdicts.size_verdict(c["ci_low"], c["ci_high"], c["value"], n=7) == verdicts.SMALLER
    match = AGAINST.match(claim_words.against_text("size", [c]))
    assert float(match["high"]) < _rule_edges()[0], match[0]


def test_the_rules_edges_say_the_percentages_its_printed_edges_give():
    low, high = _rule_edges()
    text = wording.tolerance_text()
    assert f"from {100 * (1 - low):.2f}% below the article's to {100 * (high - 1):g}% above" in text


@pytest.mark.parametrize(
    ("ratio", "low", "high", "words"),
    [
        # 0.83x (0.81-0.85x): 19% and 15% below, not 1/0.81 - 1 = 24% and 1/0.85 - 1 = 17%.
        (0.83, 0.81, 0.85, "agrees to within 19% below, differs by at least 15%"),
        (1.30, 1.20, 1.41, "agrees to within 41% above, differs by at least 20%"),
        (0.98, 0.90, 1.05, "agrees to within 10% below and 5% above"),
    ],
)
def test_every_percentage_beside_a_printed_ratio_is_in_its_direction(ratio, low, high, words):
    c = _comparison("html", 1.70 * ratio, 1.70 * low, 1.70 * high, 1.70)
    text = claim_words.against_text("size", [c])
    assert text == f"{ratio:.2f}x ({low:.2f}-{high:.2f}x): {words}"
    assert wording.agreement_text(c["ci_low"], c["ci_high"], c["value"]) == words


@pytest.mark.parametrize(
    ("kind", "low", "high", "value", "side", "want"),
    [
        # A size of 1.50 (its tolerance's low edge 1.50 / 1.15 = 1.304): ours bounds it above.
        ("size", 1.10, 1.25, 1.50, "", verdicts.SMALLER),  # the bound below the edge
        ("size", 1.35, 1.45, 1.50, "", verdicts.CONSISTENT),  # within: not shown to hold
        ("size", 1.80, 1.95, 1.50, "", verdicts.CONSISTENT),  # above: no "larger" from a bound
        ("size", 1.25, 1.40, 1.50, "", verdicts.UNDECIDED),  # across the edge
        ("direction", 0.85, 0.95, 1.0, "above", verdicts.NOT_SUPPORTED),
        ("direction", 1.05, 1.20, 1.0, "above", verdicts.CONSISTENT),
        ("direction", 0.85, 0.95, 1.0, "below", verdicts.SUPPORTED),
        ("direction", 0.95, 1.05, 1.0, "above", verdicts.UNDECIDED),
    ],
)
def test_a_ratio_that_bounds_the_articles_from_above_is_judged_one_sided(kind, low, high, value,
                                                                         side, want):  # fmt: skip
    """Where the truth lies at or below ours, only an interval below what the claim needs
    decides it; one on its side does not rule it out, and says no more."""
    assert verdicts.bounded_verdict(kind, low, high, value, side, n=5) == want
    assert verdicts.bounded_verdict(kind, low, high, value, side, n=2) == verdicts.NOT_ENOUGH
    assert verdicts.combined_verdict([want, want]) == want


def test_a_tables_rows_by_mode_are_the_rows_a_mask_selects_frame_by_frame():
    import pandas as pd

    from hostbench.analysis import tables

    frame = pd.DataFrame({"mode": ["nginx", "kestrel", "nginx", "kestrel", "nginx"],
                          "scenario": ["text", "text", "json", "json", "text"],
                          "block": [1, 1, 1, 1, 2]})  # fmt: skip
    frame["mode"] = tables.ordered_modes(frame["mode"])
    rows = claims.ModeRows()
    nginx = rows.of(frame, "nginx", "")
    assert nginx.index.tolist() == [0, 2, 4] and nginx.equals(frame[frame["mode"] == "nginx"])
    assert rows.of(frame, "nginx", "text").index.tolist() == [0, 4]
    assert rows.of(frame, "nginx", "plaintext").empty and rows.of(frame, "yarp", "").empty
    other = frame.iloc[::-1]  # another frame: its own rows, in its own order
    assert rows.of(other, "nginx", "").index.tolist() == [4, 2, 0]
    assert rows.of(frame, "kestrel", "json").index.tolist() == [3]
