"""The lab's what-ifs for how an app is deployed today (hostbench/lab.py): where TLS
terminates (`tls`), the test app's garbage collector (`gc`) and how it is compiled
(`build`), each in the params the run measures with and each refusal in one line. Starts no
process; the lab's end-to-end run is tests/test_lab_live.py."""

from pathlib import Path

import pandas as pd
import pytest

from hostbench import lab
from hostbench.analysis import hops
from hostbench.catalog import (
    TLS_AT_PROXY,
    TLS_IN_SERVER,
    TLS_TWINS,
    get_mode,
    has_tls_twin,
    tls_twin,
)
from hostbench.errors import BadInput
from hostbench.runtime_variants import AOT_SCENARIOS, GC_SETTINGS, get_variant


def test_tls_at_the_edge_puts_every_mode_on_its_tls_twin_kestrel_alone_included():
    plain = lab.lab_params("class")
    params = lab.lab_params("class", tls="edge")
    with_twin = [m for m in plain.modes if m in TLS_TWINS]
    assert len(with_twin) < len(plain.modes)  # nginx-uds has no twin: left out of the run
    assert params.modes == [TLS_TWINS[m] for m in with_twin]
    assert params.baseline_mode == TLS_TWINS[plain.baseline_mode]  # like with like
    places = {m: get_mode(m).tls for m in params.modes}
    assert places.pop(params.baseline_mode) == TLS_IN_SERVER
    assert set(places.values()) == {TLS_AT_PROXY}
    assert "TLS: **edge**" in lab.settings_note(params)
    assert "TLS: **none**" in lab.settings_note(plain)


def test_tls_at_the_edge_maps_the_modes_the_student_names():
    params = lab.lab_params("quick", tls="edge", modes=["nginx-keepalive"])
    assert params.modes == [TLS_TWINS["kestrel"], TLS_TWINS["nginx-keepalive"]]


def test_tls_in_kestrel_measures_kestrel_alone_on_https_beside_it_on_plain_http():
    params = lab.lab_params("quick", tls="kestrel")
    assert params.modes == ["kestrel", TLS_TWINS["kestrel"]]
    assert params.baseline_mode == "kestrel"
    assert lab.lab_params("quick", tls="kestrel", modes=["kestrel"]).modes == params.modes
    assert "TLS: **kestrel**" in lab.settings_note(params)


@pytest.mark.parametrize("gc", lab.GC_CHOICES)
def test_a_gc_setting_sets_the_test_apps_environment_as_runtime_variants_declares_it(gc):
    params = lab.lab_params("quick", gc=gc)
    assert params.options.app_env == GC_SETTINGS[gc].env
    assert params.runtime_variants == []  # the profile's test app, its environment changed
    assert f"**{GC_SETTINGS[gc].label}**" in lab.settings_note(params)


def test_the_gc_settings_offered_are_runtime_variants_own():
    assert set(lab.GC_CHOICES) == {name for name in GC_SETTINGS if name}
    assert "datas" in lab.GC_CHOICES


@pytest.mark.parametrize(
    "what_if, variant",
    [({"build": "aot"}, "aot"), ({"build": "aot", "gc": "datas"}, "aot-datas"),
     ({"build": "jit"}, "jit"), ({"build": "jit", "gc": "workstationgc"}, "jit-workstationgc")],
)  # fmt: skip
def test_a_build_runs_the_test_apps_runtime_variant_of_that_build(what_if, variant):
    params = lab.lab_params("quick", **what_if)
    assert params.runtime_variants == [variant]
    assert get_variant(variant).build.kind == what_if["build"]
    assert params.options.app_env == {}  # the GC setting is in the variant's name
    assert f"**{get_variant(variant).label}**" in lab.settings_note(params)


def test_each_deployment_what_if_measures_into_its_own_folder():
    ids = {
        lab.settings_run_id("quick", lab.lab_params("quick", **what_if))
        for what_if in ({}, {"tls": "edge"}, {"tls": "kestrel"}, {"gc": "datas"},
                        {"build": "aot"}, {"build": "jit"})
    }  # fmt: skip
    assert len(ids) == 6


def test_the_notebooks_sections_show_the_mode_the_run_has():
    on_tls = lab.lab_params("quick", tls="edge")
    assert lab.shown_mode(on_tls, "nginx") == TLS_TWINS["nginx"]
    assert lab.shown_mode(on_tls, "nginx-uds") == "nginx-uds"  # missing: its note says so
    assert lab.shown_mode(lab.lab_params("quick"), "nginx") == "nginx"


def test_the_deployment_what_ifs_from_the_command_line():
    assert lab.parse_what_if("tls=edge") == ("tls", "edge")
    assert lab.parse_what_if("gc=datas") == ("gc", "datas")
    assert lab.parse_what_if("build=aot") == ("build", "aot")


@pytest.mark.parametrize(
    "what_if, message",
    [
        ({"tls": "on"}, "tls 'on': allowed: none, edge, kestrel"),
        ({"tls": "edge", "modes": ["nginx-uds"]},
         "tls 'edge': mode 'nginx-uds' cannot terminate TLS (no TLS twin); modes that can: "
         "kestrel, nginx"),
        ({"tls": "kestrel", "modes": ["caddy"]},
         "tls 'kestrel' measures Kestrel alone on HTTPS against it on plain HTTP, not mode "
         "'caddy'"),
        ({"gc": "concurrent"}, "gc 'concurrent': allowed: servergc, workstationgc, datas"),
        ({"build": "r2r"}, "build 'r2r': allowed: jit, aot"),
        ({"build": "aot", "scenario": "html"},
         f"build 'aot': testapp/aot (no MVC, as Native AOT needs) cannot serve scenario 'html'; "
         f"it serves {', '.join(AOT_SCENARIOS)}"),
        ({"build": "aot", "tls": "kestrel"}, "mode 'kestrel-tls' has the app serve HTTPS"),
    ],
)  # fmt: skip
def test_a_bad_deployment_what_if_is_refused_in_one_line(what_if, message):
    with pytest.raises(BadInput) as err:
        lab.lab_params("quick", **what_if)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_bad_deployment_what_if_is_refused_before_the_run_folder_is_made(tmp_path):
    with pytest.raises(BadInput, match="gc 'fast': allowed"):
        lab.reproduce_lab("quick", run_id="lab-bad", runs_dir=tmp_path, what_ifs={"gc": "fast"})
    assert not (tmp_path / "lab-bad").exists()


def test_the_teachers_page_names_every_deployment_what_if_and_its_values():
    from hostbench.paths import ROOT

    page = (ROOT / "docs" / "teaching.md").read_text()
    for what_if, values in (("tls", lab.TLS_CHOICES), ("gc", lab.GC_CHOICES),
                            ("build", lab.BUILD_CHOICES), ("scenario", AOT_SCENARIOS)):  # fmt: skip
        assert f"`{what_if}" in page
        for value in values:
            assert f"`{value}`" in page or f'"{value}"' in page, (what_if, value)
    for what_if in ("tls", "gc", "build"):
        assert f'WHAT_IF="{what_if}=' in page  # a command-line example
        assert f"| `{what_if} = " in page  # a row of the exercises' table


# The lab's recorded quick run (tests/fixtures/lab/), every mode renamed to its TLS twin: the
# same numbers as a run of tls "edge" would record them, to render its words.
RECORDED = pd.read_csv(Path(__file__).parent / "fixtures" / "lab" / "results.csv")
ON_TLS = RECORDED[RECORDED["mode"].map(has_tls_twin)].assign(mode=lambda d: d["mode"].map(tls_twin))


def test_under_tls_at_the_edge_every_sentence_says_kestrel_alone_is_on_https():
    params = lab.lab_params("quick", tls="edge")
    words = lab.baseline_words(params)
    assert words == f"{hops.ALONE}, on HTTPS"
    assert f"measured against **{words}**" in lab.settings_note(params)
    costs = hops.hop_costs(ON_TLS, params.baseline_mode, words)
    assert hops.baseline_sentence(costs, params.baseline_mode).startswith(f"**{words}**: ")
    sentence = hops.hop_sentence(costs, lab.shown_mode(params, "nginx-keepalive"))
    assert f"against {words}, " in sentence and f"of {words}'s." in sentence
    assert f"% of {words} (95% CI)" in " ".join(hops.hop_table(costs).columns)
    assert words in hops.hop_figure(costs).axes[0].get_xlabel()
    # Kestrel alone stays plain where only Kestrel's twin is on HTTPS beside it.
    assert lab.baseline_words(lab.lab_params("quick", tls="kestrel")) == hops.ALONE


@pytest.mark.parametrize("what_if", [{"build": "aot"}, {"build": "jit", "gc": "datas"},
                                     {"gc": "workstationgc"}])  # fmt: skip
def test_under_a_build_or_gc_what_if_the_sentences_name_the_app(what_if):
    params = lab.lab_params("quick", **what_if)
    if "build" in what_if:
        named = get_variant(params.runtime_variants[0]).label  # "minimal APIs, Native AOT, ..."
    else:
        named = GC_SETTINGS[what_if["gc"]].label
    words = lab.baseline_words(params)
    assert words == f"{hops.ALONE} ({named})"
    assert f"measured against **{words}**" in lab.settings_note(params)
    costs = hops.hop_costs(RECORDED, params.baseline_mode, words)
    assert f"against {words}, " in hops.hop_sentence(costs, "nginx")
    assert f"on {words}." in hops.inprocess_sentence(costs, params.baseline_mode)
