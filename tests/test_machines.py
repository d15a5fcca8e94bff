"""A claim's verdict on every machine on record (hostbench.analysis.machines): which runs are on
record, how a processor is named, and the words that say whether a verdict depends on the
machine, on runs copied from a committed example with their machine or their numbers changed."""

import html
import json
import re
import shutil

import pandas as pd

from conftest import measured_studies
from hostbench.analysis import claims, findings, machines, tables, verdicts
from hostbench.paths import RUNS
from hostbench.studies import STUDIES

STUDY = "selfhost-2012"  # the smallest committed run with size claims
EXAMPLE = RUNS / STUDIES[STUDY].paper_run
COPIED = ("params.json", "environment.json", "results.csv", "reproduce.json")
W8 = "On Windows 8"  # the claim at 1.175x the IIS stand-in, consistent with the example (a bound)


def _copy(dest, cpu: str | None = None, gain: float = 1.0, smoke: bool = False):
    """The committed example in `dest`: on processor `cpu` where given, the self-host's
    requests/s times `gain`."""
    dest.mkdir(parents=True)
    for name in COPIED:
        shutil.copy(EXAMPLE / name, dest / name)
    if cpu is not None:
        env = json.loads((dest / "environment.json").read_text())
        (dest / "environment.json").write_text(json.dumps({**env, "cpu_model": cpu}))
    if gain != 1.0:
        results = pd.read_csv(dest / "results.csv")
        results.loc[results["mode"] == "kestrel", "rps"] *= gain
        results.to_csv(dest / "results.csv", index=False)
    if smoke:
        params = json.loads((dest / "params.json").read_text())
        (dest / "params.json").write_text(json.dumps({**params, "smoke": True}))
    return dest


# How a claim's column opens: whether it depends on the machine, in so many words.
FIRST_WORDS = (
    r"one machine on record: |differs between runs on one machine: |the same on "
    r"|depends on the machine: |[^;(]+ wherever decided \("
)


def _w8(words: dict[str, str]) -> str:
    return next(text for claim, text in words.items() if claim.startswith(W8))


def test_the_runs_on_record_are_the_studys_examples_and_re_runs_but_no_smoke_run(tmp_path):
    example = _copy(tmp_path / EXAMPLE.name)
    other = _copy(tmp_path / machines.COMMUNITY / f"{STUDY}-amd")
    _copy(tmp_path / machines.COMMUNITY / f"{STUDY}-smoke", smoke=True)
    (tmp_path / machines.COMMUNITY / "half-copied").mkdir()  # no reproduce.json: not a run
    assert machines.runs_on_record(STUDY, tmp_path) == [example, other]
    assert machines.runs_on_record("jcsi2018", tmp_path) == []
    # The committed record: each study's example is on it (each study measured yet).
    for study in measured_studies():
        assert RUNS / study.paper_run in machines.runs_on_record(study.id)


def test_one_machine_flips_a_verdict_and_the_words_name_each_machine(tmp_path):
    verdict = claims.of_run(STUDY, EXAMPLE).set_index(claims.CLAIM)[claims.VERDICT]
    here = verdict[verdict.index.str.startswith(W8)].iloc[0]
    assert here == verdicts.CONSISTENT
    _copy(tmp_path / EXAMPLE.name)
    # A re-run on another processor, the self-host 0.7x as fast: smaller than the article's.
    _copy(tmp_path / machines.COMMUNITY / f"{STUDY}-amd", cpu="AMD EPYC 7763 64-Core Processor",
          gain=0.7)  # fmt: skip
    xeon = machines.processor(tables.load_environment(EXAMPLE))
    assert _w8(machines.verdicts(STUDY, runs_dir=tmp_path)) == (
        f"depends on the machine: {xeon}: {verdicts.CONSISTENT}; "
        f"AMD EPYC 7763 64-Core: {verdicts.SMALLER}"
    )
    # The same on both: the first words say so.
    shutil.rmtree(tmp_path / machines.COMMUNITY)
    _copy(tmp_path / machines.COMMUNITY / f"{STUDY}-amd", cpu="AMD EPYC")
    assert _w8(machines.verdicts(STUDY, runs_dir=tmp_path)) == (
        f"the same on both machines on record ({xeon}, AMD EPYC): {verdicts.CONSISTENT}"
    )


def test_two_runs_on_one_processor_that_disagree_are_both_named(tmp_path):
    _copy(tmp_path / EXAMPLE.name)
    fresh = _copy(tmp_path / "elsewhere" / "my-run", gain=0.7)  # this run: not on record
    table = claims.of_run(STUDY, fresh)
    xeon = machines.processor(tables.load_environment(EXAMPLE))
    words = machines.verdicts(STUDY, table, fresh, runs_dir=tmp_path)
    assert _w8(words) == (
        f"differs between runs on one machine: {xeon}: "
        f"{verdicts.CONSISTENT} (1 run), {verdicts.SMALLER} (1 run)"
    )
    # A run that recorded no machine is named so, not taken for another's.
    (fresh / "environment.json").unlink()
    assert _w8(machines.verdicts(STUDY, table, fresh, runs_dir=tmp_path)) == (
        f"depends on the machine: {xeon}: {verdicts.CONSISTENT}; "
        f"an unrecorded processor: {verdicts.SMALLER}"
    )


def test_a_run_too_short_to_judge_disagrees_with_none():
    # A convergence run (one block a cell) cannot judge: it neither agrees nor differs.
    epyc, xeon = "AMD EPYC", "Intel Xeon"
    words = machines.in_words({epyc: {verdicts.SMALLER: 3, verdicts.NOT_ENOUGH: 1}})
    assert words == (f"one machine on record: {epyc}: {verdicts.SMALLER} (3 runs); "
                     f"1 run too short to judge it, on {epyc}")  # fmt: skip
    both = machines.in_words({epyc: {verdicts.SMALLER: 1, verdicts.NOT_ENOUGH: 2},
                              xeon: {verdicts.SMALLER: 1}})  # fmt: skip
    assert both.startswith(f"the same on both machines on record ({epyc}, {xeon}): ")
    assert both.endswith("; 2 runs too short to judge it, on AMD EPYC")
    assert machines.in_words({epyc: {verdicts.NOT_ENOUGH: 1}}) == (
        f"{verdicts.NOT_ENOUGH} on any run on record"
    )
    # Runs older than a claim's comparisons (the trace-id sub-study) are named apart too.
    older = machines.in_words({epyc: {verdicts.REPRODUCED: 2}}, {xeon: 3})
    assert older == (f"one machine on record: {epyc}: {verdicts.REPRODUCED} (2 runs); "
                     f"3 runs did not measure it, on {xeon}")  # fmt: skip


def test_a_machine_still_undecided_disagrees_with_none():
    # An interval that straddles a line is no verdict: the machines that decided agree, and
    # the first words say so, not "depends on the machine".
    epyc, xeon, zen5 = "AMD EPYC", "Intel Xeon", "AMD EPYC (family 26, model 2, stepping 1)"
    open_ = {verdicts.UNDECIDED: 1}
    unidentified = f"AMD EPYC {machines.UNIDENTIFIED}"
    assert machines.in_words(
        {epyc: open_, xeon: {verdicts.REPRODUCED: 2}, unidentified: open_}
    ) == (
        f"{verdicts.REPRODUCED} wherever decided ({xeon}); {verdicts.UNDECIDED} on "
        f"{epyc}; {unidentified}, 1 run"
    )
    # A machine with a decided run and an undecided one is on both lists.
    both = {verdicts.SUPPORTED: 1, verdicts.UNDECIDED: 1}
    assert machines.in_words({xeon: both, zen5: {verdicts.SUPPORTED: 1}}) == (
        f"{verdicts.SUPPORTED} wherever decided ({xeon}, 1 of 2 runs; {zen5}); "
        f"{verdicts.UNDECIDED} on {xeon}, 1 of 2 runs"
    )
    assert machines.in_words({xeon: both}) == (
        f"one machine on record: {xeon}: {verdicts.SUPPORTED} (1 run), {verdicts.UNDECIDED} (1 run)"
    )
    # Undecided everywhere is the same everywhere; two decided verdicts still differ.
    assert machines.in_words({epyc: open_, xeon: open_}) == (
        f"the same on both machines on record ({epyc}, {xeon}): {verdicts.UNDECIDED}"
    )
    assert machines.in_words(
        {epyc: open_, xeon: {verdicts.SMALLER: 1}, zen5: {verdicts.LARGER: 1}}
    ) == (
        f"depends on the machine: {epyc}: {verdicts.UNDECIDED}; {xeon}: {verdicts.SMALLER}; "
        f"{zen5}: {verdicts.LARGER}"
    )


def test_a_processor_is_named_by_its_model_and_its_identity_where_recorded():
    assert machines.processor({"cpu_model": "Intel(R) Xeon(R) Processor"}) == "Intel Xeon"
    assert (machines.processor({"cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"})
            == "Intel Xeon Platinum 8370C")  # fmt: skip
    env = {"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_family": "6",
           "cpu_model_number": "106", "cpu_stepping": "6"}  # fmt: skip
    assert machines.processor(env) == "Intel Xeon (family 6, model 106, stepping 6)"
    assert machines.processor({}) == "an unrecorded processor"


def test_the_findings_box_has_each_claims_verdict_by_machine_on_record():
    run = RUNS / STUDIES["linux-proxies-2021"].paper_run
    table = claims.of_run("linux-proxies-2021", run)
    results = tables.load_results(run, valid_only=False)
    box = findings.findings_box(table, results, tables.load_environment(run), run_dir=run,
                                study="linux-proxies-2021")  # fmt: skip
    column = box.claims.set_index(claims.CLAIM)[machines.MACHINES]
    assert list(box.claims.columns).index(machines.MACHINES) == (
        list(box.claims.columns).index(claims.VERDICT) + 1
    )
    on_record = machines.runs_on_record("linux-proxies-2021")
    assert len({machines.processor(tables.load_environment(r)) for r in on_record}) >= 2
    for claim, verdict in table.set_index(claims.CLAIM)[claims.VERDICT].items():
        if verdict == verdicts.NOT_TESTABLE:
            assert column[claim] == ""  # no interval judges it anywhere
        elif claim in table.attrs[claims.NOT_RUN] or "did not measure it" in column[claim]:
            # Not measured on every processor (the postscript's trace id, newer than the
            # Intel Xeon re-runs): the runs that did not measure it are named after the
            # verdicts of those that did.
            assert re.match(FIRST_WORDS, column[claim])
            assert re.search(r"; \d+ runs? did not measure it, on ", column[claim])
        else:
            assert re.match(FIRST_WORDS, column[claim]) and verdict in column[claim]
    assert machines.MACHINES in box._repr_html_()
    # Without the study's id (a test's box), the claims as they are.
    plain = findings.findings_box(table, results, {})
    assert machines.MACHINES not in plain.claims.columns


def test_a_processor_recorded_with_and_without_its_identity_is_one_machine():
    # An older run records the model name only; a newer one adds family, model and stepping.
    table = pd.DataFrame({claims.CLAIM: ["a claim"], claims.VERDICT: [verdicts.SUPPORTED]})
    epyc = {"cpu_model": "AMD EPYC"}
    zen3 = {**epyc, "cpu_family": 25, "cpu_model_number": 17, "cpu_stepping": 1}
    named = machines.one_name_per_machine(
        [(epyc, table), (zen3, table), ({"cpu_model": "Intel(R) Xeon(R) Processor"}, table)]
    )  # fmt: skip
    assert [n for n, _ in named] == ["AMD EPYC", "AMD EPYC", "Intel Xeon"]
    two = machines.one_name_per_machine(
        [({**zen3, "cpu_model_number": m}, table) for m in (1, 17)]
    )  # fmt: skip
    assert [n for n, _ in two] == ["AMD EPYC (family 25, model 1, stepping 1)",
                                   "AMD EPYC (family 25, model 17, stepping 1)"]  # fmt: skip
    assert len({n for n, _ in two}) == 2  # two recorded identities stay two machines
    # Beside two recorded identities, a run without one may have been either: it is named so.
    zen5 = {**epyc, "cpu_family": 26, "cpu_model_number": 2, "cpu_stepping": 1}
    three = machines.one_name_per_machine([(epyc, table), (zen3, table), (zen5, table)])
    unidentified = f"AMD EPYC {machines.UNIDENTIFIED}"
    assert [n for n, _ in three] == [unidentified, "AMD EPYC (family 25, model 17, stepping 1)",
                                     "AMD EPYC (family 26, model 2, stepping 1)"]  # fmt: skip
    # ... and not counted as a third machine where they agree, but named where they do not.
    ok, no = {verdicts.SUPPORTED: 2}, {verdicts.NOT_SUPPORTED: 1}
    assert machines.in_words({unidentified: ok, "Zen 3": ok, "Zen 5": ok}) == (
        f"the same on every machine on record ({unidentified}, 2 runs; Zen 3; Zen 5): "
        f"{verdicts.SUPPORTED}"
    )
    assert machines.in_words({unidentified: ok, "Zen 5": no}) == (
        f"depends on the machine: {unidentified}: {verdicts.SUPPORTED} (2 runs); "
        f"Zen 5: {verdicts.NOT_SUPPORTED}"
    )


def test_each_committed_report_names_the_machines_on_record_as_the_record_stands():
    # A run added to the record changes every committed example of its study: each report's
    # column must say what the record says now, else re-render it (reproduce --render-only).
    checked = 0
    for study in STUDIES:
        for run in machines.runs_on_record(study):
            if machines.COMMUNITY in run.relative_to(RUNS).parts:
                continue  # a re-run's report is its contributor's, as they rendered it
            table = claims.of_run(study, run)
            if table is None or not (run / "report.html").is_file():
                continue
            page = (run / "report.html").read_text()
            column = machines.with_machines(table, study)[machines.MACHINES]
            stale = [
                words for words in column if words and html.escape(words, quote=False) not in page
            ]
            assert stale == [], (
                f"{run.name}: its report's machine column is older than the record (now "
                f"{stale[0]!r}): re-render it, python -m hostbench reproduce --study {study} "
                f"--profile <its profile> --run-id {run.name} --render-only"
            )
            checked += 1
    assert checked >= len(STUDIES)
