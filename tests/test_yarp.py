"""The yarp mode end to end: the real YarpProxy (build/yarp) in front of the real test app.

Serving every scenario with checked counts is tests/test_modes.py's (it runs every Linux
mode); here: what the proxy is given, and that nothing outlives success, error or Ctrl-C.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
import yaml

from conftest import interruptible
from hostbench.errors import LaunchFailed, ToolMissing
from hostbench.harness.launch import netns, web
from hostbench.harness.launch.modes import LaunchOptions, launch
from hostbench.harness.launch.tools import find_tool
from hostbench.programs import PROGRAMS

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux modes")


def _settings(path) -> dict:
    """yarp.json's settings: the JSON below its // comment lines."""
    text = path.read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.startswith("//")))


def _alive(pids) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _names(processes) -> set[str]:
    """The names of those still running (a short-lived child may end while we look)."""
    names = set()
    for proc in processes:
        try:
            names.add(proc.name())
        except psutil.NoSuchProcess:
            pass
    return names


def _our_children() -> set[int]:
    return {c.pid for c in psutil.Process().children(recursive=True)}


def test_a_missing_build_is_one_line_naming_make_setup(tmp_path, monkeypatch):
    monkeypatch.setattr(PROGRAMS["yarp"], "ships", tmp_path / "build" / "yarp")
    with pytest.raises(ToolMissing) as err:
        find_tool("YarpProxy")
    message = str(err.value)
    assert message.startswith("YarpProxy not found:") and "`make setup`" in message
    assert "build/yarp/" in message and "\n" not in message


@pytest.mark.live
def test_the_proxy_runs_from_the_config_in_the_run_folder(tmp_path):
    with launch("yarp", tmp_path, LaunchOptions()) as target:
        (proxy,) = target.groups["proxy"]  # its CPU is the proxy group's
        assert psutil.Process(proxy).name() == "YarpProxy"
        assert psutil.Process(proxy).cmdline()[-2:] == ["--config", str(tmp_path / "yarp.json")]
        settings = _settings(tmp_path / "yarp.json")
        assert settings["Kestrel"]["Endpoints"]["http"]["Url"] == target.url
        (cluster,) = settings["ReverseProxy"]["Clusters"].values()
        assert cluster["Destinations"]["app"]["Address"] == target.app_url + "/"
        # Through it, counted once by the app.
        target.reset_server_stats()
        assert target.get("/api/test").status == 200
        assert target.server_stats()["endpoints"]["/api/test"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.log", "yarp.json", "yarp.log"]


@pytest.mark.live
def test_an_error_while_it_runs_stops_app_and_proxy(tmp_path):
    with pytest.raises(RuntimeError, match="a run failed"):
        with launch("yarp", tmp_path, LaunchOptions()) as target:
            pids = [p for group in target.groups.values() for p in group]
            assert len(pids) == 2
            raise RuntimeError("a run failed")
    time.sleep(0.2)
    assert _alive(pids) == []


@pytest.mark.live
def test_a_proxy_that_cannot_start_is_one_line_and_the_app_is_stopped(tmp_path, monkeypatch):
    # The proxy's port is taken: Kestrel in YarpProxy cannot bind it.
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([web.free_port(), taken.getsockname()[1]])  # the app's, then the proxy's
    monkeypatch.setattr(web, "free_port", lambda: next(ports))
    before = _our_children()
    try:
        with pytest.raises(LaunchFailed) as err:
            with launch("yarp", tmp_path, LaunchOptions()):
                pass
    finally:
        taken.close()
    message = str(err.value)
    assert message.startswith("yarp exited with code 1 before it was ready")
    assert "address already in use" in message and "\n" not in message
    assert _alive(_our_children() - before) == []


@pytest.mark.live
def test_a_missing_build_stops_the_app_it_started(tmp_path, monkeypatch):
    monkeypatch.setattr(PROGRAMS["yarp"], "ships", tmp_path / "build" / "yarp")
    before = _our_children()
    with pytest.raises(ToolMissing, match="`make setup`"):
        with launch("yarp", tmp_path / "run", LaunchOptions()):
            pass
    assert _alive(_our_children() - before) == []


@pytest.mark.live
@pytest.mark.parametrize(
    "config, says",
    [
        ('{"Kestrel": {"Endpoints": {"http": {"Url": "http://0.0.0.0:5999"}}}}',
         "or ones in 198.18.0.0/15 (two hosts on one machine); found http://0.0.0.0:5999"),
        ('{"Kestrel": {"Endpoints": {"http": {"Url": "http://198.20.0.1:5999"}}}}',
         "found http://198.20.0.1:5999"),
        ("{}", "must give loopback URLs (http://127.0.0.1:PORT) or ones in 198.18.0.0/15"),
        ('{"Kestrel": ', "is not valid JSON"),
    ],
)  # fmt: skip
def test_the_proxy_refuses_a_config_that_would_listen_beyond_this_machine(tmp_path, config, says):
    path = tmp_path / "yarp.json"
    path.write_text(config)
    done = subprocess.run(
        [find_tool("YarpProxy"), "--config", path], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"YarpProxy: {path}") and says in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.live
def test_ctrl_c_during_a_run_leaves_nothing_running(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(
        yaml.safe_dump({
            "modes": ["yarp"], "scenarios": ["text"], "tools": ["bombardier"],
            "concurrency": [2], "duration_s": 10, "warmup_s": 0, "repetitions": 1,
            "min_duration_s": 1, "quiet_max_cores": None, "require_steady": False,
        })
    )  # fmt: skip
    runs = tmp_path / "runs"
    cli = interruptible(
        [sys.executable, "-m", "hostbench", "run", str(params), "--run-id", "s",
         "--runs-dir", str(runs), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    children = []
    while not {"TestApp", "YarpProxy", "bombardier"} <= _names(children):  # loading through it
        assert cli.poll() is None, cli.communicate()
        assert time.monotonic() < deadline, _names(children)
        time.sleep(0.1)
        children = psutil.Process(cli.pid).children(recursive=True)
    cli.send_signal(signal.SIGINT)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 130, err
    time.sleep(0.5)
    assert _alive([c.pid for c in children]) == []
    (config,) = runs.glob("s/launch__r1/*/yarp.json")  # the launch keeps what the proxy ran from
    assert _settings(config)["ReverseProxy"]["Routes"]


@pytest.mark.live
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_with_two_hosts_it_listens_on_the_server_namespaces_address(tmp_path):
    with netns.two_hosts() as hosts:
        with launch("yarp", tmp_path, LaunchOptions(), hosts=hosts) as target:
            assert target.url.startswith(f"http://{netns.SERVER_ADDRESS}:")
            # From the client namespace, over the veth, to the app on the server's loopback.
            response = netns.call_in(hosts.client, web.get, target.url + "/text")
            assert response.status == 200
            assert target.server_stats()["endpoints"]["/text"] == 1
            url = _settings(tmp_path / "yarp.json")["Kestrel"]["Endpoints"]["http"]["Url"]
            assert url == target.url
