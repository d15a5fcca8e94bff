"""Companion studies II: Go (Iris) vs ASP.NET Core 2017 and Kestrel's transports 2018.

Real processes throughout: the transport settings are read back from Kestrel itself, wrk's
pipelined count is checked against the app's counter, the study rows carry the articles'
settings, the notebooks' tables put the published numbers (read from data/reference) beside
results recorded from a real quick run, and each study reproduces end to end.
"""

import json
import math
import os
import re
from contextlib import ExitStack

import pandas as pd
import pytest
from conftest import SHORT_RUNS

from hostbench.analysis import go_vs_dotnet, tables, transports
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.harness.environment import go_build
from hostbench.harness.modes import launch
from hostbench.harness.params import StudyParams
from hostbench.harness.run import RunSpec, execute
from hostbench.paths import BIN, ROOT
from hostbench.studies import STUDIES

FIXTURES = ROOT / "tests" / "fixtures" / "results"
GO_RESULTS = FIXTURES / "go-vs-dotnet-2017-quick.csv"
TRANSPORT_RESULTS = FIXTURES / "kestrel-transports-2018-quick.csv"
GO_STUDY, TRANSPORT_STUDY = STUDIES["go-vs-dotnet-2017"], STUDIES["kestrel-transports-2018"]
INLINE_ENV = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"


def declared(options) -> dict:
    """What a variant's app_args and app_env ask of the Sockets transport (None: the default)."""
    args = dict(zip(options.app_args[::2], options.app_args[1::2], strict=True))
    as_bool = {"true": True, "false": False, None: None}
    return {
        "ioQueueCount": int(args["--io-queue-count"]) if "--io-queue-count" in args else None,
        "unsafePreferInlineScheduling": as_bool[args.get("--inline-scheduling")],
        "waitForDataBeforeAllocatingBuffer": as_bool[args.get("--wait-for-data")],
        "inlineCompletionsEnv": options.app_env.get(INLINE_ENV) == "1",
    }


# --- the transport settings reach Kestrel ----------------------------------------------------


@pytest.mark.live
def test_every_transport_variant_of_the_study_reaches_kestrel(tmp_path):
    """Each variant of the paper profile, launched as the harness launches it, read back."""
    params = StudyParams.from_file(TRANSPORT_STUDY.params_path("paper"))
    cores = os.cpu_count()
    with ExitStack() as stack:  # all at once: the apps start in parallel
        targets = {
            name: stack.enter_context(launch("kestrel", tmp_path / name, params.options_for(name)))
            for name in params.variants
        }
        seen = {name: target.transport_info() for name, target in targets.items()}
    assert len(seen) == 17 and params.variants["default"] == {"app_args": [], "app_env": {}}
    for name, info in seen.items():
        want = declared(params.options_for(name))
        assert info["transport"] == "SocketTransportFactory" and info["server"] == "kestrel"
        assert info["ioQueueCount"] == (want["ioQueueCount"] or min(cores, 16)), name
        assert info["unsafePreferInlineScheduling"] is bool(want["unsafePreferInlineScheduling"])
        wait = want["waitForDataBeforeAllocatingBuffer"]
        assert info["waitForDataBeforeAllocatingBuffer"] is (True if wait is None else wait), name
        # The env var reached the process, and the runtime's socket engine took it up.
        assert info["inlineCompletionsEnv"] is want["inlineCompletionsEnv"], name
        assert info["inlineCompletionsEngine"] is want["inlineCompletionsEnv"], name
    # The sweep: IOQueueCount 1 to twice the cores, inline off/on, wait-for-data both ways.
    settings = {
        (
            i["ioQueueCount"],
            i["unsafePreferInlineScheduling"],
            i["waitForDataBeforeAllocatingBuffer"],
        )
        for n, i in seen.items()
        if n != "default"
    }
    assert settings == {(q, i, w) for q in range(1, 5) for i in (0, 1) for w in (0, 1)}


# --- wrk's pipelined count against the app's counter -----------------------------------------


@pytest.mark.live
def test_wrk_pipelined_16_deep_counts_what_the_app_served(tmp_path):
    params = StudyParams.from_dict(
        {
            "modes": ["kestrel"],
            "scenarios": ["plaintext"],
            "tools": ["wrk"],
            "concurrency": [8],
            "pipeline": {"plaintext": 16},
            "duration_s": 2,
            "warmup_s": 1,
            "repetitions": 1,
            "sample_interval_s": 0.25,
            **SHORT_RUNS,
        }
    )
    spec = RunSpec.of_cell(params, "kestrel", "plaintext", "wrk", 8, 1, 1)
    row = execute(spec, tmp_path / spec.key, params)
    script = (tmp_path / spec.key / "load" / "script.lua").read_text()
    assert "local depth = 16" in script  # one write carries 16 requests
    assert (tmp_path / spec.key / "warmup" / "script.lua").read_text() == script.replace(
        str(tmp_path / spec.key / "load"), str(tmp_path / spec.key / "warmup")
    )
    assert row["pipeline"] == 16 and row["errors"] == 0 and row["non_2xx"] == 0
    summary = json.loads((tmp_path / spec.key / "load" / "summary.json").read_text())
    assert summary["pipeline"] == 16 and summary["requests"] == row["requests"] > 1000
    # wrk counts each pipelined response; it stops with at most connections x depth in flight.
    assert 0 <= row["server_requests"] - row["requests"] <= 8 * 16, row
    assert row["valid"], row["invalid_reason"]


# --- the Go build the study reports ----------------------------------------------------------


@pytest.mark.live
def test_the_environment_names_the_go_and_iris_versions_goserver_was_built_with():
    found = go_build(BIN / "goserver")
    assert re.fullmatch(r"go1\.\d+(\.\d+)?", found["go"])
    required = re.search(
        r"github\.com/kataras/iris/v12 (v\S+)", (ROOT / "testapp/go/go.mod").read_text()
    )
    assert found["iris"] == required.group(1)


# --- the study rows carry the articles' settings ---------------------------------------------


def _bombardier_setting(item: str) -> tuple[int, int]:
    """(connections, requests) of the article's bombardier command, read from setup.csv."""
    words = load_setup("go-vs-dotnet-2017").set_index("item").loc[item, "value"]
    numbers = [int(w) for w in re.findall(r"\d+", words)]
    return (numbers[0], numbers[1])


def test_the_go_study_runs_the_articles_loads():
    paper = StudyParams.from_file(GO_STUDY.params_path("paper"))
    for scenario, item in (("values", "bombardier_values"), ("templates", "bombardier_templates")):
        connections, requests = _bombardier_setting(item)
        assert paper.concurrency == [connections] and paper.tools == ["bombardier"]
        assert paper.requests_for(scenario) == requests
    assert paper.requests_for("values-minimal") == paper.requests_for("values")
    # The rows of the real quick run: bombardier at the article's connections, -n per scenario.
    rows = pd.read_csv(GO_RESULTS)
    quick = StudyParams.from_file(GO_STUDY.params_path("quick"))
    assert set(rows["tool"]) == {"bombardier"} and set(rows["concurrency"]) == {connections}
    for r in rows.itertuples(index=False):
        assert r.requests_target == r.requests == r.server_requests and quick.requests_for(
            r.scenario
        )
    pairs = set(zip(rows["mode"], rows["scenario"], strict=True))
    assert {m for m, sc in pairs if sc == "values-minimal"} == {"kestrel"}
    assert len(pairs) == len(quick.cells()) and set(rows["block"]) == {1, 2}
    assert (rows["rss_server_mean_mb"] <= rows["rss_server_peak_mb"]).all()


def test_the_transport_study_runs_the_articles_loads():
    setup = load_setup("kestrel-transports-2018").set_index("item")["value"]
    paper = StudyParams.from_file(TRANSPORT_STUDY.params_path("paper"))
    assert paper.tools == ["wrk"] and paper.scenarios == ["plaintext", "hello-json"]
    assert paper.pipeline_for("plaintext") == int(setup["plaintext_pipelining"])
    assert paper.pipeline_for("hello-json") == 1  # TechEmpower's JSON test is not pipelined
    rows = pd.read_csv(TRANSPORT_RESULTS)
    assert set(rows["tool"]) == {"wrk"}
    depth = rows.groupby("scenario")["pipeline"].unique().to_dict()
    assert depth == {"plaintext": [int(setup["plaintext_pipelining"])], "hello-json": [1]}
    quick = StudyParams.from_file(TRANSPORT_STUDY.params_path("quick"))
    assert set(rows["variant"]) == set(quick.variants)
    assert all(
        k.startswith(f"kestrel@{v}__")
        for k, v in zip(rows["run_key"], rows["variant"], strict=True)
    )
    # Every row carries the settings Kestrel reported, matching what its variant asked for.
    for r in rows.itertuples(index=False):
        want = declared(quick.options_for(r.variant))
        if want["ioQueueCount"] is not None:
            assert r.transport_io_queue_count == want["ioQueueCount"], r.run_key
        assert bool(r.transport_inline_scheduling) is bool(want["unsafePreferInlineScheduling"])
        assert bool(r.transport_inline_completions) is want["inlineCompletionsEnv"]


# --- the notebooks' tables on a recorded real run --------------------------------------------


def _published(article: str, mode: str, scenario: str, metric: str, where: str) -> float:
    ref = load_reference(article)
    row = ref[(ref["mode"] == mode) & (ref["scenario"] == scenario) & (ref["metric"] == metric)
              & ref["where"].str.startswith(where)]  # fmt: skip
    return float(row["value"].iloc[0])


def test_the_go_tables_put_the_published_values_beside_ours():
    results = tables.load_results(GO_RESULTS, valid_only=False)
    values = go_vs_dotnet.article_table(results, "values").set_index("server (ours)")
    iris, dotnet = values.loc["Iris (MVC controllers)"], values.loc["Kestrel, AddMvcCore"]
    article = "go-vs-dotnet-2017"
    assert iris["req/s, article"] == _published(article, "go-iris", "values", "rps", "bombardier")
    assert dotnet["req/s, article"] == _published(article, "kestrel", "values", "rps", "bombardier")
    assert iris["memory [MB], article"] == _published(
        article, "go-iris", "values", "memory_mb", "总结"
    )
    assert dotnet["latency mean [ms], article"] == _published(
        article, "kestrel", "values", "latency_mean_ms", "bombardier"
    )
    # Ours: the mean over the recorded runs; our additions have no article's values.
    runs = results[(results["mode"] == "iris-mvc") & (results["scenario"] == "values")]
    assert iris["req/s, ours"] == pytest.approx(runs["rps"].mean())
    assert iris["RSS peak [MB], ours"] == runs["rss_server_peak_mb"].max()
    assert math.isnan(values.loc["Go net/http", "req/s, article"])
    assert "Kestrel, minimal API" in values.index
    templates = go_vs_dotnet.article_table(results, "templates").set_index("server (ours)")
    assert templates.loc["Kestrel", "req/s, article"] == _published(
        article, "kestrel", "mvc-templates", "rps", "bombardier"
    )  # the article's templates app used full MVC
    assert math.isnan(templates.loc["Kestrel, AddMvcCore", "req/s, article"])
    shown = go_vs_dotnet.formatted(values)
    assert shown.loc["Go net/http", "req/s, article"] == "-"


@pytest.mark.live
def test_the_go_ratios_are_paired_within_blocks_and_words_follow_them():
    results = tables.load_results(GO_RESULTS, valid_only=False)
    rps = go_vs_dotnet.ratios(results, "rps")
    row = rps[(rps["scenario"] == "values") & (rps["mode"] == "kestrel-mvccore")].iloc[0]
    # The article's ratio comes from data/reference; ours is the geometric mean of block ratios.
    article = "go-vs-dotnet-2017"
    want = _published(article, "kestrel", "values", "rps", "bombardier") / _published(
        article, "go-iris", "values", "rps", "bombardier"
    )
    assert row["article_ratio"] == pytest.approx(want)
    mine = results[results["scenario"] == "values"].set_index(["mode", "block"])["rps"]
    per_block = [mine["kestrel-mvccore", b] / mine["iris-mvc", b] for b in (1, 2)]
    assert row["ratio"] == pytest.approx(math.exp(sum(map(math.log, per_block)) / 2))
    assert row["n"] == 2
    word = "slower" if row["ci_high"] < 1 else "faster" if row["ci_low"] > 1 else "indistinguish"
    assert row["in words"].startswith(word)
    minimal = rps[rps["mode"] == go_vs_dotnet.MINIMAL]
    assert list(minimal["scenario"]) == ["values"]  # values-minimal pairs with Iris's values
    memory = go_vs_dotnet.ratios(results, "rss_server_mean_mb")
    mem = memory[(memory["scenario"] == "values") & (memory["mode"] == "kestrel-mvccore")].iloc[0]
    assert mem["article_ratio"] == pytest.approx(
        _published(article, "kestrel", "values", "memory_mb", "总结")
        / _published(article, "go-iris", "values", "memory_mb", "总结")
    )
    assert mem["in words"].split(":")[0] in (
        "more memory",
        "less memory",
        "indistinguishable at this precision",
    )
    line = go_vs_dotnet.headline(rps, go_vs_dotnet.summary(results))
    assert f"(article {100 * want:.0f}%)" in line and "\n" not in line
    env = json.loads((FIXTURES / "go-vs-dotnet-2017-quick-environment.json").read_text())
    text = go_vs_dotnet.then_and_now(rps, memory, go_vs_dotnet.dotnet_shares(results), env)
    assert (
        env["goserver"]["iris"] in text
        and load_setup(article).set_index("item").loc["iris", "value"] in text
    )


def test_the_transport_tables_show_the_published_gains_and_our_settings():
    gains = transports.published_gains()
    ref = load_reference("kestrel-transports-2018")
    assert sorted(gains["gain [%]"]) == sorted(ref.loc[ref["metric"] == "rps_gain_pct", "value"])
    first = gains[
        (gains["comparison"] == "Linux vs libuv") & (gains["CPU-constrained"] == "transport")
    ]
    assert set(first["scenario"]) == {"plaintext", "JSON (TE)"}
    assert set(transports.TRANSPORTS["transport"]) == {"libuv", "Linux transport", "Sockets"}
    cannot = transports.TRANSPORTS.set_index("transport")["runs here?"]
    assert cannot["libuv"].startswith("no:") and cannot["Linux transport"].startswith("no:")
    results = tables.load_results(TRANSPORT_RESULTS, valid_only=False)
    settings = transports.settings(results).set_index("variant")
    assert settings["consistent"].all() and settings.loc["default", "IOQueueCount"] == min(
        int(results["machine_cores"].max()), 16
    )
    gains_here = transports.gains(results)
    assert transports.DEFAULT not in set(gains_here["variant"])
    inline = gains_here[gains_here["variant"] == "ioq2-inline"]
    assert set(inline["changes"]) == {"inline scheduling on"}
    sweep = transports.sweep(results)
    assert (sweep["rps_ci_low"].dropna() >= 0).all()
    assert "Sockets settings as % of the runtime defaults" in transports.headline(gains_here)
    assert "CPU-constrained" in transports.constraint_sentences(results, gains_here)


# --- end to end: make reproduce PROFILE=quick ------------------------------------------------


@pytest.mark.live
@pytest.mark.timeout(3600)  # the session's batch of every study's quick profile
@pytest.mark.parametrize("study", [GO_STUDY, TRANSPORT_STUDY], ids=lambda s: s.id)
def test_reproduce_quick_writes_the_report_with_figures_inline_and_a_headline(study, batch):
    out = batch / study.id
    executed = json.loads((out / study.notebook).read_text())
    errors = [
        o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert errors == []
    html = (out / "report.html").read_text()
    assert "<Figure size" not in html
    figures = sorted(p.stem for p in (out / "figures").glob("*.png"))
    # Every saved figure shown inline, once (the page's stylesheet holds one more PNG).
    assert html.count('src="data:image/png;base64') == len(figures) >= 2
    assert (out / "headline.txt").read_text().strip()
    params = StudyParams.from_file(study.params_path("quick"))
    rows = pd.read_csv(out / "results.csv")
    assert len(rows) == len(params.cells()) * params.repetitions and rows["valid"].all()
