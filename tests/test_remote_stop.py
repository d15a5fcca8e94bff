"""A stop on ssh hosts (harness/launch/remote.py) against a host whose ssh never answers: it
returns by its deadline, whatever the host does, and says in one line which processes it could
not confirm stopped; and the helper's serving session, which every call goes through, given up
by its deadline when the host stalls. (On real hosts, with real sshd: tests/test_ssh.py.)"""

import base64
import io
import json
import os
import subprocess
import sys
import tarfile
import time

import pytest

from hostbench.harness.launch import remote, remote_helper
from hostbench.harness.launch.inventory import Host
from hostbench.harness.launch.remote_process import STOP_MARGIN_S, RemoteProcess

STALL_S = 600  # how long the host takes to answer: never, for the test


@pytest.fixture
def stalled_ssh(tmp_path, monkeypatch):
    """`ssh` first on PATH (where remote.py finds it): a client whose host never answers,
    noting each call in the file it yields."""
    calls = tmp_path / "ssh-calls.txt"
    script = tmp_path / "bin" / "ssh"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec sleep {STALL_S}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    return calls


def _connection(role: str, address: str, tmp_path) -> remote.Connection:
    conn = remote.Connection(Host(role, f"{role}-host", address), tmp_path)
    conn.folder_root = "/tmp/hostbench.stalled"  # as open() made it, before the host stalled
    return conn


def _running(conn, name: str, group: int, tmp_path) -> RemoteProcess:
    """A process the host said it started, in process group `group`."""
    proc = conn.process(name, ["sleep", "600"], tmp_path / f"{name}.log", grace_s=1.0)
    proc.started_as(group, group + 1)  # what the host answered to `start`
    return proc


@pytest.mark.live  # runs the stalling `ssh` script
def test_a_blocks_stop_returns_by_its_deadline_and_names_what_it_could_not_confirm(
    tmp_path, stalled_ssh
):
    server = _connection("server", "192.0.2.1", tmp_path)
    hosts = remote.SshHosts(server, _connection("loadgen", "192.0.2.2", tmp_path))
    procs = [_running(server, "TestApp", 4242, tmp_path), _running(server, "nginx", 4250, tmp_path)]
    said = []
    t0 = time.monotonic()
    with remote.StopTogether(hosts, said.append) as block:
        for proc in procs:  # as a block's launches stop their processes when it closes
            block.callback(proc.stop)
    took = time.monotonic() - t0
    assert took < STALL_S / 10  # it did not wait for the host
    # One round trip for both, to the server host only (the load host had nothing to stop).
    (call,) = stalled_ssh.read_text().splitlines()
    assert "192.0.2.1" in call and f"helper.py stop {server.folder_root}" in call
    assert all(proc.key in call for proc in procs)
    deadline_s = max(p.grace_s for p in procs) + STOP_MARGIN_S
    assert said == [  # in the order the block stops them, the last started first
        f"server host server-host (192.0.2.1:22): not confirmed stopped (no answer in "
        f"{deadline_s:.0f} s): nginx (pid 4251, group 4250), TestApp (pid 4243, group 4242); "
        "its keeper kills them when the harness disconnects"
    ]
    # Never stopped twice: closing the connection asks the host nothing more about them.
    assert all(proc.group is None for proc in procs)
    server.stop_all(procs)
    assert len(stalled_ssh.read_text().splitlines()) == 1


@pytest.mark.live  # runs the stalling `ssh` script
def test_closing_a_connection_to_a_stalled_host_ends_each_step_by_its_deadline(
    tmp_path, stalled_ssh
):
    conn = _connection("server", "192.0.2.1", tmp_path)
    proc = _running(conn, "TestApp", 4242, tmp_path)
    said = []
    conn.stop_all([proc], said.append)
    assert len(said) == 1 and "TestApp (pid 4243, group 4242)" in said[0]
    t0 = time.monotonic()
    conn.close()  # removing its folder there: no answer
    assert time.monotonic() - t0 < STALL_S / 10
    called = stalled_ssh.read_text().splitlines()
    assert len(called) == 2 and "rm -rf /tmp/hostbench.stalled" in called[1]


@pytest.mark.live  # runs the stalling `ssh` script
def test_a_serving_session_that_stalls_is_given_up_by_the_calls_deadline(tmp_path, stalled_ssh):
    conn = _connection("server", "192.0.2.1", tmp_path)
    conn.serve()  # as open() starts it; then the host stalls
    proc = _running(conn, "TestApp", 4242, tmp_path)
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        conn.helper("status", conn.folder_root, proc.key, timeout=1.0)
    assert time.monotonic() - t0 < 3
    # Given up: no late answer can answer another question; the stop is a call of its own,
    # and still returns by its deadline.
    assert not conn.serving
    said = []
    conn.stop_all([proc], said.append)
    assert time.monotonic() - t0 < STALL_S / 10 and "not confirmed stopped" in said[0]
    called = stalled_ssh.read_text().splitlines()
    assert "helper.py serve" in called[0] and f"helper.py stop {conn.folder_root}" in called[1]


@pytest.mark.live  # runs the helper and a program it starts
def test_the_serving_helper_answers_each_line_and_survives_a_bad_one(tmp_path):
    # The protocol alone, here (over ssh in tests/test_ssh.py): one JSON list a line in, one
    # JSON answer a line out, in order, until its input ends.
    server = subprocess.Popen([sys.executable, remote_helper.__file__, "serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip

    def ask(*args):
        server.stdin.write(json.dumps([str(a) for a in args]) + "\n")
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    started = ask("start", tmp_path, "p", "sh", "-c", "echo hello; exec sleep 60")
    assert started["group"] > 0 and started["pid"] > 0
    assert ask("status", tmp_path, "p") == {"code": None}
    assert "failed" in ask("no-such-command")  # said, and the session goes on
    assert ask("port", "127.0.0.1")["port"] > 0
    assert ask("mkdir", tmp_path / "a" / "b", tmp_path / "a") == {"made": 2}
    assert (tmp_path / "a" / "b").is_dir()
    assert (
        ask("which", "sh")["path"].endswith("/sh") and ask("which", "no-such-tool")["path"] is None
    )
    stopped = ask("stop", tmp_path, 1.0, "p")
    assert stopped["gone"] == ["p"]  # its wrapper with it: no exit code written
    packed = base64.b64decode(ask("pack", tmp_path / "p.out", tmp_path / "absent")["tar"])
    with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
        assert tar.getnames() == ["0"] and tar.extractfile("0").read() == b"hello\n"
    server.stdin.close()
    assert server.wait(timeout=5) == 0
    server.stdout.close()
