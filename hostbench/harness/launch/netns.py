"""Two hosts on one machine: a client and a server network namespace joined by a veth pair.

The load generator runs in the client namespace, the app and proxy in the server's, so
requests cross a network device (the veth pair) instead of the loopback shortcut. The
addresses come from 198.18.0.0/15, the range set aside for benchmarking (RFC 2544).
Neither namespace gets a default route, so nothing sent in them can leave the machine;
before any load the route from the client to the server's address is checked to be the
veth. Everything is removed on success, error and Ctrl-C; namespaces left by a killed run
(their creator's pid gone) are removed at the next start.
"""

import ctypes
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...errors import BadInput, HostbenchError

NETNS_DIR = Path("/run/netns")  # where `ip netns add` mounts a named namespace
PREFIX = "hostbench"  # every namespace this module makes: hostbench<pid>-server|client
SERVER_ADDRESS = "198.18.0.1"
CLIENT_ADDRESS = "198.18.0.2"
PREFIX_LENGTH = 30  # two hosts, nothing else on the link
_NAME = re.compile(rf"^{PREFIX}(\d+)-(server|client|probe)$")
_CLONE_NEWNET = 0x40000000


@dataclass(frozen=True)
class TwoHosts:
    """The namespaces, their addresses and the devices between them."""

    server: str
    client: str
    server_address: str = SERVER_ADDRESS
    client_address: str = CLIENT_ADDRESS

    @property
    def server_device(self) -> str:
        return _device(self.server)

    @property
    def client_device(self) -> str:
        return _device(self.client)

    def path(self) -> str:
        """What a request crosses, for the rows: client veth -> server veth."""
        return f"veth {self.client_device} -> {self.server_device}"


def _device(namespace: str) -> str:
    # Interface names are at most 15 bytes: "hb<pid>s" / "hb<pid>c".
    pid, role = _NAME.match(namespace).groups()
    return f"hb{pid}{role[0]}"


def _ip(*args: str, check: bool = True, netns: str | None = None) -> subprocess.CompletedProcess:
    """`ip ARGS`, inside `netns` if given (entered with nsenter: see exec_prefix)."""
    argv = [*exec_prefix(netns), "ip", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        where = f" in {netns}" if netns else ""
        why = done.stderr.strip() or done.returncode
        raise HostbenchError(f"ip {' '.join(args)}{where}: {why}")
    return done


def not_allowed() -> str:
    """Why namespaces cannot be made here, in one line; "" when they can."""
    for tool, package in (("ip", "iproute2"), ("nsenter", "util-linux")):
        if not shutil.which(tool):
            return f"topology netns needs {tool} (Debian: apt-get install {package})"
    if os.geteuid() != 0 and not _has_net_admin():
        return (
            "topology netns needs root or CAP_NET_ADMIN to make network namespaces; "
            "run as root, or use topology: local"
        )
    return _probe()


@cache
def _probe() -> str:
    # Rights are not the whole story (a container may lack the mounts `ip netns` needs):
    # make a namespace, enter it, remove it, once per process.
    name = f"{PREFIX}{os.getpid()}-probe"
    entered = _ip("netns", "add", name, check=False)
    try:
        if entered.returncode == 0:
            entered = _ip("link", "show", "lo", check=False, netns=name)
    finally:
        _ip("netns", "delete", name, check=False)
    if entered.returncode != 0:
        why = (entered.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"cannot make and enter a network namespace here ({why}); use topology: local"
    return ""


def check_allowed() -> None:
    """One line, before anything starts, when namespaces cannot be made here."""
    if reason := not_allowed():
        raise BadInput(reason)


def _has_net_admin() -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << 12))  # CAP_NET_ADMIN is bit 12
    return False


def existing() -> list[str]:
    """This module's namespaces that exist now (any run's)."""
    listed = _ip("netns", "list", check=False).stdout.splitlines()
    names = [line.split()[0] for line in listed if line.strip()]
    return [n for n in names if _NAME.match(n)]


def remove_stale() -> list[str]:
    """Remove the namespaces of runs whose process is gone (a killed run); return them."""
    removed = []
    for name in existing():
        pid = int(_NAME.match(name).group(1))
        if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
            _ip("netns", "delete", name, check=False)
            removed.append(name)
    return removed


@contextmanager
def two_hosts() -> Iterator[TwoHosts]:
    """Make the two namespaces and the veth pair; remove them however the block ends."""
    check_allowed()
    remove_stale()
    hosts = TwoHosts(f"{PREFIX}{os.getpid()}-server", f"{PREFIX}{os.getpid()}-client")
    try:
        for name in (hosts.server, hosts.client):
            _ip("netns", "add", name)
            _ip("link", "set", "lo", "up", netns=name)  # the app and proxy talk over it
        _ip("link", "add", hosts.server_device, "netns", hosts.server,
            "type", "veth", "peer", "name", hosts.client_device, "netns", hosts.client)  # fmt: skip
        for name, device, address in (
            (hosts.server, hosts.server_device, hosts.server_address),
            (hosts.client, hosts.client_device, hosts.client_address),
        ):
            _ip("addr", "add", f"{address}/{PREFIX_LENGTH}", "dev", device, netns=name)
            _ip("link", "set", device, "up", netns=name)
        check_route(hosts)
        yield hosts
    finally:
        for name in (hosts.client, hosts.server):  # deleting a namespace deletes its veth end
            _ip("netns", "delete", name, check=False)


def check_route(hosts: TwoHosts, address: str | None = None) -> None:
    """Refuse unless the client reaches `address` (default: the server's) over the veth, and
    neither namespace has a default route (nothing can leave the machine)."""
    address = address or hosts.server_address
    route = _ip("route", "get", address, check=False, netns=hosts.client)
    if route.returncode != 0 or f"dev {hosts.client_device}" not in route.stdout:
        found = route.stdout.strip() or route.stderr.strip()
        raise BadInput(
            f"the client namespace does not reach {address} over {hosts.client_device} "
            f"({found}); load goes only to the server namespace's address"
        )
    for name in (hosts.server, hosts.client):
        routes = _ip("route", "show", "default", netns=name).stdout.strip()
        if routes:
            raise BadInput(f"namespace {name} has a default route ({routes}); refusing to load")


def exec_prefix(namespace: str | None) -> list[str]:
    """argv prefix that runs a program in `namespace`: util-linux's nsenter joins its network
    namespace and execs the program (same pid). Not `ip netns exec`, which also makes a mount
    namespace and fails where / is no mount point (a chroot, a container)."""
    return ["nsenter", f"--net={NETNS_DIR / namespace}", "--"] if namespace else []


def call_in(namespace: str | None, fn: Callable, *args, **kwargs):
    """fn(*args, **kwargs) in `namespace`: the harness's own probes (readiness, the app's
    counters) open their sockets there. A network namespace is per thread, so a short-lived
    thread enters it and the harness's other threads stay where they are."""
    if namespace is None:
        return fn(*args, **kwargs)
    outcome: dict = {}

    def run():
        try:
            fd = os.open(NETNS_DIR / namespace, os.O_RDONLY)
            try:
                if _libc().setns(fd, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {namespace}")
            finally:
                os.close(fd)
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e

    thread = threading.Thread(target=run, name=f"netns-{namespace}")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _libc():
    return ctypes.CDLL(None, use_errno=True)
