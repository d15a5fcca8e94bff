"""Two hosts on one machine (harness/launch/netns.py): made, isolated, checked and always removed;
a study measured across them."""

import csv
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import SHORT_RUNS, interruptible
from hostbench.errors import BadInput
from hostbench.harness.launch import netns, web
from hostbench.harness.study import run_study
from hostbench.params import SSH_MODES, StudyParams

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(bool(netns.not_allowed()), reason=netns.not_allowed() or "allowed"),
]


def _serve(namespace: str) -> subprocess.Popen:
    """A tiny HTTP server on every address of `namespace`, port 8080."""
    server = subprocess.Popen(
        [*netns.exec_prefix(namespace), sys.executable, "-m", "http.server", "8080"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
    )  # fmt: skip
    for _ in range(100):
        if netns.call_in(namespace, web.answers_ok, "http://127.0.0.1:8080/"):
            return server
        time.sleep(0.1)
    server.kill()
    raise AssertionError("the server in the namespace never answered")


def _status(namespace: str, url: str) -> str:
    """The HTTP status a GET from inside `namespace` gets, "000" when nothing answers."""
    try:
        return str(netns.call_in(namespace, web.get, url, timeout=2).status)
    except OSError:
        return "000"


def test_the_client_reaches_the_server_over_the_veth_and_nothing_else():
    with netns.two_hosts() as hosts:
        assert set(netns.existing()) >= {hosts.server, hosts.client}
        server = _serve(hosts.server)
        try:
            assert _status(hosts.client, f"http://{hosts.server_address}:8080/") == "200"
            # No default route: an address outside the machine is unreachable from the client,
            # and the harness's own namespace cannot reach the server's address either.
            assert _status(hosts.client, "http://192.0.2.1:8080/") == "000"
            assert not web.answers_ok(f"http://{hosts.server_address}:8080/")
        finally:
            server.terminate()
            server.wait()
    assert not {hosts.server, hosts.client} & set(netns.existing())


def test_the_route_check_refuses_an_address_that_is_not_the_servers():
    with netns.two_hosts() as hosts:
        with pytest.raises(BadInput, match="does not reach 10.1.2.3 over"):
            netns.check_route(hosts, "10.1.2.3")
    assert not netns.existing() or hosts.server not in netns.existing()


def test_an_error_inside_removes_everything():
    with pytest.raises(RuntimeError, match="boom"):
        with netns.two_hosts() as hosts:
            raise RuntimeError("boom")
    assert not {hosts.server, hosts.client} & set(netns.existing())


def _holding_two_hosts() -> tuple[subprocess.Popen, list[str]]:
    """A harness process inside two_hosts(), and the namespaces it made."""
    script = textwrap.dedent("""
        import time
        from hostbench.harness.launch import netns
        with netns.two_hosts() as hosts:
            print(hosts.server, hosts.client, flush=True)
            time.sleep(60)
    """)
    child = interruptible([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    return child, child.stdout.readline().split()


def test_a_killed_run_leaves_namespaces_that_the_next_start_removes():
    child, left = _holding_two_hosts()
    child.send_signal(signal.SIGKILL)  # no finally runs: the namespaces stay
    child.wait()
    assert left and set(left) <= set(netns.existing())
    assert set(netns.remove_stale()) >= set(left)
    assert not set(left) & set(netns.existing())


def test_sigint_removes_everything():
    child, made = _holding_two_hosts()
    child.send_signal(signal.SIGINT)
    child.wait(timeout=30)
    assert made and not set(made) & set(netns.existing())


def test_a_study_under_topology_netns_loads_the_server_namespace_over_the_veth(tmp_path):
    params = StudyParams.from_dict(
        {"modes": ["kestrel", "nginx"], "scenarios": ["text"], "tools": ["bombardier"],
         "concurrency": [4], "duration_s": 1, "warmup_s": 0, "repetitions": 1,
         "topology": "netns", **SHORT_RUNS}
    )  # fmt: skip
    results = run_study(params, "two-hosts", tmp_path, progress=False)
    rows = list(csv.DictReader(results.open()))
    assert {r["mode"] for r in rows} == {"kestrel", "nginx"}
    for r in rows:
        assert r["valid"] == "True" and r["topology"] == "netns"
        assert r["request_path"].startswith("veth hb") and float(r["rtt_ms"]) > 0
        # Every request the tool completed was counted by the app in the server namespace.
        assert int(r["requests"]) == int(r["server_requests"]) > 0
        command = (tmp_path / "two-hosts" / r["run_key"] / "load" / "command.txt").read_text()
        assert f"http://{netns.SERVER_ADDRESS}:" in command
    assert not [n for n in netns.existing() if n.startswith(f"{netns.PREFIX}{os.getpid()}-")]


def test_topology_is_checked_before_anything_starts():
    base = {"modes": ["kestrel"], "scenarios": ["text"], "tools": ["bombardier"],
            "concurrency": [4], "duration_s": 5, "warmup_s": 0, "repetitions": 1}  # fmt: skip
    with pytest.raises(BadInput, match="topology ssh needs params key 'inventory'"):
        StudyParams.from_dict({**base, "topology": "ssh"})
    every = re.escape(", ".join(SSH_MODES))  # the catalog's: every mode that runs over ssh
    with pytest.raises(BadInput, match=rf"topology ssh runs modes {every} only \(not external\)"):
        StudyParams.from_dict({**base, "modes": ["external"], "url": "http://127.0.0.1:1/",
                               "topology": "ssh", "inventory": "i"})  # fmt: skip
    with pytest.raises(BadInput, match="'inventory' is for topology ssh"):
        StudyParams.from_dict({**base, "inventory": "i"})
    with pytest.raises(BadInput, match="topology netns runs the servers the harness launches"):
        StudyParams.from_dict(
            {**base, "modes": ["external"], "url": "http://127.0.0.1:1/", "topology": "netns"}
        )
