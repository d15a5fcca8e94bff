"""The stopping rules: how many blocks a study measures, and which cells each block holds.

A rule is chosen by the params that state it: a fixed number of blocks (`repetitions`),
Stein's two-stage rule (`target_halfwidth_pct`: the first blocks' spread sets the number once,
harness/design.py; its intervals analysis/two_stage.py), a sequential rule
(`stop_when_decided`: the claims judged after each block with repeated intervals,
analysis/until_decided.py) or the sequential rule within a time budget (with `max_minutes`).
Each owns its state in the run folder's design.json (the blocks, and why), the resume it
refuses or takes (a fixed design never grows; a budget may be raised), and the words a
report says of it. The executor (harness/study.py) asks the rule, after each block, what
comes next, and never the params keys.
"""

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..analysis import run_design, until_decided
from ..analysis.sequential import Plan
from ..params import StudyParams
from .design import blocks_needed
from .measure.window import RunSpec
from .order import run_order
from .run_folder import read_record, write_json

DESIGN_FILE = "design.json"  # how many blocks, and why
BUDGET_STOPPED = "the next block would pass the profile's time budget"  # design.json's "stopped"


@dataclass
class Measured:
    """What a rule may weigh after a block: the run folder and its study (whose claims a
    sequential rule judges), the rows measured so far, the minutes of each block this process
    measured, the run's seed, and where progress is said."""

    study_dir: Path
    study: str | None
    rows: list[dict]
    seed: int
    say: object = print
    block_minutes: list[float] = field(default_factory=list)

    @property
    def pace(self) -> float:
        """The minutes a block took, on average, in this process (0 when none was measured)."""
        return sum(self.block_minutes) / len(self.block_minutes) if self.block_minutes else 0.0


class StoppingRule(Protocol):
    """How many blocks a study measures and which cells each holds, decided as it goes."""

    name: str  # as a report names it

    def state(self, study_dir: Path) -> dict:
        """design.json's state: as the run recorded it (a resumed run), else this rule's start;
        its "blocks" the most blocks known now."""
        ...

    def refused(self, old: dict, new: dict) -> str:
        """Why a run recorded with params.json `old` may not resume with `new`, in one line
        ("" when it may)."""
        ...

    def accepted(self, old: dict, new: dict) -> frozenset[str]:
        """The params keys whose change a resume of `old` with `new` takes."""
        ...

    def resumed(self, study_dir: Path, state: dict, old: dict, new: dict) -> dict:
        """The state a resume of `old` with `new` goes on with (recorded when it changed)."""
        ...

    def last_planned(self, state: dict) -> int:
        """The last block known to be measured now (the rest wait on what the rule sees)."""
        ...

    def in_block(self, specs: list[RunSpec], block: int, state: dict) -> list[RunSpec]:
        """The windows of `block` the rule lets run."""
        ...

    def after_block(self, block: int, state: dict, measured: Measured) -> dict:
        """The state after `block` was measured (or found measured, on a resume)."""
        ...

    def in_words(self) -> str:
        """What a report says of the rule."""
        ...


class Fixed:
    """`repetitions` blocks, set before any was measured: its plain t intervals hold."""

    name = run_design.FIXED

    def __init__(self, params: StudyParams):
        self.params = params

    def state(self, study_dir: Path) -> dict:
        return read_record(study_dir / DESIGN_FILE) or self.start()

    def start(self) -> dict:
        return {"blocks": self.params.repetitions, "decision": ""}

    def refused(self, old: dict, new: dict) -> str:
        """More repetitions than a fixed design recorded: blocks added after its intervals were
        seen make its number of blocks depend on them (optional continuation: the A/A
        alternating check grew so from 24 to 72 blocks), which its plain t intervals, valid
        for a number fixed before any block, do not cover."""
        old_fixed = old.get("target_halfwidth_pct") is None and not old.get("stop_when_decided")
        if not (old_fixed and new["repetitions"] > old["repetitions"]):
            return ""
        return (
            f"a fixed design of {old['repetitions']} blocks resumed with {new['repetitions']} "
            "would add blocks after its intervals were seen, which its t intervals (valid for a "
            f"number of blocks fixed beforehand) do not cover: measure repetitions="
            f"{new['repetitions']} under a new --run-id, or let the data set the blocks "
            "(target_halfwidth_pct: Stein's two-stage; stop_when_decided: repeated intervals)"
        )

    def accepted(self, old: dict, new: dict) -> frozenset[str]:
        return frozenset()

    def resumed(self, study_dir: Path, state: dict, old: dict, new: dict) -> dict:
        return state

    def last_planned(self, state: dict) -> int:
        return state["blocks"]

    def in_block(self, specs: list[RunSpec], block: int, state: dict) -> list[RunSpec]:
        return [s for s in specs if s.block == block]

    def after_block(self, block: int, state: dict, measured: Measured) -> dict:
        return state

    def in_words(self) -> str:
        return run_design.stopping_words(self.params)


class TwoStage(Fixed):
    """Stein's two-stage rule: after the first `repetitions` blocks, the blocks the target
    half-width calls for, set once (design.blocks_needed) and recorded in design.json, so a
    resumed study keeps them."""

    name = run_design.TWO_STAGE

    def refused(self, old: dict, new: dict) -> str:
        return ""

    def after_block(self, block: int, state: dict, measured: Measured) -> dict:
        if block != self.params.repetitions or state["decision"]:  # decided once
            return state
        design = blocks_needed(measured.rows, self.params, measured.pace,
                               self.added_block_share(measured.seed))  # fmt: skip
        write_json(measured.study_dir / DESIGN_FILE, design)
        if design["blocks"] > block:
            measured.say(design["decision"])
        return design

    def added_block_share(self, seed: int) -> float:
        """An added block's windows over a first-stage block's: the focus alone, so the time
        cap counts its real pace."""
        n0 = self.params.repetitions
        per_block = Counter(s.block for s in run_order(self.params, seed, n0 + 1))
        return per_block[n0 + 1] / per_block[1] if per_block[1] else 1.0


class Sequential(Fixed):
    """Until the claims are decided: after each block from the `repetitions`-th, the claims
    judged on every window so far (until_decided.look), the look recorded in design.json; the
    next block holds only the cells an open claim needs; the run stops when every claim is
    decided or at max_repetitions."""

    name = run_design.SEQUENTIAL

    def start(self) -> dict:
        params = self.params
        return {
            "blocks": params.max_repetitions,
            "decision": "",
            "rule": Plan.of(params).describe(),
            "first_blocks": params.repetitions,
            "max_blocks": params.max_repetitions,
            "minutes": {},
            until_decided.LOOKS: [],
        }

    def refused(self, old: dict, new: dict) -> str:
        return ""

    def accepted(self, old: dict, new: dict) -> frozenset[str]:
        """A run measured until decided, resumed with a larger time budget (or none), goes on
        where its budget stopped it (resumed): its repeated intervals hold their 95% over
        every look up to max_repetitions whatever stops the run, a budget raised after a look
        included (docs/method.md). A smaller one is refused (the blocks beyond it would stay)."""

        def budget(p: dict) -> float:
            return math.inf if p.get("max_minutes") is None else p["max_minutes"]

        both = old.get("stop_when_decided") and new.get("stop_when_decided")
        return frozenset({"max_minutes"} if both and budget(new) > budget(old) else ())

    def resumed(self, study_dir: Path, state: dict, old: dict, new: dict) -> dict:
        """A run its time budget stopped, resumed with a larger one (accepted): its blocks up to
        max_repetitions again and its last look to be taken again, now under the new budget
        (the same windows judged again: the same verdicts). Recorded at once, so an
        interruption before that look leaves the run open, not stopped by the old budget."""
        if not self.accepted(old, new):
            return state
        if not str(state.get("stopped", "")).startswith(BUDGET_STOPPED):
            return state
        kept = {key: value for key, value in state.items() if key != "stopped"}
        reopened = {**kept, "blocks": self.params.max_repetitions,
                    until_decided.LOOKS: state[until_decided.LOOKS][:-1]}  # fmt: skip
        write_json(study_dir / DESIGN_FILE, reopened)
        return reopened

    def last_planned(self, state: dict) -> int:
        looked = [x["after_block"] for x in state[until_decided.LOOKS]]
        return min(state["blocks"], max([self.params.repetitions - 1, *looked]) + 1)

    def in_block(self, specs: list[RunSpec], block: int, state: dict) -> list[RunSpec]:
        """All the block's cells, or those the look after the block before found an open
        claim needing."""
        in_block = super().in_block(specs, block, state)
        before = [x for x in state.get(until_decided.LOOKS, []) if x["after_block"] == block - 1]
        if not before:
            return in_block
        cells = before[0]["cells"]
        return [s for s in in_block
                if until_decided.cell_allowed(s.scenario.id, s.concurrency, cells)]  # fmt: skip

    def after_block(self, block: int, state: dict, measured: Measured) -> dict:
        """The look after `block` recorded in design.json and, where the run stops, the
        blocks it ran and why (stopped). A look already recorded (a resumed run) stands."""
        from ..analysis import tables

        if block < self.params.repetitions:
            return state
        if any(x["after_block"] == block for x in state[until_decided.LOOKS]):
            return state
        results = tables.load_results(measured.study_dir, valid_only=False)
        minutes = sum(state["minutes"].values())
        found = until_decided.look(measured.study, results, self.params, block, minutes)
        state = until_decided.record(state, found)
        measured.say(found.progress())
        stopped = self.stopped(found, block, state, results, minutes)
        if stopped:
            state = {**state, "blocks": block, "stopped": stopped}
            measured.say(f"stopped after block {block}: {stopped}")
        write_json(measured.study_dir / DESIGN_FILE, state)
        return state

    def stopped(self, found, block: int, state: dict, results, minutes: float) -> str:
        """Why the run stops after `block` ("" when it goes on)."""
        if not found.open:
            return "every claim decided"
        if block >= self.params.max_repetitions:
            return f"the profile's most blocks ({self.params.max_repetitions}) reached"
        return ""


class Budget(Sequential):
    """The sequential rule within a time budget (max_minutes): it stops too where the next
    block, at the last block's pace scaled by the cells it holds, would pass the budget."""

    name = run_design.BUDGET

    def stopped(self, found, block: int, state: dict, results, minutes: float) -> str:
        why = super().stopped(found, block, state, results, minutes)
        if why:
            return why
        budget = self.params.max_minutes
        last = state["minutes"].get(str(block), 0.0)
        share = len(found.cells) / max(1, len(cells_measured(results, block)))
        if minutes + last * share > budget:
            return f"{BUDGET_STOPPED} ({budget:g} min; {minutes:.0f} min measured)"
        return ""


def cells_measured(results, block: int) -> set[tuple]:
    """The (scenario, concurrency) cells `block` measured."""
    rows = results[results["block"] == block]
    return set(zip(rows["scenario"].astype(str), rows["concurrency"], strict=True))


RULES = (Fixed, TwoStage, Sequential, Budget)  # every stopping rule stopping_rule may choose


def stopping_rule(params: StudyParams) -> StoppingRule:
    """The rule `params` state (run_design.stopping_rule names it): sequential (within a
    budget when max_minutes is set) with stop_when_decided, two-stage with
    target_halfwidth_pct, else fixed."""
    return {rule.name: rule for rule in RULES}[run_design.stopping_rule(params)](params)


def planned(rule: StoppingRule, specs: list[RunSpec], state: dict) -> list[RunSpec]:
    """The windows known to be measured now: every block's up to the rule's last planned."""
    last = rule.last_planned(state)
    return [s for b in range(1, last + 1) for s in rule.in_block(specs, b, state)]
