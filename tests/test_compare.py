"""`python -m hostbench compare`: two runs' ratios, their ratio with an interval, a verdict.

The runs are copies of committed example runs (their recorded results.csv), one of them with
a known change: one mode's requests/s multiplied by a factor in every block.
"""

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from hostbench.__main__ import main
from hostbench.analysis import claims, compare, verdicts
from hostbench.analysis.intervals import paired_ratios
from hostbench.analysis.reference import load_claims
from hostbench.analysis.student_t import t_quantile
from hostbench.analysis.verdicts import VERDICTS
from hostbench.errors import BadInput
from hostbench.paths import RUNS, committed
from hostbench.studies import STUDIES

FILES = ("params.json", "environment.json", "results.csv", "reproduce.json")


def _paper_runs() -> list[Path]:
    return [RUNS / s.paper_run for s in STUDIES.values() if (RUNS / s.paper_run).is_dir()]


def _study_with_modes(n: int) -> str:
    """A study whose committed paper run has a baseline with at least n other modes (a copy
    leaves its ratios.csv behind, so its ratios come from results.csv)."""
    for study in STUDIES:
        run = RUNS / STUDIES[study].paper_run
        if not (run / "params.json").exists():
            continue
        params = json.loads((run / "params.json").read_text())
        if params.get("baseline") and len(params["modes"]) > n:
            return study
    pytest.skip(f"no committed paper run has a baseline and more than {n} modes")


def _copy(study: str, dest: Path, scale: dict | None = None, **params) -> Path:
    """A copy of a study's committed paper run's records; `scale`: {mode: factor} on rps;
    `params`: params.json entries to change."""
    src = RUNS / STUDIES[study].paper_run
    dest.mkdir(parents=True)
    for name in FILES:
        shutil.copy(src / name, dest / name)
    if scale:
        results = pd.read_csv(dest / "results.csv")
        for mode, factor in scale.items():
            results.loc[results["mode"] == mode, "rps"] *= factor
        results.to_csv(dest / "results.csv", index=False)
    if params:
        record = json.loads((dest / "params.json").read_text())
        record.update(params)
        (dest / "params.json").write_text(json.dumps(record))
    return dest


def _runs(*paths: Path) -> list[compare.Run]:
    return [compare.identify(p) for p in paths]


def test_a_known_difference_gives_its_ratio_of_ratios_and_verdict(tmp_path):
    study = _study_with_modes(2)
    baseline = json.loads((RUNS / STUDIES[study].paper_run / "params.json").read_text())["baseline"]
    a = _copy(study, tmp_path / "a")
    mode = next(m for m in json.loads((a / "params.json").read_text())["modes"] if m != baseline)
    b = _copy(study, tmp_path / "b", scale={mode: 4.0})
    table = compare.compare(_runs(a, b))
    changed = table[table["mode"] == mode]
    assert not changed.empty
    assert changed["ratio_of_ratios"].to_numpy() == pytest.approx(4.0)
    for r in changed.itertuples(index=False):
        # Welch on the log scale: equal n and half-widths, so df = 2 (n - 1)
        n = r.ref_n
        se = math.log(r.ref_ci_high_pct / r.ref_ci_low_pct) / 2 / t_quantile(0.975, n - 1)
        half = t_quantile(0.975, 2 * (n - 1)) * math.sqrt(2) * se
        assert r.rr_ci_low == pytest.approx(4.0 * math.exp(-half))
        assert r.rr_ci_high == pytest.approx(4.0 * math.exp(half))
        assert r.verdict == (compare.DIFFERS if r.rr_ci_low > 1 + verdicts.TOLERANCE_PCT / 100
                             else verdicts.UNDECIDED)  # fmt: skip
    untouched = table[table["mode"] != mode]
    assert untouched["ratio_of_ratios"].to_numpy() == pytest.approx(1.0)
    assert (untouched["verdict"] != compare.DIFFERS).all()


def test_ratios_far_apart_differ_and_close_ones_with_tight_intervals_are_reproduced():
    narrow = pd.Series({"ratio": 2.0, "ci_low": 1.98, "ci_high": 2.02, "n": 10})
    assert compare.verdict(*compare.ratio_of_ratios(narrow, narrow)[1:]) == verdicts.REPRODUCED
    far = narrow.copy()
    far[["ratio", "ci_low", "ci_high"]] *= 1.5
    value, low, high = compare.ratio_of_ratios(narrow, far)
    assert value == pytest.approx(1.5)
    assert compare.verdict(low, high) == compare.DIFFERS
    wide = pd.Series({"ratio": 2.0, "ci_low": 1.0, "ci_high": 4.0, "n": 3})
    assert compare.verdict(*compare.ratio_of_ratios(wide, wide)[1:]) == verdicts.UNDECIDED
    single = pd.Series({"ratio": 2.0, "ci_low": float("nan"), "ci_high": float("nan"), "n": 1})
    assert compare.verdict(*compare.ratio_of_ratios(single, narrow)[1:]) == verdicts.UNDECIDED


@pytest.mark.parametrize("run", _paper_runs(), ids=lambda p: p.name)
def test_a_committed_run_compared_with_itself_is_reproduced(run, tmp_path, capsys):
    assert main(["compare", str(run), "--out", str(tmp_path)]) == 0
    table = pd.read_csv(tmp_path / "compare.csv")
    assert len(table) > 0 and (table["verdict"] == verdicts.REPRODUCED).all()
    assert table["ratio_of_ratios"].to_numpy() == pytest.approx(1.0)
    assert (tmp_path / "figures" / "compare.png").stat().st_size > 0
    assert "reproduced" in capsys.readouterr().out


def _study_with_claims() -> str:
    for study in STUDIES:
        committed = (RUNS / STUDIES[study].paper_run / "params.json").exists()
        if committed and load_claims(study) is not None:
            return study
    pytest.skip("no study with claims has a committed paper run")


def test_the_articles_claims_are_set_side_by_side_with_each_runs_verdict(tmp_path, capsys):
    study = _study_with_claims()
    a = _copy(study, tmp_path / "a")
    same = compare.claim_verdicts(_runs(a, _copy(study, tmp_path / "b")))
    assert len(same) and (same["a"] == same["b"]).all()
    assert set(same["a"]) <= set(VERDICTS)
    # Every mode but the baseline at a hundredth of its rate: the claims about them turn.
    params = json.loads((a / "params.json").read_text())
    slower = {m: 0.01 for m in params["modes"] if m != params["baseline"]}
    c = _copy(study, tmp_path / "c", scale=slower)
    assert main(["compare", str(a), str(c), "--out", str(tmp_path / "out")]) == 0
    written = pd.read_csv(tmp_path / "out" / "claims.csv").fillna("")
    against = f": {claims.AGAINST}"
    assert list(written.columns[1:]) == ["a", "a" + against, "c", "c" + against]
    # A claim resting on another's comparisons is counted once (claims.restated).
    counted = written[~written[claims.CLAIM].isin(claims.of_run(study, a).attrs["restated"])]
    agree = int((counted["a"] == counted["c"]).sum())
    assert agree < len(counted)
    out = capsys.readouterr().out
    assert f"the same verdict on {agree} of {len(counted)} claims" in out
    # A size claim's agreement is printed beside its verdict, as written.
    sized = written[written["a" + against] != ""]
    assert len(sized) and all(f"[{v}]" in out for v in sized["c" + against])


def _committed_sub_studies() -> list[Path]:
    """The committed runs' folders named <a paper run>-<...>: their sub-studies'."""
    found = [committed(RUNS, f"{s.paper_run}-*/params.json") for s in STUDIES.values()]
    return [p.parent for paths in found for p in paths]


def test_a_sub_studys_runs_have_no_claims_of_their_own():
    """The claims are the main study's: a sub-study's run (two hosts, ...) has none."""
    subs = _committed_sub_studies()
    if not subs:
        pytest.skip("no committed sub-study run")
    run = compare.identify(subs[0])
    assert run.sub_study and compare.claim_verdicts([run, run]) is None


def test_a_copy_of_a_run_is_the_same_run(tmp_path):
    study = _study_with_modes(1)
    a, b = _copy(study, tmp_path / "a"), _copy(study, tmp_path / "b")
    assert (compare.compare(_runs(a, b))["verdict"] == verdicts.REPRODUCED).all()


def test_the_ratios_shown_are_the_runs_published_ones(tmp_path):
    study = _study_with_modes(1)
    a = _copy(study, tmp_path / "a")
    ours = paired_ratios(
        pd.read_csv(a / "results.csv"), json.loads((a / "params.json").read_text())["baseline"]
    )
    table = compare.compare(_runs(a, a))
    assert sorted(table["ref_pct"]) == pytest.approx(sorted(ours["ratio_pct"].dropna()))


def test_a_run_without_ratios_csv_gets_its_published_ratios_written_once(tmp_path):
    study = _study_with_modes(1)
    a = _copy(study, tmp_path / "a")
    path = compare.write_ratios_file(a, study)
    written = pd.read_csv(path)
    assert len(written) == len(compare.run_ratios(a, study)) > 0
    assert {"mode", "baseline", "scenario", "n", "ratio_pct", "ci_low_pct", "ci_high_pct"} <= set(
        written.columns
    )
    before = path.stat().st_mtime_ns
    compare.write_ratios_file(a, study)  # a notebook's own ratios.csv, or this one, is kept
    assert path.stat().st_mtime_ns == before


def test_reproduce_writes_a_ratios_csv_from_before_it_anew_and_keeps_one_written_since(tmp_path):
    # A resumed run measured more blocks since its ratios.csv was written (as a re-render's
    # analysis may have changed): reproduce writes today's ratios of all its data over it. One
    # the study's notebook wrote during this reproduce stays as written.
    from hostbench.reproduce import write_ratios

    study = _study_with_modes(1)
    fresh = compare.write_ratios_file(_copy(study, tmp_path / "fresh"), study).read_text()
    a = _copy(study, tmp_path / "a")
    older = a / "ratios.csv"
    older.write_text(fresh.replace(",", ",1", 1))  # an older analysis, or fewer blocks
    started = older.stat().st_mtime + 1
    write_ratios(a, study, started)
    assert older.read_text() == fresh
    older.write_text("written by the notebook\n")
    write_ratios(a, study, started=older.stat().st_mtime - 1)
    assert older.read_text() == "written by the notebook\n"


def test_runs_of_two_studies_and_smoke_runs_are_refused_in_one_line(tmp_path, capsys):
    first, second = list(STUDIES)[:2]
    a = _copy(first, tmp_path / "a")
    b = _copy(second, tmp_path / "b")
    with pytest.raises(BadInput, match="different studies"):
        compare.compare(_runs(a, b))
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1 and "one study" in error
    smoke = _copy(first, tmp_path / "smoke", smoke=True)
    with pytest.raises(BadInput, match="smoke run"):
        compare.compare(_runs(a, smoke))
    assert not (tmp_path / "out").exists()


def test_what_differed_names_the_machine_and_the_params(tmp_path):
    study = _study_with_modes(1)
    a = _copy(study, tmp_path / "a")
    b = _copy(study, tmp_path / "b", repetitions=7)
    env = json.loads((b / "environment.json").read_text())
    env["cpu_cores_logical"] = 64
    env["git_commit"] = "0000000"
    (b / "environment.json").write_text(json.dumps(env))
    table = compare.differences(_runs(a, b)).set_index("what")
    assert set(table.index) == {"cpu_cores_logical", "git_commit", "params.repetitions"}
    assert table.loc["cpu_cores_logical", "b"] == "64"


def test_what_differed_names_each_hosts_machine_over_ssh(tmp_path):
    study = _study_with_modes(1)
    runs = []
    for name, server_cpu in (("a", "Xeon"), ("b", "EPYC")):
        run = _copy(study, tmp_path / name)
        env = json.loads((run / "environment.json").read_text())
        env["hosts"] = {"server": {"cpu_model": server_cpu, "kernel": "6.1"},
                        "loadgen": {"cpu_model": "Xeon", "tools": {"k6": "v1.0"}}}  # fmt: skip
        (run / "environment.json").write_text(json.dumps(env))
        runs.append(run)
    table = compare.differences(_runs(*runs)).set_index("what")
    assert list(table.index) == ["hosts.server.cpu_model"]
    assert table.loc["hosts.server.cpu_model"].tolist() == ["Xeon", "EPYC"]


def test_a_sub_studys_run_is_compared_with_the_committed_sub_study():
    subs = [p for p in _committed_sub_studies() if not (p / "reproduce.json").exists()]
    if not subs:
        pytest.skip("no committed sub-study run")
    for path in subs:
        run = compare.identify(path)
        assert run.sub_study and path.name.endswith(run.sub_study)
        assert compare.committed_example(run) == path.resolve()


def test_a_sub_study_the_paper_run_predates_is_compared_with_the_claims_runs(tmp_path):
    # jcsi2018's runtimes sub-study came with its claims run, after its paper run: a reader's
    # run of it is set against the claims run's, not refused for want of the paper run's.
    found = []
    for study in STUDIES.values():
        for path in committed(RUNS, f"{study.claims_run}-*/params.json"):
            sub = path.parent.name.removeprefix(f"{study.claims_run}-")
            if not (RUNS / f"{study.paper_run}-{sub}").is_dir():
                found.append((study, path.parent, sub))
    if not found:
        pytest.skip("every committed claims sub-study has a paper run's beside it")
    study, theirs, sub = found[0]
    for src, dest in (
        (RUNS / study.claims_run, tmp_path / "mine"),
        (theirs, tmp_path / f"mine-{sub}"),
    ):
        dest.mkdir()
        for name in (*FILES, "ratios.csv"):
            if (src / name).is_file():
                shutil.copy(src / name, dest / name)
    run = compare.identify(tmp_path / f"mine-{sub}")
    assert run.sub_study == sub
    assert compare.committed_example(run) == theirs.resolve()
    out = tmp_path / "compared"
    assert main(["compare", str(tmp_path / f"mine-{sub}"), "--out", str(out)]) == 0
    assert (out / "compare.csv").is_file()
    # A sub-study with no committed run anywhere: one line naming where it looked.
    with pytest.raises(BadInput, match=rf"no committed run at {study.paper_run}-nowhere or "):
        compare.committed_example(compare.Run(run.path, study.id, "nowhere"))


def test_a_folder_that_is_no_run_is_refused(tmp_path):
    with pytest.raises(BadInput, match="no run folder"):
        compare.find_run(tmp_path / "nothing")


def test_the_reproducing_page_states_the_declared_tolerance():
    from hostbench.paths import ROOT

    text = (ROOT / "docs" / "reproducing.md").read_text()
    assert f"±{verdicts.TOLERANCE_PCT:g}%" in text
    assert "TOLERANCE_PCT" in text


def test_each_measure_of_a_ratios_table_is_compared_with_its_own(tmp_path):
    """ratios.csv may hold several measures (a `measure` column): a ratio is compared only
    with the same measure's, and a table without the column is throughput."""
    study = _study_with_modes(1)
    a = _copy(study, tmp_path / "a")
    rps = compare.run_ratios(a, study)
    assert set(rps["measure"]) == {compare.THROUGHPUT}
    cpu = rps.assign(measure="cpu_us_per_request", ratio=rps["ratio"] / 2,
                     ci_low=rps["ci_low"] / 2, ci_high=rps["ci_high"] / 2)  # fmt: skip
    pd.concat([rps, cpu]).to_csv(a / "ratios.csv", index=False)
    b = _copy(study, tmp_path / "b")
    quarter = {c: rps[c] / 4 for c in ("ratio", "ci_low", "ci_high")}
    pd.concat([rps, cpu.assign(**quarter)]).to_csv(b / "ratios.csv", index=False)
    table = compare.compare(_runs(a, b))
    assert len(table) == 2 * len(rps)
    by_measure = table.groupby("measure")["ratio_of_ratios"]
    assert by_measure.min()[compare.THROUGHPUT] == pytest.approx(1.0)
    assert by_measure.max()["cpu_us_per_request"] == pytest.approx(0.5)
    assert table["ratio"].str.startswith("CPU time per request: ").sum() == len(rps)


def test_a_run_published_against_another_baseline_is_compared_on_the_references(tmp_path):
    """A study whose baseline changed between two runs: the other run measured the
    reference's baseline beside its modes, so its ratios against it are paired from its
    results and compared; the same results give a ratio of ratios of 1."""
    study = _study_with_modes(2)
    record = json.loads((RUNS / STUDIES[study].paper_run / "params.json").read_text())
    other = next(m for m in record["modes"] if m != record["baseline"])
    a = _copy(study, tmp_path / "a")
    b = _copy(study, tmp_path / "b", baseline=other, focus=[])
    table = compare.compare(_runs(a, b))
    assert set(table["baseline"]) == {record["baseline"]}
    assert table["ratio_of_ratios"].to_numpy() == pytest.approx(1.0)
    assert set(table["verdict"]) == {"reproduced"}


def test_the_figures_band_is_the_verdicts_tolerance(tmp_path):
    # The shaded band is where a ratio of ratios is reproduced: 1/1.15 to 1.15, not 0.85.
    study = _study_with_modes(2)
    a = _copy(study, tmp_path / "a")
    fig = compare.figure(compare.compare(_runs(a, a)))
    band = [p for p in fig.axes[0].patches if p.get_label().startswith("reproduced")]
    assert len(band) == 1
    box = band[0].get_bbox()  # in data coordinates
    assert (box.x0, box.x1) == pytest.approx(verdicts.tolerance_edges())


def test_a_ratio_of_ratios_end_beside_the_edge_keeps_its_side_in_the_text_table():
    # 86.97% is inside 1/1.15 = 86.957%: reproduced, and printed so (not floored to 86%).
    row = {"run": "b", "reference": "a", "tolerance_pct": verdicts.TOLERANCE_PCT,
           "ratio": "Kestrel / nginx, text", "ref_pct": 130.0, "ref_ci_low_pct": 128.0,
           "ref_ci_high_pct": 132.0, "run_pct": 124.0, "run_ci_low_pct": 113.0,
           "run_ci_high_pct": 125.0, "ratio_of_ratios": 0.95, "rr_ci_low": 0.8697,
           "rr_ci_high": 0.99}  # fmt: skip
    row["verdict"] = compare.verdict(row["rr_ci_low"], row["rr_ci_high"])
    assert row["verdict"] == verdicts.REPRODUCED
    text = compare.text_table(pd.DataFrame([row]))
    assert "ratio of ratios 95% (86.97-99%): reproduced" in text
