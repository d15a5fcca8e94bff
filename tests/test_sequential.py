"""Measuring until decided: the repeated intervals' boundaries, the looks on constructed block
sequences with known answers, and the simulated error rates (hostbench/analysis/sequential.py,
until_decided.py, error_rates.py)."""

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import profile_params
from hostbench.analysis import (
    claims,
    error_rates,
    intervals,
    runtimes,
    sequential,
    student_t,
    tables,
    until_decided,
    verdicts,
)
from hostbench.analysis.reference import UNJUDGED_KINDS, load_claims
from hostbench.analysis.sequential import Plan, repeated_interval
from hostbench.errors import BadInput
from hostbench.params.study import StudyParams
from hostbench.paths import RUNS
from hostbench.runtimes import label
from hostbench.studies import STUDIES


def _first_crossings(statistic, bounds, first: int) -> np.ndarray:
    """The share of sequences whose |statistic| first reaches its bound at each look."""
    running = np.ones(len(statistic), dtype=bool)
    shares = []
    for i, b in enumerate(bounds):
        crossing = running & (np.abs(statistic[:, first - 1 + i]) >= b)
        shares.append(crossing.mean())
        running &= ~crossing
    return np.array(shares)


def _spent_per_look(first: int, last: int) -> np.ndarray:
    spent = [sequential.spent(n / last) for n in range(first, last + 1)]
    return np.diff([0.0, *spent])


def test_z_boundaries_spend_the_error_look_by_look():
    # Known spread: a standardised mean first crosses each look's boundary as often as the
    # spending function says, checked on draws independent of the recursion.
    first, last = 3, 10
    bounds = sequential.boundaries(first, last)
    x = np.random.default_rng(7).standard_normal((200_000, last))
    z = np.cumsum(x, axis=1) / np.sqrt(np.arange(1, last + 1))
    shares = _first_crossings(z, bounds, first)
    assert shares == pytest.approx(_spent_per_look(first, last), abs=0.0015)
    assert shares.sum() == pytest.approx(sequential.ALPHA, abs=0.002)


def test_one_look_is_the_fixed_interval():
    # A single planned look spends everything at once: the t quantile, the z quantile.
    assert sequential.t_boundaries(5, 5) == (student_t.t_quantile(0.975, 4),)
    assert sequential.boundaries(5, 5)[0] == pytest.approx(1.959964, abs=1e-6)


def test_t_boundaries_spend_the_error_with_the_spread_estimated():
    first, last = 3, 12
    bounds = sequential.t_boundaries(first, last)
    x = np.random.default_rng(11).standard_normal((200_000, last))  # not the calibration's
    n = np.arange(1, last + 1)
    sums, squares = np.cumsum(x, axis=1), np.cumsum(x**2, axis=1)
    mean = sums / n
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt((squares - n * mean**2) / (n - 1))
        t = mean / (sd / np.sqrt(n))
    shares = _first_crossings(t, bounds, first)
    assert shares == pytest.approx(_spent_per_look(first, last), abs=0.0015)
    # Wider than the fixed interval at every look: the price of looking.
    assert all(b > student_t.t_quantile(0.975, k - 1)
               for k, b in zip(range(first, last + 1), bounds, strict=True))  # fmt: skip


def test_looks_need_two_blocks_at_least():
    with pytest.raises(BadInput, match="2 <= first"):
        sequential.t_boundaries(1, 4)


# --- constructed block sequences --------------------------------------------------------------

PLAN = Plan(3, 8)


def _verdict(logs, side="above"):
    n, _, low, high = repeated_interval(logs, PLAN)
    return verdicts.direction_verdict(math.exp(low), math.exp(high), side, n=n)


def test_no_verdict_before_the_first_look():
    # Two blocks: no interval at all, however clear the ratios.
    n, centre, low, high = repeated_interval([0.5, 0.5001], PLAN)
    assert n == 2 and math.isnan(low) and math.isnan(high)


def test_decided_at_the_first_allowed_look():
    logs = [0.40, 0.41, 0.39]  # Kestrel 50% faster, a 1% spread: clear after three blocks
    assert _verdict(logs) == verdicts.SUPPORTED


def test_decided_only_at_the_cap():
    # A small gain: each look before the last leaves the interval across 1.00.
    logs = [0.026, 0.006, 0.036, -0.004, 0.016, 0.026, 0.006, 0.016]
    looks = [_verdict(logs[:k]) for k in range(3, 9)]
    assert looks[:-1] == [verdicts.UNDECIDED] * 5 and looks[-1] == verdicts.SUPPORTED


def test_never_decided():
    logs = [0.02, -0.02, 0.03, -0.03, 0.01, -0.01, 0.02, -0.02]
    assert {_verdict(logs[:k]) for k in range(3, 9)} == {verdicts.UNDECIDED}


def test_a_decided_claim_stays_decided():
    # Decided at the first look; later blocks, noisier, would on their own give an interval
    # across 1.00, but the intersection over the looks keeps the first look's side.
    logs = [0.30, 0.31, 0.29, -0.2, 0.6, -0.1, 0.5, 0.0]
    fixed_last = intervals.mean_interval(logs)
    assert fixed_last[2] < 0 < fixed_last[3]
    assert [_verdict(logs[:k]) for k in range(3, 9)] == [verdicts.SUPPORTED] * 6


def test_paired_ratios_use_the_plan_in_block_order():
    blocks = [3, 1, 2, 4]  # rows out of order: the first look reads blocks 1-3
    rows = []
    for b, gain in zip(blocks, [1.0, 1.5, 1.52, 1.49], strict=True):
        rows += [dict(mode="kestrel", scenario="text", tool="k6", concurrency=8, block=b,
                      rps=1000 * gain, valid=True),
                 dict(mode="nginx", scenario="text", tool="k6", concurrency=8, block=b,
                      rps=1000.0, valid=True)]  # fmt: skip
    out = intervals.paired_ratios(pd.DataFrame(rows), "nginx", plan=PLAN).iloc[0]
    ordered = [math.log(1.5), math.log(1.52), math.log(1.0), math.log(1.49)]
    _, centre, low, high = repeated_interval(ordered, PLAN)
    assert out["method"] == intervals.REPEATED and out["n"] == 4
    assert out["ci_low"] == pytest.approx(math.exp(low))
    assert out["ci_high"] == pytest.approx(math.exp(high))


def test_a_runs_results_carry_its_plan_to_every_interval_drawn_from_them():
    # The headline, the study's tables and ratios.csv take the results as loaded: a run that
    # stopped when decided states the repeated interval its verdicts are judged by, a
    # two-stage run (a paper profile that targets a half-width) Stein's, a fixed-length run
    # its t interval, without each caller passing the plan.
    decided = RUNS / STUDIES["linux-proxies-2021"].claims_run
    two_stage = RUNS / STUDIES["linux-proxies-2021"].paper_run
    fixed = RUNS / "example-aa"  # the A/A check: a fixed design
    for run, method in ((decided, intervals.REPEATED), (two_stage, "stein"), (fixed, "t-log")):
        results = tables.load_results(run, valid_only=False)
        kept = results[results["scenario"] == results["scenario"].iloc[0]]  # as a table filters
        ratios = intervals.paired_ratios(kept, tables.load_params(run).baseline_mode)
        assert set(ratios["method"]) == {method}, run.name
    plan = Plan.of(tables.load_params(decided))
    results = tables.load_results(decided, valid_only=False)
    assert results.attrs[tables.PLAN] == plan
    given = intervals.paired_ratios(results, "kestrel", plan=plan)
    pd.testing.assert_frame_equal(intervals.paired_ratios(results, "kestrel"), given)


def test_every_committed_run_that_stopped_when_decided_writes_repeated_intervals():
    for name in (s.claims_run for s in STUDIES.values()):  # every study has one
        ratios = pd.read_csv(RUNS / name / "ratios.csv")
        assert set(ratios["method"]) == {intervals.REPEATED}, name


# --- the profile's rules ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(repetitions=2, max_repetitions=6), "first look needs 3 blocks"),
        (dict(max_repetitions=3), "must be above repetitions"),
        (dict(target_halfwidth_pct=2), "both set the blocks"),
    ],
)
def test_stop_when_decided_refuses_what_cannot_work(changes, message):
    with pytest.raises(BadInput, match=message):
        profile_params("jcsi2018", "claims", **changes)


def test_every_study_has_a_claims_profile_that_stops_when_decided():
    for study in STUDIES.values():
        if load_claims(study) is None:
            continue
        p = profile_params(study.id, "claims")
        assert p.stop_when_decided and p.repetitions >= verdicts.MIN_UNITS, study.id
        assert p.max_minutes is not None, study.id
        # A claims profile's sub-study measures only what its main run cannot, until decided:
        # the variants a claim between two launches of the test app names, or the main run's
        # comparisons on other runtimes.
        table = load_claims(study)
        named = (set(table["variant"]) | set(table["relative_variant"])) - {""}
        for name in p.sub_studies:
            sub = p.sub_study(name)
            assert set(sub.variants) <= named, (study.id, name)
            if sub.runtime_comparison:
                assert (sub.modes, sub.scenarios) == (p.modes, p.scenarios), (study.id, name)
            assert sub.stop_when_decided and sub.max_minutes is not None, (study.id, name)


def test_a_look_names_the_open_claims_and_the_cells_they_need(tmp_path):
    # jcsi2018's claims on a constructed run of HTML and text: the claims that also read JSON
    # or XML are not in this profile, so not counted; the HTML size claim (+70%) is the one.
    params = profile_params("jcsi2018", "claims", scenarios=["html", "text"])
    claims = load_claims("jcsi2018")
    html_size = claims[(claims["kind"] == "size") & (claims["scenario"] == "html")]["claim"]

    def looked(html_gains, plan=None):
        rows = []
        gains = {"html": html_gains, "text": [1.2, 3.9, 2.2]}
        for scenario, by_block in gains.items():
            for b, gain in enumerate(by_block, start=1):
                for mode, rps in (("kestrel", 1000 * gain), ("nginx-keepalive", 1000.0)):
                    rows.append(dict(mode=mode, scenario=scenario, tool="k6", concurrency=8,
                                     block=b, rps=rps, valid=True))  # fmt: skip
        frame = pd.DataFrame(rows)
        frame.attrs[tables.PLAN] = plan
        return until_decided.look("jcsi2018", frame, params, 3, 4.0)

    close = looked([1.50, 1.51, 1.49])  # 0.88x of +70%: near the tolerance's edge, open
    assert list(close.verdicts) == list(html_size)
    assert list(close.open) == list(html_size) and close.cells == [["html", 8]]
    assert close.open[html_size.iloc[0]] > 3  # more blocks would decide it
    # Results as the harness loads them carry the run's plan: the blocks needed are read from
    # the per-block spread all the same, not from the wider repeated interval.
    assert looked([1.50, 1.51, 1.49], Plan.of(params)).open == close.open
    clear = looked([1.20, 1.21, 1.19])  # 0.71x: smaller, decided at the first look
    assert clear.decided == 1 and not clear.open and clear.cells == []
    design = {"first_blocks": 3, "max_blocks": 8, "stopped": "every claim decided"}
    (tmp_path / until_decided.DESIGN_FILE).write_text(
        json.dumps(until_decided.record(design, clear))
    )
    assert f"{html_size.iloc[0]}, block 3" in until_decided.summary(tmp_path)
    # An open claim says about how many blocks it would need, or that none were estimated.
    claim = html_size.iloc[0]
    most = until_decided.MOST_BLOCKS_SHOWN
    # Beyond the plan's cap (max_blocks 8) no resume reaches them: not within this plan.
    beyond = "not within this plan of at most 8 blocks: a new plan would need"
    for needs, words in ((5, "about 5 blocks in all"),
                         (340, f"{beyond} about 340 blocks in all"),
                         (most + 1, f"{beyond} more than {most} blocks in all"),
                         (None, "no estimate of the blocks it would need")):  # fmt: skip
        recorded = until_decided.record(design, close)
        recorded[until_decided.LOOKS][-1]["open"] = {claim: needs}
        (tmp_path / until_decided.DESIGN_FILE).write_text(json.dumps(recorded))
        assert f"Still open: {claim} ({words}" in until_decided.summary(tmp_path)


def test_a_look_on_runtimes_judges_each_claim_on_each_runtime_apart():
    # jcsi2018's claims run's runtimes sub-study: Kestrel and the analog on two runtimes in
    # the same blocks. Each claim is judged once per runtime, on that runtime's rows alone:
    # +20% on .NET 8 is decided (smaller than +70%), +50% on .NET 10 is still open.
    params = profile_params("jcsi2018", "claims", scenarios=["html", "text"],
                            runtimes=["net8.0", "net10.0"])  # fmt: skip
    claims_ = load_claims("jcsi2018")
    (html_size,) = claims_[(claims_["kind"] == "size") & (claims_["scenario"] == "html")]["claim"]
    gains = {("net8", "html"): [1.20, 1.21, 1.19], ("net10", "html"): [1.50, 1.51, 1.49],
             ("net8", "text"): [1.2, 3.9, 2.2], ("net10", "text"): [1.2, 3.9, 2.2]}  # fmt: skip
    rows = []
    for (variant, scenario), by_block in gains.items():
        for b, gain in enumerate(by_block, start=1):
            for mode, rps in (("kestrel", 1000 * gain), ("nginx-keepalive", 1000.0)):
                rows.append(dict(mode=mode, variant=variant, scenario=scenario, tool="k6",
                                 concurrency=8, block=b, rps=rps, valid=True))  # fmt: skip
    found = until_decided.look("jcsi2018", pd.DataFrame(rows), params, 3, 4.0)
    on8, on10 = f"{html_size}, on net8", f"{html_size}, on net10"
    assert list(found.verdicts) == [on8, on10]
    assert found.verdicts[on8] == verdicts.SMALLER
    assert found.verdicts[on10] not in until_decided.DECIDED
    assert list(found.open) == [on10] and found.open[on10] > 3 and found.cells == [["html", 8]]


def _claims_runtimes_studies() -> list[str]:
    """The studies whose scope profile (the claims profile, then its sub-studies, which the
    committed claims runs measured) measures the claims again on other runtimes."""
    return [s.id for s in STUDIES.values() if load_claims(s) is not None
            and "scope" in s.profiles()
            and any(profile_params(s.id, "scope").sub_study(n).runtime_comparison
                    for n in profile_params(s.id, "scope").sub_studies)]  # fmt: skip


@pytest.mark.parametrize("study", _claims_runtimes_studies())
def test_the_committed_runtimes_sub_study_judged_each_claim_on_each_runtime(study):
    # The claims run measured its claims again on .NET 8, 9 and 10 until each was decided on
    # each runtime: its looks counted every claim of the main run once per runtime, and the
    # last one's verdicts are what each runtime's rows alone give, but where the claim's Holm
    # split (verdicts.claim_verdict, newer than the looks) withdraws a refutation that one of
    # its comparisons alone made at 95%: undecided now, as its first screen says.
    run = RUNS / STUDIES[study].claims_run
    sub_run = run.parent / f"{run.name}-runtimes"
    design = json.loads((sub_run / until_decided.DESIGN_FILE).read_text())
    main = until_decided.looks_of(json.loads((run / until_decided.DESIGN_FILE).read_text()))
    params = tables.load_params(sub_run)
    assert params.stop_when_decided and len(params.runtime_comparison) == 3
    looks = until_decided.looks_of(design)
    each = {f"{c}, on {v}" for c in main[-1].verdicts for v in params.runtime_comparison}
    assert all(set(x.verdicts) == each for x in looks)
    last = looks[-1]
    results = tables.load_results(sub_run, valid_only=False)
    for variant, part in runtimes.parts(results).items():
        judged = claims.for_results(study, part, params).set_index(claims.CLAIM)
        for claim in main[-1].verdicts:
            recorded, now = (
                last.verdicts[f"{claim}, on {variant}"],
                judged.loc[claim, claims.VERDICT],
            )
            assert recorded == now or (recorded in verdicts.REFUTING and now == verdicts.UNDECIDED)
    # The README's line for the run says how long it took and where its verdicts are.
    stopped = " but stopped open after" if last.open else " in"
    how = f"measured until decided{stopped} {last.after_block} blocks"
    line = until_decided.in_short(run, study)
    assert f" The runtimes sub-study, {how}" in line
    assert (f"judged each claim again on each runtime: {last.decided} of {len(last.verdicts)} "
            "decided") in line  # fmt: skip
    # Each claim's row names each runtime's verdict, or says it holds on all three.
    box = claims.of_run(study, run).set_index(claims.CLAIM)
    for claim in main[-1].verdicts:
        for variant in params.runtime_comparison:
            named = f"the runtimes sub-study on {label(variant)} ("
            assert named in box.loc[claim, claims.SENSITIVITY], claim


# --- the simulated error rates ----------------------------------------------------------------


def test_simulation_with_one_look_has_the_fixed_intervals_closed_form():
    # One look of 6 blocks: "reproduced" at the upper edge needs the t interval's upper end
    # below the truth, which happens 2.5% of the time exactly.
    found = error_rates.simulate(0.03, Plan(6, 6), "size", error_rates.EDGE, runs=100_000, seed=3)
    assert found["verdicts"].get("reproduced", 0.0) == pytest.approx(0.025, abs=0.0015)
    assert found["blocks_mean"] == 6


def test_simulated_error_rates_stay_at_their_share():
    table = error_rates.table({"a pair": 0.03}, Plan(3, 12), runs=40_000, seed=5)
    repeated = table[table["rule"] == "repeated"]
    fixed = table[table["rule"] != "repeated"]
    assert (repeated["wrong"] <= 0.025 + 0.003).all()  # 0.003: three standard errors
    assert (fixed["wrong"] > 0.05).all()  # looking after every block with fixed intervals


def test_a_look_leaves_out_the_claims_no_interval_judges():
    # kestrel-transports-2018's claims about libuv and the Linux transport are not re-run here
    # (and jcsi2018's about HTTP.sys not testable): a look never waits for them.
    run = RUNS / STUDIES["kestrel-transports-2018"].claims_run
    results = tables.load_results(run, valid_only=False)
    params = tables.load_params(run)
    table = load_claims("kestrel-transports-2018")
    unjudged = set(table[table["kind"].isin(UNJUDGED_KINDS)]["claim"])
    found = until_decided.look("kestrel-transports-2018", results, params, 3, 1.0)
    assert unjudged and found.verdicts and not unjudged & set(found.verdicts)


def test_a_look_leaves_out_a_claim_between_variants_its_run_does_not_measure():
    # linux-proxies-2021's postscript compares two bodies of api/test, which its claims
    # profile measures in the trace-id sub-study: the main run's looks never wait for it.
    run = RUNS / STUDIES["linux-proxies-2021"].claims_run
    results, params = tables.load_results(run, valid_only=False), tables.load_params(run)
    table = load_claims("linux-proxies-2021")
    between = set(table[table["variant"] != ""]["claim"])
    found = until_decided.look("linux-proxies-2021", results, params, 3, 1.0)
    assert between and found.verdicts and not between & set(found.verdicts)
    # The line the README gives the run names it beside the looks' count, with its verdict
    # and the blocks the sub-study, measured until decided, took.
    judged = claims.of_run("linux-proxies-2021", run).set_index(claims.CLAIM)[claims.VERDICT]
    sub_run = run.parent / f"{run.name}-trace-id"
    design = json.loads((sub_run / until_decided.DESIGN_FILE).read_text())
    last = until_decided.looks_of(design)[-1]
    # Its own looks judged the claims between variants of its day and no other (the main run
    # judges those), by the repeated intervals of its plan; the postscript's direction, a row
    # added after it ran, is judged on its blocks too, by the same intervals.
    (then,) = {c for x in until_decided.looks_of(design) for c in x.verdicts}
    assert then in between and judged[then] in until_decided.DECIDED and not last.open
    each = "; ".join(f"{c}: {judged[c]}" for c in table["claim"].unique() if c in between)
    assert until_decided.in_short(run, "linux-proxies-2021").endswith(
        f". The trace-id sub-study, measured until decided in {last.after_block} blocks, judged "
        f"{len(between)} more: {each}."
    )
    sub_params = tables.load_params(sub_run)
    assert sub_params.stop_when_decided and design["first_blocks"] == sub_params.repetitions
    # As does any run of both variants.
    both = replace(params, variants={"date": {}, "trace-id": {}})
    assert set(until_decided.look("linux-proxies-2021", results, both, 3, 1.0).verdicts) == between


def test_a_claims_run_says_what_the_paper_profile_adds_variants_included():
    # kestrel-transports' claims run measures 3 of its paper profile's settings: the rest of
    # the sweep is named (its first few, then how many more), as other studies' modes are.
    run = RUNS / STUDIES["kestrel-transports-2018"].claims_run
    if not (run / "params.json").is_file():
        pytest.skip("no committed kestrel-transports-2018 claims run")
    paper = StudyParams.from_file(STUDIES["kestrel-transports-2018"].params_path("paper"))
    extra = [v for v in paper.variants if v not in tables.load_params(run).variants]
    words = until_decided.added_by_paper("kestrel-transports-2018", run)
    shown = extra[: until_decided.SHOWN_VARIANTS]
    more = len(extra) - len(shown)
    assert words == f" The paper profile adds the variants {', '.join(shown)} and {more} more."
