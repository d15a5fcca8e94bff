"""kestrel-transports-2018: each transport variant reaches Kestrel (read back from Kestrel
itself), wrk's pipelined count against the app's counter, the article's loads in the params and
the rows, and the notebook's tables on a recorded real quick run. The notebook runs end to
end in tests/test_studies.py."""

import json
import os
from contextlib import ExitStack
from pathlib import Path

import pandas as pd
import pytest

from conftest import SHORT_RUNS, committed_run
from hostbench.analysis import tables
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.harness.launch.modes import launch
from hostbench.harness.measure.run import RunSpec, execute
from hostbench.params import StudyParams, machine_cores
from hostbench.studies import study_of

TRANSPORT_STUDY = study_of(__file__)
transports = TRANSPORT_STUDY.analysis
TRANSPORT_RESULTS = TRANSPORT_STUDY.fixtures_dir / "quick-results.csv"

INLINE_ENV = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"


@pytest.fixture
def paper_run() -> Path:
    """The committed run the tests read; they skip where it is not (a copied study)."""
    return committed_run(TRANSPORT_STUDY)


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
    assert len(seen) == 1 + 4 * 2 * machine_cores() and params.variants["default"] == {
        "app_args": [],
        "app_env": {},
    }
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


# --- the study rows carry the articles' settings ---------------------------------------------


def test_the_transport_study_runs_the_articles_loads():
    setup = load_setup("kestrel-transports-2018").set_index("item")["value"]
    paper = StudyParams.from_file(TRANSPORT_STUDY.params_path("paper"))
    assert paper.tools == ["wrk"] and paper.scenarios == ["plaintext", "hello-json"]
    assert paper.pipeline_for("plaintext") == int(setup["plaintext_pipelining"])
    assert paper.pipeline_for("hello-json") == 1  # TechEmpower's JSON test is not pipelined
    # The article states no connection count and no load tool: both are ours, not its.
    assert not [item for item in setup.index if "connection" in item or "tool" in item]
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


def test_the_transport_tables_show_the_published_gains_and_our_settings(paper_run):
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
    # The article varied only ThreadCount / IOQueueCount: inline scheduling and wait-for-data
    # are ours, labelled so in the tables, the sentences and the figure's legend.
    origin = gains_here.groupby("variant")["origin"].first()
    assert origin["ioq2-inline"] == origin["ioq2-nowait"] == transports.OURS
    assert origin["ioq1"] == origin["ioq4"] == transports.ARTICLES
    assert settings.loc["default", "origin"] == "the runtime's defaults"
    sentences = transports.gain_sentences(gains_here)
    assert "IOQueueCount 2, inline scheduling (ours): " in sentences
    assert "ioq" not in sentences and "ioq" not in transports.headline(gains_here)
    legend = [t.get_text() for t in transports.sweep_figure(results).legends[0].get_texts()]
    assert sum("(ours)" in t for t in legend) == 3 and "the article's sweep" in legend[0]
    assert (
        load_setup(transports.ARTICLE)
        .set_index("item")
        .loc["varied_setting", "value"]
        .startswith("ThreadCount")
    )  # what the article varied, from its text
    sweep = transports.sweep(results)
    assert (sweep["rps_ci_low"].dropna() >= 0).all()
    assert "Sockets settings as % of the runtime defaults" in transports.headline(gains_here)
    # The first screen: the headline's settings as a table, the same intervals, with n.
    sentence, table = transports.first_screen(gains_here)
    clear = gains_here[(gains_here["ci_low"] > 1) | (gains_here["ci_high"] < 1)]
    assert list(table.columns) == ["scenario", "setting", "n", "ours (95% CI)", "in words"]
    assert len(table) == len(clear)
    if len(clear):
        assert f"{len(clear)} exclude it" in sentence
        assert f"the other {len(gains_here) - len(clear)} are not" in sentence
    else:
        assert sentence.endswith("none is distinguishable from the defaults.")
    everything = transports.gains(tables.load_results(paper_run, valid_only=False))
    committed = everything[everything["changes"] != transports.SAME_AS_DEFAULTS]
    found = committed[(committed["ci_low"] > 1) | (committed["ci_high"] < 1)]
    sentence, table = transports.first_screen(everything)
    assert len(table) == len(found) and f"{len(found)} exclude it, listed in section 7" in sentence
    # The headline names the settings it picked and how many comparisons it picked them from:
    # those that change a setting (IOQueueCount 2 on 2 cores is the defaults: the A/A check).
    assert f"{len(committed)} comparisons" in sentence and len(committed) == 30
    line = transports.headline(everything)
    assert f"{len(committed)} comparisons" in line
    assert f"the {len(found)} of them that exclude 100%" in line
    assert all(text in line for text in table["ours (95% CI)"])
    assert "CPU-constrained" in transports.constraint_sentences(results, gains_here)


def test_the_report_states_the_swept_values_and_the_cores(monkeypatch):
    from hostbench.params import expansion

    transports = TRANSPORT_STUDY.analysis
    monkeypatch.setattr(expansion, "machine_cores", lambda: 4)
    params = StudyParams.from_file(TRANSPORT_STUDY.params_path("paper"))
    note = transports.sweep_note(params)
    assert note.startswith("IOQueueCount swept over 1, 2, 3, 4, 5, 6, 7, 8, from this run's 4 ")
    assert f"{1 + 4 * 8} variants in all" in note
    table = transports.load_table(params.to_dict())  # from params.json's form: the sweep too
    assert set(table["variants"]) == {1 + 4 * 8}


def test_a_variant_that_runs_the_defaults_is_the_designs_aa_check_not_a_finding(paper_run):
    transports = TRANSPORT_STUDY.analysis
    results = tables.load_results(paper_run, valid_only=False)
    # ioq2 on the committed run's 2 cores reported exactly the defaults' transport_* settings.
    flags = list(transports.SETTINGS)
    reported = results.groupby("variant")[flags].agg(lambda v: tuple(sorted(set(v))))
    assert reported.loc["ioq2"].tolist() == reported.loc["default"].tolist()
    g = transports.gains(results)
    aa = g[g["variant"] == "ioq2"]
    assert set(aa["changes"]) == {transports.SAME_AS_DEFAULTS}
    sentence, table = transports.first_screen(g)
    line = transports.headline(g)
    check = transports.aa_check(g)
    assert check.startswith("IOQueueCount 2 runs exactly the runtime's defaults, the design's A/A")
    assert check in sentence and check in line
    # Counted nowhere: not among the comparisons, nor among the settings that exclude 100%.
    assert f"{len(g) - len(aa)} comparisons" in line and "IOQueueCount 2 102%" not in line
    assert "IOQueueCount 2" not in set(table["setting"])
