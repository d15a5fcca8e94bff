"""A run's Load: checked once when made, the same value in the command line, the parser and
the run folder's load.json, and read back typed by the analysis."""

import json
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest

from hostbench.analysis import tables
from hostbench.errors import BadInput
from hostbench.harness.measure.loadgen import ab_request_limit, get_generator
from hostbench.harness.order import run_order
from hostbench.load import LOAD_FILE, Load, read_load
from hostbench.params import StudyParams
from hostbench.studies import available

LOADGEN = Path(__file__).parent / "fixtures" / "loadgen"


# ------------------------------------------------------------------ made once, checked once


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tool": "jmeter"}, "unknown tool 'jmeter'; allowed: ab, bombardier, k6, wrk"),
        ({"concurrency": 0}, "concurrency must be an integer >= 1, got 0"),
        ({"concurrency": True}, "concurrency must be an integer >= 1, got True"),
        ({"duration_s": 0}, "duration_s must be a number > 0, got 0"),
        ({"duration_s": float("nan")}, "duration_s must be a number > 0, got nan"),
        ({"warmup_s": -1}, "warmup_s must be a number >= 0, got -1"),
        ({"tool": "wrk", "duration_s": 2.5}, "duration_s 2.5: wrk takes whole seconds only"),
        ({"tool": "ab", "warmup_s": 0.5}, "warmup_s 0.5: ab takes whole seconds only"),
        ({"requests": 1000}, "k6 cannot stop after a request count; ab and bombardier can"),
        ({"tool": "ab", "concurrency": 100, "requests": 10},
         "requests 10 is fewer than the 100 connections"),
        ({"tool": "ab", "requests": 2.5}, "requests must be an integer >= 1 or null, got 2.5"),
        ({"pipeline": 16}, "pipeline 16 not supported by k6; only wrk pipelines"),
        ({"tool": "wrk", "pipeline": 0}, "pipeline must be an integer >= 1, got 0"),
        ({"tool": "wrk", "keepalive": False}, "wrk always keeps connections alive; only ab can"),
        ({"keepalive": "false"}, "keepalive must be true or false, got 'false'"),
        ({"cpus": (1, 0)}, "cpus must be CPU ids in ascending order, each once, or null"),
        ({"cpus": (0, 0)}, "cpus must be CPU ids in ascending order, each once, or null"),
        ({"cpus": ()}, "cpus must be CPU ids in ascending order, each once, or null"),
        ({"cpus": "0,1"}, "cpus must be CPU ids in ascending order, each once, or null"),
        ({"path": "text"}, "path must start with '/', got 'text'"),
        ({"base_url": "ftp://127.0.0.1"}, "base_url must be an http:// or https:// URL or null"),
    ],
)  # fmt: skip
def test_a_bad_load_is_refused_with_one_line(kwargs, message):
    with pytest.raises(BadInput) as err:
        Load(**{"tool": "k6", "concurrency": 8, "duration_s": 5, **kwargs})
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_request_bound_run_may_have_any_bound():
    # ab -n ignores the duration: it only bounds the run, so whole seconds do not matter.
    assert Load("ab", 8, 2.5, requests=100).duration_s == 2.5


def test_params_refuse_a_bad_load_once_naming_the_scenario():
    raw = {"modes": ["kestrel"], "scenarios": ["html", "text"], "tools": ["wrk"],
           "concurrency": [8], "duration_s": 5, "warmup_s": 0, "repetitions": 1,
           "keepalive": False}  # fmt: skip
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict(raw)
    assert str(err.value) == (
        "wrk always keeps connections alive; only ab can close them (scenario html)"
    )


def test_every_run_of_a_cell_carries_the_cells_load():
    p = StudyParams.from_dict({
        "modes": ["kestrel", "nginx"], "scenarios": ["plaintext", "json"], "tools": ["wrk"],
        "concurrency": [8], "duration_s": 10, "warmup_s": 3, "repetitions": 2,
        "pipeline": {"plaintext": 16}, "loadgen_cpus": [0],
    })  # fmt: skip
    runs = run_order(p, seed=1)
    for run in runs:
        assert run.load == p.load(run.scenario.id, run.tool, run.concurrency)
        assert run.load.path == run.scenario.path and run.load.cpus == (0,)
        assert run.load.pipeline == (16 if run.scenario.id == "plaintext" else 1)
        assert (run.load.duration_s, run.load.warmup_s) == (10.0, 3.0)
    # One value per cell: the blocks' runs of a cell share it rather than re-make it.
    plaintext = [r.load for r in runs if r.scenario.id == "plaintext"]
    assert all(load is plaintext[0] for load in plaintext)


def test_a_cells_load_is_checked_once_from_the_params_to_the_command_line(monkeypatch):
    checked = []
    check = Load.check
    monkeypatch.setattr(Load, "check", lambda load: checked.append(load) or check(load))
    p = StudyParams.from_dict({
        "modes": ["kestrel", "nginx"], "scenarios": ["plaintext", "json"], "tools": ["wrk"],
        "concurrency": [8], "duration_s": 10, "warmup_s": 3, "repetitions": 2,
    })  # fmt: skip
    assert len(checked) == 2  # one Load per (scenario, tool, concurrency), made with the params
    for run in run_order(p, seed=1):
        aimed = run.load.aimed_at("http://127.0.0.1:5000")
        assert aimed.url.startswith("http://127.0.0.1:5000/") and aimed.warmup().duration_s == 3
    assert len(checked) == 2  # the runs, their targets and warm-ups check nothing again


def test_the_warm_up_is_the_same_connections_for_warmup_s():
    load = Load("ab", 100, 300, requests=100000, warmup_s=10, keepalive=False, path="/x")
    warm = load.warmup()
    assert (warm.duration_s, warm.requests, warm.warmup_s) == (10.0, None, 0.0)
    assert (warm.tool, warm.concurrency, warm.keepalive, warm.path) == ("ab", 100, False, "/x")


def test_the_url_is_known_once_aimed_at_a_target():
    load = Load("k6", 8, 5, path="/text")
    with pytest.raises(Exception, match="not aimed at a target yet"):
        load.url  # noqa: B018
    assert load.aimed_at("http://127.0.0.1:5000").url == "http://127.0.0.1:5000/text"
    assert load.aimed_at("http://127.0.0.1:5000/").url == "http://127.0.0.1:5000/text"


# ------------------------------------------------------------------ load.json


@pytest.mark.parametrize(
    "load",
    [
        Load("k6", 8, 15),
        Load("ab", 100, 300, requests=100000, warmup_s=10, keepalive=False,
             path="/api/testapi", base_url="http://127.0.0.1:40123"),
        Load("wrk", 256, 15, warmup_s=5, pipeline=16, cpus=(0, 1), path="/plaintext"),
    ],
)  # fmt: skip
def test_load_json_round_trips_to_an_equal_load(tmp_path, load):
    path = load.write(tmp_path)
    assert path == tmp_path / LOAD_FILE
    back = read_load(tmp_path)
    assert back == load and isinstance(back.cpus, tuple | None)
    assert json.loads(path.read_text())["tool"] == load.tool


def test_whole_numbers_from_yaml_equal_their_float_read_back(tmp_path):
    load = Load("bombardier", 8, 60, warmup_s=10, cpus=[0, 1])  # ints and a list, as YAML has
    load.write(tmp_path)
    assert read_load(tmp_path) == load
    assert (load.duration_s, load.cpus) == (60.0, (0, 1))


def test_a_damaged_load_json_is_one_line_naming_the_file(tmp_path):
    (tmp_path / LOAD_FILE).write_text('{"tool": "k6", "concurrency": 8, "duration_s": 5, "vus": 8}')
    with pytest.raises(BadInput) as err:
        read_load(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / LOAD_FILE}: load: unknown key(s) vus;")
    (tmp_path / LOAD_FILE).write_text('{"tool": "k6", "concurrency": 0, "duration_s": 5}')
    with pytest.raises(BadInput, match="concurrency must be an integer >= 1, got 0"):
        read_load(tmp_path)
    assert read_load(tmp_path / "elsewhere") is None  # a run recorded before load.json


# ------------------------------------------------------------------ command line and parser


@pytest.mark.parametrize("tool", ["ab", "bombardier"])
def test_the_recorded_command_is_the_one_its_load_makes(tool):
    """The fixtures' settings (meta.json) as a Load give the command line recorded with them."""
    meta = json.loads((LOADGEN / tool / "ok" / "meta.json").read_text())
    recorded = (LOADGEN / tool / "ok" / "command.txt").read_text().strip()
    base_url, path = meta["url"].rsplit("/", 1)
    load = Load(tool, meta["concurrency"], meta["duration_s"], path=f"/{path}", base_url=base_url)
    argv0 = shlex.split(recorded)[0]
    out_dir = Path(shlex.split(recorded)[-2]).parent if tool == "ab" else Path("/unused")
    gen = get_generator(tool)
    gen.executable = lambda: Path(argv0)  # where the tool was when the fixture was recorded
    assert shlex.join(gen.command(load, out_dir)) == recorded


def _ab_output(tmp_path: Path, complete: int) -> Path:
    """ab's recorded output (2 s, 4 connections), as if it had completed `complete` requests."""
    out = tmp_path / "ab"
    shutil.copytree(LOADGEN / "ab" / "ok", out)
    stdout = (out / "stdout.txt").read_text()
    assert "Complete requests:      12824" in stdout
    (out / "stdout.txt").write_text(stdout.replace("12824", str(complete)))
    return out


def test_ab_reads_its_cap_from_the_load_its_command_was_made_from(tmp_path):
    timed = Load("ab", 4, 2, path="/text", base_url="http://127.0.0.1:1")
    argv = get_generator("ab").command(timed, tmp_path)
    cap = int(argv[argv.index("-n") + 1])
    assert cap == ab_request_limit(timed) == 400000
    ab = get_generator("ab")
    assert ab.parse(timed, _ab_output(tmp_path / "below", cap - 1)).requests == cap - 1
    with pytest.raises(ValueError, match="ab reached its request cap 400000 before the time"):
        ab.parse(timed, _ab_output(tmp_path / "at", cap))
    # A request-bounded run stops at -n by design: reaching it is the run, not a cap.
    counted = Load("ab", 4, 2, requests=cap, path="/text", base_url="http://127.0.0.1:1")
    argv = get_generator("ab").command(counted, tmp_path)
    assert argv[argv.index("-n") + 1] == str(cap) and "-t" not in argv
    assert ab.parse(counted, _ab_output(tmp_path / "counted", cap)).requests == cap


def test_wrk_reads_the_pipeline_depth_its_script_was_made_with(tmp_path):
    wrk = get_generator("wrk")
    load = Load("wrk", 4, 2, pipeline=4, path="/text", base_url="http://127.0.0.1:1")
    wrk.executable = lambda: Path("/usr/bin/wrk")  # command() only needs a path
    wrk.command(load, tmp_path)
    assert "local depth = 4" in (tmp_path / "script.lua").read_text()
    assert wrk.parse(load, LOADGEN / "wrk" / "pipeline").requests == 81192
    with pytest.raises(ValueError, match="wrk's summary says pipeline 4, the load 1"):
        wrk.parse(Load("wrk", 4, 2), LOADGEN / "wrk" / "pipeline")


# ------------------------------------------------------------------ the analysis reads it back


def _study_folder(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    study = tmp_path / "study"
    study.mkdir()
    shutil.copy(available()[0].fixtures_dir / "quick-results.csv", study / "results.csv")
    return study, tables.load_results(study, valid_only=False)


def test_a_run_without_load_json_is_shown_as_not_recorded(tmp_path):
    study, results = _study_folder(tmp_path)
    folder = study / results.iloc[0]["run_key"] / "load"
    folder.mkdir(parents=True)
    (folder / "command.txt").write_text("/usr/bin/ab -n 100000 -c 100 http://127.0.0.1:1/x\n")
    row = tables.load_commands(study).iloc[0]
    assert row["load"] == "(not recorded)"
    assert row["command"] == "ab -n 100000 -c 100 http://127.0.0.1:1/x"  # the tool by its name
    assert tables.run_load(study, results.iloc[0]["run_key"]) is None


def test_a_command_run_over_ssh_names_its_files_without_the_load_hosts_folder(tmp_path):
    # As recorded by a selfhost-2012 run over ssh: ab wrote its percentiles on the load host.
    study, results = _study_folder(tmp_path)
    folder = study / results.iloc[0]["run_key"] / "load"
    folder.mkdir(parents=True)
    (folder / "command.txt").write_text(
        "/usr/bin/ab -n 60000 -c 100 -r -l -q -e /tmp/hostbench.nzqHNL/13-load/percentiles.csv "
        "http://198.18.0.1:42301/api/testapi\n"
    )
    row = tables.load_commands(study).iloc[0]
    assert row["command"] == (
        "ab -n 60000 -c 100 -r -l -q -e percentiles.csv http://198.18.0.1:42301/api/testapi"
    )


def test_a_window_of_alternating_runs_shows_its_runs_load_and_command(tmp_path):
    # An interleaved window's raw files are in its first mode's folder (the others point
    # there), a folder per alternating run in its load/: the table shows one run's load and
    # command, found from any of the window's rows, not "(not recorded)".
    study, results = _study_folder(tmp_path)
    cell = results[results["tool"] == results.iloc[0]["tool"]]
    cell = cell[cell["concurrency"] == cell.iloc[0]["concurrency"]]
    pointing, holding = cell.iloc[0]["run_key"], cell.iloc[1]["run_key"]
    (study / pointing).mkdir()
    pointer = f"measured in one interleaved window with {holding}: its raw files are there\n"
    (study / pointing / "interleaved.txt").write_text(pointer)
    recorded = Path(__file__).parent / "fixtures" / "loadgen" / "alternate" / "wrk" / "load"
    shutil.copytree(recorded, study / holding / "load")
    for run in (study / holding / "load").iterdir():  # as the harness wrote it: the run's folder
        command = (run / "command.txt").read_text()
        (run / "command.txt").write_text(command.replace("/tmp/alternate-gmtwsdst/wrk/",
                                                         f"/work/runs/x/{holding}/"))  # fmt: skip
    row = tables.load_commands(study).iloc[0]
    one = read_load(recorded / "001-t1")
    assert row["load"] == f"{one.describe()}: each of the window's alternating runs, one slice"
    assert row["command"].startswith("wrk -t 2 -c 4 -d 1s --latency -s script.lua http://")
    assert tables.run_load(study, holding) == one
    assert tables.run_load(study, pointing) is None
