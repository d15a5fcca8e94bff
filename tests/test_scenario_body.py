"""A scenario carries its body check: its catalog entry (hostbench/catalog.py) declares what a
good response body is, beside its path and content type, and the harness's check reads it
from there."""

from dataclasses import replace

import pytest

from hostbench import catalog
from hostbench.catalog import SCENARIOS, Body, get_scenario
from hostbench.harness.measure import checks


def test_a_scenarios_body_check_is_declared_with_its_path():
    assert {s.body.rule for s in SCENARIOS.values()} <= set(checks.BODY_RULES)
    # An exact body is stated for `equals` and only there.
    assert all((s.body.rule == "equals") == bool(s.body.expected) for s in SCENARIOS.values())
    values = get_scenario("values")
    assert values.body == Body("equals", "value")
    checks.check_body(values, b"value")
    with pytest.raises(checks.InvalidResponse, match="body 'values', expected 'value'"):
        checks.check_body(values, b"values")


def test_changing_a_scenarios_body_in_the_catalog_changes_what_the_harness_accepts(monkeypatch):
    changed = replace(get_scenario("values"), body=Body("equals", "values"))
    monkeypatch.setitem(catalog.SCENARIOS, "values", changed)
    checks.check_body(get_scenario("values"), b"values")
    with pytest.raises(checks.InvalidResponse, match="expected 'values'"):
        checks.check_body(get_scenario("values"), b"value")
    monkeypatch.setitem(catalog.SCENARIOS, "values", replace(changed, body=Body("nonempty")))
    checks.check_body(get_scenario("values"), b"anything")
