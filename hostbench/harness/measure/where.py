"""Where a study's processes run, as measure/ asks it: one declared protocol (Where), one
implementation per topology.

- ThisMachine (LOOPBACK): the load tool and the targets on this machine's loopback.
- TwoNamespaces (topology netns): the load tool in the client namespace of this machine, the
  targets in the server namespace, a veth pair between them; one process table and one clock.
- TwoSshHosts (topology ssh): the targets on the server host, the load tool on the load host,
  each read there by the harness's helper.

run.py, window.py, interleave.py and alternate.py call these methods and never ask which
topology they are in (tests/test_where.py holds them to that, and every implementation to
the protocol). The study builds one (harness/study.py) for as long as it lasts.
"""

import math
import os
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import psutil

from ...errors import HostbenchError
from ...load import TOOLS
from ...params import LaunchOptions
from ..launch import remote_helper
from ..launch.modes import Target, launch
from ..launch.netns import TwoHosts, call_in, check_route
from ..launch.remote import SshHosts, StopTogether
from .cpumonitor import CpuMonitor, ProcessTree, RemoteCpu
from .quiet import wait_until_quiet

RTT_PROBES = 20  # empty requests timed before a run; their median is its rtt_ms


class Where(Protocol):
    """What measure/ asks of the places a study's processes run on."""

    @property
    def client_netns(self) -> str | None:
        """The network namespace of this machine the load tool runs in; None: the harness's."""

    @property
    def loadgen_host(self):
        """The ssh load host (remote.Connection) the load tool runs on; None: this machine."""

    def path(self) -> str:
        """What a request crosses, as the rows' request_path says it."""

    def launch(self, mode, run_dir: Path, options: LaunchOptions, cpus: list[int] | None):
        """A context manager starting `mode`'s programs where the targets run (modes.launch),
        yielding its Target."""

    def stopping(self, say) -> ExitStack:
        """An ExitStack for a block's launches, stopping what they started as it closes."""

    def wait_until_quiet(self, max_cores: float, max_steal_pct: float, timeout_s: float,
                         say) -> dict:  # fmt: skip
        """The quiet gate (quiet.wait_until_quiet) over the machines the study runs on."""

    def cpu_monitor(self, samples_path: Path, interval_s: float):
        """The CPU monitor of one load (CpuMonitor's calls: watch, exited, summary)."""

    def window_monitor(self, targets: Sequence[Target], samples_path: Path, interval_s: float):
        """The CPU monitor of an interleaved window over `targets`, each watched as it needs."""

    def target_trees(self, targets: Sequence[Target], monitor):
        """Each target's process trees over an interleaved window (stop(), read()), made
        inside `monitor` (window_monitor's) at the window's start."""

    def server_rss_mb(self, pids: list[int]) -> float:
        """The RSS in MiB of the trees of `pids` (a target's server), read where they run."""

    def server_cpus(self, pid: int) -> str:
        """The CPU ids process `pid` may run on, as "0,1" ("" when not read)."""

    def tls(self, url: str) -> dict:
        """The TLS version and cipher `url` negotiates from where the load runs (the
        helper's answer: version and cipher, or error)."""

    def round_trip_ms(self, url: str) -> float:
        """The median empty request to `url` from where the load runs, once the load is known
        to go where it should (the server's address, over the path the topology promises)."""

    def warms_up_together(self, tool: str) -> bool:
        """Whether `tool` can warm a window's modes up in one run in its slices here: it
        switches target in one process, and its slices are on the clock that reads them."""

    def ready_tool(self, generator) -> None:
        """Before a window of short runs: what the tool's first run would do once (read its
        version) done now, outside the window's clock."""


def empty_request_rtt_ms(url: str) -> float:
    """The median time of an empty request (GET /health, a new connection each, as the
    client would open one) from where this runs to `url`: the path's own round trip.
    Timed by the code topology ssh runs on its loadgen host (plain http.client, the least
    client time on top of the path's), so every topology's rtt_ms is timed alike."""
    answer = remote_helper.rtt(url + "/health", RTT_PROBES)
    if "error" in answer:
        raise HostbenchError(f"{url}/health did not answer: {answer['error']}")
    return answer["ms"]


def _tree_readers(target: Target) -> dict[str, ProcessTree]:
    """A CPU reader per process group of `target` (server, proxy), counting from now."""
    trees = {}
    for group, pids in target.groups.items():
        tree = ProcessTree(roots=[psutil.Process(pid) for pid in pids])
        tree.seen = tree.seen_now()
        trees[group] = tree
    return trees


def _server_memory(trees: dict[str, ProcessTree]) -> tuple[float, float]:
    """The server tree's (RSS, RSS without file-mapped pages) in MiB now; NaN without one."""
    return trees["server"].memory_mb() if "server" in trees else (math.nan, math.nan)


class LocalTrees:
    """Each target's process trees over an interleaved window, read in this machine's process
    table (which its namespaces share): their CPU per group and the server's memory at start
    and stop. Every tree runs through the whole window (each idles in the others' slices), so
    a target's CPU per request is its trees' CPU over the window over its requests; an idle
    target still costs a little (its timers, the GC), charged to its requests."""

    def __init__(self, targets: Sequence[Target]):
        self.trees = [_tree_readers(t) for t in targets]
        self.memory = [[_server_memory(t)] for t in self.trees]
        self.cpu_s: list[dict] = []

    def stop(self) -> None:
        self.cpu_s = [{group: tree.tick() for group, tree in t.items()} for t in self.trees]
        for readings, t in zip(self.memory, self.trees, strict=True):
            readings.append(_server_memory(t))

    def read(self) -> tuple[list[dict], list]:
        """Per target: CPU seconds per group, and the memory readings at start and stop."""
        return self.cpu_s, self.memory


class MonitoredTrees:
    """The same readings of trees on another host, which its monitor (RemoteCpu) read there
    at the window's start and stop: read() after the monitor's block."""

    def __init__(self, targets: Sequence[Target], monitor):
        self.targets, self.monitor = targets, monitor

    def stop(self) -> None:
        """Nothing: the monitor reads the trees as its block ends."""

    def read(self) -> tuple[list[dict], list]:
        cpu_s = [{group: self.monitor.seconds(pids) for group, pids in t.groups.items()}
                 for t in self.targets]  # fmt: skip
        return cpu_s, [self.monitor.memory_mb(t.groups.get("server", [])) for t in self.targets]


class ThisMachine:
    """The load tool and the targets on this machine's loopback (namespace None), or the load
    tool in network namespace `netns` of it (TwoNamespaces): one process table, one clock."""

    def __init__(self, netns: str | None = None):
        self.netns = netns

    @property
    def client_netns(self) -> str | None:
        return self.netns

    @property
    def loadgen_host(self):
        return None

    def path(self) -> str:
        return "loopback"

    def launch(self, mode, run_dir: Path, options: LaunchOptions, cpus: list[int] | None):
        return launch(mode, run_dir, options, cpus=cpus)

    def stopping(self, say) -> ExitStack:
        return ExitStack()  # each process stops as its launch unwinds

    def wait_until_quiet(self, max_cores: float, max_steal_pct: float, timeout_s: float,
                         say) -> dict:  # fmt: skip
        return wait_until_quiet(max_cores, max_steal_pct, timeout_s, say)

    def cpu_monitor(self, samples_path: Path, interval_s: float):
        return CpuMonitor(samples_path, interval_s=interval_s)

    def window_monitor(self, targets: Sequence[Target], samples_path: Path, interval_s: float):
        # The targets' trees are read apart (target_trees): the monitor samples the machine.
        return self.cpu_monitor(samples_path, interval_s)

    def target_trees(self, targets: Sequence[Target], monitor):
        return LocalTrees(targets)

    def server_rss_mb(self, pids: list[int]) -> float:
        return ProcessTree(roots=[psutil.Process(pid) for pid in pids]).rss_mb()

    def server_cpus(self, pid: int) -> str:
        try:
            return ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
        except OSError:
            return ""

    def tls(self, url: str) -> dict:
        return call_in(self.netns, remote_helper.tls, url)

    def round_trip_ms(self, url: str) -> float:
        return call_in(self.netns, empty_request_rtt_ms, url)

    def warms_up_together(self, tool: str) -> bool:
        return TOOLS[tool].switches_target

    def ready_tool(self, generator) -> None:
        generator.version()  # it runs the tool once, here


LOOPBACK = ThisMachine()  # the load generator and the targets on this machine's loopback


class TwoNamespaces(ThisMachine):
    """Topology netns: the load tool in the client namespace, the targets in the server
    namespace of `namespaces` (netns.two_hosts), the load crossing the veth between them."""

    def __init__(self, namespaces: TwoHosts):
        super().__init__(namespaces.client)
        self.namespaces = namespaces

    def path(self) -> str:
        return self.namespaces.path()

    def launch(self, mode, run_dir: Path, options: LaunchOptions, cpus: list[int] | None):
        return launch(mode, run_dir, options, cpus=cpus, hosts=self.namespaces)

    def round_trip_ms(self, url: str) -> float:
        check_route(self.namespaces, urlsplit(url).hostname)  # the load crosses the veth
        return super().round_trip_ms(url)


class TwoSshHosts:
    """Topology ssh: the targets on the server host, the load tool on the load host of
    `connections` (remote.ssh_hosts), each read there by the harness's helper."""

    def __init__(self, connections: SshHosts):
        self.connections = connections

    @property
    def client_netns(self) -> str | None:
        return None

    @property
    def loadgen_host(self):
        return self.connections.loadgen

    def path(self) -> str:
        return self.connections.path()

    def launch(self, mode, run_dir: Path, options: LaunchOptions, cpus: list[int] | None):
        return launch(mode, run_dir, options, cpus=cpus, ssh=self.connections)

    def stopping(self, say) -> ExitStack:
        return StopTogether(self.connections, say)  # one round trip a host, one deadline

    def wait_until_quiet(self, max_cores: float, max_steal_pct: float, timeout_s: float,
                         say) -> dict:  # fmt: skip
        return wait_until_quiet(max_cores, max_steal_pct, timeout_s, say,
                                self.connections.both)  # fmt: skip

    def cpu_monitor(self, samples_path: Path, interval_s: float):
        # Read on the server host at the load's start and stop, never this machine's /proc;
        # the load host's foreign CPU and steal are read there too.
        return RemoteCpu(self.connections.server, others=(self.connections.loadgen,))

    def window_monitor(self, targets: Sequence[Target], samples_path: Path, interval_s: float):
        monitor = self.cpu_monitor(samples_path, interval_s)
        for target in targets:  # every target's trees, read there with the machine
            for group, pids in target.groups.items():
                for pid in pids:
                    monitor.watch(group, pid)
        return monitor

    def target_trees(self, targets: Sequence[Target], monitor):
        return MonitoredTrees(targets, monitor)

    def server_rss_mb(self, pids: list[int]) -> float:
        trees = self.connections.server.helper("tree", *pids)["trees"]
        return sum(trees[str(p)]["rss"] for p in pids) / 2**20

    def server_cpus(self, pid: int) -> str:
        return ""  # on another host: not read

    def tls(self, url: str) -> dict:
        return self.connections.loadgen.helper("tls", url)

    def round_trip_ms(self, url: str) -> float:
        # Load goes only to the server host's inventory address, timed from the load host.
        if urlsplit(url).hostname != self.connections.server_address:
            raise HostbenchError(f"{url}: not the inventory's server host "
                                 f"{self.connections.server_address}; no load sent")  # fmt: skip
        return self.connections.loadgen.rtt_ms(url + "/health", RTT_PROBES)

    def warms_up_together(self, tool: str) -> bool:
        # The reader of the apps' counters must know which mode each slice is: k6's slices
        # run on the load host's clock, not this one's.
        return False

    def ready_tool(self, generator) -> None:
        """Nothing: the tool may not be on this machine; its first process on the load host
        reads its version there (loadgen.LoadGenerator.process)."""


WHERES = (ThisMachine, TwoNamespaces, TwoSshHosts)  # every topology's, for the conformance test
