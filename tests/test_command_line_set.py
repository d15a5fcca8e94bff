"""`--set KEY=VALUE` on `run`, `reproduce` and `reproduce-all`: params keys over the profile,
validated as a params file's, recorded in params.json and named in the report."""

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import SHORT_RUNS, interruptible, params_record
from hostbench.__main__ import main
from hostbench.analysis.tables import measured_text
from hostbench.errors import BadInput
from hostbench.harness import run_folder
from hostbench.harness.study import run_study
from hostbench.params import COMMAND_LINE_KEY, StudyParams, params_with_settings
from hostbench.reproduce import BATCH_FILE, reproduce, reproduce_all, settings_of, write_index
from hostbench.studies import get_study

QUICK = get_study("jcsi2018").params_path("quick")
LAB_RUN = Path(__file__).parent / "fixtures" / "lab"


def test_settings_apply_over_the_profile_and_are_recorded():
    profile = StudyParams.from_file(QUICK)
    p = params_with_settings(QUICK, ["duration_s=7", "modes=[nginx-keepalive,kestrel]"])
    assert p.duration_s == 7.0 and p.modes == ["nginx-keepalive", "kestrel"]
    # The profile stays the base: every other key as it has it.
    unchanged = {k: v for k, v in profile.to_dict().items()
                 if k not in ("duration_s", "modes", COMMAND_LINE_KEY)}  # fmt: skip
    assert {k: p.to_dict()[k] for k in unchanged} == unchanged
    assert p.set_on_command_line == {"duration_s": "7", "modes": "[nginx-keepalive,kestrel]"}
    # params.json records them, and reads back with them (the notebook gets to_dict's).
    recorded = run_folder.recorded(p, seed=1)
    assert recorded[COMMAND_LINE_KEY] == p.set_on_command_line and recorded["duration_s"] == 7.0
    assert StudyParams.from_validated(p.to_dict()).set_on_command_line == p.set_on_command_line
    assert profile.set_on_command_line == {}  # none given: none recorded


def test_each_value_is_read_as_yaml():
    p = params_with_settings(QUICK, ["baseline=null", "repetitions=2", "scenarios=[json]",
                                     "app_env={DOTNET_TieredPGO: '0'}"])  # fmt: skip
    assert p.baseline is None and p.repetitions == 2 and p.scenarios == ["json"]
    assert p.options.app_env == {"DOTNET_TieredPGO": "0"}
    assert p.set_on_command_line["app_env"] == "{DOTNET_TieredPGO: '0'}"  # as typed


@pytest.mark.parametrize(
    "setting, message",
    [
        ("duraton_s=5", "error: --set 'duraton_s=5': give NAME=VALUE, NAME one of modes, "),
        ("duration_s", "error: --set 'duration_s': give NAME=VALUE, NAME one of modes, "),
        ("duration_s=abc", "error: --set duration_s=abc: params key 'duration_s' must be a "
                           "number >= 1, got 'abc'"),
        ("duration_s=2", "error: --set duration_s=2: params key 'duration_s' is 2, shorter "
                         "than min_duration_s 5"),
        ("modes=[kestrel,ngnix]", "error: --set modes=[kestrel,ngnix]: unknown mode 'ngnix'; "
                                  "allowed: kestrel, nginx,"),
        ("modes=[kestrel", "error: --set 'modes=[kestrel': '[kestrel' is not a value"),
        ("set_on_command_line={}", "error: --set 'set_on_command_line={}': give NAME=VALUE"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_one_line_and_nothing_is_written(tmp_path, capsys, setting, message):
    runs = tmp_path / "runs"
    commands = [
        ["run", "jcsi2018", "--profile", "quick", "--run-id", "s", "--runs-dir", str(runs)],
        ["reproduce", "--study", "jcsi2018", "--profile", "quick", "--run-id", "s",
         "--runs-dir", str(runs)],
        ["reproduce-all", "--profile", "quick", "--batch-id", "b", "--runs-dir", str(runs),
         "--study", "jcsi2018"],
    ]  # fmt: skip
    for command in commands:
        assert main([*command, "--set", "repetitions=1", "--set", setting]) == 2
        err = capsys.readouterr().err
        study = "jcsi2018: " if command[0] == "reproduce-all" else ""  # which study refused it
        assert err.startswith(message.replace("error: ", f"error: {study}"))
        assert err.count("\n") == 1, err
        assert not runs.exists()


def test_the_culprit_among_several_settings_is_named():
    with pytest.raises(BadInput) as e:
        params_with_settings(QUICK, ["duration_s=6", "warmup_s=-1", "repetitions=2"])
    assert str(e.value).startswith("--set warmup_s=-1: params key 'warmup_s' must be a number")
    # The params with the settings given are what the error describes.
    with pytest.raises(BadInput, match="^--set min_duration_s=7: params key 'duration_s' is 6,"):
        params_with_settings(QUICK, ["duration_s=6", "min_duration_s=7"])
    # Two wrong at once: both named.
    with pytest.raises(BadInput, match="^--set modes=x duration_s=0: unknown mode 'x'"):
        params_with_settings(QUICK, ["modes=x", "duration_s=0"])
    with pytest.raises(BadInput, match="^--set duration_s is given twice; give each key once$"):
        params_with_settings(QUICK, ["duration_s=6", "duration_s=7"])


def test_a_re_render_takes_no_settings(tmp_path):
    with pytest.raises(BadInput, match="--render-only re-renders with the settings the run was"):
        reproduce("jcsi2018", "quick", "s", tmp_path, render_only=True, settings=["duration_s=6"])
    assert list(tmp_path.iterdir()) == []


def test_resuming_with_other_settings_is_refused(tmp_path):
    """The run folder's params.json holds duration_s=7 from --set; duration_s=8 is refused
    before anything starts, as any changed setting is, and params.json is left as it was."""
    first = params_with_settings(QUICK, ["duration_s=7"])
    folder = tmp_path / "s"
    folder.mkdir()
    recorded = json.dumps(run_folder.recorded(first, seed=1), indent=2)
    (folder / "params.json").write_text(recorded)
    with pytest.raises(BadInput, match=r"other settings: duration_s \(7.0 -> 8.0\)"):
        run_study(params_with_settings(QUICK, ["duration_s=8"]), "s", tmp_path, progress=False)
    assert (folder / "params.json").read_text() == recorded


def test_a_change_of_repetitions_is_a_change_of_settings(tmp_path):
    """More repetitions for a fixed design is refused (optional continuation on its t
    intervals: tests/test_claim_error.py), fewer too, and so is more for a design whose
    blocks are decided as it runs: each before anything starts."""

    def refusal(before: list[str], after: list[str]) -> str:
        folder = tmp_path / "s"
        folder.mkdir(exist_ok=True)
        recorded = params_record(params_with_settings(QUICK, before), seed=1)
        (folder / "params.json").write_text(json.dumps(recorded))
        with pytest.raises(BadInput) as e:
            run_study(params_with_settings(QUICK, after), "s", tmp_path, progress=False)
        return str(e.value)

    assert "a fixed design of 2 blocks resumed with 5" in refusal(["repetitions=2"],
                                                                   ["repetitions=5"])  # fmt: skip
    changed = "other settings: {}. Use a new --run-id"
    assert changed.format("repetitions (5 -> 2)") in refusal(["repetitions=5"], ["repetitions=2"])
    sized = ["target_halfwidth_pct=5", "max_repetitions=10"]
    grown = refusal([*sized, "repetitions=2"], [*sized, "repetitions=5"])
    assert changed.format("repetitions (2 -> 5)") in grown


def test_the_report_and_the_batch_index_name_the_settings(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(LAB_RUN, run)
    assert "set on the command line" not in measured_text(run / "results.csv")
    params = json.loads((run / "params.json").read_text())
    params[COMMAND_LINE_KEY] = {"duration_s": "5", "modes": "[kestrel,nginx]"}
    (run / "params.json").write_text(json.dumps(params))
    line = measured_text(run / "results.csv")
    assert line.endswith("; set on the command line: duration_s=5, modes=[kestrel,nginx]")
    page = write_index(tmp_path, "quick", ["duration_s=5"]).read_text()
    assert "Profile <code>quick</code>; set on the command line: <code>duration_s=5</code>" in page


def test_a_batch_resumes_only_with_its_own_settings(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / BATCH_FILE).write_text(json.dumps({"profile": "quick"}))
    with pytest.raises(BadInput, match="batch b runs with --set none, not duration_s=6: resume"):
        reproduce_all("quick", batch_id="b", runs_dir=tmp_path, only=["jcsi2018"],
                      settings=["duration_s=6"])  # fmt: skip
    assert [p.name for p in (tmp_path / "b").iterdir()] == [BATCH_FILE]


def test_a_batch_setting_for_one_study_applies_to_that_study_alone(tmp_path):
    given = ["duration_s=2", "selfhost-2012:requests=15000", "jcsi2018:warmup_s=1"]
    assert settings_of("selfhost-2012", given) == ["duration_s=2", "requests=15000"]
    assert settings_of("jcsi2018", given) == ["duration_s=2", "warmup_s=1"]
    assert settings_of("go-vs-dotnet-2017", given) == ["duration_s=2"]
    # requests is refused by an interleaved study: only the study it names is asked to take it
    with pytest.raises(BadInput, match="interleaved window is timed"):
        params_with_settings(get_study("jcsi2018").params_path("quick"), ["requests=15000"])
    with pytest.raises(BadInput, match=r"--set nope:requests=1: no study 'nope'; STUDY:KEY"):
        reproduce_all("quick", batch_id="b", runs_dir=tmp_path, settings=["nope:requests=1"])
    assert not (tmp_path / "b").exists()  # refused before anything was made


@pytest.mark.live
def test_a_run_measures_with_the_value_set_and_a_resume_with_another_is_refused(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({
        "modes": ["kestrel"], "scenarios": ["text"], "tools": ["bombardier"],
        "concurrency": [2], "duration_s": 3, "warmup_s": 0, "repetitions": 1, **SHORT_RUNS,
    }))  # fmt: skip
    runs = tmp_path / "runs"

    def run(value):
        cli = interruptible(
            [sys.executable, "-m", "hostbench", "run", str(params), "--run-id", "s",
             "--runs-dir", str(runs), "--no-progress", "--set", f"duration_s={value}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _, err = cli.communicate(timeout=120)
        return cli.returncode, err

    code, err = run(2)
    assert code == 0, err
    results = (runs / "s" / "results.csv").read_text()
    [row] = list(csv.DictReader(io.StringIO(results)))
    assert row["duration_target_s"] == "2.0" and row["valid"] == "True"
    recorded = json.loads((runs / "s" / "params.json").read_text())
    assert recorded["duration_s"] == 2.0 and recorded[COMMAND_LINE_KEY] == {"duration_s": "2"}

    code, err = run(4)
    assert code == 2 and err.count("\n") == 1
    assert "holds runs measured with other settings: duration_s (2.0 -> 4.0)" in err
    assert (runs / "s" / "results.csv").read_text() == results
