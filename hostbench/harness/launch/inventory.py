"""The two hosts of topology ssh, from an inventory in Ansible's format (read with
`ansible-inventory --list`): its `server` and `loadgen` groups, one host each, and how to reach
each (address, user, port, key, known_hosts)."""

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import BadInput

ROLES = ("server", "loadgen")


@dataclass(frozen=True)
class Host:
    """One inventory host and how to reach it."""

    role: str
    name: str
    address: str
    user: str | None = None
    port: int = 22
    key_file: str | None = None
    known_hosts: str | None = None  # a UserKnownHostsFile named in ansible_ssh_common_args

    def label(self) -> str:
        return f"{self.role} host {self.name} ({self.address}:{self.port})"


def _known_hosts(common_args: str) -> str | None:
    words = shlex.split(common_args or "")
    for i, word in enumerate(words):
        option = word.removeprefix("-o") if word.startswith("-o") and word != "-o" else None
        if word == "-o" and i + 1 < len(words):
            option = words[i + 1]
        if option and option.strip().lower().startswith("userknownhostsfile"):
            return option.split("=", 1)[1].strip() if "=" in option else option.split()[1]
    return None


def read_inventory(path: str | Path) -> dict[str, Host]:
    """The `server` and `loadgen` hosts of an Ansible inventory; BadInput (one line) if not."""
    if not shutil.which("ansible-inventory"):
        raise BadInput(
            "topology ssh reads the inventory with ansible-inventory: apt-get install ansible-core"
        )
    if not Path(path).is_file():
        raise BadInput(f"inventory {path}: no such file; name an Ansible inventory (docs/hosts.md)")
    done = subprocess.run(
        ["ansible-inventory", "-i", str(path), "--list"], capture_output=True, text=True, timeout=60
    )
    try:
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        listed = None
    if not isinstance(listed, dict):
        why = (done.stderr.strip().splitlines() or ["not JSON"])[-1]
        raise BadInput(f"inventory {path} cannot be read by ansible-inventory: {why}")
    hostvars = listed.get("_meta", {}).get("hostvars", {})
    hosts = {}
    for role in ROLES:
        members = listed.get(role, {}).get("hosts", [])
        if len(members) != 1:
            found = "none" if not members else ", ".join(members)
            raise BadInput(
                f"inventory {path}: group {role!r} needs exactly one host (has "
                f"{found}); add a [{role}] group with one host"
            )
        name = members[0]
        v = hostvars.get(name, {})
        hosts[role] = Host(
            role,
            name,
            str(v.get("ansible_host", name)),
            v.get("ansible_user"),
            int(v.get("ansible_port", 22)),
            v.get("ansible_ssh_private_key_file"),
            _known_hosts(v.get("ansible_ssh_common_args", "")),
        )
    if hosts["server"].address == hosts["loadgen"].address:
        raise BadInput(
            f"inventory {path}: server and loadgen are the same address "
            f"{hosts['server'].address}; topology ssh needs two hosts"
        )
    return hosts
