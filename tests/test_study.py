"""A whole study through the command line: results, environment, interruption and resume."""

import csv
import json
import signal
import subprocess
import sys
import time

import psutil
import pytest
import yaml

from hostbench.study import RESULT_COLUMNS

PARAMS = {
    "modes": ["kestrel"],
    "scenarios": ["text"],
    "tools": ["bombardier"],
    "concurrency": [2],
    "duration_s": 3,
    "warmup_s": 0,
    "repetitions": 2,
}


def _cli(*args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "hostbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_interrupted_study_leaves_nothing_running_and_resumes(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    runs = tmp_path / "runs"
    args = ("run", str(params), "--run-id", "t1", "--runs-dir", str(runs), "--no-progress")
    study = runs / "t1"

    cli = _cli(*args)
    first_row = study / "kestrel__text__bombardier__c2__r1" / "row.json"
    deadline = time.monotonic() + 90
    while not first_row.exists():  # wait for run 1 to complete...
        assert cli.poll() is None, cli.communicate()
        assert time.monotonic() < deadline, "first run never completed"
        time.sleep(0.2)
    children = []
    while time.monotonic() < deadline:  # ...and for run 2's load generator to be running
        children = psutil.Process(cli.pid).children(recursive=True)
        if any(c.name() == "bombardier" for c in children):
            break
        time.sleep(0.1)
    assert any(c.name() == "bombardier" for c in children)
    cli.send_signal(signal.SIGINT)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 130, err
    assert "interrupted" in err
    assert [c.pid for c in children if c.is_running() and c.status() != "zombie"] == []
    rows = _rows(study / "results.csv")
    assert [r["repetition"] for r in rows] == ["1"]  # no partial row for run 2
    assert not (study / "kestrel__text__bombardier__c2__r2" / "row.json").exists()

    again = _cli(*args)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    rows2 = _rows(study / "results.csv")
    assert [r["repetition"] for r in rows2] == ["1", "2"]
    assert rows2[0] == rows[0]  # the completed run was skipped, not re-run
    assert list(rows2[0]) == RESULT_COLUMNS
    r = rows2[1]
    assert float(r["rps"]) > 0 and int(r["errors"]) == 0
    assert abs(float(r["count_diff_pct"])) <= 2
    assert float(r["cpu_server_cores"]) > 0 and int(r["cpu_samples"]) >= 4
    assert (study / r["run_key"] / "cpu_samples.csv").exists()
    assert (study / r["run_key"] / "load" / "command.txt").exists()
    env = json.loads((study / "environment.json").read_text())
    assert env["cpu_cores_logical"] >= 1 and env["tools"]["bombardier"].startswith("bombardier")


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


def test_remote_url_needs_the_allow_flag(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({**PARAMS, "modes": ["external"]}))
    cli = _cli("run", str(params), "--run-id", "x", "--url", "http://192.0.2.7:8080")
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 2 and "is not loopback" in err and "--allow-remote" in err
