"""A load tool's traits are declared once (hostbench/load.py TOOLS) and every list of tools
derives from there: the params' allowed tools and topology ssh's, the loads' rules, the
harness's generators. Each test changes a trait in that one place and sees the others follow."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hostbench import load
from hostbench.errors import BadInput, HostbenchError
from hostbench.harness.measure.loadgen import get_generator, k6_script
from hostbench.harness.preflight import max_connections
from hostbench.load import TOOLS, Load, ToolTraits
from hostbench.params import KEYS, StudyParams

SSH = {"modes": ["kestrel"], "scenarios": ["text"], "concurrency": [4], "duration_s": 5,
       "warmup_s": 0, "repetitions": 1, "topology": "ssh", "inventory": "i"}  # fmt: skip


def test_the_params_and_the_harness_know_the_registrys_tools():
    assert next(k for k in KEYS if k.name == "tools").rule.choices is load.TOOLS
    assert list(TOOLS) == sorted(TOOLS)  # in name order: every list is in that order
    for name in TOOLS:
        assert get_generator(name).name == name  # its command line and parser
    with pytest.raises(BadInput, match=f"unknown tool 'x'; allowed: {', '.join(TOOLS)}$"):
        StudyParams.from_dict({**SSH, "topology": "local", "inventory": None, "tools": ["x"]})


def test_topology_ssh_runs_the_tools_whose_traits_say_remote(monkeypatch):
    assert StudyParams.from_dict({**SSH, "tools": sorted(TOOLS)}).tools == sorted(TOOLS)
    monkeypatch.setitem(TOOLS, "k6", replace(TOOLS["k6"], remote=False))
    with pytest.raises(BadInput, match=r"runs tools ab, bombardier, wrk only \(not k6\)"):
        StudyParams.from_dict({**SSH, "tools": ["k6"]})


def test_a_tool_added_to_the_registry_is_one_the_loads_and_params_accept(monkeypatch):
    monkeypatch.setitem(TOOLS, "hey", ToolTraits(pipelines=True))
    assert Load("hey", 2, 1, pipeline=4).pipeline == 4
    with pytest.raises(BadInput, match="only hey and wrk pipelines"):
        Load("k6", 2, 1, pipeline=4)
    local = {**SSH, "topology": "local", "inventory": None, "tools": ["hey"]}
    assert StudyParams.from_dict(local).tools == ["hey"]
    # Declared but without a LoadGenerator: the harness says so instead of running nothing.
    with pytest.raises(HostbenchError, match="tool hey is in load.py TOOLS but has no"):
        get_generator("hey")


def test_the_open_file_limit_follows_the_raises_nofile_trait(monkeypatch):
    # A Go tool (k6) raises its soft limit to the hard one; a C tool (wrk) keeps the soft one.
    monkeypatch.setitem(TOOLS, "wrk", replace(TOOLS["wrk"], raises_nofile=True))
    assert max_connections("wrk") == max_connections("k6")
    monkeypatch.setitem(TOOLS, "k6", replace(TOOLS["k6"], raises_nofile=False))
    assert max_connections("k6") == max_connections(None)


def test_the_k6_script_the_harness_runs_is_the_one_k6_script_renders(tmp_path):
    gen = get_generator("k6")
    gen.executable = lambda: Path("/usr/bin/k6")  # command() only needs a path
    load_ = Load("k6", 8, 15, path="/text", base_url="http://127.0.0.1:5000")
    argv = gen.command(load_, tmp_path)
    summary = str(tmp_path / "summary.json")
    written = (tmp_path / "script.js").read_text()
    assert argv[-1] == str(tmp_path / "script.js")
    assert written == k6_script("http://127.0.0.1:5000/text", 8, 15.0, summary)
    # What a notebook shows differs only in where the summary is written.
    shown = k6_script(load_.url, load_.concurrency, load_.duration_s)
    assert shown == written.replace(json.dumps(summary), json.dumps("summary.json"))
