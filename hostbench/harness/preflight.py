"""What only a launch can check of a study's params: the preflight before anything starts.

The keys, their defaults, types and validation are data in hostbench.params, which the
analysis reads too (a cell's Load checks itself as it is made: hostbench/load.py). Here the
checks that need this machine: it can open the connections and has the CPUs loadgen_cpus
names, each mode runs here with these options (Windows-only modes, an external URL), and
each runtime variant's build can be linked here (clang and lld).
Whatever launches a study calls check_runnable on its params once.
"""

import itertools
import math
import os
import resource
from pathlib import Path

from ..catalog import get_mode
from ..errors import BadInput
from ..load import tools_with
from ..params import StudyParams
from ..runtime_variants import check_buildable, get_variant
from .launch.modes import check


def check_runnable(params: StudyParams) -> StudyParams:
    """`params`, refused (BadInput, one line) when this machine or its tools cannot run them
    or one of the sub-studies that run beside them."""
    _check_here(params)
    for name in params.sub_studies_run:
        try:
            _check_here(params.sub_study(name))
        except BadInput as e:
            raise BadInput(f"sub-study {name!r}: {e}") from None
    return params


def _check_here(params: StudyParams) -> None:
    for m in params.modes:
        for variant in params.variants_of(m):  # a runtime variant's options are its own
            check(get_mode(m), params.options_for(variant))
    for name in params.variant_builds:  # what its build links with, before anything starts
        check_buildable(get_variant(name))
    for t, c in itertools.product(params.tools, params.concurrency):
        check_connections(c, t)  # what this machine can open
    _check_cpus(params.loadgen_cpus)


def _check_cpus(cpus: list[int] | None) -> None:
    """loadgen_cpus names some, not all, of the CPUs this process may run on."""
    if cpus is None:
        return
    available = sorted(os.sched_getaffinity(0))
    unknown = [c for c in cpus if c not in available]
    if unknown or len(cpus) >= len(available):
        raise BadInput(
            f"params key 'loadgen_cpus' {cpus}: give some, not all, of this machine's CPUs "
            f"{available} (the app and proxy get the rest)"
        )


# ---------------------------------------------------------------- what this machine can open

PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
TW_REUSE = Path("/proc/sys/net/ipv4/tcp_tw_reuse")
# Descriptors a load tool holds besides its connections: stdio, epoll and timer fds,
# per-thread pipes, its script and summary files.
TOOL_SPARE_FILES = 64
# Local ports taken by other sockets in the range: the listening app and proxy (their
# free ports come from the same range), the harness's own checks.
SPARE_PORTS = 64


def _port_range(path: Path = PORT_RANGE) -> tuple[int, int]:
    low, high = (int(x) for x in path.read_text().split())
    return low, high


def max_connections(tool: str | None = None) -> tuple[int, str]:
    """The most connections to one address `tool` can open here, and what sets that number.

    Two limits: the tool's open files (one descriptor per connection; the soft limit,
    or the hard one for tools that raise it, less TOOL_SPARE_FILES), and the
    ephemeral ports (Linux picks a local port per connection from
    ip_local_port_range, unique per destination address and port, less SPARE_PORTS).
    The warm-up's connections go to the same address and close just before the
    measured load: unless tcp_tw_reuse lets a new connection take a port in
    TIME_WAIT (1, or 2 = loopback only, Linux's default), they hold their ports for
    60 s and only half the range is left.
    A proxy's connections to the app go to another address (the app's port) and
    draw from the range separately, so they do not lower this number; over a Unix
    socket they take no port at all.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    raises = tool in tools_with("raises_nofile")  # load.py ToolTraits
    files = hard if raises else soft
    files_what = f"open-file {'hard' if raises else 'soft'} limit (RLIMIT_NOFILE) {files}"
    by_files = math.inf if files == resource.RLIM_INFINITY else files - TOOL_SPARE_FILES
    low, high = _port_range()
    ports = high - low + 1
    try:
        reuse = int(TW_REUSE.read_text())
    except (OSError, ValueError):
        reuse = 2
    by_ports = ports - SPARE_PORTS
    ports_what = f"ephemeral ports {low}-{high} ({ports})"
    if reuse == 0:
        by_ports //= 2
        ports_what += ", half of them as tcp_tw_reuse is 0"
    if by_files <= by_ports:
        return int(by_files), f"{files_what} less {TOOL_SPARE_FILES} spare"
    return max(0, by_ports), f"{ports_what} less {SPARE_PORTS} spare"


def check_connections(concurrency: int, tool: str | None = None) -> None:
    """BadInput (one line) when `concurrency` connections cannot be opened from this machine.

    tool: the load tool's name (its open-file limit may differ); None: the strictest.
    """
    allowed, why = max_connections(tool)
    if concurrency > allowed:
        who = tool or "a load tool"
        raise BadInput(
            f"concurrency {concurrency}: {who} can open at most {allowed} connections to one "
            f"address here ({why}); use concurrency <= {allowed}"
        )
