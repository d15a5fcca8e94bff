"""Where a study's processes run (harness/measure/where.py): each topology's implementation is
a Where, the loopback's and the network namespaces' answer on this machine, and measure/ no
longer asks which topology it is in."""

import ast
import math
from pathlib import Path

import pytest

from hostbench.catalog import get_scenario
from hostbench.errors import BadInput, HostbenchError
from hostbench.harness.launch import netns, remote
from hostbench.harness.launch.inventory import Host
from hostbench.harness.measure.loadgen import get_generator
from hostbench.harness.measure.where import (
    LOOPBACK,
    WHERES,
    ThisMachine,
    TwoNamespaces,
    TwoSshHosts,
    Where,
)
from hostbench.load import TOOLS
from hostbench.params import TOPOLOGIES, LaunchOptions
from hostbench.paths import ROOT
from tests.conformance import unmet

MEASURE = ROOT / "hostbench" / "harness" / "measure"


def _ssh_hosts(tmp_path: Path) -> remote.SshHosts:
    """Two connections as ssh_hosts makes them, never opened: nothing reaches a host."""
    addresses = {"server": "192.0.2.1", "loadgen": "192.0.2.2"}
    server, loadgen = (remote.Connection(Host(role, f"{role}-host", address), tmp_path)
                       for role, address in addresses.items())  # fmt: skip
    return remote.SshHosts(server, loadgen)


def _each(tmp_path: Path) -> dict[type, Where]:
    """One of each implementation, made as the study makes them (the namespaces' and the
    hosts' by name only: nothing is created or connected)."""
    return {
        ThisMachine: LOOPBACK,
        TwoNamespaces: TwoNamespaces(
            netns.TwoHosts(f"{netns.PREFIX}1-server", f"{netns.PREFIX}1-client")
        ),
        TwoSshHosts: TwoSshHosts(_ssh_hosts(tmp_path)),
    }


@pytest.mark.parametrize("kind", WHERES, ids=lambda k: k.__name__)
def test_each_topologys_places_are_a_where(kind, tmp_path):
    assert unmet(Where, _each(tmp_path)[kind]) == []


def test_the_conformance_check_finds_a_missing_or_changed_call(tmp_path):
    class Partial(ThisMachine):
        def tls(self, address):  # another parameter's name
            return {}

    partial = Partial()
    assert unmet(Where, partial) == ["tls['self', 'address'], the protocol's ['self', 'url']"]
    assert "no round_trip_ms" in unmet(Where, object())


def test_each_place_says_its_request_path_and_where_the_load_runs(tmp_path):
    local, namespaces, hosts = _each(tmp_path).values()
    assert (local.path(), local.client_netns, local.loadgen_host) == ("loopback", None, None)
    assert (
        namespaces.path() == "veth hb1c -> hb1s"
        and namespaces.client_netns == f"{netns.PREFIX}1-client"
    )
    assert namespaces.loadgen_host is None
    assert hosts.path() == "ssh loadgen-host -> server-host" and hosts.client_netns is None
    assert hosts.loadgen_host.host.address == "192.0.2.2"


def test_only_this_machines_clock_warms_a_windows_modes_up_together(tmp_path):
    # Under ssh, k6's slices run on the load host's clock, not the counters' reader's.
    local, namespaces, hosts = _each(tmp_path).values()
    for tool, declared in TOOLS.items():
        assert local.warms_up_together(tool) is declared.switches_target
        assert namespaces.warms_up_together(tool) is declared.switches_target
        assert hosts.warms_up_together(tool) is False


def test_load_aimed_elsewhere_than_the_server_host_is_refused_before_any_is_sent(tmp_path):
    hosts = TwoSshHosts(_ssh_hosts(tmp_path))  # never connected: the check comes first
    with pytest.raises(HostbenchError, match="not the inventory's server host 192.0.2.1"):
        hosts.round_trip_ms("http://127.0.0.1:5000")


# --- measure/ asks no topology ---------------------------------------------------------------

PLACE_ATTRIBUTES = {"ssh", "hosts"}  # what Where held before it was a protocol


def topology_branches(path: Path) -> list[str]:
    """Every place `path` asks which topology it is in: an attribute ssh or hosts read (as
    `where.ssh`), or a comparison with a topology's name or the params' topology."""
    names = {*TOPOLOGIES, "loopback"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in PLACE_ATTRIBUTES:
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(isinstance(s, ast.Constant) and s.value in names for s in sides)
            topology = any(isinstance(s, ast.Attribute) and s.attr == "topology" for s in sides)
            if named or topology:
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(MEASURE.glob("*.py")), ids=lambda p: p.name)
def test_measure_asks_no_topology_where_its_processes_run(path):
    assert topology_branches(path) == []


def test_a_topology_branch_is_found(tmp_path):
    (tmp_path / "run.py").write_text(
        "def f(where, params):\n"
        "    if where.ssh:\n"
        "        return where.hosts.client\n"
        "    return params.topology == 'netns' or 'ssh' in params.modes\n"
    )
    assert sorted(topology_branches(tmp_path / "run.py")) == [
        "run.py:2 where.ssh", "run.py:3 where.hosts",
        "run.py:4 'ssh' in params.modes", "run.py:4 params.topology == 'netns'",
    ]  # fmt: skip


# --- the loopback's and the namespaces' places answer on this machine ------------------------

NAMESPACES = pytest.mark.skipif(bool(netns.not_allowed()), reason=netns.not_allowed() or "ok")


def _answers(where: Where, tmp_path: Path) -> None:
    """Everything `where` is asked before and during a window, asked of a TLS mode it
    launched (its certificate made here), checked as measure/ reads each answer."""
    text = get_scenario("text").path
    with where.stopping(print) as block:
        target = block.enter_context(where.launch("kestrel-tls", tmp_path / "kestrel",
                                                  LaunchOptions(), None))  # fmt: skip
        server = target.groups["server"]
        assert where.round_trip_ms(target.url) > 0
        assert where.tls(target.url)["version"] == "TLSv1.3"
        assert where.server_rss_mb(server) > 1
        assert set(where.server_cpus(server[0]).split(",")) <= {str(c) for c in range(1024)}
        quiet = where.wait_until_quiet(math.inf, math.inf, 5, print)
        assert quiet["quiet_wait_s"] >= 0 and quiet["quiet_before_cores"] >= 0
        where.ready_tool(get_generator("bombardier"))  # its version read here
        monitor = where.window_monitor([target], tmp_path / "cpu_samples.csv", 0.1)
        with monitor:
            trees = where.target_trees([target], monitor)
            target.get(text)
            trees.stop()
        cpu_s, memory = trees.read()
        assert cpu_s[0]["server"] >= 0 and len(memory[0]) == 2 and memory[0][0][0] > 1
        monitor = where.cpu_monitor(tmp_path / "one_load.csv", 0.1)
        with monitor:
            monitor.watch("server", server[0])
            target.get(text)
        assert monitor.summary()["cpu_server_cores"] >= 0


@pytest.mark.live  # launches the test app
def test_this_machines_loopback_answers_what_measure_asks(tmp_path):
    _answers(LOOPBACK, tmp_path)


@pytest.mark.live  # makes two network namespaces, launches the test app in one
@NAMESPACES
def test_two_namespaces_answer_what_measure_asks_across_the_veth(tmp_path):
    with netns.two_hosts() as hosts:
        where = TwoNamespaces(hosts)
        _answers(where, tmp_path)
        with pytest.raises(BadInput, match="does not reach 10.1.2.3 over"):
            where.round_trip_ms("http://10.1.2.3:5000")
