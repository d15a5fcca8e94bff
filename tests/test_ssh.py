"""Topology ssh (harness/launch/remote.py) against two real OpenSSH servers: sshd in each of two
network namespaces the netns module made, host keys checked against a known_hosts made
here, a study measured across them; nothing left after success, error and Ctrl-C."""

import csv
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import SHORT_RUNS
from hostbench.catalog import get_mode
from hostbench.errors import BadInput
from hostbench.harness.launch import netns, remote
from hostbench.harness.measure import quiet
from hostbench.harness.measure.interleave import COUNT_TOLERANCE_PCT, SCHEDULE_FILE
from hostbench.harness.study import run_study
from hostbench.load import TOOLS
from hostbench.params import PARAMS_FILE, SKIPPED_SUB_STUDIES, SSH_MODES, StudyParams, load_yaml
from hostbench.reproduce import DONE_FILE
from hostbench.studies import STUDIES
from tests.ssh_hosts import LOAD, NEEDED, left, study_under_load, two_ssh_hosts, write_inventory

pytestmark = [pytest.mark.live, *NEEDED]
BASE = {
    "modes": ["kestrel"],
    "scenarios": ["text"],
    "tools": ["bombardier"],
    "concurrency": [4],
    "duration_s": 5,
    "warmup_s": 0,
    "repetitions": 1,
    **SHORT_RUNS,
    "topology": "ssh",
}


def _ssh_study(tmp_path, hosts, inventory, **settings) -> list[dict]:
    """A study over ssh with `settings`, the harness run from the client namespace (as it would
    reach the hosts over a LAN); its rows, each checked: valid, measured across the hosts,
    every request the tool completed counted by the app on the server host."""
    params = StudyParams.from_dict({**BASE, "inventory": str(inventory), **settings})
    results = netns.call_in(hosts.client, run_study, params, "ssh", tmp_path, progress=False)
    rows = list(csv.DictReader(results.open()))
    for r in rows:
        assert r["valid"] == "True", r["invalid_reason"]
        assert r["topology"] == "ssh"
        assert r["request_path"] == "ssh loadgen-host -> server-host"
        assert float(r["rtt_ms"]) > 0
        served = int(r["server_requests"])  # wrk and ab may stop with requests in flight
        assert served > 0 and abs(int(r["requests"]) - served) <= 0.02 * served, r["tool"]
        assert float(r["cpu_server_cores"]) > 0 and float(r["cpu_loadgen_cores"]) > 0
        assert float(r["rss_server_mb"]) > 0
        load = tmp_path / "ssh" / r["run_key"] / "load"
        # Aimed at the server host's address (k6's URL is in its script).
        aimed = [load / "command.txt", *load.glob("script.js")]
        scheme = get_mode(r["mode"]).scheme  # https for a TLS mode
        assert f"{scheme}://{netns.SERVER_ADDRESS}:" in "".join(p.read_text() for p in aimed)
        assert (load / "stdout.txt").exists()  # fetched from the loadgen host
    assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    return rows


def _one_mode_per_way_of_launching() -> list[str]:
    """Of the modes topology ssh runs, the first of each set of programs and hop (kestrel,
    nginx, nginx-uds, caddy, yarp, iris-mvc): every program and every way they connect,
    without repeating one that differs only in its settings."""
    first = {}
    for m in map(get_mode, SSH_MODES):
        first.setdefault((m.server, m.proxy, m.unix_socket), m.id)
    return list(first.values())


def test_every_program_and_hop_runs_on_the_server_host(tmp_path):
    # The Go servers, YARP and nginx over a Unix socket are copied or found there as the test
    # app, nginx and caddy are. "values" is what all serve.
    modes = _one_mode_per_way_of_launching()
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        rows = _ssh_study(tmp_path, hosts, inventory, modes=modes, scenarios=["values"],
                          duration_s=2)  # fmt: skip
        assert sorted(r["mode"] for r in rows) == sorted(modes)
        for r in rows:
            if get_mode(r["mode"]).proxy:
                assert float(r["cpu_proxy_cores"]) > 0  # read on the server host
                # Its config, made here and kept, listens on the server host's address and
                # (nginx's and caddy's, which name files) names its folder there.
                launch = tmp_path / "ssh" / f"launch__r{r['block']}" / r["mode"]
                (config,) = [p for p in launch.iterdir() if p.name in CONFIGS]
                assert netns.SERVER_ADDRESS in config.read_text()
                assert ("/tmp/hostbench." in config.read_text()) == (config.name != "yarp.json")
    assert not [n for n in netns.existing() if n.startswith(f"{netns.PREFIX}{os.getpid()}-")]
    assert not left(str(tmp_path / "server" / "sshd_config"))


CONFIGS = ("nginx.conf", "Caddyfile", "yarp.json")


def test_tls_modes_run_on_the_server_host_with_a_copy_of_the_launchs_certificate(tmp_path):
    # TLS in the app and at a proxy: the certificate made here, copied into a folder of its
    # own on the server host (never into the local run folder), gone with the launch.
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        rows = _ssh_study(tmp_path, hosts, inventory, modes=["kestrel-tls", "nginx-tls"],
                          duration_s=2)  # fmt: skip
        assert sorted(r["mode"] for r in rows) == ["kestrel-tls", "nginx-tls"]
        assert {r["tls_version"] for r in rows} == {"TLSv1.3"}
        config = tmp_path / "ssh" / "launch__r1" / "nginx-tls" / "nginx.conf"
        assert (
            "/tmp/hostbench." in config.read_text() and "-secrets/tls-key.pem" in config.read_text()
        )
        assert not list(tmp_path.rglob("*.pem"))


def test_every_load_tool_fires_from_the_load_host(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        rows = _ssh_study(tmp_path, hosts, inventory, tools=sorted(TOOLS), duration_s=2)
        assert sorted(r["tool"] for r in rows) == sorted(TOOLS)
        for r in rows:
            assert r["tool_version"] not in ("", "unknown")  # asked on the load host
            load = tmp_path / "ssh" / r["run_key"] / "load"
            # The script made here went there; what the tool wrote there came back.
            wrote = {"k6": "summary.json", "wrk": "summary.json", "ab": "percentiles.csv"}
            if r["tool"] in wrote:
                assert (load / wrote[r["tool"]]).read_text().strip()
            if r["tool"] in ("k6", "wrk"):
                script = "script.js" if r["tool"] == "k6" else "script.lua"
                assert "/tmp/hostbench." in (load / script).read_text()


def test_an_error_in_a_run_stops_everything_on_the_hosts(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        # The app refuses an unknown option: the run fails after both hosts were connected.
        params = StudyParams.from_dict(
            {**BASE, "inventory": str(inventory), "app_args": ["--no-such-option"]}
        )
        with pytest.raises(Exception, match="TestApp"):
            netns.call_in(hosts.client, run_study, params, "ssh", tmp_path, progress=False)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    assert not left(str(tmp_path / "server" / "sshd_config"))


def test_sigint_during_a_k6_load_stops_everything_on_the_hosts(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        with study_under_load(BASE, hosts, inventory, tmp_path, "k6") as child:
            assert left(LOAD["k6"])  # the load runs on the loadgen host
            child.send_signal(signal.SIGINT)
            assert child.wait(timeout=60) != 0
        assert "KeyboardInterrupt" in (tmp_path / "harness.log").read_text()  # not a kill
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    assert not [n for n in netns.existing() if n.startswith(f"{netns.PREFIX}{os.getpid()}-")]


def _refusal(tmp_path, inventory, server_tools=()) -> str:
    with pytest.raises(BadInput) as refused:
        with remote.ssh_hosts(inventory, [(t, None) for t in server_tools]):
            pass
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_an_inventory_without_a_server_group_is_one_line(tmp_path):
    inventory = write_inventory(
        tmp_path / "inv.ini", tmp_path / "k", tmp_path / "kh", groups=("loadgen",)
    )
    assert "group 'server' needs exactly one host" in _refusal(tmp_path, inventory)


def test_an_unreachable_host_and_an_unknown_host_key_are_one_line_each(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, _, known, key):

        def refusal(inventory):
            return netns.call_in(hosts.client, _refusal, tmp_path, inventory)

        closed = write_inventory(tmp_path / "closed.ini", key, known, port=2)  # nothing listens
        assert "server host server-host (198.18.0.1:2) unreachable" in refusal(closed)
        (tmp_path / "other_known_hosts").write_text(known.read_text().splitlines()[1] + "\n")
        unknown = write_inventory(tmp_path / "unknown.ini", key, tmp_path / "other_known_hosts")
        message = refusal(unknown)
        assert "server host server-host" in message and "host key is not in" in message
        missing = netns.call_in(
            hosts.client, _refusal, tmp_path, closed.with_name("inventory.ini"), ("no-such-tool",)
        )
        assert missing.startswith("server host server-host (198.18.0.1:22) has no no-such-tool")
        assert not left("hb-ssh")


@pytest.mark.skipif(not shutil.which("ansible-playbook"), reason="needs ansible-core")
def test_the_provisioning_playbook_parses(tmp_path):
    inventory = write_inventory(tmp_path / "inv.ini", tmp_path / "k", tmp_path / "kh")
    playbook = Path(__file__).parent.parent / "deploy" / "provision.yml"
    checked = subprocess.run(
        ["ansible-playbook", "-i", str(inventory), "--syntax-check", str(playbook)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr


def test_a_killed_harness_leaves_nothing_on_the_hosts(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        with study_under_load(BASE, hosts, inventory, tmp_path) as child:
            child.kill()  # no finally runs: the hosts' keepers see their input end
            child.wait()
        deadline = time.monotonic() + 30
        while left("/tmp/hostbench\\.") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")


# ------------------------------------------------------------------ each study over ssh

# Each study's quick profile, over ssh as docs/hosts.md tells a reader to write it (a params
# file beside a copy of the study's params/ that `extends: quick` and adds topology ssh and
# the inventory), shortened so the suite runs it in a minute or two: one block without
# warm-up (min_duration_s and the quiet gate as SHORT_RUNS), each sub-study's concurrency its
# first, and what is cut per study below (timed windows of 1 s, as the session's batch runs
# them locally, or fewer requests). Everything else is the profile's: its modes, tools,
# variants and sub-studies. A window's checks (rows valid, both counts agreeing, every file)
# read 1 s of load as they read 2 s: 2 s windows made jcsi2018's six interleaved targets 12 s
# of k6 a window where 1 s makes 6.
SHORTER = {
    "jcsi2018": {"scenarios": ["html"], "duration_s": 1},  # every mode, one scenario
    "linux-proxies-2021": {"concurrency": [2], "duration_s": 1},
    # every variant, pipelined wrk
    "kestrel-transports-2018": {"scenarios": ["plaintext"], "duration_s": 1},
    # every scenario, alternating bombardier runs: one 1 s slice (one run) per mode a window
    "go-vs-dotnet-2017": {"duration_s": 1},
    "selfhost-2012": {"requests": 2000},  # ab -n, a new connection per request
}
SHORT = {"warmup_s": 0, "repetitions": 1, "target_halfwidth_pct": None, **SHORT_RUNS,
         "min_duration_s": 0.2}  # fmt: skip


def _quick_over_ssh(study: str, folder: Path, inventory: Path) -> StudyParams:
    """The study's quick profile over ssh (a params file of the reader's, `extends: quick`),
    shortened as SHORTER says."""
    shutil.copytree(STUDIES[study].params_dir, folder)
    quick = load_yaml(folder / "quick.yaml")
    # A sub-study's own blocks and warm-up are cut as the study's are; its windows and requests
    # are the study's (no quick sub-study sets its own).
    subs = {name: {**o, **{k: v for k, v in SHORT.items() if k in o},
                   **({"concurrency": o["concurrency"][:1]} if "concurrency" in o else {})}
            for name, o in (quick.get("sub_studies") or {}).items()}  # fmt: skip
    mine = {"extends": "quick", "topology": "ssh", "inventory": str(inventory), **SHORT,
            **SHORTER[study], "sub_studies": subs}  # fmt: skip
    (folder / "ssh.yaml").write_text(yaml.safe_dump(mine))
    return StudyParams.from_file(folder / "ssh.yaml")


def _check_ssh_row(r: dict, run_dir: Path) -> None:
    """A row measured across the hosts: valid, every request the tool completed counted by
    the app on the server host (wrk and ab may stop with requests in flight)."""
    assert r["valid"] == "True", r["invalid_reason"]
    assert r["topology"] == "ssh"
    assert r["request_path"] == "ssh loadgen-host -> server-host"
    assert float(r["rtt_ms"]) > 0
    served = int(r["server_requests"])
    # wrk and ab leave up to connections x pipeline depth in flight as each run stops; an
    # interleaved window of alternating runs has one run per slice (alternate.count_slack).
    slice_s = json.loads((run_dir / PARAMS_FILE).read_text()).get("interleave_slice_s")
    alternating = slice_s and not TOOLS[r["tool"]].switches_target
    runs = round(float(r["duration_target_s"]) / slice_s) if alternating else 1
    in_flight = runs * int(r["concurrency"]) * int(r["pipeline"] or 1)
    slack = max(0.02 * served, in_flight if r["tool"] in ("wrk", "ab") else 0)
    assert served > 0 and abs(int(r["requests"]) - served) <= slack, (r["tool"], slack)
    assert float(r["cpu_server_cores"]) > 0 and float(r["cpu_loadgen_cores"]) > 0
    assert float(r["rss_server_mb"]) > 0
    # Both hosts' other processes, read there (here one machine: finite, not small).
    assert float(r["foreign_cores"]) >= 0
    if not (run_dir / r["run_key"] / "interleaved.txt").exists():
        load = run_dir / r["run_key"] / "load"  # one run's files, or a folder per run
        aimed = [*load.glob("command.txt"), *load.glob("*/command.txt"), *load.glob("script.js")]
        scheme = get_mode(r["mode"]).scheme  # https for a TLS mode
        assert f"{scheme}://{netns.SERVER_ADDRESS}:" in "".join(p.read_text() for p in aimed)


def _rows(results: Path) -> list[dict]:
    return list(csv.DictReader(results.open()))


def _check_quick_over_ssh(params: StudyParams, main: Path, done: dict) -> None:
    """A study's quick profile measured over ssh into run folder `main`: `done` holds each
    part's results.csv ("" the study, a sub-study by name; None for one skipped)."""
    skipped = params.sub_studies_skipped
    assert {n for n, path in done.items() if path is None} == set(skipped)
    for results in done.values():
        if results is not None:
            rows = _rows(results)
            assert rows and {r["mode"] for r in rows} <= set(params.modes)
            for r in rows:
                _check_ssh_row(r, results.parent)
    assert sorted({r["mode"] for r in _rows(done[""])}) == sorted(params.modes)
    recorded = json.loads((main / PARAMS_FILE).read_text())
    assert recorded.get(SKIPPED_SUB_STUDIES, {}) == skipped
    log = (main / "progress.log").read_text()
    for name, why in skipped.items():
        assert f"sub-study {name}: {why}" in log
        assert not (main.parent / f"{main.name}-{name}").exists()
    # Both hosts in the environment record, read there (here both are this machine).
    env = json.loads((main / "environment.json").read_text())
    for role in ("server", "loadgen"):
        host = env["hosts"][role]
        assert host["cpu_model"] == env["cpu_model"] and host["cpu_cores_logical"] > 0
        assert host["os"] and host["kernel"] and host["memory_gib"] > 0
    assert set(env["hosts"]["loadgen"]["tools"]) == set(params.tools)
    assert all(v not in ("", "unknown") for v in env["hosts"]["loadgen"]["tools"].values())
    proxies = {get_mode(m).proxy for m in params.modes if get_mode(m).proxy}
    assert set(env["hosts"]["server"]["tools"]) == proxies
    assert not [n for n in netns.existing() if n.startswith(f"{netns.PREFIX}{os.getpid()}-")]


# jcsi2018, the main study, is measured over ssh once, through its notebook, by
# test_make_reproduce_runs_the_main_studys_notebook_over_ssh_to_its_report.
@pytest.mark.parametrize("study", sorted(set(STUDIES) - {"jcsi2018"}))
def test_each_studys_quick_profile_runs_over_ssh_with_its_sub_studies(study, tmp_path):
    from hostbench.harness.notebook import StudyRun

    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        params = _quick_over_ssh(study, tmp_path / "params", inventory)
        run = StudyRun(study, "ssh", "q", tmp_path / "runs", params)

        def measure():
            # What the study's notebook does (StudyRun.measure, without publishing the app):
            # the study, then each sub-study; a skipped one measures nothing.
            done = {"": run_study(params, run.run_id, run.runs_dir, progress=False)}
            for name in params.sub_studies:
                sub = run.sub_run(name)
                done[name] = sub.measure() if sub.skipped else run_study(
                    sub.params, sub.run_id, sub.runs_dir, progress=False)  # fmt: skip
            return done

        done = netns.call_in(hosts.client, measure)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")  # nothing on the hosts
    _check_quick_over_ssh(params, run.out_dir, done)


@pytest.mark.parametrize("tool, slice_s", [("k6", 0.25), ("bombardier", 1.0)])
def test_an_interleaved_window_runs_on_the_load_host_and_reads_each_target_there(
    tool, slice_s, tmp_path
):
    # k6: one run switching target; bombardier: one run per slice, each an ssh command there.
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        params = StudyParams.from_dict({
            **BASE, "inventory": str(inventory), "modes": ["kestrel", "nginx-keepalive"],
            "tools": [tool], "duration_s": 2, "interleave_slice_s": slice_s, "seed": 3,
        })  # fmt: skip
        results = netns.call_in(hosts.client, run_study, params, "il", tmp_path, progress=False)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    rows = _rows(results)
    assert sorted(r["mode"] for r in rows) == ["kestrel", "nginx-keepalive"]
    assert len({r["started_at"] for r in rows}) == 1  # one window, both modes in it
    for r in rows:
        _check_ssh_row(r, results.parent)
        assert abs(float(r["count_diff_pct"])) <= COUNT_TOLERANCE_PCT  # the tool's, the app's
        assert r["tool"] == tool
    first = min(rows, key=lambda r: int(r["position"]))
    schedule = json.loads((results.parent / first["run_key"] / SCHEDULE_FILE).read_text())
    assert all(u.startswith(f"http://{netns.SERVER_ADDRESS}:") for u in schedule["urls"])
    load = results.parent / first["run_key"] / "load"
    if tool == "k6":
        assert float(rows[0]["duration_s"]) == 2.0  # its share of the window: its slices
        assert "/tmp/hostbench." in (load / "script.js").read_text()  # made here, run there
        assert (load / "summary.json").read_text().strip()  # fetched from the load host
    else:  # each mode's runs, by bombardier's clock, close to its 2 s of slices
        assert all(1.8 < float(r["duration_s"]) < 2.5 for r in rows)
        runs = sorted(load.iterdir())
        assert len(runs) == len(schedule["runs"]) == 4  # 2 s each in 1 s slices, 2 modes
        for run in runs:  # started on the load host, in its folder there
            assert "/tmp/hostbench." in (run / "command.txt").read_text()
            assert (run / "stdout.txt").read_text().strip()


# Processes of a block on a host, each stopped its own way: one exits on SIGTERM, one ignores
# it (SIGKILL after the grace period), one's worker outlives its leader (nginx's do).
STOPPED_HOW = {
    "plain": "echo plain; exec sleep 601",
    "deaf": "trap '' TERM; echo deaf; sleep 602; sleep 602",
    "forked": "echo forked; sleep 603 & exit 0",
}


def test_a_blocks_processes_on_a_host_stop_in_one_round_trip_within_the_deadline(
    tmp_path, monkeypatch
):
    # `ssh` first on PATH notes each call, then runs the real client; each question to a
    # host's helper (a round trip, over its serving session or a call of its own) is noted.
    calls = tmp_path / "ssh-calls.txt"
    wrapper = tmp_path / "bin" / "ssh"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {shutil.which("ssh")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    asked, helper = [], remote.Connection.helper

    def noted(conn, *args, **kwargs):
        asked.append((conn.host.role, args[0]))
        return helper(conn, *args, **kwargs)

    monkeypatch.setattr(remote.Connection, "helper", noted)
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):

        def stop_a_block():
            with remote.ssh_hosts(inventory) as ssh:
                procs = [ssh.server.process(name, ["sh", "-c", script], tmp_path / f"{name}.log",
                                            grace_s=1.0).start()
                         for name, script in STOPPED_HOW.items()]  # fmt: skip
                assert left("sleep 60[123]")
                said, before = [], len(calls.read_text().splitlines())
                asked.clear()
                with remote.StopTogether(ssh, said.append) as block:
                    for proc in procs:
                        block.callback(proc.stop)
                sessions = len(calls.read_text().splitlines()) - before
                return said, list(asked), sessions, left("sleep 60[123]")

        said, round_trips, sessions, remaining = netns.call_in(hosts.client, stop_a_block)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    assert said == [] and remaining == []  # each confirmed gone, by the stop itself
    # Two round trips to the server host, the stop then the logs, over its open session.
    assert round_trips == [("server", "stop"), ("server", "pack")] and sessions == 0
    for name in STOPPED_HOW:  # what each wrote there, brought back
        assert (tmp_path / f"{name}.log").read_text() == f"{name}\n"


def test_the_quiet_gate_reads_both_hosts_there(tmp_path):
    # A busy process the harness did not start is foreign on a host; one it started there is
    # its own. (Both hosts are this machine here: the burner shows on each.)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):

            def read():
                with remote.ssh_hosts(inventory) as ssh:
                    ours = ssh.loadgen.process("spin", ["python3", "-c", "while True: pass"],
                                               tmp_path / "spin.log").start()  # fmt: skip
                    reading = quiet.read_host(ssh.loadgen, window_s=1.0, top=100)
                    said = []
                    gate = quiet.wait_until_quiet(0.05, 100.0, 1.0, said.append, ssh.both)
                    return reading, ours.pid, gate, said

            reading, ours, gate, said = netns.call_in(hosts.client, read)
            assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    finally:
        burner.kill()
        burner.wait()
    pids = {pid: name for name, pid, _ in reading.top}
    assert burner.pid in pids and pids[burner.pid].startswith("loadgen-host: ")
    assert ours not in pids
    assert reading.foreign_cores >= 0.2
    assert gate["quiet_wait_s"] >= 1.0 and gate["quiet_before_cores"] >= 0.2
    # It waited, then said why it measures anyway, naming the busiest and where they run.
    assert "still busy" in said[-1] and "-host: " in said[-1], said


@pytest.mark.timeout(1200)
def test_make_reproduce_runs_the_main_studys_notebook_over_ssh_to_its_report(tmp_path):
    # What `make reproduce STUDY=jcsi2018 PROFILE=<the reader's ssh.yaml>` does: the notebook
    # under papermill measures across the hosts, skips the sub-studies about one machine and
    # renders the report (its profile shortened as the test above shortens it).
    from hostbench.pagecheck import check_report
    from hostbench.reproduce import reproduce

    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        params = _quick_over_ssh("jcsi2018", tmp_path / "params", inventory)
        profile = str(tmp_path / "params" / "ssh.yaml")
        out = netns.call_in(hosts.client, reproduce, "jcsi2018", profile, run_id="ssh",
                            runs_dir=tmp_path / "runs")  # fmt: skip
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    assert out == tmp_path / "runs" / "ssh"
    done = {
        "": out / "results.csv",
        **{n: None for n in params.sub_studies_skipped},
        **{n: out.parent / f"ssh-{n}" / "results.csv" for n in params.sub_studies_run},
    }
    _check_quick_over_ssh(params, out, done)
    assert json.loads((out / DONE_FILE).read_text())["profile"] == "ssh"
    assert check_report(out / "report.html", forbidden=[str(tmp_path)]) == []
    page = html.unescape((out / "report.html").read_text())
    assert params.sub_studies_skipped  # isolated and two-hosts: each said on the page
    for why in params.sub_studies_skipped.values():
        assert why.split(" (")[0] in page or why.split(":")[1].split(",")[0] in page, why


def test_doctor_reads_each_host_of_an_inventory_there(tmp_path):
    from hostbench.harness.measure.quiet import doctor_hosts

    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        rows, quiet = netns.call_in(hosts.client, doctor_hosts, inventory, 100.0, 100.0, 1)
        assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
    said = dict(rows)
    assert quiet and said["verdict"].startswith("quiet")  # limits no machine exceeds
    for role, name in (("server", "server-host"), ("loadgen", "loadgen-host")):
        assert said[f"{role} host"].startswith(f"{name}: ") and " cores, " in said[f"{role} host"]
        assert "cores (limit 100)" in said[f"{role}: foreign CPU, max over 1 s"]
        assert said[f"{role}: steal, max over 1 s"].endswith("(limit 100%)")
