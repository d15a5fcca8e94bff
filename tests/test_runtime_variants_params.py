"""The params key runtime_variants: each variant a cell of every mode that launches the test app
(sharing the window as a runtime of `runtimes`), what its runs launch and record, the one-line
refusals before anything starts, what its build needs that this machine may lack, and the
columns its rows carry. Starts no process."""

import math

import pytest

from conftest import SHORT_RUNS
from hostbench.errors import BadInput
from hostbench.harness.preflight import check_runnable
from hostbench.params import StudyParams
from hostbench.paths import ROOT
from hostbench.results import BY_NAME, RUNTIME_VARIANT_COLUMNS, row_text, upgraded
from hostbench.runtime_variants import check_buildable, get_variant, publish_failure

BASE = {"modes": ["nginx", "kestrel"], "scenarios": ["text"], "tools": ["k6"],
        "concurrency": [4], "duration_s": 5, "warmup_s": 0, "repetitions": 1,
        "interleave_slice_s": 0.25, **SHORT_RUNS}  # fmt: skip
# go-vs-dotnet-2017's side by side: Iris MVC launches no test app, so runs once beside each.
GO_SIDE = {**BASE, "modes": ["iris-mvc", "kestrel"], "scenarios": ["values"],
           "tools": ["bombardier"], "interleave_slice_s": 1}  # fmt: skip
RECORDED = ROOT / "tests" / "fixtures" / "runtime_variants"


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text, text
    return text


def test_each_variant_is_a_cell_of_every_mode_that_launches_the_test_app():
    p = StudyParams.from_dict({**GO_SIDE, "runtime_variants": ["jit", "aot-datas"]})
    assert [(m, v) for m, v, *_ in p.cells()] == [("iris-mvc", ""), ("kestrel", "jit"),
                                                   ("kestrel", "aot-datas")]  # fmt: skip
    assert p.variant_builds == ["jit", "aot-datas"]
    assert p.runtime_comparison == {}  # not a runtimes comparison
    assert p.app_comparison == {
        "jit": "minimal APIs, JIT, .NET 10",
        "aot-datas": "minimal APIs, Native AOT, DATAS, .NET 10",
    }
    # the round trip a notebook's params take
    assert StudyParams.from_dict(p.to_dict()).runtime_variants == ["jit", "aot-datas"]


def test_a_variants_runs_launch_it_and_record_its_build_gc_and_runtime():
    p = StudyParams.from_dict({**BASE, "runtime_variants": ["aot-datas-net8", "workstationgc"]})
    options = p.options_for("aot-datas-net8")
    assert options.runtime_variant == "aot-datas-net8" and options.runtime is None
    assert p.options_for("workstationgc").runtime_variant == "workstationgc"
    assert p.options.runtime_variant is None  # the study's own options stay as they are
    assert p.variant_settings("aot-datas-net8") == {
        "runtime_variant": "aot-datas-net8", "build": "aot", "runtime": "net8.0",
        "app_env": {"DOTNET_gcServer": "1", "DOTNET_GCDynamicAdaptationMode": "1"},
    }  # fmt: skip


def test_one_mode_with_two_variants_is_an_interleaved_window_of_its_own():
    StudyParams.from_dict({**BASE, "modes": ["kestrel"], "runtime_variants": ["jit", "aot"]})
    with pytest.raises(BadInput) as e:  # one variant of one mode: nothing to interleave with
        StudyParams.from_dict({**BASE, "modes": ["kestrel"], "runtime_variants": ["aot"]})
    assert "nothing to interleave it with" in one_line(e)


@pytest.mark.parametrize(
    "changes, says",
    [
        ({"runtime_variants": ["aot-net7"]}, "unknown runtime variant 'aot-net7'; allowed: "),
        ({"runtime_variants": ["aot"], "scenarios": ["html"]},
         "runtime variant 'aot' cannot serve scenario 'html': Native AOT compiles no MVC"),
        ({"runtime_variants": ["aot"], "runtimes": ["net8.0", "net10.0"]},
         "'runtime_variants' and runtimes ['net8.0', 'net10.0'] both set the test app's runtime"),
        ({"runtime_variants": ["aot"], "runtimes": ["net8.0"]}, "leave runtimes out"),
        ({"runtime_variants": ["jit"], "variants": {"a": {"app_args": []}}},
         "'runtime_variants' and variants both make variants of the TestApp modes"),
        ({"runtime_variants": ["aot"], "modes": ["nginx", "kestrel-mvccore"]},
         "mode 'kestrel-mvccore' asks the app for --mvc core"),
        ({"runtime_variants": ["datas"], "app_env": {"DOTNET_gcServer": "0"}},
         "runtime variant 'datas' sets DOTNET_gcServer; params key app_env sets it too"),
        ({"runtime_variants": ["jit", "jit"]}, "lists 'jit' twice"),
    ],
)  # fmt: skip
def test_params_a_variant_cannot_run_are_refused_in_one_line(changes, says):
    with pytest.raises(BadInput) as e:
        StudyParams.from_dict({**BASE, **changes})
    assert says in one_line(e)


def test_variants_of_a_study_that_launches_no_test_app_are_refused():
    with pytest.raises(BadInput) as e:
        StudyParams.from_dict({**GO_SIDE, "modes": ["iris-mvc", "iris"],
                               "runtime_variants": ["aot"]})  # fmt: skip
    assert "none of the modes ['iris-mvc', 'iris'] launches it" in one_line(e)


def test_an_aot_build_without_clang_or_lld_here_is_refused_naming_them(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine with neither on its PATH
    with pytest.raises(BadInput) as e:
        check_buildable(get_variant("aot-datas"))
    text = one_line(e)
    assert "runtime variant 'aot-datas' cannot be built here" in text
    assert "clang, ld.lld is not on PATH" in text and "apt-get install clang lld" in text
    check_buildable(get_variant("jit-datas"))  # a JIT build links nothing
    params = StudyParams.from_dict({**BASE, "runtime_variants": ["jit", "aot"]})
    with pytest.raises(BadInput) as e:  # the preflight, before anything starts
        check_runnable(params)
    assert "runtime variant 'aot' cannot be built here" in one_line(e)


def test_a_publish_nuget_gave_no_ilcompiler_for_is_named_in_one_line():
    # dotnet publish -p:PublishAot=true of testapp/aot, restored from an empty feed and cache
    output = (RECORDED / "publish-no-ilcompiler.txt").read_text()
    why = publish_failure(get_variant("aot-net8"), output)
    assert why == ("runtime variant 'aot-net8' cannot be built here: NuGet gave no "
                   "Microsoft.DotNet.ILCompiler for net8.0 (dotnet restore: NU1101); its build "
                   "needs that package from nuget.org or a feed that has it")  # fmt: skip
    assert publish_failure(get_variant("aot"), "error CS1002: ; expected") == ""


def test_a_row_recorded_before_the_columns_reads_back_with_them_empty():
    for c in RUNTIME_VARIANT_COLUMNS:
        assert BY_NAME[c.name] is c  # in results.csv
    old = upgraded({"run_key": "kestrel__text__k6__c4__r1"})
    assert old["build"] == old["gc"] == ""
    assert math.isnan(old["startup_ms"]) and math.isnan(old["rss_server_rest_mb"])
    # a row missing them is refused, so every new row carries them
    with pytest.raises(BadInput) as e:
        row_text({"run_key": "kestrel__text__k6__c4__r1"})
    assert "build" in one_line(e) and "rss_server_rest_mb" in str(e.value)
