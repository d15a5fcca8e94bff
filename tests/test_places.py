"""Every place a launch runs on answers the calls Place declares, by the same parameters: this
machine (and its network namespaces) and an ssh host alike, so the programs and modes.py
launch through any without asking which."""

import inspect

import pytest

from hostbench.harness.launch.places import Local, Place
from hostbench.harness.launch.remote import Connection

CALLS = [name for name, v in vars(Place).items() if callable(v) and not name.startswith("_")]


def _parameters(function) -> list[tuple[str, object, object]]:
    """Each parameter's name, kind and default: what a caller may pass."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("place", [Local, Connection], ids=lambda c: c.__name__)
@pytest.mark.parametrize("call", CALLS)
def test_a_place_answers_each_call_as_place_declares_it(place, call):
    assert _parameters(getattr(place, call)) == _parameters(getattr(Place, call))


def test_the_declared_calls_are_the_ones_a_launch_makes():
    assert {"folder", "put", "tool", "process", "free_port", "answers_ok"} <= set(CALLS)


def test_a_place_lacking_a_call_or_taking_other_parameters_is_found():
    class Partial:
        def folder(self, run_dir): ...

        def tool(self, program, ships=None): ...

    assert _parameters(Partial.folder) == _parameters(Place.folder)
    assert _parameters(Partial.tool) != _parameters(Place.tool)  # `program` for `name`
    assert not hasattr(Partial, "put")
