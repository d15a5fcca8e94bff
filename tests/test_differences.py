"""The "differences from the article" table: the article's side from its quoted settings,
ours read from the run folder (committed examples, measured for real)."""

import json
import shutil

import pandas as pd
import pytest

from hostbench import results as schema
from hostbench.analysis import differences, window_design
from hostbench.analysis.reference import load_setup
from hostbench.analysis.tables import load_environment
from hostbench.errors import BadInput
from hostbench.params import StudyParams
from hostbench.paths import ROOT
from hostbench.studies import Study, available, get_study

EXAMPLES = ROOT / "data" / "runs"


def _example(study: Study):
    """The study's committed paper run, if it has one (study.yaml's paper_run)."""
    folder = EXAMPLES / study.paper_run
    return folder if (folder / "results.csv").is_file() else None


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_every_study_states_each_aspect_the_article_names_from_its_quoted_settings(study):
    stated = differences.article_side(study)
    assert set(stated) <= set(differences.ASPECTS)
    assert stated, "every article states something a reviewer checks"
    values = {f"{r.value} {r.unit}".strip() for r in load_setup(study).itertuples()}
    named = pd.read_csv(study.reference_dir / differences.DIFFERENCES_CSV, dtype=str)
    for row in named.itertuples():
        if differences.ITEM.search(row.article):  # each {item} became its quoted value
            assert "{" not in stated[row.aspect]
            assert any(v in stated[row.aspect] for v in values), stated[row.aspect]


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_this_runs_side_is_read_from_its_run_folder(study):
    run_dir = _example(study)
    if run_dir is None:
        pytest.skip(f"{study.id} has no committed paper run")
    table = differences.table(study.id, run_dir)
    assert list(table["aspect"]) == list(differences.ASPECTS)
    by = table.set_index("aspect")
    kept = schema.valid_rows(schema.read_results(run_dir))
    busy = kept["cpu_total_pct"].astype(float).mean()
    assert f"{busy:.0f}% busy" in by.loc["CPU reached", "this run"]
    scenario = str(kept["scenario"].iloc[0])
    rows = kept[kept["scenario"].astype(str) == scenario]
    size = rows["bytes_read"].astype(float).sum() / rows["requests"].astype(float).sum()
    assert f"{scenario} {size:,.0f}" in by.loc["bytes per response", "this run"]
    versions = load_environment(run_dir)["tools"]
    for tool in kept["tool"].astype(str).unique():
        assert versions[tool] in by.loc["load tool", "this run"]
    stated = differences.article_side(study)
    for aspect in differences.ASPECTS:
        expected = stated.get(aspect, differences.NOT_STATED)
        assert by.loc[aspect, "the article"] == expected


def _study_with(tmp_path, rows: str) -> Study:
    source = available()[0]
    folder = tmp_path / source.id
    shutil.copytree(source.reference_dir, folder / "reference")
    (folder / "reference" / differences.DIFFERENCES_CSV).write_text("aspect,article\n" + rows)
    return Study(id=source.id, folder=folder, title="t", article="a", citation="c", notebook="n")


@pytest.mark.parametrize(
    "rows, expected",
    [
        ("speed of light,fast\n", "unknown aspect 'speed of light'; allowed: system, runtime"),
        ("load tool,k6 {no_such_item}\n", "setup.csv has no item 'no_such_item'; items: "),
    ],
)
def test_a_bad_row_is_refused_in_one_line(tmp_path, rows, expected):
    with pytest.raises(BadInput) as caught:
        differences.article_side(_study_with(tmp_path, rows))
    message = str(caught.value)
    assert expected in message and "\n" not in message and "row 2" in message


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_each_study_readme_carries_the_table_its_committed_run_gives(study):
    """`python -m hostbench docs` writes it; the README holds it as written (a stale table or a
    README without the markers fails)."""
    text = (study.folder / "README.md").read_text()
    assert differences.START in text and differences.END in text
    block = differences.readme_block(study.id, EXAMPLES / study.paper_run)
    assert block in text


def _paper_run_with(tmp_path, **changes) -> tuple[Study, object]:
    """The default study's committed paper run, its params.json changed as given (a real run's
    records: the row reads only params.json for the design)."""
    study = available()[0]
    source = _example(study)
    if source is None:
        pytest.skip(f"{study.id} has no committed paper run")
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("results.csv", "environment.json"):
        shutil.copy(source / name, folder / name)
    raw = json.loads((source / "params.json").read_text())
    (folder / "params.json").write_text(json.dumps({**raw, "sub_studies": {}, **changes}))
    return study, folder


def test_the_windows_row_says_interleaved_with_the_slice_and_each_modes_time(tmp_path):
    study, folder = _paper_run_with(tmp_path, interleave_slice_s=0.25, focus=[], duration_s=15.0)
    row = differences.table(study.id, folder).set_index("aspect").loc["compared modes' windows"]
    assert row["this run"] == ("interleaved: the compared modes share each window in slices "
                               "of 0.25 s (each mode gets 15 s in all)")  # fmt: skip
    # The article's side: its differences.csv's words (every study's articles ran one mode
    # at a time).
    assert row["the article"].startswith("one after another")


def test_a_run_of_one_modes_variants_names_variants_in_its_design():
    # kestrel-transports-2018 compares Kestrel's variants, not modes: its method line and
    # differences row say so, both designs.
    path = get_study("kestrel-transports-2018").params_path("paper")
    interleaved = StudyParams.from_file(path)
    assert interleaved.interleave_slice_s is not None
    assert window_design.in_words(interleaved) == (
        f"interleaved: the compared variants share each window in slices of "
        f"{interleaved.interleave_slice_s:g} s (each variant gets {interleaved.duration_s:g} s "
        "in all)")  # fmt: skip
    apart = StudyParams.from_file(path, {"interleave_slice_s": None})
    assert window_design.in_words(apart).startswith("back to back: the compared variants' ")


def test_the_windows_row_says_back_to_back_without_a_slice(tmp_path):
    study, folder = _paper_run_with(tmp_path, interleave_slice_s=None)
    row = differences.table(study.id, folder).set_index("aspect").loc["compared modes' windows"]
    assert row["this run"].startswith("back to back: ")
    assert "slices" not in row["this run"]


def test_over_ssh_the_system_and_tools_are_the_hosts_where_it_ran(tmp_path):
    study, folder = _paper_run_with(tmp_path)
    env = json.loads((folder / "environment.json").read_text())
    tool = schema.valid_rows(schema.read_results(folder))["tool"].astype(str).iloc[0]
    server = {"os": "Debian 13", "kernel": "6.12", "cpu_model": "EPYC 9654", "memory_gib": 64.0,
              "cpu_cores_logical": 16, "dotnet_runtimes": "Microsoft.AspNetCore.App 10.0.1",
              "tools": {}}  # fmt: skip
    loadgen = {**server, "cpu_model": "Xeon E-2388G", "cpu_cores_logical": 8,
               "tools": {tool: f"{tool} on the load host"}}  # fmt: skip
    env["hosts"] = {"server": server, "loadgen": loadgen}
    (folder / "environment.json").write_text(json.dumps(env))
    by = differences.table(study.id, folder).set_index("aspect")["this run"]
    assert by["system"] == (
        "server host: Debian 13, EPYC 9654, 16 logical cores, 64 GiB; "
        "load host: Debian 13, Xeon E-2388G, 8 logical cores, 64 GiB"
    )
    assert f"{tool} on the load host" in by["load tool"]
    assert "Microsoft.AspNetCore.App 10.0.1" in by["runtime"]
    assert load_environment(folder, as_recorded=True)["cpu_model"] == env["cpu_model"]
