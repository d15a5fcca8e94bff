"""The catalog against what really runs: the test app's routes. (The layers' boundaries:
tests/test_import_rule.py.)"""

import itertools
import math
from dataclasses import replace
from pathlib import PurePosixPath

import pytest

from hostbench.catalog import (
    MODES,
    SCENARIOS,
    ModesIn,
    check_serves,
    get_scenario,
    linux_modes,
    runnable_here,
    where_modes_run,
)
from hostbench.errors import BadInput
from hostbench.harness.launch import web
from hostbench.harness.launch.modes import LaunchOptions, launch
from hostbench.harness.launch.places import Local
from hostbench.params import SSH_MODES, StudyParams
from hostbench.programs import PROGRAMS, Setup, programs_of


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


def test_a_mode_is_one_declaration_that_every_list_of_modes_reads(monkeypatch):
    """A mode made of existing programs is its catalog entry alone: the params, topology
    ssh's modes, the docs' table, the tests' lists and the harness's launch all read it."""
    new = replace(MODES["nginx-keepalive"], id="nginx-pool-8", label="nginx, pool of 8",
                  keepalive=8)  # fmt: skip
    assert new.id not in SSH_MODES
    monkeypatch.setitem(MODES, new.id, new)
    assert new.id in linux_modes() and new.id in runnable_here()  # test_modes' list
    assert new.id in SSH_MODES and new.id in ModesIn("netns")
    assert "| `nginx-pool-8` | `TestApp` behind `nginx` (upstream pool) |" in where_modes_run()
    ssh = {"modes": [new.id], "scenarios": ["text"], "tools": ["k6"], "concurrency": [4],
           "duration_s": 5, "warmup_s": 0, "repetitions": 1, "topology": "ssh",
           "inventory": "hosts.ini"}  # fmt: skip
    assert StudyParams.from_dict(ssh).modes == [new.id]
    # The launch reads the same entry: its programs, and the proxy's config from its pool.
    assert [p.name for p in programs_of(new)] == ["TestApp", "nginx"]
    setup = Setup(new, LaunchOptions(), "127.0.0.1:1", upstream="127.0.0.1:2")
    assert (
        "keepalive 8;"
        in PROGRAMS["nginx"].configs(setup, PurePosixPath("/x"), Local())["nginx.conf"]
    )
    # Declared for this machine only: topology ssh refuses it in one line, naming the rest.
    monkeypatch.setitem(MODES, new.id, replace(new, topologies=("local",)))
    with pytest.raises(
        BadInput, match=r"topology ssh runs modes kestrel, .* only \(not nginx-pool-8\)"
    ):
        StudyParams.from_dict(ssh)
    assert new.id not in SSH_MODES
    assert "| `nginx-pool-8` | `TestApp` behind `nginx` (upstream pool) | `local` |" in (
        where_modes_run()
    )
