"""The runtime as an axis (params key runtimes): the default keeps every run as it was; several
runtimes are variants of the TestApp modes, cells of their own sharing the window; a bad list
is refused in one line naming what is allowed."""

import re

import pandas as pd
import pytest

from hostbench.analysis import compare, runtimes, tables, window_design
from hostbench.errors import BadInput
from hostbench.harness.measure.window import RunSpec, run_settings
from hostbench.harness.order import run_order
from hostbench.params import StudyParams, fingerprint
from hostbench.params.keys import VARIANT
from hostbench.paths import ROOT, RUNS, TESTAPP
from hostbench.runtimes import DEFAULT_RUNTIME, RUNTIMES, build_of, publish_args, variant_name
from hostbench.studies import STUDIES

GOOD = {
    "modes": ["kestrel", "iris-mvc"],
    "scenarios": ["values"],
    "tools": ["k6"],
    "concurrency": [8],
    "duration_s": 5,
    "warmup_s": 0,
    "repetitions": 2,
}


def _settings(params: StudyParams) -> list[dict]:
    return [run_settings(spec, params) for spec in run_order(params, seed=1)]


def test_the_default_is_make_setups_build_and_changes_no_run():
    plain = StudyParams.from_dict(GOOD)
    stated = StudyParams.from_dict({**GOOD, "runtimes": [DEFAULT_RUNTIME]})
    assert plain == stated and plain.runtimes == ["net10.0"]
    assert plain.options.runtime is None and plain.runtime_builds == []
    assert [v for _, v, *_ in plain.cells()] == ["", ""]
    # Runs recorded before the key keep their fingerprints (resume, re-render).
    assert "runtime" not in plain.measured_settings()
    assert _settings(plain) == _settings(stated)
    assert build_of(None) == TESTAPP == ROOT / "build" / "testapp" / "TestApp"


def test_several_runtimes_are_variants_of_the_testapp_modes_only():
    p = StudyParams.from_dict({**GOOD, "modes": ["kestrel", "yarp", "iris-mvc"],
                               "runtimes": ["net8.0", "net9.0", "net10.0"]})  # fmt: skip
    assert StudyParams.from_dict(p.to_dict()) == p  # round-trips, as papermill passes it
    assert p.runtime_comparison == {"net8": "net8.0", "net9": "net9.0", "net10": "net10.0"}
    assert [(m, v) for m, v, *_ in p.cells()] == [
        ("kestrel", "net8"), ("kestrel", "net9"), ("kestrel", "net10"),
        ("yarp", "net8"), ("yarp", "net9"), ("yarp", "net10"),
        ("iris-mvc", ""),
    ]  # fmt: skip
    assert p.options_for("net8").runtime == "net8.0" and p.options_for("").runtime is None
    assert p.runtime_builds == ["net8.0", "net9.0", "net10.0"]
    runs = run_order(p, seed=2)
    assert len({r.key for r in runs}) == len(runs) == 7 * 2
    one = next(r for r in runs if r.mode.id == "kestrel" and r.variant == "net9")
    assert one.key == f"kestrel@net9__values__k6__c8__r{one.block}"
    assert run_settings(one, p)["variant"] == {"net9": {"runtime": "net9.0"}}
    assert all(VARIANT.match(variant_name(r)) for r in RUNTIMES)  # run keys stay parseable


def test_one_mode_on_two_runtimes_is_something_to_interleave():
    p = StudyParams.from_dict({**GOOD, "modes": ["kestrel"], "runtimes": ["net8.0", "net10.0"],
                               "interleave_slice_s": 0.25})  # fmt: skip
    spec = RunSpec.of_cell(p, "kestrel", "values", "k6", 8, block=1, variant="net8")
    assert [v for _, v, *_ in p.cells()] == ["net8", "net10"] and spec.member == "kestrel@net8"
    assert window_design.in_words(p).startswith("interleaved: the compared runtimes share each")
    with pytest.raises(BadInput, match="has one mode to measure, nothing to interleave"):
        StudyParams.from_dict({**GOOD, "modes": ["kestrel"], "interleave_slice_s": 0.25})


def test_one_other_runtime_runs_every_testapp_launch_on_it():
    p = StudyParams.from_dict({**GOOD, "runtimes": ["net8.0"]})
    assert p.options.runtime == "net8.0" and p.runtime_builds == ["net8.0"]
    assert p.runtime_comparison == {} and [v for _, v, *_ in p.cells()] == ["", ""]
    assert StudyParams.from_dict(p.to_dict()) == p
    plain = StudyParams.from_dict(GOOD)
    assert fingerprint(p.measured_settings()) != fingerprint(plain.measured_settings())


@pytest.mark.parametrize(
    "change, message",
    [
        ({"runtimes": ["net7.0"]}, "unknown runtime 'net7.0'; allowed: net8.0, net9.0, net10.0"),
        ({"runtimes": ["net8"]}, "unknown runtime 'net8'; allowed: net8.0, net9.0, net10.0"),
        ({"runtimes": []}, "params key 'runtimes' is an empty list; give at least one value"),
        ({"runtimes": ["net8.0", "net8.0"]}, "'runtimes' lists 'net8.0' twice"),
        ({"modes": ["iris-mvc"], "runtimes": ["net8.0"]},
         "none of the modes ['iris-mvc'] launches it"),
        ({"modes": ["kestrel"], "runtimes": ["net8.0", "net10.0"], "variants": {"a": {}}},
         "give variants or several runtimes, not both"),
    ],
)  # fmt: skip
def test_a_bad_runtimes_list_is_refused_in_one_line(change, message):
    with pytest.raises(BadInput) as e:
        StudyParams.from_dict({**GOOD, **change})
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_default_runtime_is_the_one_the_csproj_and_make_setup_build():
    csproj = (ROOT / "testapp" / "dotnet" / "TestApp.csproj").read_text()
    assert re.findall(r"<TargetFrameworks?>(.*)</TargetFrameworks?>", csproj) == [DEFAULT_RUNTIME]
    makefile = (ROOT / "Makefile").read_text()
    default = " ".join(publish_args(None)).replace(str(ROOT) + "/", "")
    assert f"dotnet publish testapp/dotnet {default}" in makefile  # the same build
    other = publish_args("net8.0")
    assert ["-f", "net8.0", "-p:TargetFrameworks=net8.0"] == other[2:5]
    assert other[-1] == str(ROOT / "build" / "testapp-net8.0") and "--self-contained" in other


def _rows(rates: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    """Rows of a runtimes comparison: {(mode, variant): rps per block}, one scenario."""
    versions = {"net8": "8.0.31", "net10": "10.0.12", "": ""}
    return pd.DataFrame([
        {"mode": mode, "variant": variant, "scenario": "values", "tool": "bombardier",
         "concurrency": 125, "block": b + 1, "window": 1, "rps": rps, "valid": True,
         "runtime_version": versions[variant]}
        for (mode, variant), per_block in rates.items() for b, rps in enumerate(per_block)
    ])  # fmt: skip


def test_each_runtime_is_read_against_the_same_go_windows():
    rows = _rows({("iris-mvc", ""): [100, 110, 90], ("kestrel", "net8"): [50, 55, 45],
                  ("kestrel", "net10"): [80, 88, 72]})  # fmt: skip
    table = runtimes.ratios(rows, "iris-mvc")
    assert list(table["runtime"]) == ["net8", "net10"]  # oldest first
    assert list(table["version"]) == ["8.0.31", "10.0.12"]  # as the rows recorded them
    assert table["ratio"].round(6).tolist() == [0.5, 0.8] and (table["n"] == 3).all()
    shown = runtimes.table(rows, "iris-mvc")
    assert list(shown["runtime"]) == [".NET 8", ".NET 10"]  # as a reader names them
    assert shown["ours (95% CI)"].iloc[0].startswith("50% (95% CI")
    assert list(shown["in words"]) == ["slower", "slower"]


def test_the_words_across_runtimes_say_where_they_change():
    # Kestrel at half of Iris MVC on .NET 8 and indistinguishable on .NET 10: the line names
    # each runtime's words; the same words on both are said once.
    rows = _rows({("iris-mvc", ""): [100, 110, 90], ("kestrel", "net8"): [50, 55, 45],
                  ("kestrel", "net10"): [104, 96, 99]})  # fmt: skip
    shown = runtimes.table(rows, "iris-mvc")
    words = list(shown["in words"])
    assert words[0] == "slower" and words[1] != "slower"
    assert runtimes.in_words(shown) == (
        f"- Kestrel / Iris (MVC controllers), api/values: slower on .NET 8; {words[1]} on .NET 10."
    )
    rows = _rows({("iris-mvc", ""): [100, 110, 90], ("kestrel", "net8"): [50, 55, 45],
                  ("kestrel", "net10"): [60, 66, 54]})  # fmt: skip
    same = runtimes.table(rows, "iris-mvc")
    assert (
        runtimes.in_words(same)
        == "- Kestrel / Iris (MVC controllers), api/values: slower on every runtime."
    )


def test_a_runtimes_sub_study_is_one_condition_per_runtime_for_the_claims():
    rows = _rows({("iris-mvc", ""): [100, 110, 90], ("kestrel", "net8"): [50, 55, 45],
                  ("kestrel", "net10"): [80, 88, 72]})  # fmt: skip
    compared = StudyParams.from_dict({**GOOD, "runtimes": ["net8.0", "net10.0"]})
    split = runtimes.conditions("runtimes", rows, compared)
    assert list(split) == ["runtimes on net8", "runtimes on net10"]
    assert set(split["runtimes on net8"]["variant"]) == {"", "net8"}
    # A reader's name for each, with the version its rows recorded; the rows' own attrs stay.
    assert [part.attrs[runtimes.CONDITION] for part in split.values()] == [
        "the runtimes sub-study on .NET 8 (8.0.31)",
        "the runtimes sub-study on .NET 10 (10.0.12)",
    ]
    assert runtimes.CONDITION not in rows.attrs
    assert list(runtimes.conditions("isolated", rows, StudyParams.from_dict(GOOD))) == ["isolated"]


def test_a_runtimes_runs_ratios_file_holds_each_runtime_apart():
    # The committed go-vs-dotnet-2017 runtimes sub-study runs each .NET mode on three
    # runtimes in one block: its ratios.csv (compare, the batch) pairs each runtime's launch
    # with the Iris MVC windows it shared, named by its variant, never the three as one mode.
    run = RUNS / f"{STUDIES['go-vs-dotnet-2017'].paper_run}-runtimes"
    ratios = compare.run_ratios(run, "go-vs-dotnet-2017")
    assert set(ratios["variant"]) == {variant_name(r) for r in RUNTIMES}
    assert set(ratios["version"].astype(str)) == set(
        tables.load_environment(run)["testapp_runtimes"].values()
    )
    assert not ratios.duplicated(["variant", "mode", "scenario"]).any()
    recomputed = runtimes.ratios(tables.load_results(run, valid_only=False), "iris-mvc")
    assert sorted(ratios["ratio"].round(9)) == sorted(recomputed["ratio"].round(9))
    assert compare.ratio_name(ratios.iloc[0]).startswith(f"{ratios['variant'].iloc[0]}, ")
