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


# Bodies of api/test recorded from the test app (2026-11-29): the default, then with
# --api-test-body trace-id at --log-level Information (an Activity per request) and None.
API_TEST_BODIES = (
    b"Test 11/29/2026 04:32:27",
    b"Test 00-e77afc8d73536df51d26dfaca3545930-752c191ef560d709-00",
    b"Test 0HNQDQ72F93JA:00000001",
)


def test_api_tests_check_takes_the_time_or_the_requests_trace_id_and_nothing_else():
    api_test = get_scenario("api-test")
    for body in API_TEST_BODIES:
        checks.check_body(api_test, body)
    for body, says in (
        (b"11/29/2026 04:32:27", "does not start with 'Test '"),
        (b"Test 2026-11-29 04:32:27", "is not 'Test ' and .NET's default DateTime text"),
        (b"Test 00-e77afc8d-752c191ef560d709-00", "or a request's trace id"),
        (b"Test ", "or a request's trace id"),
    ):
        with pytest.raises(checks.InvalidResponse, match=says):
            checks.check_body(api_test, body)
