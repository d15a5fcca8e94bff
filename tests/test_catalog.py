"""The catalog against what really runs: the test app's routes. (The layers' boundaries:
tests/test_import_rule.py.)"""

import itertools
import math

import pytest

from hostbench.catalog import MODES, SCENARIOS, check_serves, get_scenario
from hostbench.errors import BadInput
from hostbench.harness.launch import web
from hostbench.harness.launch.modes import LaunchOptions, launch


@pytest.mark.live
def test_the_test_apps_counted_routes_are_the_catalogs_scenarios(tmp_path):
    with launch("kestrel", tmp_path, LaunchOptions()) as target:
        counted = set(target.server_stats()["endpoints"])
        assert counted == {s.stats_key for s in SCENARIOS.values()}
        for scenario in SCENARIOS.values():  # each path is served and counted where it says
            target.reset_server_stats()
            assert target.get(scenario.path).status == 200, scenario.path
            assert target.server_stats()["endpoints"][scenario.stats_key] == 1, scenario.id


@pytest.mark.live
def test_the_go_servers_count_the_scenarios_their_modes_serve(tmp_path):
    for mode in (m for m in MODES.values() if m.server == "goserver"):
        with launch(mode, tmp_path / mode.id, LaunchOptions()) as target:
            counted = set(target.server_stats()["endpoints"])
            assert counted == {get_scenario(s).stats_key for s in mode.serves}, mode.id
            assert web.get(target.url + "/html").status == 404  # serves only its own


def test_a_mode_is_refused_a_scenario_its_server_lacks():
    with pytest.raises(BadInput, match="mode 'iris' does not serve scenario 'html'; it serves"):
        check_serves(MODES["iris"], get_scenario("html"))


def test_every_mode_has_its_display_facts():
    for mode in MODES.values():
        assert mode.label and mode.summary and mode.color.startswith("#")
        assert len(mode.hops) == len(mode.nodes) - 1
        assert mode.launch in ("app", "proxy", "external")
    assert len({m.color for m in MODES.values()}) == len(MODES)  # one colour per mode


def test_no_two_modes_look_alike_on_a_figure():
    """Unique is not enough: two teals 25 apart in RGB read as one mode on a chart."""

    def rgb(color: str) -> list[int]:
        return [int(color[i : i + 2], 16) for i in (1, 3, 5)]

    close = [
        (a.id, b.id)
        for a, b in itertools.combinations(MODES.values(), 2)
        if math.dist(rgb(a.color), rgb(b.color)) < 45
    ]
    assert close == []
