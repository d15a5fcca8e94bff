"""A stand-in's condition says what stood in: a runtime variant's Kestrel is its own app
(testapp/aot's minimal APIs), not the same mode in its own place, and the verdict picture
names that app once."""

from hostbench.analysis import tables
from hostbench.analysis.claim_words import in_place_of
from hostbench.analysis.verdict_picture import short_condition
from hostbench.catalog import MODES, mode_label
from hostbench.paths import RUNS
from hostbench.runtime_variants import BUILDS

RUN = RUNS / "community" / "go-vs-dotnet-2017-amd-epyc-family-26"


def test_a_variants_kestrel_in_the_addmvccore_apps_place_is_named_by_its_app():
    results = tables.load_results(RUN.with_name(f"{RUN.name}-aot-gc"), valid_only=False)
    words = in_place_of(results, "kestrel", "kestrel-mvccore")
    app = BUILDS["aot"].app
    assert words == f"Kestrel on {app} in place of {mode_label('kestrel-mvccore')}"


def test_a_stand_in_whose_label_the_modes_contains_is_described():
    results = tables.load_results(RUN, valid_only=False)  # the MVC test app, no variants
    words = in_place_of(results, "kestrel", "kestrel-mvccore")
    assert words.startswith(f"Kestrel ({MODES['kestrel'].summary}) in place of ")
    # Labels that read apart stay as they are.
    assert in_place_of(results, "kestrel", "nginx") == "Kestrel in place of Kestrel + nginx (TCP)"


def test_the_picture_says_the_stand_ins_app_once_where_the_sub_study_names_it():
    condition = (f"{in_place_of_words()}, in the aot-gc sub-study on minimal APIs, Native AOT, "
                 "DATAS, .NET 10 (10.0.12)")  # fmt: skip
    assert short_condition(condition) == "Kestrel instead, minimal APIs, Native AOT, DATAS, .NET 10"
    assert short_condition("Kestrel on minimal APIs in place of Kestrel, AddMvcCore") == (
        "Kestrel on minimal APIs instead"
    )


def in_place_of_words() -> str:
    results = tables.load_results(RUN.with_name(f"{RUN.name}-aot-gc"), valid_only=False)
    return in_place_of(results, "kestrel", "kestrel-mvccore")
