"""The harness's interfaces, checked by their structure and over every implementation: every
window design is a WindowDesign (measure/window.py, measure/designs.py), every block schedule
a Schedule (hostbench/schedules.py), every stopping rule a StoppingRule (harness/stopping.py),
and a process started here or over ssh a HarnessProcess (launch/processes.py); the three
designs give back every committed run's windows in their order. Nothing here starts a
process."""

import json

import pytest

from hostbench.analysis import run_design
from hostbench.analysis.window_design import BACK_TO_BACK
from hostbench.errors import HostbenchError
from hostbench.harness.launch.processes import HarnessProcess, ManagedProcess
from hostbench.harness.launch.remote import RemoteProcess
from hostbench.harness.measure.alternate import ALTERNATING, alternating_window
from hostbench.harness.measure.designs import (
    ALTERNATING_DESIGN,
    BACK_TO_BACK_DESIGN,
    DESIGNS,
    SWITCHING_DESIGN,
    design_for,
    window_design,
)
from hostbench.harness.measure.interleave import SWITCHING, interleaved_window
from hostbench.harness.measure.window import RunSpec, WindowDesign
from hostbench.harness.order import run_order
from hostbench.harness.run_folder import recorded
from hostbench.harness.stopping import RULES, StoppingRule, planned, stopping_rule
from hostbench.load import TOOLS
from hostbench.params import StudyParams
from hostbench.paths import RUNS
from hostbench.results import read_results
from hostbench.schedules import SCHEDULES, Schedule
from tests.conformance import unmet

TWO_MODES = {"modes": ["kestrel", "nginx"], "scenarios": ["json", "text"], "tools": ["k6"],
             "concurrency": [4], "duration_s": 10, "warmup_s": 0, "repetitions": 2}  # fmt: skip


def test_a_local_and_a_remote_process_are_both_harness_processes(tmp_path):
    # Made, never started: neither runs anything until start().
    local = ManagedProcess("sleeper", ["sleep", "1"], tmp_path / "here.log")
    remote = RemoteProcess(None, "1-sleeper", "sleeper", ["sleep", "1"], tmp_path / "there.log")
    assert unmet(HarnessProcess, local) == []
    assert unmet(HarnessProcess, remote) == []


def test_a_process_missing_part_of_the_protocol_is_found(tmp_path):
    class Partial:
        name, argv, log_path = "x", [], tmp_path / "x.log"

        def pid(self) -> int:  # a method where the protocol has a property
            return 1

        def wait(self) -> int:  # no timeout
            return 0

    wrong = unmet(HarnessProcess, Partial())
    assert "no attribute stderr_path" in wrong and "no stop" in wrong
    assert "pid: a property in one, a method in the other" in wrong
    assert "wait['self'], the protocol's ['self', 'timeout']" in wrong


@pytest.mark.parametrize(
    "design, name",
    [(BACK_TO_BACK_DESIGN, BACK_TO_BACK), (SWITCHING_DESIGN, SWITCHING),
     (ALTERNATING_DESIGN, ALTERNATING)],
    ids=lambda d: getattr(d, "name", d),
)  # fmt: skip
def test_each_window_design_is_a_window_design(design, name):
    assert unmet(WindowDesign, design) == []
    assert design.name == name


def test_a_tools_interleaved_windows_are_of_its_design():
    assert design_for("k6") is SWITCHING_DESIGN and SWITCHING_DESIGN.fire is interleaved_window
    others = {design_for(tool) for tool in TOOLS if tool != "k6"}
    assert others == {ALTERNATING_DESIGN} and ALTERNATING_DESIGN.fire is alternating_window


def test_a_window_back_to_back_holds_one_mode(tmp_path):
    params = StudyParams.from_dict(
        {"modes": ["kestrel", "nginx"], "scenarios": ["json"], "tools": ["k6"],
         "concurrency": [4], "duration_s": 10, "warmup_s": 0, "repetitions": 1}
    )  # fmt: skip
    specs = [RunSpec.of_cell(params, mode, "json", "k6", 4, 1) for mode in params.modes]
    with pytest.raises(HostbenchError, match="back to back measures one mode, got 2"):
        BACK_TO_BACK_DESIGN.measure(specs, [None, None], [{}, {}], [tmp_path] * 2, params)


# --- the three designs of a run: its window design, its schedule, its stopping rule ----------


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: d.name)
def test_every_window_design_groups_a_blocks_runs_into_windows_and_reads_none_back(
    design, tmp_path
):
    params = StudyParams.from_dict({**TWO_MODES, "windows": 2, "interleave_slice_s": 0.25})
    specs = [s for s in run_order(params, seed=4) if s.block == 1]
    windows = design.windows(specs)
    flat = [s.key for w in windows for s in w]  # every run in one window, none twice
    assert sorted(flat) == sorted(s.key for s in specs) and len(set(flat)) == len(specs)
    assert all(len({s.window for s in w}) == 1 for w in windows)
    for window in windows:  # nothing measured yet: every window still to measure, whole
        assert design.read_back(window, tmp_path, params) == ({}, window)


@pytest.mark.parametrize("schedule", SCHEDULES.values(), ids=lambda s: s.name)
def test_every_schedule_is_a_schedule_of_permutations(schedule):
    assert unmet(Schedule, schedule) == []
    for n in range(1, 8):
        rows = schedule.rows(n)
        assert rows and all(sorted(row) == list(range(n)) for row in rows)
    assert schedule.in_words()


RULE_PARAMS = {
    "fixed": {},
    "two-stage": {"target_halfwidth_pct": 5, "repetitions": 3},
    "sequential": {"stop_when_decided": True, "repetitions": 3, "max_repetitions": 6},
    "budget": {"stop_when_decided": True, "repetitions": 3, "max_repetitions": 6,
               "max_minutes": 10},
}  # fmt: skip


@pytest.mark.parametrize("rule_class", RULES, ids=lambda r: r.name)
def test_every_stopping_rule_is_chosen_by_its_params_and_starts_from_them(rule_class, tmp_path):
    params = StudyParams.from_dict({**TWO_MODES, **RULE_PARAMS[rule_class.name]})
    rule = stopping_rule(params)
    assert type(rule) is rule_class and unmet(StoppingRule, rule) == []
    state = rule.state(tmp_path)  # no design.json: the rule's start
    assert state["blocks"] >= params.repetitions and rule.last_planned(state) >= 1
    specs = run_order(params, seed=2, blocks=state["blocks"])
    assert rule.in_block(specs, 1, state) == [s for s in specs if s.block == 1]
    same = recorded(params, seed=2)
    assert rule.refused(same, same) == "" and rule.accepted(same, same) == frozenset()
    assert rule.resumed(tmp_path, state, same, same) == state
    # The analysis names the run's rule as the harness chose it, in the rule's own words.
    assert run_design.stopping_rule(params) == rule.name
    assert rule.in_words() == run_design.stopping_words(params) != ""


def test_every_stopping_rule_the_analysis_names_has_its_class():
    assert [rule.name for rule in RULES] == list(run_design.STOPPING_RULES)


def test_a_sequential_run_takes_a_raised_budget_and_a_fixed_one_refuses_more_blocks():
    budget = StudyParams.from_dict({**TWO_MODES, **RULE_PARAMS["budget"]})
    raised = StudyParams.from_dict({**TWO_MODES, **RULE_PARAMS["budget"], "max_minutes": 20})
    old, new = recorded(budget, 1), recorded(raised, 1)
    assert stopping_rule(raised).accepted(old, new) == {"max_minutes"}
    assert stopping_rule(budget).accepted(new, old) == frozenset()  # a smaller one: refused
    fixed, more = (StudyParams.from_dict({**TWO_MODES, "repetitions": n}) for n in (2, 3))
    why = stopping_rule(more).refused(recorded(fixed, 1), recorded(more, 1))
    assert why.startswith("a fixed design of 2 blocks resumed with 3")


COMMITTED = sorted(p.parent for p in RUNS.glob("*/params.json"))


@pytest.mark.parametrize("run_dir", COMMITTED, ids=lambda p: p.name)
def test_the_designs_give_every_committed_runs_windows_in_their_order(run_dir):
    """The schedule, the stopping rule and its design.json give back every window a committed
    run measured, each at the place in its block it ran at: the refactored executor would run
    the same windows in the same order."""
    params = StudyParams.from_run(run_dir)
    rule = stopping_rule(params)
    state = rule.state(run_dir)
    seed = json.loads((run_dir / "params.json").read_text())["seed"]
    specs = {s.key: s for s in planned(rule, run_order(params, seed, state["blocks"]), state)}
    rows = read_results(run_dir)
    first = rows[rows["attempt"] == 1]
    assert set(first["run_key"]) <= set(specs)
    assert [specs[k].position for k in first["run_key"]] == first["position"].tolist()
    assert {window_design(params, t).name for t in params.tools} <= {d.name for d in DESIGNS}
