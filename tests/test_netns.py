"""Two hosts on one machine (harness/netns.py): made, isolated, checked and always removed."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hostbench.errors import BadInput
from hostbench.harness import httpclient, netns

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]


def _serve(namespace: str) -> subprocess.Popen:
    """A tiny HTTP server on every address of `namespace`, port 8080."""
    server = subprocess.Popen(
        [*netns.exec_prefix(namespace), sys.executable, "-m", "http.server", "8080"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
    )  # fmt: skip
    for _ in range(100):
        if netns.call_in(namespace, httpclient.answers_ok, "http://127.0.0.1:8080/"):
            return server
        time.sleep(0.1)
    server.kill()
    raise AssertionError("the server in the namespace never answered")


def _curl(namespace: str, url: str) -> str:
    done = subprocess.run(
        [*netns.exec_prefix(namespace), "curl", "-s", "-m", "2", "-o", "/dev/null",
         "-w", "%{http_code}", url],
        capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout


def test_the_client_reaches_the_server_over_the_veth_and_nothing_else():
    with netns.two_hosts() as hosts:
        assert set(netns.existing()) >= {hosts.server, hosts.client}
        server = _serve(hosts.server)
        try:
            assert _curl(hosts.client, f"http://{hosts.server_address}:8080/") == "200"
            # No default route: an address outside the machine is unreachable from the client,
            # and the harness's own namespace cannot reach the server's address either.
            assert _curl(hosts.client, "http://192.0.2.1:8080/") == "000"
            assert not httpclient.answers_ok(f"http://{hosts.server_address}:8080/")
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


def test_a_killed_run_leaves_namespaces_that_the_next_start_removes(tmp_path):
    script = textwrap.dedent("""
        import sys, time
        from hostbench.harness import netns
        with netns.two_hosts() as hosts:
            print(hosts.server, hosts.client, flush=True)
            time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    left = child.stdout.readline().split()
    child.send_signal(signal.SIGKILL)  # no finally runs: the namespaces stay
    child.wait()
    assert set(left) <= set(netns.existing())
    assert set(netns.remove_stale()) >= set(left)
    assert not set(left) & set(netns.existing())


def test_sigint_removes_everything():
    script = textwrap.dedent("""
        import time
        from hostbench.harness import netns
        with netns.two_hosts() as hosts:
            print(hosts.server, hosts.client, flush=True)
            time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    made = child.stdout.readline().split()
    child.send_signal(signal.SIGINT)
    child.wait(timeout=30)
    assert made and not set(made) & set(netns.existing())
