"""go-vs-dotnet-2017's aot-gc sub-study: in the paper and scope profiles, Iris MVC beside
Kestrel's runtime variants (JIT and Native AOT, server GC and DATAS, on .NET 10) on the
article's /api/values; the article's claims judged again on each variant, its Kestrel in the
AddMvcCore app's place on requests/s. Synthetic rows; starts no process."""

import math

import pandas as pd
import pytest

from hostbench.analysis import claims, runtimes, until_decided, verdicts
from hostbench.catalog import mode_label
from hostbench.params import StudyParams
from hostbench.runtime_variants import get_variant
from hostbench.studies import study_of

GO_STUDY = study_of(__file__)
go_vs_dotnet = GO_STUDY.analysis
VARIANTS = ["jit-servergc", "jit-datas", "aot-servergc", "aot-datas"]
RPS_VALUES = "ASP.NET Core MVC (AddMvcCore) serves"
MEMORY_VALUES = "ASP.NET Core MVC uses about 126 MB"


@pytest.mark.parametrize("profile", ["paper", "scope"])
def test_the_sub_study_runs_each_variant_beside_one_iris_mvc(profile):
    sub = StudyParams.from_file(GO_STUDY.params_path(profile)).sub_study("aot-gc")
    assert sub.runtime_variants == VARIANTS and sub.variant_builds == VARIANTS
    assert [(m, v) for m, v, *_ in sub.cells()] == [
        ("iris-mvc", ""),
        *[("kestrel", v) for v in VARIANTS],
    ]
    assert sub.scenarios == ["values"] and sub.baseline_mode == go_vs_dotnet.BASELINE
    assert sub.interleave_slice_s is not None  # every variant in the Iris MVC windows
    ran = {v: get_variant(v) for v in VARIANTS}
    assert {v.runtime for v in ran.values()} == {"net10.0"}
    assert sorted((v.build.kind, v.gc.reported) for v in ran.values()) == [
        ("aot", "datas"), ("aot", "server"), ("jit", "datas"), ("jit", "server")]  # fmt: skip


def _rows(blocks: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper profile's servers at the article's ratios (.NET 0.38x Iris MVC's requests/s,
    10.5x its 12 MB), and the sub-study's variants: at the same requests/s, the JIT builds at
    the article's memory gap, the AOT ones at 1.5x Iris MVC's memory; +-1% from block to block."""
    main, sub = [], []
    for block in range(1, blocks + 1):
        wobble = math.exp((-1) ** block * 0.01)
        row = {"scenario": "values", "tool": "bombardier", "concurrency": 125, "block": block}
        iris = {**row, "mode": "iris-mvc", "variant": "", "rps": 10_000.0,
                "latency_mean_ms": 2.0, go_vs_dotnet.MEMORY: 12.0}  # fmt: skip
        main.append(iris)
        sub.append({**iris, "runtime_version": "", "build": "", "gc": "", "startup_ms": 9.0,
                    "rss_server_rest_mb": 8.0, "rss_server_peak_mb": 20.0})  # fmt: skip
        for mode in ("kestrel-mvccore", "kestrel"):
            main.append(
                {
                    **row,
                    "mode": mode,
                    "variant": "",
                    "rps": 3_808 * wobble,
                    "latency_mean_ms": 2 / 0.3808,
                    go_vs_dotnet.MEMORY: 126 * wobble,
                }
            )
        for v in VARIANTS:
            memory = 126 if v.startswith("jit") else 18
            sub.append({**row, "mode": "kestrel", "variant": v, "rps": 3_808 * wobble,
                        "latency_mean_ms": 2 / 0.3808, go_vs_dotnet.MEMORY: memory * wobble,
                        "runtime_version": "10.0.12", "build": v.split("-")[0],
                        "gc": get_variant(v).gc.reported, "startup_ms": 40.0,
                        "rss_server_rest_mb": 30.0, "rss_server_peak_mb": 200.0})  # fmt: skip
    return pd.DataFrame(main), pd.DataFrame(sub)


def test_each_claim_is_judged_again_on_each_variant():
    params = StudyParams.from_file(GO_STUDY.params_path("paper"))
    main, sub = _rows()
    conditions = runtimes.conditions("aot-gc", sub, params.sub_study("aot-gc"))
    assert list(conditions) == [f"aot-gc on {v}" for v in VARIANTS]
    table = go_vs_dotnet.claims(main, params, conditions).set_index(claims.CLAIM)
    memory = table.loc[table.index.str.startswith(MEMORY_VALUES)].iloc[0]
    assert memory[claims.VERDICT] == verdicts.REPRODUCED  # the main run: 10.5x
    where = memory[claims.SENSITIVITY]
    # each variant a condition of its own, named by what it ran
    for v in VARIANTS:
        assert f"the aot-gc sub-study on {get_variant(v).label} (10.0.12)" in where, where
    short = table.attrs[claims.CONDITIONS][memory.name]
    changed = {runtime: verdict for _, runtime, verdict in short.changed}
    assert changed == {"aot-servergc": verdicts.SMALLER, "aot-datas": verdicts.SMALLER}
    assert {runtime for _, runtime in short.held} == {"jit-servergc", "jit-datas"}
    # requests/s: the AddMvcCore app's claim, judged on each variant's Kestrel in its place
    rps = table.loc[table.index.str.startswith(RPS_VALUES)].iloc[0]
    # what stood in, by its app: "Kestrel on minimal APIs in place of Kestrel, AddMvcCore"
    app = get_variant(VARIANTS[0]).build.app
    in_place = f"{mode_label('kestrel')} on {app} in place of {mode_label('kestrel-mvccore')}"
    for v in VARIANTS:
        where = f"{in_place}, in the aot-gc sub-study on {get_variant(v).label}"
        assert where in rps[claims.SENSITIVITY]


def test_the_sub_studys_table_says_what_each_server_ran_and_cost():
    params = StudyParams.from_file(GO_STUDY.params_path("paper")).sub_study("aot-gc")
    table = go_vs_dotnet.aot_gc_table(_rows()[1], params)
    assert list(table["server"]) == [mode_label("iris-mvc"),
                                     *[get_variant(v).label for v in VARIANTS]]  # fmt: skip
    by_server = table.set_index("server")
    aot = by_server.loc[get_variant("aot-datas").label]
    assert (aot["build"], aot["GC"], aot["startup [ms]"]) == ("aot", "datas", 40.0)
    assert aot["RSS at rest [MB]"] == 30.0 and aot["RSS peak [MB]"] == 200.0
    assert aot["memory / Iris MVC"].startswith("more memory: 1.5")  # 18 MB to Iris MVC's 12
    assert by_server.loc[get_variant("jit-datas").label, "memory / Iris MVC"].startswith(
        "more memory: 10.")  # fmt: skip
    assert aot["req/s / Iris MVC"].startswith("slower: 38%")
    assert by_server.iloc[0]["req/s / Iris MVC"] == ""  # Iris MVC itself: no ratio


ADDMVC_VALUES = "AddMvcCore in place of AddMvc changes"


def test_a_stand_in_never_compares_a_mode_with_itself():
    # The AddMvcCore-against-AddMvc claim: Kestrel in the AddMvcCore app's place would compare
    # Kestrel with Kestrel (a ratio of 1 by construction), so no variant is a condition of it.
    params = StudyParams.from_file(GO_STUDY.params_path("paper"))
    main, sub = _rows()
    conditions = runtimes.conditions("aot-gc", sub, params.sub_study("aot-gc"))
    table = go_vs_dotnet.claims(main, params, conditions).set_index(claims.CLAIM)
    row = table.loc[table.index.str.startswith(ADDMVC_VALUES)].iloc[0]
    assert "aot-gc" not in row[claims.SENSITIVITY], row[claims.SENSITIVITY]


def test_the_sub_studys_looks_decide_only_the_claims_whose_modes_it_runs():
    # Its looks judge each variant's Kestrel against Iris MVC; a claim naming the AddMvcCore
    # app (which Native AOT cannot build) is judged in the main run's conditions, never one
    # its stopping rule waits for: the run stops once the memory claim is decided.
    sub_params = StudyParams.from_file(GO_STUDY.params_path("scope")).sub_study("aot-gc")
    _, sub = _rows()
    found = until_decided.look(GO_STUDY.id, sub, sub_params, after_block=4, minutes=7.0)
    judged = {claim.rsplit(", on ", 1)[0] for claim in found.verdicts}
    assert judged and all(c.startswith(MEMORY_VALUES) for c in judged), judged
    assert {claim.rsplit(", on ", 1)[1] for claim in found.verdicts} == set(VARIANTS)
    assert found.open == {}  # each variant's memory decided (1.5x or 10.5x, +-1%)
