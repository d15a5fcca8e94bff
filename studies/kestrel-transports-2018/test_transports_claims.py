"""kestrel-transports-2018: the article's claims (reference/claims.csv), one row each on the
first screen: those about libuv and the Linux transport not re-run on .NET 10 with their
reason, those about the thread setting judged on the Sockets transport's IOQueueCount; and
the first screen's headline says how many comparisons its settings were picked from."""

import re

import pandas as pd
import pytest

from conftest import committed_run
from hostbench.analysis import claims, findings, tables, verdicts
from hostbench.analysis.reference import load_claims
from hostbench.params import StudyParams
from hostbench.paths import ROOT, RUNS
from hostbench.studies import study_of

TRANSPORT_STUDY = study_of(__file__)
transports = TRANSPORT_STUDY.analysis
STUDY = TRANSPORT_STUDY.id
FIXTURE = TRANSPORT_STUDY.fixtures_dir / "quick-results.csv"
SEEDS = ROOT.parent / "shared" / "seeds"
COMMITTED = [RUNS / TRANSPORT_STUDY.paper_run, RUNS / "community" / f"{STUDY}-amd-epyc-rerun"]
LIMITED, NO_LONGER = "Each transport is at first limited", "With enough threads"
PAPER = StudyParams.from_file(TRANSPORT_STUDY.params_path("paper"))


def _claim(table: pd.DataFrame, start: str) -> pd.Series:
    rows = table[table[claims.CLAIM].str.startswith(start)]
    assert len(rows) == 1, (start, list(table[claims.CLAIM]))
    return rows.iloc[0]


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"{SEEDS} not present")
def test_each_quote_is_verbatim_in_the_seed():
    seed = re.sub(r"\s+", " ", (SEEDS / TRANSPORT_STUDY.article).read_text(encoding="utf-8"))
    for quote in load_claims(STUDY)["quote"].unique():
        assert re.sub(r"\s+", " ", quote).strip() in seed, quote


def test_every_published_gain_is_a_claim_not_re_run_with_its_reason():
    # Not "not testable": libuv and the Linux transport ran on the runtimes they were built
    # for; they are gone from .NET 10, which this package runs.
    table = load_claims(STUDY)
    untestable = table[table["kind"] == "not re-run"]
    assert len(untestable) == 6 and "not testable" not in set(table["kind"])
    # Each of the article's gains between transports is in a claim's words, as published.
    gains = transports.published_gains()
    words = " ".join(untestable["claim"])
    for r in gains.itertuples(index=False):
        assert f"{r[3]:g}%" in words, r
    assert untestable["note"].str.contains(".NET 10").all()
    assert untestable["note"].str.contains("libuv|Linux transport").all()
    # What is judged compares settings of the Sockets transport, against its defaults.
    judged = table[table["kind"] != "not re-run"]
    assert set(judged["relative_to"]) == {transports.DEFAULT}
    assert set(judged["mode"]) == {"ioq1", transports.SWEEP_TOP}
    assert set(judged["scenario"]) == set(PAPER.scenarios)


@pytest.mark.parametrize("where", [FIXTURE, *COMMITTED], ids=lambda p: p.parent.name + p.name)
def test_the_box_has_one_row_per_claim_the_untestable_with_their_reason(where):
    if not where.exists():
        pytest.skip(f"{where} not committed")
    results = tables.load_results(where, valid_only=False)
    judged = claims.of_run(STUDY, where) if where.is_dir() else transports.claims(results, PAPER)
    gains = transports.gains(results)
    headline, _ = transports.first_screen(gains)
    box = findings.findings_box(judged, results, headline=headline, ratios=gains)
    table = load_claims(STUDY)
    assert list(box.claims[claims.CLAIM]) == list(table["claim"].unique())
    untestable = table[table["kind"] == "not re-run"].set_index("claim")["note"]
    shown = box.claims.set_index(claims.CLAIM)
    assert len(untestable) == 6
    for claim, note in untestable.items():
        assert shown.loc[claim, claims.VERDICT] == verdicts.NOT_RERUN
        assert shown.loc[claim, claims.OURS] == note  # the reason, on the first screen
    # How many the settings were picked from: those that change a setting (not the A/A check).
    compared = gains[gains["changes"] != transports.SAME_AS_DEFAULTS]
    assert f"{len(compared)} comparisons" in repr(box)
    if where == FIXTURE:  # two blocks decide nothing
        assert _claim(box.claims, LIMITED)[claims.VERDICT] == verdicts.NOT_ENOUGH


def test_the_committed_runs_verdicts():
    """IOQueueCount 1 below the defaults on JSON but not on plaintext: undecided as a claim
    over both tests, in every committed run. Twice the cores against the defaults: within
    ±15% of 1.00x on both tests in the paper run (interleaved windows); the back-to-back
    community re-run's intervals are too wide to tell."""
    committed = [committed_run(TRANSPORT_STUDY, str(run.relative_to(RUNS))) for run in COMMITTED]
    for run in committed:
        table = claims.of_run(STUDY, run)
        assert _claim(table, LIMITED)[claims.VERDICT] == verdicts.UNDECIDED, run
    paper, community = (claims.of_run(STUDY, run) for run in committed)
    assert _claim(paper, NO_LONGER)[claims.VERDICT] == verdicts.REPRODUCED
    assert _claim(community, NO_LONGER)[claims.VERDICT] == verdicts.UNDECIDED
    assert _claim(paper, LIMITED)[claims.OURS] == (
        "plaintext 100% (85-117%, 3 blocks); JSON (TE) 87% (79-96%, 3 blocks)"
    )


# --- verdicts that turn on constructed runs -------------------------------------------------


def _runs(cores: int, low: float, top: float, spread: float = 0.01) -> pd.DataFrame:
    """Four blocks of the defaults (IOQueueCount = cores, 100,000 req/s), IOQueueCount 1 at
    `low` x and twice the cores at `top` x the defaults, on both tests, -+spread on the log
    scale from block to block; one of our settings (inline scheduling at twice the cores)
    beside them, which the claims must not take for the sweep's top."""
    variants = {
        "default": (cores, False, True, 1.0),
        "ioq1": (1, False, True, low),
        f"ioq{2 * cores}": (2 * cores, False, True, top),
        f"ioq{2 * cores}-inline": (2 * cores, True, True, 0.3),
    }
    rows = []
    for block in range(1, 5):
        wobble = 1 + (-1) ** block * spread
        for scenario in ("plaintext", "hello-json"):
            for name, (queues, inline, wait, ratio) in variants.items():
                rps = 100_000 * ratio * (1 if name == "default" else wobble)
                rows.append({"mode": "kestrel", "variant": name, "scenario": scenario,
                             "tool": "wrk", "concurrency": 64, "block": block, "rps": rps,
                             "transport_io_queue_count": queues,
                             "transport_inline_scheduling": inline,
                             "transport_wait_for_data": wait,
                             "transport_inline_completions": inline,
                             "machine_cores": cores})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("cores", [2, 8])
def test_the_sweeps_top_is_twice_the_cores_on_any_machine(cores):
    modes = set(transports.by_variant(_runs(cores, 0.8, 1.0))["mode"])
    assert modes == {"default", "ioq1", transports.SWEEP_TOP, f"ioq{2 * cores}-inline"}


def test_the_thread_claims_turn_with_their_intervals():
    t = 1 + verdicts.TOLERANCE_PCT / 100
    holds = transports.claims(_runs(4, 0.8, 1.05), PAPER)
    assert _claim(holds, LIMITED)[claims.VERDICT] == verdicts.SUPPORTED
    assert _claim(holds, NO_LONGER)[claims.VERDICT] == verdicts.REPRODUCED
    assert "agrees to within " in _claim(holds, NO_LONGER)[claims.AGAINST]
    fails = transports.claims(_runs(4, 1.2, t * 1.1), PAPER)
    assert _claim(fails, LIMITED)[claims.VERDICT] == verdicts.NOT_SUPPORTED
    assert _claim(fails, NO_LONGER)[claims.VERDICT] == verdicts.LARGER
    # On one test only: a claim over both rests on each.
    one = _runs(4, 0.8, 1.0)
    one.loc[(one["variant"] == "ioq1") & (one["scenario"] == "plaintext"), "rps"] = 100_000
    mixed = transports.claims(one, PAPER)
    assert _claim(mixed, LIMITED)[claims.VERDICT] == verdicts.UNDECIDED
    # Across the tolerance's edge, an interval reaching over it decides nothing.
    edge = transports.claims(_runs(4, 0.8, t, spread=0.05), PAPER)
    assert _claim(edge, NO_LONGER)[claims.VERDICT] == verdicts.UNDECIDED
