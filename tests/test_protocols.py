"""The harness's two interfaces, checked by their structure: every window design is a
WindowDesign (measure/window.py), and a process started here or over ssh a HarnessProcess
(launch/processes.py). Nothing here starts a process."""

import inspect

import pytest

from hostbench.analysis.window_design import BACK_TO_BACK
from hostbench.errors import HostbenchError
from hostbench.harness.launch.processes import HarnessProcess, ManagedProcess
from hostbench.harness.launch.remote import RemoteProcess
from hostbench.harness.measure.alternate import (
    ALTERNATING,
    ALTERNATING_DESIGN,
    alternating_window,
    design_for,
)
from hostbench.harness.measure.interleave import SWITCHING, SWITCHING_DESIGN, interleaved_window
from hostbench.harness.measure.run import BACK_TO_BACK_DESIGN
from hostbench.harness.measure.window import RunSpec, WindowDesign
from hostbench.load import TOOLS
from hostbench.params import StudyParams


def _members(protocol) -> dict[str, object]:
    """A protocol's methods and properties (its own, and __enter__/__exit__), by name."""
    return {
        name: member
        for name, member in vars(protocol).items()
        if (callable(member) or isinstance(member, property))
        and (not name.startswith("_") or name in ("__enter__", "__exit__"))
    }


def _parameters(member) -> list[str]:
    function = member.fget if isinstance(member, property) else member
    return list(inspect.signature(function).parameters)


def unmet(protocol, instance) -> list[str]:
    """What `instance` lacks of `protocol`: an attribute it declares, a method or property,
    or one with other parameters or of the other kind (property or method)."""
    wrong = [f"no attribute {name}" for name in protocol.__annotations__
             if not hasattr(instance, name)]  # fmt: skip
    for name, wanted in _members(protocol).items():
        found = inspect.getattr_static(instance, name, None)
        if found is None:
            wrong.append(f"no {name}")
        elif isinstance(found, property) != isinstance(wanted, property):
            wrong.append(f"{name}: a property in one, a method in the other")
        elif _parameters(found) != _parameters(wanted):
            wrong.append(f"{name}{_parameters(found)}, the protocol's {_parameters(wanted)}")
    return wrong


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
