"""Params validation: every bad input is one line naming what was wrong and what is allowed."""

import pytest

from hostbench.errors import BadInput
from hostbench.study import StudyParams, check_run_id

GOOD = {
    "modes": ["kestrel", "nginx"],
    "scenarios": ["html", "text"],
    "tools": ["k6", "bombardier"],
    "concurrency": [8, 16],
    "duration_s": 15,
    "warmup_s": 5,
    "repetitions": 3,
}


def test_matrix_is_the_product_with_repetitions_outermost():
    runs = StudyParams.from_dict(GOOD).runs()
    assert len(runs) == 2 * 2 * 2 * 2 * 3
    assert [r.repetition for r in runs[:16]] == [1] * 16
    keys = [r.key for r in runs]
    assert len(set(keys)) == len(keys)
    assert keys[0] == "kestrel__html__k6__c8__r1"


def test_scalars_are_accepted_where_lists_are_expected():
    p = StudyParams.from_dict({**GOOD, "modes": "kestrel", "concurrency": 8})
    assert p.modes == ["kestrel"] and p.concurrency == [8]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"modes": ["kestrel", "apache"]}, "unknown mode 'apache'; allowed: kestrel, nginx"),
        ({"scenarios": ["pdf"]}, "unknown scenario 'pdf'; allowed: html, text, json, xml"),
        ({"tools": ["jmeter"]}, "unknown tool 'jmeter'; allowed: ab, bombardier, k6, wrk"),
        ({"concurrency": [0]}, "'concurrency' must be an integer >= 1, got 0"),
        ({"concurrency": [2.5]}, "'concurrency' must be an integer >= 1, got 2.5"),
        ({"duration_s": "15s"}, "'duration_s' must be a number >= 1, got '15s'"),
        ({"warmup_s": -1}, "'warmup_s' must be a number >= 0, got -1"),
        ({"repetitions": True}, "'repetitions' must be an integer >= 1, got True"),
        ({"modes": []}, "'modes' is an empty list"),
        ({"vus": 8}, "unknown params key(s): vus; allowed: modes, scenarios"),
        ({"modes": ["httpsys"]}, "mode 'httpsys' runs only on Windows"),
        ({"modes": ["iis-inprocess"]}, "mode 'iis-inprocess' runs only on Windows"),
        ({"modes": ["external"]}, "mode 'external' needs a URL"),
        ({"modes": ["external"], "url": "http://10.0.0.5:80"}, "is not loopback"),
    ],
)
def test_bad_params_are_refused_with_one_line(change, message):
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict({**GOOD, **change})
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_key_is_named():
    raw = {k: v for k, v in GOOD.items() if k != "warmup_s"}
    with pytest.raises(BadInput, match="params missing key\\(s\\): warmup_s"):
        StudyParams.from_dict(raw)


def test_remote_external_target_needs_the_allow_flag():
    raw = {**GOOD, "modes": ["external"], "url": "http://10.0.0.5:80", "allow_remote": True}
    assert StudyParams.from_dict(raw).options.allow_remote


def test_params_files_in_the_repository_are_valid():
    from hostbench.paths import PARAMS

    files = sorted(PARAMS.glob("*.yaml"))
    assert {f.stem for f in files} >= {"paper", "quick"}
    for f in files:
        assert StudyParams.from_file(f).runs()


def test_paper_profile_is_the_papers_settings():
    from hostbench.paths import PARAMS

    p = StudyParams.from_file(PARAMS / "paper.yaml")
    assert (p.tools, p.concurrency, p.duration_s) == (["k6"], [8], 15.0)
    assert p.scenarios == ["html", "text", "json", "xml"]


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("modes: [kestrel\n")
    with pytest.raises(BadInput, match="not valid YAML"):
        StudyParams.from_file(bad)
    with pytest.raises(BadInput, match="not found"):
        StudyParams.from_file(tmp_path / "nope.yaml")


@pytest.mark.parametrize("run_id", ["", "../x", "a b", "-x"])
def test_bad_run_ids(run_id):
    with pytest.raises(BadInput, match="run id"):
        check_run_id(run_id)
