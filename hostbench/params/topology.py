"""Where a study runs (`topology`): this machine's loopback, two network namespaces, or two
hosts over ssh named by an Ansible inventory (docs/hosts.md); what each of them can run."""

from ..catalog import ModesIn, get_mode
from ..errors import BadInput
from ..load import tools_with

TOPOLOGIES = ("local", "netns", "ssh")
# The modes topology ssh runs: those whose catalog entry says so (read when checked).
SSH_MODES = ModesIn("ssh")


def check_topology(p: dict) -> None:
    """The topology and inventory keys of validated params `p`, against its modes and tools;
    BadInput names the first problem."""
    _netns(p["topology"], p["modes"])
    _inventory(p)


def _inventory(p: dict) -> None:
    """The inventory path: required with topology ssh, refused without it; topology ssh runs
    some modes and tools only."""
    value = p["inventory"]
    if p["topology"] != "ssh":
        if value is not None:
            raise BadInput("params key 'inventory' is for topology ssh; drop it or set topology")
        return
    if not value:
        raise BadInput("topology ssh needs params key 'inventory': the path of an Ansible "
                       "inventory with groups server and loadgen (docs/hosts.md)")  # fmt: skip
    ssh_tools = tools_with("remote")
    for key, names, allowed in (("modes", p["modes"], SSH_MODES), ("tools", p["tools"], ssh_tools)):
        if other := [n for n in names if n not in allowed]:
            raise BadInput(f"topology ssh runs {key} {', '.join(allowed)} only (not "
                           f"{', '.join(other)})")  # fmt: skip
    if p["loadgen_cpus"] is not None:
        raise BadInput("topology ssh: loadgen_cpus pins on one machine; the load tool has "
                       "its own host: drop loadgen_cpus")  # fmt: skip


def _netns(value: str, modes: list[str]) -> None:
    """topology netns launches every server itself: no external mode."""
    external = [m for m in modes if get_mode(m).launch == "external"]
    if value == "netns" and external:
        raise BadInput(
            f"topology netns runs the servers the harness launches; {', '.join(external)} "
            "runs where you started it: use topology local"
        )


def skipped_under(topology: str, overrides: dict) -> str:
    """Why a sub-study with `overrides` is skipped in a study of `topology` ("" when it runs).

    Over ssh a sub-study runs on the same two hosts, unless it is about one machine: one of
    its own topology (two hosts made on this machine, or its loopback), or one that pins the
    load tool to CPUs of the machine the server runs on."""
    if topology != "ssh":
        return ""
    own = overrides.get("topology", "ssh")
    if own != "ssh":
        return (f"skipped over ssh: it is topology {own}, client and server on one machine, "
                "and over ssh the study already runs on two hosts")  # fmt: skip
    if overrides.get("loadgen_cpus") is not None:
        return ("skipped over ssh: it pins the load tool to CPUs of the server's machine "
                "(`loadgen_cpus`), and over ssh the load tool has a host of its own")  # fmt: skip
    return ""
