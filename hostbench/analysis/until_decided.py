"""A claims profile's looks (params stop_when_decided): after a block, which of the article's
claims are decided, which cells the next block must measure for the rest, and, once the run
stopped, its account in a sentence.

Decided is a verdict of the one rule (verdicts.py) that more blocks could not overturn:
reproduced, smaller, larger, differs, supported, not supported. The intervals behind them are
the repeated ones (sequential.py), so judging after every block and stopping on a decision
keeps the 95% guarantee. A claim whose comparisons this profile does not measure at all is
left out of the count (the paper profile measures it), never waited for.

The harness calls `look` after each block from the first `repetitions` and records what it
returns in the run's design.json (`record`); `summary` reads that record back for the report.
"""

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pandas as pd

from ..catalog import MODES, mode_label, scenario_label
from ..errors import BadInput
from ..params import StudyParams
from ..studies import get_study
from . import claims, intervals, on_tls, runtimes, tables, verdicts
from .reference import RUN_BASELINE, UNJUDGED_KINDS, load_claims
from .sequential import Plan

DECIDED = (verdicts.REPRODUCED, verdicts.SMALLER, verdicts.LARGER, verdicts.DIFFERS,
           verdicts.SUPPORTED, verdicts.NOT_SUPPORTED, verdicts.CONSISTENT)  # fmt: skip
DESIGN_FILE = "design.json"  # the harness writes it (harness/stopping.py); looks under LOOKS
LOOKS = "looks"
SHOWN_VARIANTS = 3  # "the variants a, b, c and 11 more": what the paper profile adds
MOST_BLOCKS_SHOWN = 1000  # "about N blocks": beyond this, "more than"


@dataclass
class Look:
    """What a look after `after_block` blocks found: each testable claim in this profile with
    its verdict, the open ones with the blocks each would need at this spread, and the cells
    ([scenario, concurrency or None]) the next block measures (empty: nothing left open)."""

    after_block: int
    verdicts: dict[str, str]
    open: dict[str, int | None] = field(default_factory=dict)
    cells: list[list] = field(default_factory=list)
    minutes: float = 0.0

    @property
    def decided(self) -> int:
        return sum(v in DECIDED for v in self.verdicts.values())

    def progress(self) -> str:
        """ "4 of 5 claims decided after block 5, 6 min" (the run's progress line)."""
        line = (f"{self.decided} of {len(self.verdicts)} claims decided after block "
                f"{self.after_block}, {self.minutes:.0f} min")  # fmt: skip
        if self.open:
            line += f"; open: {'; '.join(self.open)}; next block: {cells_text(self.cells)}"
        return line


def look(study: str, results: pd.DataFrame, params, after_block: int, minutes: float) -> Look:
    """Judge the study's claims on the run's results so far (its claims hook, the repeated
    intervals of Plan.of(params)); the open claims' cells are what the next block measures.
    A run of TLS twins only (a `tls` sub-study) is judged as the plain modes on TLS (on_tls)."""
    results, params = on_tls.as_plain(results, params)
    plan = Plan.of(params)
    if plan is None:
        raise BadInput("a look judges a run whose params set stop_when_decided")
    table = load_claims(study)
    if table is None:
        raise BadInput(f"study {study} has no reference/claims.csv: nothing to decide")
    measured = _measured_cells(params)
    between = _between_variants(table, params)
    decides = []  # (claim, its rows, the cells it needs): the claims this profile decides
    for claim, rows in table.groupby("claim", sort=False):
        if rows.iloc[0].kind in UNJUDGED_KINDS:  # not testable here, or not re-run here
            continue
        needs = _cells_of(rows, measured)
        if not needs or not _all_measured(rows, measured) or not _variants_run(rows, params):
            continue  # the paper profile, or a sub-study, judges it
        if not _modes_run(rows, params):
            continue  # judged where its modes run (in this run's conditions: a stand-in's)
        if between and not _named_variants(rows):
            continue  # a sub-study of two launches of each mode: the main run judges it
        decides.append((claim, rows, needs))
    by_claim, open_, cells = {}, {}, []
    # A run that compared runtimes (or runtime variants) is judged on each apart (as the claims
    # box reads it, runtimes.conditions): a claim counts once per runtime, "<claim>, on net8".
    compared = list(params.app_comparison)
    parts = runtimes.parts(results, compared) if compared else {"": results}
    for runtime, part in parts.items():
        judged = claims.for_results(study, part, params).set_index(claims.CLAIM)[claims.VERDICT]
        for claim, rows, needs in decides:
            key = f"{claim}, on {runtime}" if runtime else claim
            by_claim[key] = judged.get(claim, verdicts.NOT_ENOUGH)
            if by_claim[key] not in DECIDED:
                open_[key] = blocks_needed(part, rows, params, plan)
                cells += [c for c in needs if c not in cells]
    return Look(after_block, by_claim, open_, [list(c) for c in cells], round(minutes, 2))


def _measured_cells(params) -> list[tuple]:
    """(scenario, concurrency) of every cell the profile measures."""
    return list(dict.fromkeys((scenario, c) for _, _, scenario, _, c in params.cells()))


def _cells_of(rows: pd.DataFrame, measured: list[tuple]) -> list[tuple]:
    """The (scenario, concurrency) cells a claim's comparisons read: a row without a scenario
    every scenario, without a concurrency every concurrency, a relative concurrency its own."""
    out = []
    for row in rows.itertuples(index=False):
        for scenario, c in measured:
            if row.scenario and scenario != row.scenario:
                continue
            levels = [row.concurrency, row.relative_concurrency]
            if all(math.isnan(level) for level in levels) or c in levels:
                out.append((scenario, c))
    return list(dict.fromkeys(out))


def _all_measured(rows: pd.DataFrame, measured: list[tuple]) -> bool:
    """Whether the profile measures every scenario and concurrency the claim's rows name."""
    scenarios, levels = {s for s, _ in measured}, {c for _, c in measured}
    for row in rows.itertuples(index=False):
        if row.scenario and row.scenario not in scenarios:
            return False
        named = [c for c in (row.concurrency, row.relative_concurrency) if not math.isnan(c)]
        if any(c not in levels for c in named):
            return False
    return True


def _modes_run(rows: pd.DataFrame, params) -> bool:
    """Whether the run measures every hosting mode the claim's rows name (the run's baseline
    aside; a name that is no mode, such as a transport setting, is the study's own): a claim
    naming a mode this run does not measure (the aot-gc sub-study's AddMvcCore app, which
    Native AOT cannot build) is no claim its looks can decide."""
    named = (set(rows["mode"]) | set(rows["relative_to"])) - {RUN_BASELINE}
    return {m for m in named if m in MODES} <= set(params.modes)


def _named_variants(rows: pd.DataFrame) -> set[str]:
    return (set(rows["variant"]) | set(rows["relative_variant"])) - {""}


def _variants_run(rows: pd.DataFrame, params) -> bool:
    """Whether the profile runs every variant the claim's rows name (a claim between two
    variants is judged where they run: a sub-study's, claims.judge_table)."""
    return _named_variants(rows) <= {*params.variants, *params.app_comparison}


def _between_variants(table: pd.DataFrame, params) -> bool:
    """Whether the profile runs variants the study's claims name: the sub-study that judges
    the claims between them, and only those (claims.judge_table: never a condition of the
    others, whose comparisons it would wait for)."""
    return bool(_named_variants(table) & {*params.variants, *params.app_comparison})


def cell_allowed(spec_scenario: str, spec_concurrency: int, cells: list[list]) -> bool:
    """Whether a window of this scenario and concurrency is among a look's `cells`."""
    return [spec_scenario, spec_concurrency] in [list(c) for c in cells]


def cells_text(cells: list[list]) -> str:
    """ "HTML at 8" or "HTML and text": the cells a block measures, as a reader names them."""
    levels = {c for _, c in cells}
    names = [scenario_label(s) + (f" at {c}" if len(levels) > 1 else "") for s, c in cells]
    if len(names) > 1:
        return f"{', '.join(names[:-1])} and {names[-1]}"
    return names[0] if names else "none"


def blocks_needed(results: pd.DataFrame, rows: pd.DataFrame, params, plan: Plan) -> int | None:
    """The blocks an open claim would need in all at its comparisons' present spread and
    ratio: the smallest n whose repeated half-width (the last planned look's level beyond the
    cap) falls inside the margin to the nearest edge a decision needs, for the comparison that
    needs most; a comparison heading to refute the claim at its Holm level, 1 - alpha/m of the
    claim's m comparisons (verdicts.claim_verdict), the boundaries fitted for that level.
    None where a comparison has no spread yet (fewer than 2 blocks)."""
    # The spread is read back from the t interval (block_spread): never the repeated one the
    # results of such a run carry (their plan, tables.load_results), wider by the looks.
    fixed = results.copy(deep=False)
    fixed.attrs = {}
    found, _ = claims.comparison_ratios(fixed, rows, params.baseline_mode, None)
    first = rows.iloc[0]
    most = 0
    for c in found:
        if c["n"] < 2 or not all(map(math.isfinite, (c["ci_low"], c["ci_high"]))):
            return None
        spread = intervals.block_spread(c["ratio"], c["ci_high"], c["n"])
        margin = _margin(first.kind, math.log(c["ratio"]), c["value"], first.side)
        if margin <= 0:
            return None  # on an edge: no number of blocks decides it
        refuting = _refuting(first.kind, math.log(c["ratio"]), c["value"], first.side)
        level = replace(plan, alpha=plan.alpha / len(found)) if refuting else plan
        most = max(most, _blocks_for(spread, margin, level, c["n"]))
    return most or None


def _margin(kind: str, centre: float, value: float, side: str) -> float:
    """How far the log ratio lies from the edge its decision needs the interval clear of."""
    if kind in ("size", "equivalence"):
        t = math.log(1 + verdicts.TOLERANCE_PCT / 100)
        low, high = math.log(value) - t, math.log(value) + t
        if low < centre < high:
            return min(centre - low, high - centre)
        return abs(centre - (low if centre <= low else high))
    return abs(centre - math.log(value))


def _refuting(kind: str, centre: float, value: float, side: str) -> bool:
    """Whether a comparison's ratio lies where its decision would refute the claim: a size
    outside the tolerance, a direction on the side other than the claimed one."""
    if kind in ("size", "equivalence"):
        return abs(centre - math.log(value)) > math.log(1 + verdicts.TOLERANCE_PCT / 100)
    return (centre < math.log(value)) if side == "above" else (centre > math.log(value))


def _blocks_for(spread: float, margin: float, plan: Plan, start: int) -> int:
    for n in range(max(start, plan.first, 2), MOST_BLOCKS_SHOWN + 1):
        if plan.t_critical(n) * spread / math.sqrt(n) < margin:
            return n
    return MOST_BLOCKS_SHOWN + 1


# --- the record, and what the report says of it ----------------------------------------------


def record(design: dict, found: Look) -> dict:
    """design.json with the look added (replacing one after the same block)."""
    looks = [x for x in design.get(LOOKS, []) if x["after_block"] != found.after_block]
    return {**design, LOOKS: [*looks, asdict(found)]}


def _design_of(run_dir: str | Path) -> dict:
    """The run's design.json ({} for a run without one: not measured until decided)."""
    path = Path(run_dir) / DESIGN_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def looks_of(design: dict) -> list[Look]:
    return [Look(**x) for x in design.get(LOOKS, [])]


def summary(run_dir: str | Path, study: str | None = None) -> str:
    """The run's stopping account in one paragraph: the blocks and minutes it took, the claims
    decided and the block each was first decided at, the cells the later blocks measured,
    those left open with the blocks each would need, why it stopped; and what the paper
    profile adds. "" for a run that did not stop when decided."""
    design = _design_of(run_dir)
    looks = looks_of(design)
    if not looks:
        return ""
    last = looks[-1]
    first_at = {}
    for x in looks:
        for claim, verdict in x.verdicts.items():
            if verdict in DECIDED:
                first_at.setdefault(claim, x.after_block)
    text = (
        f"Measured until decided: {last.decided} of {len(last.verdicts)} testable claims "
        f"decided in {last.after_block} blocks ({last.minutes:.0f} min of measurement), each "
        f"judged after every block from the {_ordinal(design['first_blocks'])} by repeated 95% "
        f"intervals, valid over every look up to {design['max_blocks']} blocks "
        '(docs/method.md, "Measuring until decided").'
    )
    if first_at:
        text += " Decided at: " + "; ".join(f"{c}, block {b}" for c, b in first_at.items()) + "."
    text += _later_blocks(looks)
    if last.open:
        cap = design.get("max_blocks")
        opened = "; ".join(f"{c} ({_needs(n, cap)})" for c, n in last.open.items())
        text += f" Still open: {opened}."
    if design.get("stopped"):
        text += f" Stopped: {design['stopped']}."
    if study is not None:
        text += judged_beside(study, run_dir) + added_by_paper(study, run_dir)
    return text


def in_short(run_dir: str | Path, study: str) -> str:
    """ "4 of 5 testable claims decided in 9 blocks; still open: X.": a claims run in a line
    (the README's list), with the claims its sub-studies judged; "" for a run that did not
    stop when decided."""
    looks = looks_of(_design_of(run_dir))
    if not looks:
        return ""
    last = looks[-1]
    text = (f"{last.decided} of {len(last.verdicts)} testable claims decided in "
            f"{last.after_block} blocks")  # fmt: skip
    if last.open:
        text += f"; still open: {'; '.join(last.open)}"
    return text + "." + judged_beside(study, run_dir)


def judged_beside(study: str, run_dir: str | Path) -> str:
    """ " The trace-id sub-study judged 1 more: X: reproduced.": the claims a run left to a
    sub-study of its own (a claim between two variants, claims.judge_table), which its looks
    never count, with their verdicts and, where the sub-study was measured until decided,
    the blocks it took ("" when there are none)."""
    table = claims.of_run(study, run_dir)
    judged_on = table.attrs.get(claims.JUDGED_ON, {}) if table is not None else {}
    verdict = table.set_index(claims.CLAIM)[claims.VERDICT] if judged_on else {}
    by_sub_study: dict[str, list[str]] = {}
    for claim, sub_study in judged_on.items():
        by_sub_study.setdefault(sub_study, []).append(f"{claim}: {verdict[claim]}")
    run_dir = Path(run_dir)
    text = "".join(
        f" The {name} sub-study{_how_long(_design_of(run_dir.parent / f'{run_dir.name}-{name}'))}"
        f" judged {len(judged)} more: {'; '.join(judged)}."
        for name, judged in by_sub_study.items()
    )
    return text + _judged_again(run_dir, skip=set(by_sub_study))


def _judged_again(run_dir: Path, skip: set[str]) -> str:
    """ " The runtimes sub-study, measured until decided in 9 blocks, judged each claim again on
    each runtime: 15 of 15 decided (the sensitivity column).": each sub-study measured until
    decided whose verdicts are conditions of the claims' rows, not claims of its own."""
    out = ""
    for name in [n for n in tables.load_params(run_dir).sub_studies if n not in skip]:
        sub_run = run_dir.parent / f"{run_dir.name}-{name}"
        design = _design_of(sub_run)
        looks = looks_of(design)
        if not looks:
            continue
        last = looks[-1]
        on_each = runtimes.on_each(tables.load_params(sub_run))
        out += (f" The {name} sub-study{_how_long(design)} judged each claim again{on_each}: "
                f"{last.decided} of {len(last.verdicts)} decided (the column "
                f'"{claims.SENSITIVITY}").')  # fmt: skip
    return out


def _how_long(design: dict) -> str:
    """ ", measured until decided in 6 blocks,": a sub-study (its design.json) that stopped
    when decided, or where it stopped with a claim open and why ("" for a fixed one)."""
    looks = looks_of(design)
    if not looks:
        return ""
    last = looks[-1]
    if not last.open:
        return f", measured until decided in {last.after_block} blocks,"
    why = f" ({design['stopped']})" if design.get("stopped") else ""
    return f", measured until decided but stopped open after {last.after_block} blocks{why},"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _later_blocks(looks: list[Look]) -> str:
    """ " Blocks 4-9 measured HTML only; block 10 ...": what the blocks after the first look
    measured, runs of blocks with the same cells together ("" when none ran)."""
    ran = [(x.after_block + 1, cells_text(x.cells)) for x in looks[:-1]]
    spans: list[list] = []
    for block, cells in ran:
        if spans and spans[-1][2] == cells and spans[-1][1] == block - 1:
            spans[-1][1] = block
        else:
            spans.append([block, block, cells])
    parts = [(f"blocks {a}-{b}" if b > a else f"block {a}") + f" measured {cells}"
             for a, b, cells in spans]  # fmt: skip
    if not parts:
        return ""
    joined = "; ".join(parts)
    return f" {joined[0].upper()}{joined[1:]} (the cells an open claim needed)."


def _needs(n: int | None, cap: int | None = None) -> str:
    """The blocks an open claim would need (blocks_needed), in words; None: not estimated (a
    comparison with one block, one on an edge, or a study whose claims are not modes against
    its baseline: kestrel-transports' settings). Beyond the plan's `cap` (max_repetitions) no
    resume can reach them: "not within this plan", and what a new plan would need."""
    if n is None:
        return "no estimate of the blocks it would need"
    blocks = (f"more than {MOST_BLOCKS_SHOWN} blocks" if n > MOST_BLOCKS_SHOWN
              else f"about {n} blocks")  # fmt: skip
    if cap is not None and n > cap:
        return (f"not within this plan of at most {cap} blocks: a new plan would need "
                f"{blocks} in all at this spread")  # fmt: skip
    return f"{blocks} in all at this spread"


def added_by_paper(study: str, run_dir: str | Path) -> str:
    """ " The paper profile adds: ..." the modes, scenarios, variants and sub-studies the
    study's paper profile measures beyond this run's ("" when there is nothing or no paper
    profile)."""
    try:
        paper = StudyParams.from_file(get_study(study).params_path("paper"))
        ours = tables.load_params(run_dir)
    except (BadInput, OSError):
        return ""
    modes = [mode_label(m) for m in paper.modes if m not in ours.modes]
    scenarios = [scenario_label(s) for s in paper.scenarios if s not in ours.scenarios]
    subs = [s for s in paper.sub_studies if s not in ours.sub_studies]
    variants = [v for v in paper.variants if v not in ours.variants]
    parts = []
    if modes:
        parts.append(f"the modes {', '.join(modes)}")
    if scenarios:
        parts.append(f"the scenarios {', '.join(scenarios)}")
    if variants:  # a settings sweep (kestrel-transports): its first few, then how many more
        shown = ", ".join(variants[:SHOWN_VARIANTS])
        more = len(variants) - SHOWN_VARIANTS
        parts.append(f"the variants {shown}" + (f" and {more} more" if more > 0 else ""))
    if subs:
        parts.append(f"the sub-studies {', '.join(subs)}")
    return f" The paper profile adds {'; '.join(parts)}." if parts else ""
