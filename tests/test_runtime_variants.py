"""The runtime variants' declarations (hostbench/runtime_variants.py) and the one-line refusals
a launch gives before anything starts: an unknown variant, a scenario its app does not serve, a
mode it cannot run under, settings that contradict it. Starts no process."""

import re

import pytest

from hostbench.catalog import MODES, SCENARIOS, get_mode
from hostbench.errors import BadInput
from hostbench.harness.launch.modes import check
from hostbench.params import LaunchOptions
from hostbench.params.keys import read_variants
from hostbench.results import BY_NAME, RUNTIME_VARIANT_COLUMNS
from hostbench.runtime_variants import (
    AOT_SCENARIOS,
    VARIANTS,
    build_dir,
    check_serves,
    get_variant,
    publish_argv,
    reported_matches,
)
from hostbench.runtimes import DEFAULT_RUNTIME, RUNTIMES, build_of, variant_name


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text, text
    return text


def test_an_unknown_variant_gets_one_line_listing_the_allowed_ones():
    with pytest.raises(BadInput) as e:
        get_variant("aot-net7")
    text = one_line(e)
    assert text.startswith("unknown runtime variant 'aot-net7'; allowed: ")
    assert text.split("allowed: ")[1].split(", ") == list(VARIANTS)


@pytest.mark.parametrize("scenario", sorted(set(SCENARIOS) - set(AOT_SCENARIOS)))
def test_an_aot_variant_refuses_by_name_a_scenario_its_app_cannot_serve(scenario):
    with pytest.raises(BadInput) as e:
        check_serves(get_variant("aot"), scenario)
    text = one_line(e)
    assert f"cannot serve scenario {scenario!r}" in text and "Native AOT" in text
    assert text.endswith("it serves text, json, plaintext, hello-json, values")


def test_the_aot_app_serves_what_the_test_app_serves_for_those_scenarios():
    for name in ("aot", "jit", "aot-datas-net8"):
        for scenario in AOT_SCENARIOS:
            check_serves(get_variant(name), scenario)  # no refusal
    for scenario in SCENARIOS:  # the test app's GC variants serve everything
        check_serves(get_variant("datas"), scenario)


def test_every_variant_name_is_a_valid_variant_name_and_says_its_parts():
    read_variants("variants", {name: {"app_env": {}} for name in VARIANTS})  # the names' rule
    for name, v in VARIANTS.items():
        assert "." not in name and (v.build.name or v.gc.name)
        runtime = "" if v.runtime == DEFAULT_RUNTIME else variant_name(v.runtime)
        assert name.split("-") == [p for p in (v.build.name, v.gc.name, runtime) if p]
        assert v.label.endswith(f".NET {variant_name(v.runtime).removeprefix('net')}")
    assert {v.runtime for v in VARIANTS.values() if v.build.kind == "aot"} == set(RUNTIMES)


def test_the_gc_settings_ask_the_runtime_for_what_they_name():
    assert get_variant("workstationgc").env == {"DOTNET_gcServer": "0"}
    # Server GC adapts by default from .NET 9: plain server GC turns it off, DATAS turns it on.
    assert get_variant("servergc-net9").env["DOTNET_GCDynamicAdaptationMode"] == "0"
    assert get_variant("aot-datas").env == {"DOTNET_gcServer": "1",
                                            "DOTNET_GCDynamicAdaptationMode": "1"}  # fmt: skip
    assert get_variant("aot").env == {}  # the build's own default, as it reports it


def test_aot_publishes_native_and_jit_self_contained_from_the_same_source(tmp_path):
    aot, jit = get_variant("aot-net8"), get_variant("jit-net8")
    assert aot.build.sources == jit.build.sources
    aot_argv, jit_argv = publish_argv(aot, tmp_path / "a"), publish_argv(jit, tmp_path / "j")
    assert "-p:PublishAot=true" in aot_argv and "--self-contained" not in aot_argv
    assert "--self-contained" in jit_argv and "-p:PublishAot=true" not in jit_argv
    for argv, out in ((aot_argv, tmp_path / "a"), (jit_argv, tmp_path / "j")):
        assert argv[argv.index("-f") + 1] == "net8.0" and argv[argv.index("-o") + 1] == str(out)


def test_a_gc_variant_of_the_test_app_runs_the_runtimes_axis_build():
    for runtime in RUNTIMES:
        suffix = "" if runtime == DEFAULT_RUNTIME else f"-{variant_name(runtime)}"
        variant = get_variant(f"datas{suffix}")
        assert variant.executable == build_of(runtime)
    # every GC setting of one build shares its folder: they differ in their env only
    assert build_dir(get_variant("aot-datas")) == build_dir(get_variant("aot-workstationgc"))
    assert build_dir(get_variant("aot")) != build_dir(get_variant("jit"))


def test_a_launch_refuses_a_mode_the_aot_app_cannot_run_before_anything_starts():
    opts = LaunchOptions(runtime_variant="aot")
    check(get_mode("kestrel"), opts)  # fine
    check(get_mode("nginx-uds"), opts)  # behind a proxy too
    for mode_id, why in (("kestrel-mvccore", "--mvc core"), ("iris", "runs goserver")):
        with pytest.raises(BadInput) as e:
            check(MODES[mode_id], opts)
        assert why in one_line(e)


@pytest.mark.parametrize(
    "opts, says",
    [
        (LaunchOptions(runtime_variant="nope"), "unknown runtime variant 'nope'"),
        (LaunchOptions(runtime_variant="datas", app_env={"DOTNET_gcServer": "0"}),
         "sets DOTNET_gcServer; params key app_env sets it too"),
        (LaunchOptions(runtime_variant="aot", runtime="net8.0"), "not both"),
    ],
)  # fmt: skip
def test_a_launch_refuses_settings_that_contradict_its_variant(opts, says):
    with pytest.raises(BadInput) as e:
        check(get_mode("kestrel"), opts)
    assert says in one_line(e)


def test_what_the_app_reports_is_checked_against_what_the_variant_asked_for():
    variant = get_variant("aot-workstationgc")
    assert reported_matches(variant, {"build": "aot", "gc": "workstation"}) == ""
    wrong = reported_matches(variant, {"build": "jit", "gc": "datas"})
    assert wrong == ("runtime variant 'aot-workstationgc' runs build 'jit', not 'aot'; "
                     "GC 'datas', not 'workstation'")  # fmt: skip
    # a variant that leaves the GC to its build checks the build only
    assert reported_matches(get_variant("aot"), {"build": "aot", "gc": "datas"}) == ""


def test_the_columns_a_variant_records_are_results_columns_each_with_a_meaning():
    for c in RUNTIME_VARIANT_COLUMNS:
        assert BY_NAME[c.name] is c and re.fullmatch(r"[a-z_]+", c.name) and c.meaning
