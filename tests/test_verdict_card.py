"""The verdict card (hostbench.analysis.verdict_card): a report's first screen, one short line
per testable claim with its verdict as a coloured chip and where it holds in a few words; the
words from machines.in_short and claim_words.conditions_in_short, on constructed counts, and the
card of every committed claims run."""

import pytest

from hostbench import pagecheck
from hostbench.analysis import (
    claim_words,
    claims,
    findings,
    machines,
    tables,
    verdict_card,
    verdicts,
    wording,
)
from hostbench.paths import RUNS, committed
from hostbench.studies import STUDIES

EPYC_25 = "AMD EPYC (family 25, model 17, stepping 1)"
EPYC_25_1 = "AMD EPYC (family 25, model 1, stepping 1)"
EPYC_26 = "AMD EPYC (family 26, model 2, stepping 1)"
XEON = "Intel Xeon"
UNKNOWN = f"AMD EPYC {machines.UNIDENTIFIED}"


def test_processors_are_named_with_as_much_of_their_identity_as_tells_them_apart():
    short = machines.short_names([EPYC_25, EPYC_26, XEON, UNKNOWN])
    assert short == {EPYC_25: "AMD EPYC family 25", EPYC_26: "AMD EPYC family 26",
                     XEON: "Intel Xeon", UNKNOWN: "AMD EPYC family unknown"}  # fmt: skip
    # Two models of one family on record: the model too; never the stepping.
    both = machines.short_names([EPYC_25, EPYC_25_1])
    assert both == {EPYC_25: "AMD EPYC family 25 model 17", EPYC_25_1: "AMD EPYC family 25 model 1"}


def test_where_a_verdict_holds_is_said_in_a_few_words():
    same = {EPYC_25: {verdicts.REPRODUCED: 1}, XEON: {verdicts.REPRODUCED: 2}}
    assert machines.in_short(same) == "the same on 2 machines"
    assert machines.in_short({XEON: {verdicts.SUPPORTED: 2}}) == "one machine on record"
    # A model name all of whose machines agree is named alone; a verdict in its short words.
    split = {EPYC_25: {verdicts.REPRODUCED: 1}, XEON: {verdicts.SMALLER: 2},
             EPYC_26: {verdicts.REPRODUCED: 1}}  # fmt: skip
    assert machines.in_short(split) == "reproduced on AMD EPYC; smaller on Intel Xeon"
    assert machines.in_short(split, counted=True) == "reproduced on 2 machines; smaller on 1"
    one_family = {EPYC_25: {verdicts.REPRODUCED: 1}, EPYC_26: {verdicts.SMALLER: 1}}
    assert machines.in_short(one_family) == (
        "reproduced on AMD EPYC family 25; smaller on AMD EPYC family 26"
    )
    # Undecided disagrees with none; a run of an unrecorded processor counts as no machine.
    open_ = {EPYC_25: {verdicts.UNDECIDED: 1}, XEON: {verdicts.REPRODUCED: 1},
             EPYC_26: {verdicts.REPRODUCED: 1}, UNKNOWN: {verdicts.SMALLER: 1}}  # fmt: skip
    assert machines.in_short(open_) == "reproduced where decided (2 of 3 machines)"
    assert machines.in_short({EPYC_25: {verdicts.UNDECIDED: 1}, XEON: {verdicts.UNDECIDED: 1}}) == (
        "still open on both machines"
    )


def test_where_a_claim_was_judged_again_is_said_in_a_few_words():
    runtimes = claim_words.Conditions(
        held=tuple((claim_words.SUB_STUDY, f".NET {v}") for v in (8, 9, 10)), changed=()
    )
    assert claim_words.conditions_in_short(runtimes) == "holds on .NET 8, 9 and 10"
    # A tls sub-study (on_tls.TLS_LABEL) and runtime variants are named after the runtimes.
    on_tls = claim_words.Conditions(
        held=(*runtimes.held, (claim_words.SUB_STUDY, "TLS")),
        changed=((claim_words.SUB_STUDY, "aot-datas", verdicts.SMALLER),),
    )
    assert claim_words.conditions_in_short(on_tls) == (
        "changes on aot-datas; holds on .NET 8, 9 and 10 and TLS"
    )
    mixed = claim_words.Conditions(
        held=((claim_words.ANALOG, ""), (claim_words.SUB_STUDY, "")),
        changed=(
            (claim_words.ANALOG, "", verdicts.LARGER),
            (claim_words.SUB_STUDY, "", verdicts.UNDECIDED),
        ),
    )
    # An undecided condition is no change of verdict: counted apart.
    assert claim_words.conditions_in_short(mixed) == (
        "changes with the analog; holds under 2 other conditions; still open under 1"
    )
    assert claim_words.conditions_in_short(mixed, brief=True) == "changes with the analog"
    assert claim_words.conditions_in_short(None) == ""


def _claims_runs():
    return [s for s in STUDIES.values() if committed(RUNS, f"{s.claims_run}/results.csv")]


@pytest.mark.parametrize("study", _claims_runs(), ids=lambda s: s.id)
def test_the_card_has_one_short_line_per_testable_claim_with_its_verdict(study):
    run = RUNS / study.claims_run
    table = claims.of_run(study.id, run)
    card = verdict_card.rows(table, machines.seen_by_claim(study.id, table, run))
    testable = table[~table[claims.VERDICT].isin(verdict_card.UNJUDGED)]
    assert list(card[verdict_card.CLAIM]) == list(testable[claims.CLAIM])
    assert list(card[verdict_card.VERDICT]) == list(testable[claims.VERDICT])
    for where in card[verdict_card.WHERE]:
        assert 0 < len(where.split()) <= machines.SHORT_WORDS, where
    for verdict in card[verdict_card.VERDICT]:  # every verdict has its colour
        assert verdict in verdict_card.VERDICT_COLOURS
    box = findings.findings_box(table, tables.load_results(run, valid_only=False),
                                run_dir=run, study=study.id)._repr_html_()  # fmt: skip
    # The card comes first; the claims in full one click below it.
    assert box.index('class="verdict-card"') < box.index("<details>") < box.index(claims.WORDS)


@pytest.mark.live  # a headless browser lays out each committed report
@pytest.mark.parametrize("study", _claims_runs(), ids=lambda s: s.id)
def test_each_committed_report_shows_every_testable_verdict_on_its_first_screen(study):
    if pagecheck.browser() is None:
        pytest.skip("no Chromium")
    for name in (study.claims_run, study.paper_run):
        run = RUNS / name
        if not committed(RUNS, f"{name}/report.html"):
            continue
        table = claims.of_run(study.id, run)
        testable = table[~table[claims.VERDICT].isin(verdict_card.UNJUDGED)]
        shown = pagecheck.first_screen_verdicts(run / "report.html")
        assert shown == list(testable[claims.VERDICT]), name


def test_a_claim_none_of_whose_comparisons_ran_reads_so_in_a_few_words():
    # A run older than a claim's comparisons (the trace-id claims before their sub-study): its
    # card line says so in four words, the comparisons it lacks named in the table below.
    run = RUNS / "community" / "linux-proxies-2021-intel-xeon-interleaved"
    if not committed(RUNS, "community/linux-proxies-2021-intel-xeon-interleaved/results.csv"):
        pytest.skip("the run is not committed")
    table = claims.of_run("linux-proxies-2021", run)
    not_run = table.attrs[claims.NOT_RUN]
    assert not_run
    card = verdict_card.rows(table).set_index(verdict_card.CLAIM)
    assert all(card.loc[c, verdict_card.OURS] == verdict_card.NOT_RUN for c in not_run)
    assert all(len(o) < 40 for o in card[verdict_card.OURS])


@pytest.mark.parametrize("study", _claims_runs(), ids=lambda s: s.id)
def test_the_cards_ours_and_the_articles_are_the_claims_tables(study):
    # The card reads the comparisons the verdict rests on (claims.POINTS, as measured): a claim
    # of one comparison shows the ratio and interval its claims table's OURS gives, one of more
    # the span of their ratios and their count; beside it the article's value.
    table = claims.of_run(study.id, RUNS / study.claims_run)
    card = verdict_card.rows(table).set_index(verdict_card.CLAIM)
    measured = [p for p in table.attrs[claims.POINTS] if p["condition"] == claims.AS_RUN]
    for claim, ours in table.set_index(claims.CLAIM)[claims.OURS].items():
        points = [p for p in measured if p[claims.CLAIM] == claim]
        if claim not in card.index or not points:
            continue
        shown = card.loc[claim, verdict_card.OURS]
        if len(points) == 1:
            ratio, interval = shown.removesuffix(")").split(" (")  # "154% (147-161%)"
            assert f"{ratio} ({interval}, " in ours, (claim, shown, ours)
        else:
            assert shown.endswith(f", {len(points)} comparisons"), (claim, shown)
            highest = shown.split(", ")[0].split("-")[-1]
            assert f" {highest} (" in ours, (claim, shown, ours)
        assert wording.pct_text(points[0]["value"]) in card.loc[claim, verdict_card.ARTICLE]
