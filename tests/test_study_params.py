"""Params validation: every bad input is one line naming what was wrong and what is allowed."""

import json
from dataclasses import fields

import pytest
import yaml

from hostbench import __version__
from hostbench.errors import BadInput
from hostbench.harness.order import run_order
from hostbench.harness.preflight import check_runnable
from hostbench.params import (
    KEYS,
    Key,
    Kind,
    LaunchOptions,
    Rule,
    StudyParams,
    check_run_id,
    declared,
    fingerprint,
    load_yaml,
)
from hostbench.params.study import NOT_KEYS
from hostbench.paths import ROOT
from hostbench.studies import STUDIES

GOOD = {
    "modes": ["kestrel", "nginx"],
    "scenarios": ["html", "text"],
    "tools": ["k6", "bombardier"],
    "concurrency": [8, 16],
    "duration_s": 15,
    "warmup_s": 5,
    "repetitions": 3,
}


def test_blocks_hold_every_cell_once_in_a_seeded_random_order():
    params = StudyParams.from_dict(GOOD)
    runs = run_order(params, seed=7)
    assert len(runs) == 2 * 2 * 2 * 2 * 3
    cells = {(r.mode, r.scenario, r.tool, r.concurrency) for r in runs[:16]}
    assert len(cells) == 16 and {r.block for r in runs[:16]} == {1}  # block 1: every cell once
    assert [r.position for r in runs[:16]] == list(range(1, 17))
    keys = [r.key for r in runs]
    assert len(set(keys)) == len(keys)
    assert run_order(params, seed=7) == runs  # the seed decides the order: resumable
    orders = [[r.key.rsplit("__r", 1)[0] for r in runs if r.block == b] for b in (1, 2, 3)]
    assert len({tuple(o) for o in orders}) == 3  # each block shuffled anew
    assert [r.key for r in run_order(params, seed=8)] != keys


def test_blocks_added_leave_the_order_of_those_before_them():
    """A design whose blocks are added as it runs (Stein's two-stage, a run measured until
    decided) goes on where its first blocks stopped: each block's order, its Williams rows and
    its windows off the focus included, is the same whatever the number of blocks after it."""
    focused = {**GOOD, "modes": ["kestrel", "nginx", "caddy"], "focus": ["nginx"], "windows": 2}
    for raw in (GOOD, focused):
        few = run_order(StudyParams.from_dict(raw), seed=5)
        more = run_order(StudyParams.from_dict({**raw, "repetitions": 7}), seed=5)
        assert more[: len(few)] == few and len(more) > len(few)


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
        ({"modes": ["kestrel", "kestrel"]}, "'modes' lists 'kestrel' twice"),
        ({"concurrency": [8, 8]}, "'concurrency' lists 8 twice"),
        ({"access_log": "false"}, "'access_log' must be true or false, got 'false'"),
        ({"app_args": "--x"}, "'app_args' must be a list of strings, got '--x'"),
        ({"url": 5000}, "'url' must be a URL like http://127.0.0.1:5000/, got 5000"),
        ({"tools": ["wrk"], "duration_s": 2.5, "min_duration_s": 1},
         "duration_s 2.5: wrk takes whole seconds only"),
        ({"tools": ["ab"], "warmup_s": 0.5}, "warmup_s 0.5: ab takes whole seconds only"),
        ({"baseline": "caddy"}, "'baseline' 'caddy' is not one of the modes"),
        ({"loadgen_cpus": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}, "give some, not all, of this machine's"),
        ({"loadgen_cpus": ["a"]}, "'loadgen_cpus' must be a list of CPU ids"),
        ({"seed": -1}, "'seed' must be an integer >= 0"),
        ({"modes": ["external"], "url": "https://127.0.0.1/"}, "only http:// URLs"),
        ({"modes": ["httpsys"]}, "mode 'httpsys' runs only on Windows"),
        ({"modes": ["iis-inprocess"]}, "mode 'iis-inprocess' runs only on Windows"),
        ({"modes": ["external"]}, "mode 'external' needs a URL"),
        ({"modes": ["external"], "url": "http://10.0.0.5:80"}, "is not loopback"),
        ({"pipeline": 16}, "pipeline 16 not supported by k6; only wrk pipelines (scenario html)"),
        ({"tools": ["wrk"], "pipeline": {"pdf": 16}}, "'pipeline' names scenario 'pdf', not one"),
        ({"tools": ["wrk"], "pipeline": {"text": 0}}, "'pipeline.text' must be an integer >= 1"),
        ({"tools": ["wrk"], "pipeline": {}}, "'pipeline' is an empty mapping"),
        ({"tools": ["ab"], "requests": {"html": 1.5}}, "'requests.html' must be an integer >= 1"),
        ({"requests": {"html": 1000}}, "k6 cannot stop after a request count; ab and bombardier"),
        ({"app_env": ["X=1"]}, "'app_env' must be a mapping of names to strings"),
        ({"app_env": {"X": 1}}, "'app_env': X must be a string (quote it: '1'), got 1"),
        ({"app_env": {"A B": "1"}}, "'app_env': 'A B' is not an environment variable name"),
        ({"variants": ["a"]}, "'variants' must map names to settings"),
        ({"variants": {"a_b": {}}}, "variant name 'a_b': use up to 40 letters, digits and '-'"),
        ({"variants": {"a": {"args": []}}}, "variant 'a': unknown key(s) args; allowed: app_args"),
        ({"variants": {"a": {"app_args": "--x"}}}, "'variants.a.app_args' must be a list of str"),
        ({"variants": {"a": {"app_env": {"X": True}}}}, "'variants.a.app_env': X must be a str"),
        (
            {"modes": ["iris"], "scenarios": ["values"], "variants": {"a": {}}},
            "'variants' sets test-app options, but mode 'iris' runs goserver",
        ),
        (
            {"modes": ["iris"], "scenarios": ["values", "values-minimal"]},
            "mode 'iris' does not serve scenario 'values-minimal'; it serves values, templates "
            "(params key scenario_modes can run a scenario under some modes only)",
        ),
        (
            {"scenario_modes": {"pdf": ["kestrel"]}},
            "'scenario_modes' names scenario 'pdf', not one",
        ),
        ({"scenario_modes": {"html": ["caddy"]}}, "html lists mode 'caddy', not one of this study"),
        ({"scenario_modes": {"html": []}}, "'scenario_modes.html' is an empty list"),
        ({"nginx_workers": 0}, "'nginx_workers' must be an integer >= 1, got 0"),
        ({"nginx_keepalive_pool": "8"}, "'nginx_keepalive_pool' must be an integer >= 1"),
        (
            {"nginx_keepalive_pool": 8},
            "'nginx_keepalive_pool' shapes an nginx mode with an upstream pool (nginx-keepalive), "
            "but no such mode is in ['kestrel', 'nginx']",
        ),
        (
            {"modes": ["kestrel", "caddy"], "nginx_workers": 1},
            "'nginx_workers' shapes nginx, but no such mode is in ['kestrel', 'caddy']",
        ),
    ],
)  # fmt: skip
def test_bad_params_are_refused_with_one_line(change, message):
    # The core's checks (from_dict), then the preflight of what only a launch can check.
    with pytest.raises(BadInput) as err:
        check_runnable(StudyParams.from_dict({**GOOD, **change}))
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_key_is_named():
    raw = {k: v for k, v in GOOD.items() if k != "warmup_s"}
    with pytest.raises(BadInput, match="params missing key\\(s\\): warmup_s"):
        StudyParams.from_dict(raw)


def test_remote_external_target_needs_the_allow_flag():
    raw = {**GOOD, "modes": ["external"], "url": "http://10.0.0.5:80", "allow_remote": True}
    assert StudyParams.from_dict(raw).options.allow_remote


def test_every_studys_profiles_are_valid_and_quick_extends_paper():
    for study in STUDIES.values():
        if not study.available:
            continue
        assert {"paper", "quick"} <= set(study.profiles())
        for profile in study.profiles():
            assert StudyParams.from_file(study.params_path(profile)).modes
        quick = yaml.safe_load(study.params_path("quick").read_text())
        assert quick.pop("extends") == "paper"  # states only what differs from paper
        paper = load_yaml(study.params_path("paper"))
        assert all(k not in paper or quick[k] != paper[k] for k in quick), "quick repeats paper"


def test_a_profile_states_only_what_differs(tmp_path):
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump(GOOD))
    (tmp_path / "quick.yaml").write_text("extends: paper\nduration_s: 7\n")
    quick = StudyParams.from_file(tmp_path / "quick.yaml")
    assert quick.duration_s == 7 and quick.modes == GOOD["modes"]
    (tmp_path / "loop.yaml").write_text("extends: loop\n")
    with pytest.raises(BadInput, match="'extends' makes a loop"):
        StudyParams.from_file(tmp_path / "loop.yaml")
    (tmp_path / "orphan.yaml").write_text("extends: nope\n")
    with pytest.raises(BadInput, match="nope.yaml not found"):
        StudyParams.from_file(tmp_path / "orphan.yaml")


def test_params_round_trip_whole_as_papermill_passes_them():
    params = StudyParams.from_dict({**GOOD, "app_args": ["--log-level", "Information"]})
    again = StudyParams.from_dict(params.to_dict())
    assert again == params and again.options.app_args == ["--log-level", "Information"]


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("modes: [kestrel\n")
    with pytest.raises(BadInput, match="not valid YAML"):
        StudyParams.from_file(bad)
    with pytest.raises(BadInput, match="not found"):
        StudyParams.from_file(tmp_path / "nope.yaml")


@pytest.mark.parametrize("run_id", ["", "../x", "a b", "-x", "x" * 65, None])
def test_bad_run_ids(run_id):
    with pytest.raises(BadInput, match="run id"):
        check_run_id(run_id)


def test_per_scenario_requests_and_pipeline_apply_to_their_scenarios_only():
    p = StudyParams.from_dict(
        {**GOOD, "tools": ["bombardier"], "requests": {"html": 1000}, "pipeline": 1}
    )
    assert (p.requests_for("html"), p.requests_for("text")) == (1000, None)
    w = StudyParams.from_dict({**GOOD, "tools": ["wrk"], "pipeline": {"text": 16}})
    assert (w.pipeline_for("text"), w.pipeline_for("html")) == (16, 1)
    assert StudyParams.from_dict(w.to_dict()) == w  # as papermill passes them
    assert w.measured_settings()["pipeline"] == {"text": 16}  # in every run's fingerprint
    one = StudyParams.from_dict({**GOOD, "tools": ["ab"], "requests": 500})
    assert one.requests_for("html") == one.requests_for("text") == 500


def test_variants_are_cells_of_their_own_with_the_app_options_added():
    raw = {
        **GOOD,
        "modes": ["kestrel", "nginx"],
        "app_args": ["--log-level", "Warning"],
        "app_env": {"A": "1"},
        "variants": {"plain": {}, "ioq1": {"app_args": ["--io-queue-count", "1"]},
                     "inline": {"app_env": {"A": "2", "B": "x"}}},
    }  # fmt: skip
    p = StudyParams.from_dict(raw)
    assert StudyParams.from_dict(p.to_dict()) == p
    assert len(p.cells()) == 2 * 3 * 2 * 2 * 2
    assert p.options_for("").app_args == ["--log-level", "Warning"]
    ioq1 = p.options_for("ioq1")
    assert ioq1.app_args == ["--log-level", "Warning", "--io-queue-count", "1"]
    assert p.options_for("inline").app_env == {"A": "2", "B": "x"}  # the variant's value wins
    assert p.options.app_env == {"A": "1"}  # unchanged
    runs = run_order(p, seed=1)
    keys = [r.key for r in runs]
    assert len(set(keys)) == len(keys) == len(p.cells()) * 3
    one = next(r for r in runs if r.variant == "ioq1" and r.mode.id == "nginx")
    cell = f"{one.scenario.id}__{one.tool}__c{one.concurrency}"
    assert one.key == f"nginx@ioq1__{cell}__r{one.block}"


def test_scenario_modes_runs_a_scenario_under_the_modes_listed_only():
    raw = {
        **GOOD,
        "modes": ["kestrel", "iris"],
        "scenarios": ["values", "values-minimal"],
        "scenario_modes": {"values-minimal": ["kestrel"]},
    }
    p = StudyParams.from_dict(raw)
    pairs = {(m, sc) for m, _, sc, _, _ in p.cells()}
    assert pairs == {("kestrel", "values"), ("iris", "values"), ("kestrel", "values-minimal")}
    assert len(run_order(p, seed=3)) == 3 * 2 * 2 * 3  # pairs x tools x concurrency x blocks


def test_nginx_settings_reach_the_launch_and_change_fingerprints_only_when_set():
    from hostbench.params import fingerprint

    plain = StudyParams.from_dict({**GOOD, "modes": ["kestrel", "nginx-keepalive"]})
    tuned = StudyParams.from_dict(
        {**plain.to_dict(), "nginx_keepalive_pool": 2, "nginx_workers": 1}
    )
    own = tuned.options.program_settings
    assert (own["nginx_keepalive_pool"], own["nginx_workers"]) == (2, 1)
    assert StudyParams.from_dict(tuned.to_dict()) == tuned  # round-trips, as papermill passes it
    # Unset, the keys are not among a run's settings: runs recorded before them keep their
    # fingerprints (and so resume).
    assert not {"nginx_keepalive_pool", "nginx_workers"} & set(plain.measured_settings())
    assert fingerprint(plain.measured_settings()) != fingerprint(tuned.measured_settings())


def test_each_general_key_is_one_field_of_the_params():
    # StudyParams' fields, with the launch options', are KEYS: a key without a field would be
    # dropped on reading, a field without a key never validated.
    own = [f.name for f in fields(StudyParams) if f.name != "options"]
    launch = [f.name for f in fields(LaunchOptions) if f.name not in NOT_KEYS]
    assert sorted(own + launch) == sorted(k.name for k in KEYS)


def test_a_keys_kind_says_whether_a_runs_fingerprint_holds_it():
    p = StudyParams.from_dict(GOOD)  # every optional key at its default
    measured = {k.name for k in declared() if k.kind == Kind.MEASURED}
    assert set(p.measured_settings()) == {*measured, "hostbench_version"}
    # A key of another kind changes no run's fingerprint; a measured one does.
    for change in ({"repetitions": 5}, {"description": "another"}, {"seed": 3},
                   {"busy_reruns": 0}, {"target_halfwidth_pct": 5}):  # fmt: skip
        changed = StudyParams.from_dict({**GOOD, **change})
        assert changed.measured_settings() == p.measured_settings(), change
    longer = StudyParams.from_dict({**GOOD, "duration_s": 16})
    assert fingerprint(longer.measured_settings()) != fingerprint(p.measured_settings())
    # A key declared without a kind is measured when set: at its default it is left out, so
    # the runs recorded before it keep their fingerprints.
    new = Key("new_key", None, "", "A key added later.", Rule("str"), null="")
    assert (new.kind, new.in_fingerprint(None), new.in_fingerprint("on")) == (
        Kind.MEASURED_WHEN_SET, False, True)  # fmt: skip


def test_the_committed_runs_fingerprints_follow_from_their_params():
    # What a resume of a committed run compares its windows' fingerprints with: the kinds must
    # give each the fingerprint it was recorded with (runs of this version).
    checked = 0
    for path in sorted((ROOT / "data" / "runs").glob("**/params.json")):
        recorded = json.loads(path.read_text())
        if recorded.get("hostbench_version") == __version__:
            params = StudyParams.from_run(path.parent)
            assert fingerprint(params.measured_settings()) == recorded["fingerprint"], path
            checked += 1
    assert checked > 0


def test_progress_is_off_unless_asked_and_changes_fingerprints_only_when_set():
    from hostbench.params import fingerprint

    plain = StudyParams.from_dict(GOOD)
    progress = StudyParams.from_dict({**GOOD, "progress_interval_s": 1})
    assert plain.progress_interval_s is None and progress.progress_interval_s == 1.0
    assert StudyParams.from_dict(progress.to_dict()) == progress  # round-trips
    # Off, the key is not among a run's settings: other studies' runs keep their fingerprints.
    assert "progress_interval_s" not in plain.measured_settings()
    assert fingerprint(plain.measured_settings()) != fingerprint(progress.measured_settings())
    with pytest.raises(
        BadInput, match=r"^params key 'progress_interval_s' must be a number >= 0.5"
    ):
        StudyParams.from_dict({**GOOD, "progress_interval_s": 0.1})


SWEEP = {
    "n": "cores-x2",
    "variants": {
        "ioq{n}": {"app_args": ["--io-queue-count", "{n}"]},
        "ioq{n}-inline": {"app_args": ["--io-queue-count", "{n}"], "app_env": {"Q": "{n}"}},
    },
}


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_a_variant_sweep_runs_from_one_to_twice_the_cores(monkeypatch, cores):
    from hostbench.params import expansion

    monkeypatch.setattr(expansion, "machine_cores", lambda: cores)
    raw = {**GOOD, "modes": ["kestrel"], "variants": {"default": {}}, "variant_sweep": SWEEP}
    p = StudyParams.from_dict(raw)
    values = list(range(1, 2 * cores + 1))
    assert p.variant_sweep["values"] == values and p.variant_sweep["cores"] == cores
    # The stated variants first, then value by value, template by template.
    assert list(p.variants) == ["default"] + [
        name for n in values for name in (f"ioq{n}", f"ioq{n}-inline")
    ]
    top = 2 * cores
    assert p.options_for(f"ioq{top}-inline").app_args[-2:] == ["--io-queue-count", str(top)]
    assert p.options_for(f"ioq{top}-inline").app_env == {"Q": str(top)}
    # params.json keeps the values it ran with: read back on a machine with other cores, the
    # same variants.
    recorded = p.to_dict()
    monkeypatch.setattr(expansion, "machine_cores", lambda: cores + 3)
    assert StudyParams.from_dict(recorded) == p
    assert list(recorded["variants"]) == ["default"]  # the sweep is stated once, as the sweep


def test_a_variant_sweep_lists_values_and_words(monkeypatch):
    from hostbench.params import expansion

    monkeypatch.setattr(expansion, "machine_cores", lambda: 3)
    sweep = {**SWEEP, "n": [1, "cores", "cores-x2"]}
    p = StudyParams.from_dict({**GOOD, "modes": ["kestrel"], "variant_sweep": sweep})
    assert p.variant_sweep["values"] == [1, 3, 6]


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ({**SWEEP, "n": "cores-x3"}, "'variant_sweep.n' is 'cores-x3'; allowed: cores, cores-x2"),
        ({**SWEEP, "n": [0, 2]}, "'variant_sweep.n' must be an integer >= 1, got 0"),
        ({**SWEEP, "n": [2, 2]}, "'variant_sweep.n' lists 2 twice"),
        ({"n": 2}, "'variant_sweep' must be {n:"),
        ({**SWEEP, "variants": {"ioq": {}}}, "template 'ioq' must contain {n}"),
        ({**SWEEP, "step": 2}, "unknown key(s) step; allowed: n, variants"),
    ],
)
def test_a_bad_variant_sweep_is_refused_in_one_line(sweep, message):
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict({**GOOD, "modes": ["kestrel"], "variant_sweep": sweep})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_swept_name_already_stated_is_refused():
    raw = {**GOOD, "modes": ["kestrel"], "variants": {"ioq1": {}},
           "variant_sweep": {**SWEEP, "n": [1]}}  # fmt: skip
    with pytest.raises(BadInput, match="makes variant 'ioq1', already in 'variants'"):
        StudyParams.from_dict(raw)


def test_a_keys_rule_is_declared_once_and_validation_and_docs_follow(monkeypatch):
    """Each key's type and range live in its one declaration (KEYS): changed there, the
    validation and docs/params.md both follow, for a list and for a per-scenario key."""
    import dataclasses

    from hostbench.params import keys, markdown

    assert StudyParams.from_dict({**GOOD, "concurrency": [1]}).concurrency == [1]
    ab = {**GOOD, "tools": ["ab"], "requests": {"html": 500}}
    assert StudyParams.from_dict(ab).requests_for("html") == 500
    stricter = {"concurrency": 2, "requests": 1000}
    declared = tuple(
        dataclasses.replace(k, rule=dataclasses.replace(k.rule, minimum=stricter[k.name]))
        if k.name in stricter
        else k
        for k in keys.KEYS
    )
    monkeypatch.setattr(keys, "KEYS", declared)
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict({**GOOD, "concurrency": [1]})
    assert str(err.value) == "params key 'concurrency' must be an integer >= 2, got 1"
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict(ab)
    assert str(err.value) == "params key 'requests.html' must be an integer >= 1000, got 500"
    rows = {line.split(" | ")[0]: line for line in markdown().splitlines()}
    assert rows["| `concurrency`"].startswith("| `concurrency` | cell | list of int | required |")
    assert rows["| `concurrency`"].endswith("| >= 2 |")
    assert rows["| `requests`"].endswith("| >= 1000; ab and bombardier only |")
    assert " int, {scenario: int} or null " in rows["| `requests`"]


def test_smoke_implies_the_smoke_settings_unless_the_params_state_them():
    plain = StudyParams.from_dict(GOOD)
    assert plain.quiet_max_cores == 0.1 and plain.require_steady is True
    smoke = StudyParams.from_dict({**GOOD, "smoke": True})
    assert smoke.quiet_max_cores is None and smoke.require_steady is False
    assert StudyParams.from_dict(smoke.to_dict()) == smoke  # params.json states them
    stated = StudyParams.from_dict({**GOOD, "smoke": True, "quiet_max_cores": 0.2})
    assert stated.quiet_max_cores == 0.2 and stated.require_steady is False
    for study in STUDIES.values():  # every quick profile says smoke: true, and only that
        if study.available:
            quick = StudyParams.from_file(study.params_path("quick"))
            assert quick.smoke and quick.quiet_max_cores is None and not quick.require_steady
            stated = load_yaml(study.params_path("quick"))
            assert "quiet_max_cores" not in stated and "require_steady" not in stated


def test_validated_params_are_taken_whole_without_a_second_check():
    """What reproduce hands a notebook (to_dict of validated params) builds the same params;
    the cells' loads and the sub-studies are made once and kept."""
    raw = {**GOOD, "modes": ["kestrel"], "variants": {"default": {}},
           "variant_sweep": {**SWEEP, "n": [1, 2]},
           "sub_studies": {"one": {"concurrency": [8], "repetitions": 1}}}  # fmt: skip
    p = StudyParams.from_dict(raw)
    assert StudyParams.from_validated(p.to_dict()) == p
    assert p.load("html", "k6", 8) is p.load("html", "k6", 8)
    assert p.sub_study("one") is p.sub_study("one") and p.sub_study("one").concurrency == [8]


def _over_ssh(path) -> StudyParams:
    return StudyParams.from_file(path, {"topology": "ssh", "inventory": "hosts.ini"})


@pytest.mark.parametrize("study", sorted(STUDIES), ids=str)
def test_over_ssh_a_study_skips_its_sub_studies_about_one_machine_and_runs_the_rest(study):
    # Each profile with topology ssh added, as docs/hosts.md tells a reader to write it: nothing
    # refused; a sub-study of another topology or pinning the load tool is skipped, saying why
    # in one line; every other runs on the same two hosts.
    for path in sorted(STUDIES[study].folder.glob("params/*.yaml")):
        p = check_runnable(_over_ssh(path))
        one_machine = [n for n, o in p.sub_studies.items()
                       if o.get("topology", "ssh") != "ssh" or "loadgen_cpus" in o]  # fmt: skip
        assert list(p.sub_studies_skipped) == one_machine, path.name
        for name, why in p.sub_studies_skipped.items():
            assert why.startswith("skipped over ssh: it ") and "\n" not in why
            with pytest.raises(BadInput, match=f"sub-study '{name}' does not run: skipped"):
                p.sub_study(name)
        assert p.sub_studies_run == [n for n in p.sub_studies if n not in one_machine]
        for name in p.sub_studies_run:
            sub = p.sub_study(name)
            assert (sub.topology, sub.inventory) == ("ssh", "hosts.ini")


def test_a_skipped_sub_study_says_why_and_measures_nothing(tmp_path, capsys):
    from hostbench.harness.notebook import StudyRun

    p = StudyParams.from_dict({**GOOD, "modes": ["kestrel"], "topology": "ssh",
                               "inventory": "hosts.ini", "sub_studies": {
                                   "pinned": {"loadgen_cpus": [1]},
                                   "netns": {"topology": "netns"},
                                   "more": {"concurrency": [16]}}})  # fmt: skip
    assert p.sub_studies_run == ["more"]
    assert "loadgen_cpus" in p.sub_studies_skipped["pinned"]
    assert "topology netns" in p.sub_studies_skipped["netns"]
    run = StudyRun("jcsi2018", "quick", "r", tmp_path, p)
    assert run.sub_run("pinned").measure() is None
    assert capsys.readouterr().out == f"r-pinned: not run: {p.sub_studies_skipped['pinned']}\n"
    assert run.sub_study_missing("netns") == f"was {p.sub_studies_skipped['netns']}"
    assert run.sub_study_missing("elsewhere") == "is not in this profile"
    assert run.sub_run("more").params.concurrency == [16]
    # Where the study runs on one machine, each runs as it says.
    local = StudyParams.from_dict({**GOOD, "modes": ["kestrel"],
                                   "sub_studies": {"pinned": {"loadgen_cpus": [1]}}})  # fmt: skip
    assert local.sub_studies_skipped == {} and local.sub_study("pinned").loadgen_cpus == [1]


def test_a_relative_inventory_is_read_beside_its_params_file(tmp_path):
    (tmp_path / "hosts.ini").write_text("[server]\nsrv\n[loadgen]\nlg\n")
    (tmp_path / "mine.yaml").write_text(
        "modes: [kestrel]\nscenarios: [text]\ntools: [bombardier]\nconcurrency: [8]\n"
        "duration_s: 5\nwarmup_s: 0\nrepetitions: 1\ntopology: ssh\ninventory: hosts.ini\n"
    )
    params = StudyParams.from_file(tmp_path / "mine.yaml")
    assert params.inventory == str((tmp_path / "hosts.ini").resolve())
