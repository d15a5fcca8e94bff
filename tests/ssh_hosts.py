"""Two hosts over ssh for the ssh topology's tests (tests/test_ssh.py): sshd as root in each of
two network namespaces the netns module made, with host keys in a known_hosts made here and an
Ansible inventory naming both; what the harness left running on them (left); and a study in a
harness process of its own, under load on the hosts (study_under_load)."""

import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import interruptible
from hostbench.harness.launch import netns
from hostbench.harness.launch.processes import ManagedProcess

SSHD = Path("/usr/sbin/sshd")
_missing = [t for t in ("ssh-keygen", "ansible-inventory") if not shutil.which(t)]
# What the hosts need here: the tests over them skip without it.
NEEDED = [
    pytest.mark.skipif(bool(netns.not_allowed()), reason=netns.not_allowed() or "allowed"),
    pytest.mark.skipif(
        not SSHD.exists() or bool(_missing),
        reason="needs openssh-server and ansible-core (apt-get install)",
    ),
]


def keygen(path: Path) -> str:
    """A new ed25519 key pair at `path` (and path.pub); its public key's line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def sshd(folder: Path, namespace: str, address: str, client_key: str):
    """sshd as root in `namespace` on `address`:22, its config, key and pid file in `folder`."""
    folder.mkdir()
    host_key = keygen(folder / "host_key")
    (folder / "authorized_keys").write_text(client_key + "\n")
    (folder / "sshd_config").write_text(
        textwrap.dedent(f"""\
        ListenAddress {address}
        Port 22
        HostKey {folder / "host_key"}
        PidFile {folder / "sshd.pid"}
        AuthorizedKeysFile {folder / "authorized_keys"}
        UsePAM no
        PermitRootLogin prohibit-password
        StrictModes no
        Subsystem sftp internal-sftp
        """)
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
    proc = ManagedProcess(
        "sshd",
        [SSHD, "-D", "-e", "-f", folder / "sshd_config"],
        folder / "sshd.log",
        netns=namespace,
        ready=lambda: (folder / "sshd.pid").exists(),
    )
    return proc, host_key


def write_inventory(
    path: Path,
    key: Path,
    known: Path,
    server=netns.SERVER_ADDRESS,
    port=22,
    groups=("server", "loadgen"),
) -> Path:
    """An Ansible inventory at `path` naming the server host (at `server`:`port`) and the load
    host, reached as root with `key`, their host keys checked against `known`."""
    hosts = {"server": ("server-host", server), "loadgen": ("loadgen-host", netns.CLIENT_ADDRESS)}
    lines = []
    for group in groups:
        name, address = hosts[group]
        lines += [
            f"[{group}]",
            f"{name} ansible_host={address} ansible_user=root "
            f"ansible_port={port if group == 'server' else 22} "
            f"ansible_ssh_private_key_file={key} "
            f"ansible_ssh_common_args='-o UserKnownHostsFile={known}'",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


@contextmanager
def two_ssh_hosts(tmp: Path):
    """Two namespaces, each with sshd; yields (hosts, inventory, known_hosts, client key)."""
    client_key = tmp / "client_key"
    public = keygen(client_key)
    with netns.two_hosts() as hosts:
        server, server_key = sshd(tmp / "server", hosts.server, hosts.server_address, public)
        loadgen, loadgen_key = sshd(tmp / "loadgen", hosts.client, hosts.client_address, public)
        with server, loadgen:
            known = tmp / "known_hosts"
            known.write_text(
                f"{hosts.server_address} {server_key}\n{hosts.client_address} {loadgen_key}\n"
            )
            inventory = write_inventory(tmp / "inventory.ini", client_key, known)
            yield hosts, inventory, known, client_key


def left(pattern: str) -> list[str]:
    """Processes whose command line holds `pattern`."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return found.stdout.split()


# The load on the loadgen host, not the tool's version check.
LOAD = {"bombardier": "/tmp/hostbench\\..*/bombardier .*http://",
        "k6": "/tmp/hostbench\\..*/k6 run .*script.js"}  # fmt: skip


@contextmanager
def study_under_load(settings: dict, hosts, inventory, tmp_path,
                     tool="bombardier") -> Iterator[subprocess.Popen]:  # fmt: skip
    """A 30 s ssh study of `tool` (on `settings`, a study's) in its own harness process,
    yielded once its load runs; stopped (and killed if need be) when the block ends, so a
    failing test leaves nothing to the next. Its SIGINT is at its default, whatever the shell
    running the tests left it."""
    settings = dict(settings, duration_s=30, inventory=str(inventory), tools=[tool])
    script = textwrap.dedent(f"""
        from hostbench.params import StudyParams
        from hostbench.harness.study import run_study
        params = StudyParams.from_dict({settings!r})
        run_study(params, "ssh", {str(tmp_path)!r}, progress=True)
    """)
    log = tmp_path / "harness.log"
    with log.open("w") as out:
        child = interruptible(
            [*netns.exec_prefix(hosts.client), sys.executable, "-c", script],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        # A wait, not a timing check: a cold or busy machine takes longer to reach the load.
        deadline = time.monotonic() + 300
        while not left(LOAD[tool]):
            said = log.read_text()[-2000:]
            assert child.poll() is None, f"the study ended before its load started:\n{said}"
            assert time.monotonic() < deadline, f"no load after 300 s; the harness said:\n{said}"
            time.sleep(0.2)
        yield child
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
