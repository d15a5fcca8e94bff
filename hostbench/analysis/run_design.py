"""What a run's design was, asked of its params: its stopping rule and its block schedule, by
name and in words (its window design: window_design.py). The studies and the harness ask
here, never a params key: the harness's rules (harness/stopping.py) are chosen by these names
and say themselves in these words, so a report and the run that measured it cannot disagree.
"""

from ..params import StudyParams
from ..schedules import schedule_of
from .sequential import Plan
from .two_stage import TwoStage

FIXED = "fixed"  # repetitions blocks, set before any was measured
TWO_STAGE = "two-stage"  # target_halfwidth_pct: Stein's rule sets the blocks once
SEQUENTIAL = "sequential"  # stop_when_decided: until the claims are decided
BUDGET = "budget"  # stop_when_decided with max_minutes: ... or the time runs out
STOPPING_RULES = (FIXED, TWO_STAGE, SEQUENTIAL, BUDGET)


def stopping_rule(params: StudyParams) -> str:
    """The name of the rule that set a run's blocks (one of STOPPING_RULES)."""
    if params.stop_when_decided:
        return BUDGET if params.max_minutes is not None else SEQUENTIAL
    return TWO_STAGE if params.target_halfwidth_pct is not None else FIXED


def stops_when_decided(params: StudyParams) -> bool:
    """Whether a run measured until its claims were decided (its looks in design.json)."""
    return stopping_rule(params) in (SEQUENTIAL, BUDGET)


def stopping_words(params: StudyParams) -> str:
    """The stopping rule in words: "a fixed design: 5 blocks, set before any was measured",
    Stein's intervals for a two-stage run, the repeated intervals of one measured until
    decided (and its budget)."""
    rule = stopping_rule(params)
    if rule == FIXED:
        return f"a fixed design: {params.repetitions} blocks, set before any was measured"
    if rule == TWO_STAGE:
        return TwoStage(params.repetitions).describe()
    words = f"measured until decided: {Plan.of(params).describe()}"
    return f"{words}, within {params.max_minutes:g} minutes" if rule == BUDGET else words


def schedule_words(params: StudyParams) -> str:
    """The order of a sub-block's windows, round by round, in words (after "in")."""
    return schedule_of(params).in_words()
