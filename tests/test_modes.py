"""Every Linux hosting mode, launched for real: scenarios through it, load through it, cleanup."""

import platform

import psutil
import pytest

from hostbench.catalog import (
    MODES,
    SCENARIOS,
    get_mode,
    get_scenario,
    linux_modes,
    runnable_here,
)
from hostbench.errors import BadInput
from hostbench.harness.launch.modes import LaunchOptions, check, launch
from hostbench.harness.measure.checks import validate
from hostbench.harness.measure.loadgen import get_generator
from hostbench.load import Load

pytestmark = pytest.mark.skipif(platform.system() != "Linux", reason="Linux modes")


def _alive(pids):
    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


@pytest.mark.live
@pytest.mark.parametrize("mode", linux_modes())
def test_mode_serves_every_scenario_and_carries_load(mode, tmp_path):
    with launch(mode, tmp_path, LaunchOptions()) as target:
        launched = [p for pids in target.groups.values() for p in pids]
        trees = launched + [
            c.pid for p in launched for c in psutil.Process(p).children(recursive=True)
        ]
        assert ("proxy" in target.groups) == (MODES[mode].launch == "proxy")
        for name in MODES[mode].serves or SCENARIOS:
            scenario = get_scenario(name)
            validate(scenario, target.get(scenario.path))  # same body shape in every mode
        scenario = get_scenario("values" if MODES[mode].serves else "text")
        for tool in ("k6", "bombardier"):  # 1 s each: the load it carries, not a window's rate
            target.reset_server_stats()
            load = Load(tool, 4, 1, path=scenario.path, base_url=target.url)
            result = get_generator(tool).run(load, tmp_path / tool)
            served = target.server_stats()["endpoints"][scenario.stats_key]
            assert result.rps > 0 and result.errors == 0 and result.non_2xx == 0, result
            assert abs(result.requests - served) <= 0.02 * served, (tool, result.requests, served)
    assert _alive(trees) == [], f"{mode} left processes running"


@pytest.mark.live
@pytest.mark.parametrize("mode", ["httpsys", "iis-inprocess", "iis-outofprocess"])
def test_windows_only_modes_are_refused_here_with_one_line(mode):
    with pytest.raises(BadInput) as err:
        check(MODES[mode], LaunchOptions(url="http://127.0.0.1:8080"))
    message = str(err.value)
    assert "runs only on Windows" in message and "modes that run here: kestrel" in message
    assert "\n" not in message
    assert mode not in runnable_here()


@pytest.mark.live
def test_external_mode_measures_a_server_started_elsewhere(tmp_path):
    # The "user's server" here is the test app launched by the kestrel mode.
    with launch("kestrel", tmp_path / "app", LaunchOptions()) as app:
        opts = LaunchOptions(url=app.url, watch=["TestApp"])
        with launch("external", tmp_path, opts) as target:
            # (other TestApps on this machine would be watched too: names are all we have)
            assert app.groups["server"][0] in target.groups["server"]
            assert target.server_stats() is not None  # it is our app: counts can be checked
            validate(get_scenario("json"), target.get("/json"))
        assert psutil.pid_exists(app.groups["server"][0])  # external never stops it


def test_external_mode_refuses_remote_targets_without_the_flag():
    with pytest.raises(BadInput, match="not loopback"):
        check(get_mode("external"), LaunchOptions(url="http://192.0.2.1/"))
    check(get_mode("external"), LaunchOptions(url="http://192.0.2.1/", allow_remote=True))


def test_external_mode_refuses_https_it_would_check_over_plain_http():
    with pytest.raises(BadInput, match="only http:// URLs"):
        check(get_mode("external"), LaunchOptions(url="https://127.0.0.1:8443/"))


def test_unknown_mode():
    with pytest.raises(BadInput, match="unknown mode 'iis'; allowed: kestrel, nginx"):
        get_mode("iis")


@pytest.mark.live
def test_nginx_pool_size_and_worker_count_from_the_options(tmp_path):
    """nginx_keepalive_pool and nginx_workers shape the real nginx: its config, its worker
    processes, and how many idle connections to the app it keeps after a load."""
    from concurrent.futures import ThreadPoolExecutor

    opts = LaunchOptions(program_settings={"nginx_keepalive_pool": 2, "nginx_workers": 1})
    with launch("nginx-keepalive", tmp_path, opts) as target:
        conf = (tmp_path / "nginx.conf").read_text()
        assert "worker_processes 1;" in conf and "keepalive 2;" in conf
        master = psutil.Process(target.groups["proxy"][0])
        workers = master.children()
        assert len(workers) == 1
        with ThreadPoolExecutor(8) as pool:  # 8 requests at a time: more than the pool keeps
            statuses = list(pool.map(lambda _: target.get("/text").status, range(400)))
        assert set(statuses) == {200}
        app_port = int(target.app_url.rpartition(":")[2])
        idle = [
            c
            for c in psutil.net_connections(kind="tcp")
            if c.pid == workers[0].pid
            and c.raddr
            and c.raddr.port == app_port
            and c.status == psutil.CONN_ESTABLISHED
        ]
        assert 1 <= len(idle) <= 2
