"""The runtime variants' builds and launches, real: testapp/aot published JIT and Native AOT
for .NET 10 into build/ as a study publishes them (about 20 s and 90 s on a fresh clone),
each answering the scenarios it serves as the MVC test app does, and each variant's launch
reporting the build and GC it was asked for, which the launch's columns carry with its startup
time; then two variants in one brief interleaved window beside Iris MVC, each row recording
what it ran."""

import json
import re
import subprocess

import pytest

from conftest import SHORT_RUNS, built, one_line, start_server
from hostbench.catalog import get_scenario
from hostbench.harness.launch import web
from hostbench.harness.launch.modes import launch
from hostbench.harness.measure import checks
from hostbench.harness.measure.interleave import COUNT_TOLERANCE_PCT
from hostbench.harness.measure.run import prepare
from hostbench.harness.measure.window import RunSpec
from hostbench.harness.study import run_study
from hostbench.params import LaunchOptions, StudyParams
from hostbench.paths import TESTAPP
from hostbench.results import read_results
from hostbench.runtime_variants import AOT_SCENARIOS, get_variant, reported_matches

pytestmark = pytest.mark.live  # publishes and starts real processes


@pytest.fixture(scope="module")
def builds(variant_builds):
    """The `jit` and `aot` builds of testapp/aot in build/, published as a study publishes
    them (conftest.variant_builds), which the variants' launches then run."""
    for name in ("jit", "aot"):
        assert get_variant(name).executable.is_file()
    return variant_builds


# A fresh value of the json scenario (a GUID, its first 8 hex digits, integers), masked: what
# is left is the body's every byte but the values.
FRESH = re.compile(r'"[0-9a-f-]{36}"|"[0-9a-f]{8}"|\d+')


def answer(url: str, scenario: str) -> tuple:
    r = web.get(url + get_scenario(scenario).path)
    checks.validate(get_scenario(scenario), r)  # 200, its content type, its body rule
    body = FRESH.sub("#", r.text) if scenario == "json" else r.text
    return r.status, r.headers.get("content-type"), r.headers.get("content-length"), body


def test_each_build_answers_its_scenarios_byte_for_byte_as_the_test_app(builds, tmp_path):
    urls = {name: f"http://127.0.0.1:{web.free_port()}" for name in ("testapp", "jit", "aot")}
    exes = {"testapp": built(TESTAPP), **{n: get_variant(n).executable for n in ("jit", "aot")}}
    servers = [start_server(n, exes[n], ["--urls", urls[n]], tmp_path, urls[n]) for n in urls]
    with servers[0], servers[1], servers[2]:
        for scenario in AOT_SCENARIOS:
            expected = answer(urls["testapp"], scenario)
            for name in ("jit", "aot"):
                assert answer(urls[name], scenario) == expected, (name, scenario)
        for name in ("jit", "aot"):  # each counted under the test app's own key
            web.request("POST", urls[name] + "/__stats/reset")
            for scenario in AOT_SCENARIOS:
                web.get(urls[name] + get_scenario(scenario).path)
            stats = json.loads(web.get(urls[name] + "/__stats").body)
            assert stats["total"] == len(AOT_SCENARIOS), (name, stats)
            for scenario in AOT_SCENARIOS:
                assert stats["endpoints"][get_scenario(scenario).stats_key] == 1
            assert web.get(urls[name] + "/html").status == 404  # no MVC in this app


def test_the_aot_app_refuses_an_mvc_option_in_one_line(builds):
    done = subprocess.run([str(get_variant("aot").executable), "--mvc", "core"],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 2
    assert "--mvc and --server do not apply" in one_line(done.stderr)


@pytest.mark.parametrize("name", ["aot", "aot-workstationgc", "aot-servergc", "jit-datas"])
def test_a_variant_launch_reports_the_build_and_gc_it_asked_for(builds, tmp_path, name):
    variant = get_variant(name)
    params = StudyParams.from_dict({"modes": ["kestrel"], "scenarios": ["text"], "tools": ["k6"],
                                    "concurrency": [2], "duration_s": 1, "warmup_s": 0,
                                    "repetitions": 1, **SHORT_RUNS})  # fmt: skip
    with launch("kestrel", tmp_path, LaunchOptions(runtime_variant=name)) as target:
        info = target.transport_info()
        assert reported_matches(variant, info) == "", info
        assert info["build"] == variant.build.kind and info["runtime"].startswith("10.0.")
        spec = RunSpec.of_cell(params, "kestrel", "text", "k6", 2, 1, variant=name)
        ready = prepare(spec, target, tmp_path / "warmup", params, warm=False)
    # what the launch ran, as the row's columns will carry it (results.RUNTIME_VARIANT_COLUMNS)
    assert ready["build"] == variant.build.kind and ready["gc"] == info["gc"]
    assert 0 < ready["startup_ms"] < 60_000
    if variant.gc.reported:
        assert ready["gc"] == variant.gc.reported


def test_two_variants_share_one_interleaved_window_and_each_row_records_it(builds, tmp_path):
    """jit and aot of Kestrel beside Iris MVC (no test app: one target beside both), k6
    switching between the three in 0.25 s slices of one window: each row says the build, GC
    and runtime its app reported, its startup and its memory at rest and under load."""
    params = StudyParams.from_dict({
        "modes": ["iris-mvc", "kestrel"], "scenarios": ["values"], "tools": ["k6"],
        "concurrency": [4], "duration_s": 3, "warmup_s": 0, "repetitions": 1,
        "interleave_slice_s": 0.25, "runtime_variants": ["jit", "aot"], "seed": 5, **SHORT_RUNS,
    })  # fmt: skip
    rows = read_results(run_study(params, "rv", runs_dir=tmp_path, progress=False))
    members = sorted(zip(rows["mode"], rows["variant"], strict=True))
    assert members == [("iris-mvc", ""), ("kestrel", "aot"), ("kestrel", "jit")]
    assert rows["started_at"].nunique() == 1  # one window, all three in it
    by_variant = rows.set_index("variant")
    for r in rows.itertuples():
        assert r.valid, r.invalid_reason
        assert r.duration_s == 3.0 and r.requests > 0
        assert abs(r.count_diff_pct) <= COUNT_TOLERANCE_PCT, r.run_key
        assert 0 < r.startup_ms < 60_000 and 0 < r.rss_server_rest_mb, r.run_key
        assert 0 < r.rss_server_peak_mb and 0 < r.rss_server_mean_mb, r.run_key
    for name in ("jit", "aot"):
        ran = by_variant.loc[name]
        assert ran["build"] == name and ran["gc"] in ("server", "datas", "workstation")
        assert ran["runtime_version"].startswith("10.0.")
        assert json.loads((tmp_path / "rv" / ran["run_key"] / "row.json").read_text())[
            "settings"]["variant"] == {name: params.variant_settings(name)}  # fmt: skip
    go = by_variant.loc[""]
    assert go["build"] == go["gc"] == go["runtime_version"] == ""  # Iris reports none of them
