"""The results schema and the typed params: one declaration per column and key, rows written
and read through it, one validity filter, and docs generated from it."""

import ast
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from hostbench import docs, gallery, results
from hostbench.analysis import intervals, tables
from hostbench.column_types import BOOL, CPUS, FLOAT, INT, STR, CpuList
from hostbench.environment_keys import RUN_DEPENDENT_KEYS
from hostbench.errors import BadInput
from hostbench.params import LaunchOptions, StudyParams, declared
from hostbench.params.keys import program_keys
from hostbench.params.study import NOT_KEYS
from hostbench.paths import ROOT, RUNS, committed
from hostbench.results import COLUMNS

EXAMPLES = committed(RUNS, "example-*")
# One value per type, chosen to be awkward in a CSV cell.
SAMPLES = {
    STR: 'k6 v1.1.0 (commit, "quoted"); two',
    INT: 3_103_829_064,  # above 2**31
    FLOAT: 0.1 + 0.2,  # needs every digit to come back equal
    BOOL: False,
    CPUS: CpuList((0, 2)),
}


def full_row(**changes) -> dict:
    """A row with a value of its declared type in every column."""
    return {c.name: SAMPLES[c.type] for c in COLUMNS} | changes


def test_every_columns_type_round_trips_through_results_csv(tmp_path):
    empty = {c.name: None for c in COLUMNS if c.nullable} | {
        c.name: math.nan for c in COLUMNS if c.type is FLOAT
    }
    rows = [
        full_row(),
        full_row(run_key="k2", variant="", keepalive=True, loadgen_cpus=CpuList(None), **empty),
        full_row(run_key="k3", loadgen_cpus="all", server_cpus="0,1", valid=True),  # as row.json
    ]
    path = results.write_results(tmp_path / "results.csv", rows)
    back = results.read_results(path)

    assert list(back.columns) == results.NAMES and len(back) == 3
    for c in COLUMNS:
        first = back[c.name].iloc[0]
        assert first == SAMPLES[c.type] and (c.type is STR or not isinstance(first, str)), c.name
        expected = {
            INT: "Int64" if c.nullable else "int64",
            FLOAT: "float64",
            BOOL: "boolean" if c.nullable else "bool",
            STR: "object",
            CPUS: "object",
        }
        assert str(back[c.name].dtype) == expected[c.type], c.name
    second = back.iloc[1]
    for c in COLUMNS:
        if c.nullable or c.type is FLOAT:
            assert pd.isna(second[c.name]), c.name  # one missing marker per type
    assert second["variant"] == "" and second["loadgen_cpus"] == CpuList(None)
    assert back["loadgen_cpus"].iloc[2] == CpuList(None) and back["valid"].iloc[2]
    assert back["server_cpus"].iloc[2] == CpuList((0, 1)) == CpuList.parse("1,0")
    # The file stays what pandas, a spreadsheet and older hostbench read: True/False, "all".
    plain = pd.read_csv(path)
    assert plain["keepalive"].tolist() == [False, True, False]
    assert plain["loadgen_cpus"].tolist() == ["0,2", "all", "all"]
    assert plain["server_cpus"].fillna("").tolist() == ["0,2", "", "0,1"]
    assert results.write_results(tmp_path / "again.csv", back.to_dict("records")).read_text() \
        == path.read_text()  # fmt: skip


def test_a_misspelt_row_key_is_refused_naming_it_and_the_column_meant(tmp_path):
    path = results.write_results(tmp_path / "results.csv", [full_row()])
    before = path.read_text()
    row = full_row()
    row["rsp"] = row.pop("rps")
    with pytest.raises(BadInput) as err:
        results.write_results(path, [full_row(run_key="ok"), row])
    assert "unknown column 'rsp' (did you mean 'rps'?)" in str(err.value)
    assert path.read_text() == before  # nothing half-written
    with pytest.raises(BadInput, match="lacks column\\(s\\): rps"):
        results.write_results(path, [{k: v for k, v in full_row().items() if k != "rps"}])
    with pytest.raises(BadInput, match="column 'valid' holds bool values; 'yes' is not True"):
        results.write_results(path, [full_row(valid="yes")])
    with pytest.raises(BadInput, match="column 'concurrency' is empty; it needs a int"):
        results.write_results(path, [full_row(concurrency=None)])
    # row.json's nested settings are not a column, and stay out of results.csv.
    results.write_results(path, [full_row(settings={"tool": "k6"})])
    assert "settings" not in path.read_text()


def test_reading_refuses_a_column_the_schema_does_not_declare(tmp_path):
    path = results.write_results(tmp_path / "results.csv", [full_row()])
    path.write_text(path.read_text().replace("latency_p99_ms", "latency_p99"))
    with pytest.raises(BadInput, match="unknown column 'latency_p99' \\(did you mean 'latency"):
        results.read_results(path)
    path.write_text(path.read_text().replace("latency_p99,", "latency_p99_ms,").replace(
        ",False,", ",maybe,", 1))  # fmt: skip
    with pytest.raises(BadInput, match="line 2: column 'keepalive' holds bool values"):
        results.read_results(path)


def test_a_bad_cell_below_cells_of_the_same_text_is_named_by_its_own_line(tmp_path):
    # Each distinct text is typed once: the error still names the first line that holds it.
    path = results.write_results(tmp_path / "results.csv", [full_row()] * 4)
    cells = pd.read_csv(path, dtype=str, keep_default_na=False)
    cells.loc[2, "concurrency"] = "1.5"  # the third row: line 4, after the header
    cells.to_csv(path, index=False)
    with pytest.raises(BadInput, match="line 4: column 'concurrency' holds int values"):
        results.read_results(path)
    cells.loc[2, "concurrency"] = cells.loc[0, "concurrency"]
    cells.to_csv(path, index=False)
    assert results.read_results(path)["concurrency"].tolist() == [full_row()["concurrency"]] * 4


def test_a_frame_of_python_values_is_typed_cell_by_cell():
    # 1 and True are one key of a dict: True in an int column is refused even beside a 1.
    with pytest.raises(BadInput, match="row 1: column 'concurrency' holds int values"):
        results.typed(pd.DataFrame({"concurrency": [1, True]}, dtype=object))
    typed = results.typed(pd.DataFrame({"concurrency": [1, 2.0], "keepalive": [True, 1 > 0]}))
    assert typed["concurrency"].tolist() == [1, 2] and str(typed["concurrency"].dtype) == "int64"
    assert typed["keepalive"].dtype == bool


def test_cpu_lists_parse_and_print_as_results_csv_holds_them():
    assert str(CpuList.parse("2,0")) == "0,2" and CpuList.parse("all").pinned is False
    assert str(CpuList(None)) == "all" and CpuList.parse(" 1 ").ids == (1,)
    for bad in ("", "0;1", "-1", "x"):
        with pytest.raises(ValueError):
            CpuList.parse(bad)


def _frame(valid) -> pd.DataFrame:
    rows = {"mode": ["kestrel", "nginx"] * 3, "scenario": "text", "tool": "k6",
            "concurrency": 8, "block": [1, 1, 2, 2, 3, 3],
            "rps": [2000.0, 1000.0, 2200.0, 1100.0, 1800.0, 900.0]}  # fmt: skip
    df = pd.DataFrame(rows)
    if valid is not None:
        df["valid"] = valid
    return df


def test_one_validity_filter_only_an_explicit_false_leaves_a_row_out():
    # Missing verdicts count: no `valid` column (results before the harness judged runs) and
    # an empty cell alike; False, as typed or as text from a CSV, leaves the row out.
    assert results.is_valid(_frame(None)).all()
    flags = [True, None, "False", "True", False, math.nan]
    assert results.is_valid(_frame(flags)).tolist() == [True, True, False, True, False, True]
    df = _frame(flags)
    assert len(results.valid_rows(df)) == 4 and len(results.invalid_rows(df)) == 2
    # tables and intervals (which once disagreed about an empty cell) use that filter.
    measured = df.assign(run_key=[f"r{i}" for i in range(6)], latency_p50_ms=1.0,
                         latency_p99_ms=2.0, cpu_total_pct=90.0, cpu_server_cores=1.0,
                         cpu_proxy_cores=0.5, cpu_loadgen_cores=0.5, machine_cores=2)  # fmt: skip
    assert len(tables.prepare(measured)) == 4
    ratios = intervals.paired_ratios(df, "nginx")
    assert ratios.attrs["left_out_invalid"] == 2 and ratios["n"].tolist() == [1]
    with pytest.raises(BadInput, match="'valid' holds bool values; 'maybe'"):
        results.is_valid(_frame(["maybe"] * 6))


@pytest.mark.parametrize("run", EXAMPLES, ids=lambda p: p.name)
def test_the_committed_example_runs_load_typed(run):
    df = results.read_results(run)
    # Written with the current schema: every column, in the schema's order.
    assert list(df.columns) == list(results.NAMES)
    assert df["valid"].dtype == "boolean" and df["valid"].notna().all()
    assert df["concurrency"].dtype == "int64" and df["rps"].dtype == "float64"
    assert df["keepalive"].dtype == "bool" and df["loadgen_limited"].dtype == "bool"
    assert all(isinstance(c, CpuList) for c in df["loadgen_cpus"])
    params = tables.load_params(run)
    pinned = CpuList(tuple(params.loadgen_cpus)) if params.loadgen_cpus else CpuList(None)
    assert set(df["loadgen_cpus"]) == {pinned}  # the row says what the params said
    assert df["requests_target"].isna().all() == (params.requests is None)
    assert (df["invalid_reason"] == "").eq(df["valid"]).all()  # a reason exactly when invalid
    # The analysis reads one row per launch of a cell: its valid windows combined.
    launches = tables.load_results(run)
    assert int(launches["windows"].sum()) == int(df["valid"].sum())


def test_the_isolated_example_was_pinned_and_its_params_say_so():
    run = ROOT / "data" / "runs" / "example-paper-isolated"
    params = StudyParams.from_run(run / "results.csv")
    assert params.loadgen_cpus == [1] and params.options == LaunchOptions()
    assert set(results.read_results(run)["loadgen_cpus"]) == {CpuList((1,))}


def test_a_recorded_params_json_is_validated_when_read(tmp_path):
    good = json.loads((EXAMPLES[0] / "params.json").read_text())
    (tmp_path / "params.json").write_text(json.dumps({**good, "warmup": 5}))
    with pytest.raises(BadInput, match="unknown params key\\(s\\): warmup;"):
        StudyParams.from_run(tmp_path)
    (tmp_path / "params.json").write_text(json.dumps({**good, "repetitions": 0}))
    with pytest.raises(BadInput, match="'repetitions' must be an integer >= 1, got 0"):
        tables.load_params(tmp_path)
    with pytest.raises(BadInput, match="no params.json at .*: run the study first"):
        StudyParams.from_run(tmp_path / "nowhere")


def test_each_params_key_is_declared_once_and_is_a_field():
    names = [k.name for k in declared()]
    assert len(names) == len(set(names))
    fields = set(StudyParams.__dataclass_fields__) - {"options"}
    # runtime: not a key; each launch's one of the key `runtimes` (StudyParams.options_for).
    # program_settings: the keys the programs own (hostbench/programs), by name.
    launch = set(LaunchOptions.__dataclass_fields__) - set(NOT_KEYS)
    assert set(names) == fields | launch | {k.name for k in program_keys()}
    assert all(k.meaning.endswith(".") and k.type for k in declared())
    defaults = StudyParams(["kestrel"], ["text"], ["k6"], [8], 5.0, 0.0, 1)
    assert defaults.options.program_settings == {k.name: k.default for k in program_keys()}
    for k in declared():
        if not k.required and k.name not in defaults.options.program_settings:
            owner = defaults.options if k.name in LaunchOptions.__dataclass_fields__ else defaults
            assert getattr(owner, k.name) == k.default, k.name


def test_each_results_column_is_declared_once_with_a_meaning_and_format():
    assert len(results.NAMES) == len(set(results.NAMES))
    assert all(c.meaning.endswith(".") for c in COLUMNS)
    assert results.column("rps").show(15056.39) == "15,056"
    assert results.column("valid").show("True") == "True" and results.column("rps").show("") == ""
    with pytest.raises(BadInput, match="did you mean 'rps'"):
        results.column("rsp")


def test_the_core_modules_import_nothing_from_the_harness():
    package = ROOT / "hostbench"
    for module in [
        *sorted(package.glob("params/*.py")),
        package / "results.py",
        package / "docs.py",
    ]:
        tree = ast.parse(module.read_text())
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if "harness" in m], module


def test_the_generated_docs_are_up_to_date(stale_docs):
    assert stale_docs == [], (
        f"{', '.join(stale_docs)} differ from the schemas: run `python -m hostbench docs` "
        "and commit the result"
    )
    results_md = (ROOT / "docs" / "results.md").read_text().splitlines()
    listed = [line.split("`")[1] for line in results_md if line.startswith("| `")]
    assert listed == [*results.NAMES, *RUN_DEPENDENT_KEYS]  # the columns, then environment.json's
    params_md = (ROOT / "docs" / "params.md").read_text()
    assert all(f"| `{k.name}` |" in params_md for k in declared())


def test_docs_stale_notices_an_edited_file(tmp_path, generated_pages, committed_pictures):
    missing = gallery.picture_path("jcsi2018")  # drawn by the write, as every one is in a new root
    committed_pictures(tmp_path, leaving_out={missing})
    docs.write(tmp_path)  # rendered here and by the fixture: the same text
    assert (tmp_path / missing).is_file() and docs.stale(tmp_path, generated_pages) == []
    path = Path(tmp_path) / "docs" / "params.md"
    path.write_text(path.read_text().replace("Seed of the run order", "Seed"))
    assert docs.stale(tmp_path, generated_pages) == ["docs/params.md"]


def test_a_row_recorded_before_a_column_existed_is_read_back_with_what_it_had():
    old = {"run_key": "k", "warmup_s": 4.0}  # a row.json written before warmup_together
    # ... and before runtime_version and what a launch ran: not reported ("", NaN).
    upgraded = results.upgraded(old)
    assert upgraded == {**old, **upgraded, "warmup_together": False, "runtime_version": "",
                        "build": "", "gc": "", "tls_version": "", "tls_cipher": ""}  # fmt: skip
    assert math.isnan(upgraded["startup_ms"]) and math.isnan(upgraded["rss_server_rest_mb"])
    assert results.upgraded({**old, "warmup_together": True})["warmup_together"] is True
    assert results.upgraded({**old, "runtime_version": "8.0.31"})["runtime_version"] == "8.0.31"
    assert set(results.ADDED) <= set(results.NAMES)  # each one a declared column
