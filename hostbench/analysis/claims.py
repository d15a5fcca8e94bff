"""The articles' claims judged: each claim read once as a ratio (reference/claims.csv,
reference.load_claims), judged by the one rule of verdicts (size_verdict, direction_verdict,
combined_verdict), one row per claim, worded by claim_words.py (its columns, BOX_COLUMNS, are
named there); a table that sets runs side by side by them is claims_across_runs.py's.

A study with claims keeps them in its reference/claims.csv; its analysis.py may define the
hook `claims(results, params, variants=None) -> pd.DataFrame` to pass what only it knows
(the other stand-ins for the article's comparator, `analogs`, and for a mode a claim names,
`stand_ins`), else `judge` is called as it is. results: every run of a study run (invalid
ones too: the paired ratios leave them out);
variants: {sub-study name: its results}, the factors one sub-study each changed, which the
sensitivity column reads. The column VERDICT holds one of verdicts.VERDICTS; CLAIM names a
row, so two runs' rows are matched by it.
"""

import math
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..catalog import mode_label
from ..errors import BadInput
from ..params import PARAMS_FILE
from ..results import RESULTS_FILE
from ..studies import get_study
from . import intervals, on_tls, runtimes, tables, verdicts, wording
from .claim_words import (
    AGAINST,
    ANALOG,
    BOUNDED,
    BOX_COLUMNS,
    CLAIM,
    OURS,
    RESTATES,
    SENSITIVITY,
    SUB_STUDY,
    UNJUDGED,
    VERDICT,
    WORDS,
    Conditions,
    against_text,
    by_scenario_alone,
    comparison_label,
    comparison_name,
    in_place_of,
    interval_text,
    ours_text,
)
from .kept import SharedDict, SharedList, content_key, keep
from .reference import CLAIMS_CSV, RUN_BASELINE, UNJUDGED_KINDS, load_claims
from .restatements import as_rested_on, named_as_claimed, restated
from .sequential import Plan

NOT_RUN = "not_run"  # attrs: the testable claims none of whose comparisons the run measured
JUDGED_ON = "judged_on"  # attrs: {claim: the sub-study it was judged on} (a claim between variants)
# attrs: {claim: Conditions}, what SENSITIVITY words, for a first screen (conditions_in_short)
CONDITIONS = "conditions"
# attrs: each comparison a verdict rests on, under the run as measured (condition AS_RUN) and
# under each other condition, as dicts (POINT_KEYS) with the verdict its claim got there: what
# the verdict picture (verdict_picture.py) draws, so it draws these verdicts, never its own, and
# the verdict card's ours and the article's (verdict_card.py: the AS_RUN ones).
POINTS = "points"
AS_RUN = "as measured"
POINT_KEYS = (CLAIM, "condition", "kind", "side", "comparison", "value", "ratio", "ci_low",
              "ci_high", "n", VERDICT)  # fmt: skip
_RELATIVE = "__relative_to__"  # the comparator's rows, relabelled for paired_ratios


class ModeRows:
    """Each results frame's rows by mode, and by mode and scenario, found once for all the
    comparisons a claims table judges on it (a boolean mask on the whole results for each
    comparison was 40% of judging). Frames are told apart by identity: a table's frames are
    made before it is judged and are not changed while it is."""

    def __init__(self):
        self._groups: dict[int, tuple[pd.DataFrame, dict]] = {}

    def of(self, results: pd.DataFrame, mode: str, scenario: str) -> pd.DataFrame:
        """results' rows of the mode (as text) and, scenario not "", of that scenario, in
        their order, as a boolean mask selects them."""
        frame, groups = self._groups.get(id(results), (None, None))
        if frame is not results:
            groups = self._grouped(results)
            self._groups[id(results)] = (results, groups)
        positions = groups.get((mode, scenario) if scenario else mode)
        return results.iloc[positions if positions is not None else []]

    @staticmethod
    def _grouped(results: pd.DataFrame) -> dict:
        modes = results["mode"].astype(str).to_numpy()
        scenarios = results["scenario"].astype(str).to_numpy()
        row = pd.Series(np.arange(len(results)))
        by_mode = row.groupby(modes, sort=False).indices
        by_both = row.groupby([modes, scenarios], sort=False).indices
        return {**by_mode, **by_both}


def comparison_ratios(results: pd.DataFrame, claim_rows: pd.DataFrame, baseline: str,
                      plan: Plan | None = None,
                      confidence: float = verdicts.CONFIDENCE,
                      rows: ModeRows | None = None):  # fmt: skip
    """Each comparison a claim's rows cover, as a paired ratio with its interval: one dict per
    comparison that ran (mode, relative_to, scenario, concurrency, n, ratio, ci_low, ci_high,
    value), and a list of the comparisons that did not. A row with no scenario covers every
    scenario the run has for its mode. plan: a run that stopped when decided (its repeated
    intervals, sequential.py); None: the plan the results carry (tables.load_results: a
    two-stage run's Stein intervals too), else the t interval. confidence: the intervals'
    level (a claim's Holm split asks for others, verdicts.claim_verdict). rows: the rows by
    mode a claims table shares among its comparisons (ModeRows), else found for these."""
    rows = rows or ModeRows()
    if plan is None:
        plan = results.attrs.get(tables.PLAN)
    if confidence != verdicts.CONFIDENCE:
        plan = intervals.at_confidence(plan, confidence)
    found, missing = [], []
    for row in claim_rows.itertuples(index=False):
        relative = baseline if row.relative_to == RUN_BASELINE else row.relative_to
        pair = (row.variant, row.relative_variant)  # ("", ""): the run's one launch of each mode
        ratios = _paired(results, row, relative, plan, confidence, rows)
        if ratios is None or ratios.empty:
            missing.append(
                comparison_name(row.mode, relative, row.scenario or "every scenario", pair)
            )
            continue
        for r in ratios.itertuples(index=False):
            found.append(dict(mode=row.mode, relative_to=relative, scenario=r.scenario,
                              concurrency=r.concurrency, n=int(r.n), ratio=r.ratio,
                              ci_low=r.ci_low, ci_high=r.ci_high, value=row.value,
                              variants=pair))  # fmt: skip
    return found, missing


def _paired(results: pd.DataFrame, row, relative: str, plan, confidence: float,
            rows: ModeRows):  # fmt: skip
    """The subject's `metric` over the comparator's, paired within blocks (paired_ratios),
    the comparator at its own concurrency where the claim compares concurrencies."""
    concurrency = results["concurrency"]
    subject = rows.of(results, row.mode, row.scenario)
    comparator = rows.of(results, relative, row.scenario)
    if not math.isnan(row.concurrency):
        subject = subject[subject["concurrency"] == row.concurrency]
    if not math.isnan(row.relative_concurrency):
        comparator = comparator[concurrency.loc[comparator.index] == row.relative_concurrency]
        comparator = comparator.assign(concurrency=row.concurrency)
    elif not math.isnan(row.concurrency):
        comparator = comparator[comparator["concurrency"] == row.concurrency]
    if row.variant:  # a claim between two variants of the test app (reference: both named)
        if "variant" not in results.columns:
            return None
        variants = results["variant"].astype(str)
        subject = subject[variants.loc[subject.index] == row.variant]
        comparator = comparator[variants.loc[comparator.index] == row.relative_variant]
    if subject.empty or comparator.empty or row.metric not in results.columns:
        return None
    both = pd.concat([subject, comparator.assign(mode=_RELATIVE)], ignore_index=True)
    try:
        ratios = intervals.paired_ratios(both, _RELATIVE, metric=row.metric, plan=plan,
                                         confidence=confidence)  # fmt: skip
    except BadInput:  # the comparator has no valid run
        return None
    return ratios[ratios["n"] > 0]


def _verdict(kind: str, c: dict, side: str, bounded: bool = False) -> str:
    if bounded:  # ours an upper bound of the article's ratio (judge_table's bounded_above)
        return verdicts.bounded_verdict(kind, c["ci_low"], c["ci_high"], c["value"], side,
                                        n=c["n"])  # fmt: skip
    if kind in ("size", "equivalence"):
        return verdicts.size_verdict(c["ci_low"], c["ci_high"], c["value"], n=c["n"])
    return verdicts.direction_verdict(c["ci_low"], c["ci_high"], side, n=c["n"],
                                      value=c["value"])  # fmt: skip


def _claim_verdict(kind: str, side: str, found: list[dict], missing: list[str], at,
                   bounded: bool = False) -> str:  # fmt: skip
    """The claim's verdict by verdicts.claim_verdict: `found` its comparisons at 95%, at(level)
    the same at another level (Holm's split). One not run is one not measured enough."""

    def judged_at(level: float) -> list[str]:
        comparisons = found if level == verdicts.CONFIDENCE else at(level)
        return ([_verdict(kind, c, side, bounded) for c in comparisons]
                + [verdicts.NOT_ENOUGH] * len(missing))  # fmt: skip

    return verdicts.claim_verdict(judged_at)


def judge(study: str, results: pd.DataFrame, params, *, analogs=(), variants=None,
          stand_ins=None, bounded_above: bool = False, sub_study_stand_ins=None):  # fmt: skip
    """The article's claims (reference/claims.csv) judged on one run: one row per claim
    (BOX_COLUMNS), its verdict by verdicts.py's one rule; None for a study without claims.

    analogs: the other modes that stand for the article's comparator (a claim's `baseline`),
    stand_ins: {a mode the claims name: the other modes that stand for the same setup of the
    article's}, variants: {sub-study name: its results}; each is a condition under
    which the claim is judged again, the SENSITIVITY column saying where its verdict changes.
    bounded_above: the baseline and its analogs are each slower than the article's comparator
    (a full hop for one of none), so a ratio against them bounds the article's from above: a
    claim against the baseline gets verdicts.bounded_verdict's one-sided reading.
    sub_study_stand_ins: {sub-study name: stand_ins judged in its conditions only} (a sub-study
    whose app cannot run a mode the claims name: go-vs-dotnet-2017's aot-gc)."""
    table = load_claims(study)
    if table is None:
        return None
    return judge_table(table, results, params, analogs=analogs, variants=variants,
                       stand_ins=stand_ins, bounded_above=bounded_above,
                       sub_study_stand_ins=sub_study_stand_ins)  # fmt: skip


class _Condition(NamedTuple):
    """One way to judge a claim again: other results (a sub-study's), another mode as the
    run's baseline, or another mode in the place of one the claims name (`swap`)."""

    results: pd.DataFrame
    baseline: str
    kind: str  # ANALOG, SUB_STUDY or both: what the verdict depends on where it changes
    plan: Plan | None
    on_baseline: bool = False  # it changes only a claim against the run's baseline
    swap: tuple[str, str] | None = None  # (the mode a claim names, the mode in its place)
    runtime: str = ""  # the runtime of a sub-study's part that ran on one (".NET 8")


def judge_table(table: pd.DataFrame, results: pd.DataFrame, params, *, analogs=(),
                variants=None, stand_ins=None, bounded_above: bool = False,
                sub_study_stand_ins=None) -> pd.DataFrame:  # fmt: skip
    """judge, for a claims table as reference.load_claims reads it."""
    baseline = params.baseline_mode
    plan = Plan.of(params)  # a run that stopped when decided: its repeated intervals
    stand_ins = stand_ins or {}
    # Every comparison below filters the results again: only the columns they pair, once.
    metrics = set(table["metric"].dropna())
    results = intervals.columns_read(results, metrics)
    variants = {name: intervals.columns_read(v, metrics) for name, v in (variants or {}).items()}
    conditions = _analogs(results, baseline, plan, analogs, stand_ins)
    # A sub-study that measured variants a claim names is where that claim is judged, not a
    # condition of the others: its rows are two launches of each mode, not one.
    named = {v for column in ("variant", "relative_variant") for v in table[column] if v}
    between = {name: v for name, v in variants.items() if named & _variants_in(v)}
    for name, v in variants.items():
        if name in between:
            continue
        where = v.attrs.get(runtimes.CONDITION) or f"the {name} sub-study"
        label = v.attrs.get(runtimes.CONDITION_LABEL, "")
        conditions[where] = _Condition(v, baseline, SUB_STUDY, None, runtime=label)
        # A sub-study that ran an analog too: each judged there as well, none left out.
        own = (sub_study_stand_ins or {}).get(v.attrs.get(runtimes.SUB_STUDY, name), {})
        there = _analogs(v, baseline, None, analogs, {**stand_ins, **own})
        conditions |= {f"{n}, in {where}": c._replace(kind=f"{ANALOG} and {SUB_STUDY}")
                       for n, c in there.items()}  # fmt: skip
    rows, not_run, judged_on, judged_again, points = [], [], {}, {}, []
    mode_rows = ModeRows()  # every comparison below selects rows of these frames by mode
    again = restated(table, baseline)
    for claim, claim_rows in table.groupby("claim", sort=False):
        first = claim_rows.iloc[0]
        words = f'"{first.quote}": {first.reading}'
        if first.kind in UNJUDGED_KINDS:
            rows.append({CLAIM: claim, WORDS: words, OURS: first.note, AGAINST: "",
                         VERDICT: UNJUDGED[first.kind], SENSITIVITY: ""})  # fmt: skip
            continue
        if first.note:
            words += f" ({first.note})"
        if claim in again:
            words += f'; {RESTATES} "{again[claim]}", not more evidence'
        bounded = bounded_above and bool((claim_rows["relative_to"] == RUN_BASELINE).all())
        if bounded:
            words += f"; {BOUNDED}"
        where, its_plan, its_conditions, on = results, plan, conditions, ""
        sub_study = _measured_in(claim_rows, results, between)
        if sub_study:  # a claim between variants this run's sub-study measured, by its plan
            where, its_conditions = between[sub_study], {}
            its_plan = where.attrs.get(tables.PLAN)
            on, judged_on[claim] = f"the {sub_study} sub-study: ", sub_study
        # A restated claim is computed as the claim it rests on (as_rested_on).
        read = as_rested_on(claim_rows, baseline) if claim in again else claim_rows
        found, missing = comparison_ratios(where, read, baseline, its_plan, rows=mode_rows)
        found = named_as_claimed(found, read, claim_rows)
        if not found:
            not_run.append(claim)
        at_level = partial(_at_level, where, read, baseline, its_plan, mode_rows)
        verdict = _claim_verdict(first.kind, first.side, found, missing, at_level, bounded)
        points += _points(first, AS_RUN, found, verdict)
        compared = len(found) + len(missing)
        changes, judged_again[claim] = _sensitivity(first, read, verdict, its_conditions,
                                                    compared, points, bounded,
                                                    mode_rows)  # fmt: skip
        rows.append({CLAIM: claim, WORDS: words, OURS: on + ours_text(found, missing),
                     AGAINST: against_text(first.kind, found), VERDICT: verdict,
                     SENSITIVITY: changes})  # fmt: skip
    out = pd.DataFrame(rows, columns=BOX_COLUMNS)
    # Shared by the table's copies, read only (kept.SharedList: pandas copies attrs deeply).
    out.attrs["restated"] = SharedDict(again)
    out.attrs[NOT_RUN] = SharedList(not_run)
    out.attrs[JUDGED_ON] = SharedDict(judged_on)
    out.attrs[CONDITIONS] = SharedDict(judged_again)
    out.attrs[POINTS] = SharedList(points)
    return out


def _points(first, condition: str, found: list[dict], verdict: str) -> list[dict]:
    """The claim's comparisons under one condition, each with the verdict the claim got there
    (POINTS)."""
    short = by_scenario_alone(found)
    return [dict(zip(POINT_KEYS, (first.claim, condition, first.kind, first.side,
                                  comparison_label(c, short), c["value"], c["ratio"], c["ci_low"],
                                  c["ci_high"], c["n"], verdict), strict=True))
            for c in found]  # fmt: skip


def _at_level(results, rows, baseline, plan, mode_rows: ModeRows, level: float) -> list[dict]:
    return comparison_ratios(results, rows, baseline, plan, level, mode_rows)[0]


def _variants_in(results: pd.DataFrame) -> set[str]:
    if "variant" not in results.columns:
        return set()
    return set(results["variant"].dropna().astype(str)) - {""}


def _measured_in(claim_rows: pd.DataFrame, results: pd.DataFrame, sub_studies: dict) -> str:
    """The sub-study that measured the variants a claim between variants names; "" where the
    run itself did, or none did (its comparisons are then not run)."""
    wanted = set(claim_rows["variant"]) | set(claim_rows["relative_variant"])
    if not wanted - {""} or wanted <= _variants_in(results):
        return ""
    return next((name for name, v in sub_studies.items() if wanted <= _variants_in(v)), "")


def _analogs(results: pd.DataFrame, baseline: str, plan: Plan | None, analogs, stand_ins: dict):
    """The conditions of the analogs these results ran: each other stand-in for the article's
    comparator as the baseline, each other stand-in for a mode the claims name in its place."""
    present = set(results["mode"].astype(str))
    found = {f"{mode_label(a)} as the baseline": _Condition(results, a, ANALOG, plan, True)
             for a in analogs if a != baseline and a in present}  # fmt: skip
    found |= {in_place_of(results, other, mode):
              _Condition(results, baseline, ANALOG, plan, swap=(mode, other))
              for mode, others in stand_ins.items()
              for other in others if other != mode and other in present}  # fmt: skip
    return found


def _sensitivity(first, claim_rows: pd.DataFrame, verdict: str, conditions: dict,
                 compared: int, points: list,
                 bounded: bool, mode_rows: ModeRows) -> tuple[str, Conditions]:  # fmt: skip
    """Where the claim's verdict changes: judged again under each condition (_Condition: another
    analog as the baseline or in a named mode's place, a sub-study's results) on the
    comparisons that condition ran, saying so where it ran fewer than the `compared` the
    verdict rests on. The first words say whether the verdict is general: "holds under all 3:
    ..." or "depends on the analog: X: larger than the article's (50%, 44-57%); holds under
    1: ...". Another analog as the baseline changes only a claim against the run's baseline,
    one in a mode's place only a claim that names that mode. Each condition's comparisons
    are appended to `points` (POINTS). Beside the words, the same as Conditions."""
    on_baseline = bool((claim_rows["relative_to"] == RUN_BASELINE).any())
    # A claim about one pair of modes names a comparison by its scenario alone, as in OURS.
    short = len(claim_rows[["mode", "relative_to"]].drop_duplicates()) == 1
    held, changed, held_kinds, changed_kinds = [], [], [], []
    for name, cond in conditions.items():
        if cond.on_baseline and not on_baseline:
            continue
        rows = claim_rows
        if cond.swap:
            mode, other = cond.swap
            if not claim_rows[["mode", "relative_to"]].isin([mode]).to_numpy().any():
                continue
            rows = claim_rows.replace({"mode": {mode: other}, "relative_to": {mode: other}})
            # A mode in the place of the one it is compared with compares nothing.
            itself = (rows["mode"] == rows["relative_to"]) | (
                (rows["relative_to"] == RUN_BASELINE) & (rows["mode"] == cond.baseline)
            )
            rows = rows[~itself]
            if rows.empty:
                continue
        found, _ = comparison_ratios(cond.results, rows, cond.baseline, cond.plan,
                                     rows=mode_rows)  # fmt: skip
        if not found:
            continue
        again = _claim_verdict(first.kind, first.side, found, [],
                               partial(_at_level, cond.results, rows, cond.baseline, cond.plan,
                                       mode_rows),
                               bounded)  # fmt: skip
        points += _points(first, name, found, again)
        if len(found) < compared:
            name += f" (on {', '.join(comparison_label(c, short) for c in found)} only)"
        if again == verdict:
            held.append(name)
            held_kinds.append((cond.kind, cond.runtime))
            continue
        # One comparison: its ratio beside the verdict it gets, as OURS gives ours.
        alone = (f" ({wording.pct_text(found[0]['ratio'])}, {interval_text(found[0])})"
                 if len(found) == 1 else "")  # fmt: skip
        changed.append((cond.kind, f"{name}: {again}{alone}"))
        changed_kinds.append((cond.kind, cond.runtime, again))
    judged_again = Conditions(tuple(held_kinds), tuple(changed_kinds))
    if changed:
        kinds = {k for kind, _ in changed for k in (ANALOG, SUB_STUDY) if k in kind}
        text = (f"depends on {' and '.join(k for k in (ANALOG, SUB_STUDY) if k in kinds)}: "
                + "; ".join(t for _, t in changed))  # fmt: skip
        return text + (
            f"; holds under {len(held)}: {', '.join(held)}" if held else ""
        ), judged_again
    if held:
        return f"holds under all {len(held)}: " + ", ".join(held), judged_again
    return "no other analog or sub-study ran it", judged_again


def for_results(study: str, results: pd.DataFrame, params, variants=None):
    """The study's claims judged on these results (TLS twins as their plain modes: on_tls)."""
    results, params = on_tls.as_plain(results, params)
    hook = get_study(study).hook("claims")
    if hook is not None:
        return hook(results, params, variants)
    return judge(study, results, params, variants=variants)


def sub_study_results(run_dir: str | Path, params) -> dict[str, pd.DataFrame]:
    """{name: every run} of the run's sub-studies that ran, each in its folder beside it
    (<run folder>-<name>, as StudyRun.sub_run names it); one that compared runtimes, one
    condition per runtime (runtimes.conditions), TLS twins as their plain modes (on_tls)."""
    run_dir = Path(run_dir)
    found = {}
    for name in getattr(params, "sub_studies", None) or {}:
        folder = run_dir.parent / f"{run_dir.name}-{name}"
        if (folder / RESULTS_FILE).is_file():
            found |= runtimes.conditions(name, *on_tls.sub_study_run(folder, name))
    return found


def of_run(study: str, run_dir: str | Path) -> pd.DataFrame | None:
    """The study's claims table for one run folder, its sub-studies beside it; None for a
    study without claims.

    Judged once per content of the run's and its sub-studies' results, its params and the
    claims file (kept.py); the caller gets its own copy."""
    if load_claims(study) is None:
        return None
    run_dir = Path(run_dir)
    params = tables.load_params(run_dir)
    subs = [run_dir.parent / f"{run_dir.name}-{name}" / RESULTS_FILE for name in params.sub_studies]
    files = [run_dir / RESULTS_FILE, run_dir / PARAMS_FILE, *subs,
             get_study(study).reference_dir / CLAIMS_CSV]  # fmt: skip
    key = ("claims", study, content_key(*files))
    return keep(key, lambda: _judged(study, run_dir, params)).copy()


def _judged(study: str, run_dir: Path, params) -> pd.DataFrame:
    results = tables.load_results(run_dir, valid_only=False)
    return for_results(study, results, params, sub_study_results(run_dir, params))
