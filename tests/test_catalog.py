"""The catalog against what really runs: the test app's routes, and the layers' boundaries."""

import ast
import subprocess
import sys

import pytest

from hostbench.catalog import MODES, SCENARIOS, check_serves, get_scenario
from hostbench.errors import BadInput
from hostbench.harness import web
from hostbench.harness.modes import LaunchOptions, launch
from hostbench.paths import ROOT


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


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


@pytest.mark.live
def test_the_analysis_never_imports_the_harness():
    for path in sorted((ROOT / "hostbench" / "analysis").glob("*.py")):
        for name in _imports(path):
            assert "harness" not in name, f"{path.name} imports {name}"
    # And not indirectly either: importing every analysis module loads no harness module.
    modules = sorted(p.stem for p in (ROOT / "hostbench" / "analysis").glob("[a-z]*.py"))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module('hostbench.analysis.' + name)\n"
        "print([m for m in sys.modules if m.startswith('hostbench.harness')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
