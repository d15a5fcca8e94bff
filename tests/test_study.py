"""A whole study through the command line: results, environment, interruption and resume."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
import yaml

from conftest import SHORT_RUNS, descendants_named, interruptible
from hostbench.column_types import CpuList
from hostbench.paths import ROOT
from hostbench.results import NAMES as RESULT_COLUMNS
from hostbench.results import read_results

PARAMS = {
    "modes": ["kestrel"],
    "scenarios": ["text"],
    "tools": ["bombardier"],
    "concurrency": [2],
    "duration_s": 3,
    "warmup_s": 0,
    "repetitions": 2,
    **SHORT_RUNS,
}


def _cli(*args, **kwargs):
    return interruptible(
        [sys.executable, "-m", "hostbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _children_once_loading(cli, timeout=90) -> dict[psutil.Process, str]:
    """The CLI's child processes and their names, once its load generator (bombardier) runs."""
    deadline = time.monotonic() + timeout
    children = {}
    while time.monotonic() < deadline:
        children = descendants_named(cli.pid)
        if "bombardier" in children.values():
            return children
        time.sleep(0.1)
    raise AssertionError(f"no bombardier among {sorted(children.values())}")


def _still_running(children: dict[psutil.Process, str]) -> dict[int, str]:
    """Which of `children` still run (a zombie has ended: only its exit status is left)."""
    left = {}
    for child, name in children.items():
        try:
            if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                left[child.pid] = name
        except psutil.NoSuchProcess:
            pass
    return left


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def _interrupted_in_its_second_run(tmp_path, args) -> subprocess.CompletedProcess:
    """The CLI running `args`, Ctrl-C'd while its second run's load generator runs; once it
    has returned, none of the processes it had started may still run."""
    cli = _cli(*args)
    first_row = tmp_path / "runs" / "t1" / "kestrel__text__bombardier__c2__r1"
    deadline = time.monotonic() + 90
    while not (first_row / "row.json").exists():  # wait for run 1 to complete...
        assert cli.poll() is None, cli.communicate()
        assert time.monotonic() < deadline, "first run never completed"
        time.sleep(0.2)
    children = _children_once_loading(cli)  # ...and for run 2's load generator
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=60)
    assert _still_running(children) == {}, "still running after the CLI returned"
    return subprocess.CompletedProcess(cli.args, cli.returncode, out, err)


@pytest.mark.live
def test_interrupted_study_leaves_nothing_running_and_resumes(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    runs = tmp_path / "runs"
    args = ("run", str(params), "--run-id", "t1", "--runs-dir", str(runs), "--no-progress")
    study = runs / "t1"

    cli = _interrupted_in_its_second_run(tmp_path, args)
    assert cli.returncode == 130, cli.stderr
    assert "interrupted" in cli.stderr
    rows = _rows(study / "results.csv")
    assert [r["block"] for r in rows] == ["1"]  # no partial row for run 2
    assert not (study / "kestrel__text__bombardier__c2__r2" / "row.json").exists()

    again = _cli(*args)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    rows2 = _rows(study / "results.csv")
    assert [r["block"] for r in rows2] == ["1", "2"]
    assert rows2[0] == rows[0]  # the completed run was skipped, not re-run
    assert list(rows2[0]) == RESULT_COLUMNS
    r = rows2[1]
    assert float(r["rps"]) > 0 and int(r["errors"]) == 0
    assert abs(float(r["count_diff_pct"])) <= 2
    assert float(r["cpu_server_cores"]) > 0 and int(r["cpu_samples"]) >= 4
    assert r["valid"] == "True" and r["fingerprint"] == rows2[0]["fingerprint"]
    typed = read_results(study)  # as the analysis reads it: through the schema
    assert typed["valid"].tolist() == [True, True] and typed["concurrency"].tolist() == [2, 2]
    assert set(typed["loadgen_cpus"]) == {CpuList(None)} and typed["requests_target"].isna().all()
    assert (study / r["run_key"] / "cpu_samples.csv").exists()
    assert (study / r["run_key"] / "load" / "command.txt").exists()
    env = json.loads((study / "environment.json").read_text())
    assert env["cpu_cores_logical"] >= 1 and env["tools"]["bombardier"].startswith("bombardier")


@pytest.fixture
def busy_cores():
    """A Python busy loop on each core, beside the test, stopped after it: the machine of
    `make test`'s parallel lanes, where a process SIGKILLed takes a while to be gone."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(os.cpu_count() or 1)]  # fmt: skip
    yield len(loops)
    for loop in loops:
        loop.kill()
        loop.wait()


@pytest.mark.live
def test_an_interrupted_study_beside_busy_cores_leaves_nothing_running(tmp_path, busy_cores):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    runs = tmp_path / "runs"
    args = ("run", str(params), "--run-id", "t1", "--runs-dir", str(runs), "--no-progress")
    cli = _interrupted_in_its_second_run(tmp_path, args)
    assert cli.returncode == 130, cli.stderr


@pytest.mark.live
@pytest.mark.parametrize(
    "change, message",
    [
        ({"modes": ["iis"]}, "error: unknown mode 'iis'; allowed:"),
        ({"tools": ["jmeter"]}, "error: unknown tool 'jmeter'; allowed:"),
        ({"duration_s": 0}, "error: params key 'duration_s' must be a number >= 1"),
    ],
)
def test_bad_params_stop_the_cli_before_anything_starts(tmp_path, change, message):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({**PARAMS, **change}))
    cli = _cli("run", str(params), "--run-id", "bad", "--runs-dir", str(tmp_path / "runs"))
    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 2
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "runs" / "bad").exists()


@pytest.mark.live
def test_remote_url_needs_the_allow_flag(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({**PARAMS, "modes": ["external"]}))
    cli = _cli("run", str(params), "--run-id", "x", "--url", "http://192.0.2.7:8080")
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 2 and "is not loopback" in err and "--allow-remote" in err


def _params_file(tmp_path, **changes):
    path = tmp_path / f"params-{len(list(tmp_path.glob('params-*')))}.yaml"
    path.write_text(yaml.safe_dump({**PARAMS, "repetitions": 1, **changes}))
    return path


def _run(params, runs, run_id="s", *extra, timeout=120):
    cli = _cli("run", str(params), "--run-id", run_id, "--runs-dir", str(runs), "--no-progress",
               *extra)  # fmt: skip
    out, err = cli.communicate(timeout=timeout)
    return cli.returncode, out, err


def _measured_once(tmp_path):
    """A run "s" of the PARAMS measured to the end: its runs folder and its results.csv."""
    runs = tmp_path / "runs"
    code, _, err = _run(_params_file(tmp_path), runs)
    assert code == 0, err
    return runs, (runs / "s" / "results.csv").read_text()


@pytest.mark.live
def test_resuming_with_other_settings_or_on_another_processor_is_refused(tmp_path):
    runs, before = _measured_once(tmp_path)
    params_json = (runs / "s" / "params.json").read_text()

    code, _, err = _run(_params_file(tmp_path, duration_s=4), runs)
    assert code == 2 and err.count("\n") == 1
    assert "holds runs measured with other settings: duration_s (3.0 -> 4.0)" in err
    assert "--discard-old" in err and "new --run-id" in err
    assert (runs / "s" / "results.csv").read_text() == before  # untouched
    assert (runs / "s" / "params.json").read_text() == params_json  # still describes them

    # The same settings on another processor: refused too, the run's rows one processor's.
    env_file = runs / "s" / "environment.json"
    env = json.loads(env_file.read_text())
    env_file.write_text(json.dumps({**env, "cpu_family": 9999}))
    code, _, err = _run(_params_file(tmp_path), runs)
    assert code == 2 and err.count("\n") == 1
    assert f"measured on another processor (cpu_family 9999 -> {env['cpu_family']})" in err
    assert (runs / "s" / "results.csv").read_text() == before

    code, _, err = _run(_params_file(tmp_path, duration_s=4), runs, "s", "--discard-old")
    assert code == 0, err
    rows = _rows(runs / "s" / "results.csv")
    assert len(rows) == 1 and rows[0]["duration_target_s"] == "4.0"
    assert json.loads((runs / "s" / "params.json").read_text())["duration_s"] == 4.0
    assert json.loads(env_file.read_text())["cpu_family"] == env["cpu_family"]  # recorded anew


@pytest.mark.live
def test_a_packed_run_resumes_only_once_unpacked(tmp_path):
    runs, before = _measured_once(tmp_path)
    folders = len(list((runs / "s").glob("*__*")))  # its windows' and its launch's
    archive = [str(ROOT / "scripts" / "archive-runs.sh")]
    subprocess.run([*archive, "pack", str(runs / "s")], check=True, capture_output=True)

    code, _, err = _run(_params_file(tmp_path), runs)
    assert code == 2 and err.count("\n") == 1
    assert f"{folders} run folder(s) are packed in runs.tar.gz; unpack them first" in err
    assert (runs / "s" / "results.csv").read_text() == before  # nothing measured, nothing lost

    # Unpacked, it resumes: its window kept, not redone (a fixed design's repetitions may not
    # grow, tests/test_claim_error.py, so it has nothing left to measure).
    subprocess.run([*archive, "unpack", str(runs / "s")], check=True, capture_output=True)
    code, _, err = _run(_params_file(tmp_path), runs)
    assert code == 0, err
    assert (runs / "s" / "results.csv").read_text() == before

    code, _, err = _run(_params_file(tmp_path, duration_s=4), runs, "s", "--discard-old")
    assert code == 0, err
    assert not (runs / "s" / "runs.tar.gz").exists()  # the old runs' archive went with them


@pytest.mark.live
def test_a_second_process_on_the_same_run_id_exits_at_once_naming_the_first(tmp_path):
    runs = tmp_path / "runs"
    params = _params_file(tmp_path, duration_s=5)
    first = _cli("run", str(params), "--run-id", "s", "--runs-dir", str(runs), "--no-progress")
    lock = runs / "s" / ".lock"
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text()):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.1)
    t0 = time.monotonic()
    code, _, err = _run(params, runs)
    assert code == 1 and time.monotonic() - t0 < 20
    assert f"is in use by process {first.pid}" in err and err.count("\n") == 1
    _, err1 = first.communicate(timeout=120)
    assert first.returncode == 0, err1
    assert len(_rows(runs / "s" / "results.csv")) == 1  # the first's rows, whole


@pytest.mark.live
def test_a_lock_left_by_a_killed_process_does_not_block_the_next(tmp_path):
    runs = tmp_path / "runs"
    params = _params_file(tmp_path)
    first = _cli("run", str(params), "--run-id", "s", "--runs-dir", str(runs), "--no-progress")
    lock = runs / "s" / ".lock"
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    first.kill()
    first.communicate(timeout=30)
    code, _, err = _run(params, runs)
    assert code == 0, err


@pytest.mark.live
@pytest.mark.parametrize("case", ["file-as-runs-dir", "read-only-runs-dir"])
def test_an_unusable_runs_folder_is_one_line(tmp_path, case):
    runs = tmp_path / "runs"
    if case == "file-as-runs-dir":
        runs.write_text("not a folder")
    else:
        runs.mkdir()
        runs.chmod(0o500)
        if os.access(runs, os.W_OK):  # root ignores permissions
            pytest.skip("runs as root: permissions are not enforced")
    code, _, err = _run(_params_file(tmp_path), runs)
    assert code == 2 and err.startswith("error: runs folder") and err.count("\n") == 1


@pytest.mark.live
def test_a_damaged_row_is_one_line_naming_the_file(tmp_path):
    runs = tmp_path / "runs"
    params = _params_file(tmp_path)
    assert _run(params, runs)[0] == 0
    row = next((runs / "s").glob("*/row.json"))
    row.write_text("{not json")
    code, _, err = _run(params, runs)
    assert code == 1 and f"{row} is damaged" in err and err.count("\n") == 1


@pytest.mark.live
def test_a_socket_path_too_long_for_linux_is_refused_before_anything_starts(tmp_path):
    runs = tmp_path / ("r" * 60)
    code, _, err = _run(_params_file(tmp_path, modes=["nginx-uds"]), runs, "x" * 60)
    assert code == 2 and "over Linux's 107" in err and err.count("\n") == 1
    assert not list((runs / ("x" * 60)).glob("nginx-uds*"))


@pytest.mark.live
@pytest.mark.parametrize("delay_s", [0.0, 0.05, 0.3])
def test_ctrl_c_held_while_stopping_leaves_nothing_running(tmp_path, delay_s):
    runs = tmp_path / "runs"
    params = _params_file(tmp_path, modes=["nginx"], duration_s=10)
    cli = _cli("run", str(params), "--run-id", "s", "--runs-dir", str(runs), "--no-progress")
    children = _children_once_loading(cli)  # app, nginx, bombardier
    cli.send_signal(signal.SIGINT)
    time.sleep(delay_s)
    while cli.poll() is None:  # impatient: again and again, while the first stops children
        cli.send_signal(signal.SIGINT)  # and after they stopped, as the process ends
        time.sleep(0.01)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 130, err
    assert err.rstrip().endswith("the same command resumes")
    assert _still_running(children) == {}
    assert not list(runs.glob("s/*/row.json"))  # no partial row


@pytest.mark.live
def test_calibrate_sweeps_concurrency_on_the_real_app(tmp_path):
    args = [
        "--mode",
        "kestrel",
        "--tool",
        "bombardier",
        "--levels",
        "1",
        "4",
        "--duration",
        "1",
        "--quiet-max-cores",
        "off",
        "--blocks",
        "2",
    ]
    cli = _cli("calibrate", *args, "--warmup", "0", "--run-id", "cal", "--runs-dir", str(tmp_path))
    out, err = cli.communicate(timeout=120)
    assert cli.returncode == 0, err
    rows = _rows(tmp_path / "cal" / "results.csv")
    levels = sorted(int(r["concurrency"]) for r in rows)
    assert levels == [1, 1, 4, 4]  # two blocks of the sweep
    assert all(float(r["rps"]) > 0 for r in rows)
    assert "Kestrel, text, bombardier (1, 4): " in out and "CPU busy peaked at" in out


def test_a_test_app_without_its_run_bit_is_one_line(tmp_path, monkeypatch):
    from hostbench.errors import ToolMissing
    from hostbench.harness.launch import tools
    from hostbench.programs import PROGRAMS

    app = tmp_path / "TestApp"
    app.write_text("not runnable")
    monkeypatch.setattr(PROGRAMS["TestApp"], "ships", tmp_path)
    with pytest.raises(ToolMissing, match=f"TestApp at {app} is not executable: run `make setup`"):
        tools.find_tool("TestApp")
