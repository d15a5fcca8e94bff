"""The JCSI 2018 notebook's tables and computed prose, on results recorded from real runs."""

import json

import numpy as np
import pandas as pd
import pytest

from conftest import committed_run, record_params
from hostbench.analysis import claims, intervals, verdicts, wording
from hostbench.analysis import prose as report
from hostbench.analysis import tables as analysis
from hostbench.analysis.figures import caption_text
from hostbench.analysis.reference import load_claims
from hostbench.catalog import mode_label
from hostbench.harness.measure.loadgen import k6_script
from hostbench.paths import ROOT
from hostbench.readmes import RUNS_PAGE
from hostbench.studies import study_of

STUDY = study_of(__file__)
jcsi2018 = STUDY.analysis
RESULTS = STUDY.fixtures_dir / "quick-results.csv"
RUN3 = STUDY.fixtures_dir / "3blocks"
NGINX_BASELINE = analysis.load_params(RUN3)  # a recorded run's params: baseline nginx


@pytest.fixture(scope="module")
def results():
    return analysis.load_results(RESULTS)


@pytest.fixture(scope="module")
def run3():
    """A real 3-block run (nginx, kestrel, nginx-uds; html, text), recorded on a busy machine."""
    return {
        "results": analysis.load_results(RUN3),
        "params": analysis.load_params(RUN3),
        "env": analysis.load_environment(RUN3),
        "ratios": intervals.paired_ratios(analysis.load_results(RUN3, valid_only=False), "nginx"),
        "kestrel": intervals.paired_ratios(analysis.load_results(RUN3), "kestrel"),
    }


def test_method_is_written_from_params_json(run3):
    text = jcsi2018.method(run3["params"])
    p = run3["params"]
    assert f"{p.repetitions} blocks. Each block" in text and f"seed {p.seed}" in text
    assert f"{p.duration_s:g} s of k6 load at concurrency 8" in text
    assert f"every {p.sample_interval_s:g} s" in text
    assert f"within {p.steady_tolerance_pct:g}%" in text
    # Recorded before the quiet gate and min_duration_s existed: described as it then ran.
    assert "records the CPU of processes the harness did not start" in text
    assert "shorter than 0 s" in text


def _verdict(table, claim: str) -> str:
    rows = table[table[claims.CLAIM].str.startswith(claim)]
    assert len(rows) == 1, claim  # one row, one verdict per claim
    return rows[claims.VERDICT].iloc[0]


def test_claims_follow_the_intervals(run3):
    table = jcsi2018.claims(analysis.load_results(RUN3, valid_only=False), NGINX_BASELINE)
    assert set(table[claims.VERDICT]) <= set(verdicts.VERDICTS)
    assert not table[claims.CLAIM].duplicated().any()
    # Windows-only claims are never judged on Linux, and say why on the first screen.
    windows = table[table[claims.CLAIM].str.startswith("HTTP.sys is about 10-20% slower")]
    assert windows[claims.VERDICT].tolist() == [verdicts.NOT_TESTABLE]
    assert "Windows" in windows[claims.OURS].iloc[0]
    # Each verdict agrees with the interval it cites, printed by the one formatter.
    html = run3["ratios"].set_index(["mode", "scenario"]).loc[("kestrel", "html")]
    row = table[table[claims.CLAIM].str.startswith("Kestrel is about 70% faster")].iloc[0]
    low, high = wording.ci_bounds(html.ci_low, html.ci_high)
    assert (
        row[claims.OURS] == f"HTML {wording.pct_text(html.ratio)} ({low}-{high}%, {html.n} blocks)"
    )
    assert "1.70x the baseline" in row[claims.WORDS]
    assert row[claims.VERDICT] == verdicts.size_verdict(html.ci_low, html.ci_high, 1.70, n=html.n)


def _runs(kestrel: dict[str, float], caddy: float | None = None, spread: float = 0.02):
    """Four blocks of nginx (1000 rps), kestrel (its ratio per scenario, -+spread on the log
    scale from block to block) and optionally caddy (`caddy` x nginx, every block)."""
    rows = []
    for block, sign in enumerate([-1, 1, -1, 1]):
        for scenario, ratio in kestrel.items():
            runs = {"nginx": 1000.0, "kestrel": 1000.0 * ratio * np.exp(sign * spread)}
            if caddy:
                runs["caddy"] = 1000.0 * caddy
            rows += [(mode, scenario, "k6", 8, block, rps) for mode, rps in runs.items()]
    return pd.DataFrame(rows, columns=["mode", "scenario", "tool", "concurrency", "block", "rps"])


HTML_70, NAWET_200, SEVERAL, FASTEST, SLOWEST = (
    "Kestrel is about 70% faster", "Kestrel is as much as 200% faster",
    "Kestrel alone gives a several-fold", "Kestrel alone is the fastest", "The standard model",
)  # fmt: skip


def test_claims_on_synthetic_intervals_with_known_answers():
    scenarios = {"html": 1.72, "text": 3.0, "json": 2.9, "xml": 3.1}
    table = jcsi2018.claims(_runs(scenarios, caddy=1.5), NGINX_BASELINE)
    assert _verdict(table, HTML_70) == verdicts.REPRODUCED
    # "nawet 200%" is read as 3.00x, as the words say: 2.9-3.1 reproduce it.
    assert _verdict(table, NAWET_200) == verdicts.REPRODUCED
    assert _verdict(table, SEVERAL) == verdicts.SUPPORTED
    assert _verdict(table, SLOWEST) == verdicts.SUPPORTED
    assert _verdict(table, FASTEST) == verdicts.SUPPORTED
    # Against the other analog of the baseline (Kestrel 1.15x-2x Caddy) the sizes turn
    # smaller: the sensitivity column names it, with the verdict it gets there.
    caddy = mode_label("caddy")
    row = table[table[claims.CLAIM].str.startswith(NAWET_200)].iloc[0]
    assert f"{caddy} as the baseline: {verdicts.SMALLER}" in row[claims.SENSITIVITY]
    row = table[table[claims.CLAIM].str.startswith(FASTEST)].iloc[0]
    assert row[claims.SENSITIVITY].startswith("holds under all 1")

    table = jcsi2018.claims(_runs({"html": 3.0, "text": 0.9, "json": 1.6, "xml": 1.6}),
                            NGINX_BASELINE)  # fmt: skip
    assert _verdict(table, HTML_70) == verdicts.LARGER
    # One scenario smaller, none larger: the claim over three is smaller than the article's.
    assert _verdict(table, NAWET_200) == verdicts.SMALLER
    assert _verdict(table, SEVERAL) == verdicts.NOT_SUPPORTED
    assert _verdict(table, SLOWEST) == verdicts.NOT_SUPPORTED


def test_a_wide_interval_is_never_a_reproduced_size():
    # The old rule marked "nawet 200%" supported on 141-429%; the interval crosses the band.
    table = jcsi2018.claims(_runs({"text": 2.46, "json": 3, "xml": 3}, spread=0.3),
                            NGINX_BASELINE)  # fmt: skip
    assert _verdict(table, NAWET_200) == verdicts.UNDECIDED


def test_a_scenario_not_run_leaves_its_claim_not_measured_enough():
    table = jcsi2018.claims(_runs({"json": 3.0, "xml": 3.0}), NGINX_BASELINE)
    assert _verdict(table, NAWET_200) == verdicts.NOT_ENOUGH
    row = table[table[claims.CLAIM].str.startswith(NAWET_200)].iloc[0]
    assert "text: not run" in row[claims.OURS]


def test_the_sensitivity_column_reads_the_sub_studies_ratios():
    main = _runs({"html": 1.7, "text": 3.0, "json": 3.0, "xml": 3.0})
    apart = _runs({"text": 0.9})  # the load generator apart: Kestrel slower on text
    table = jcsi2018.claims(main, NGINX_BASELINE, {"isolated": apart})
    row = table[table[claims.CLAIM].str.startswith(FASTEST)].iloc[0]
    assert row[claims.VERDICT] == verdicts.SUPPORTED
    # The sub-study ran one of the claim's four comparisons: it says which.
    ran = "text"
    assert row[claims.SENSITIVITY].startswith(
        f"depends on the sub-study: the isolated sub-study (on {ran} only): "
        f"{verdicts.NOT_SUPPORTED} ({wording.pct_text(0.9)}, "
    )
    # A sub-study that agrees is counted among those it holds under.
    table = jcsi2018.claims(main, NGINX_BASELINE, {"isolated": _runs({"text": 2.9})})
    row = table[table[claims.CLAIM].str.startswith(FASTEST)].iloc[0]
    assert row[claims.SENSITIVITY] == f"holds under all 1: the isolated sub-study (on {ran} only)"


def test_threats_carry_their_measured_sizes(run3):
    table = jcsi2018.threats(run3["results"], run3["env"], run3["ratios"]).set_index("threat")
    sat = analysis.saturation(run3["results"])
    share = 100 * sat["loadgen_cores"] / (sat["cpu_total_pct"] / 100 * sat["machine_cores"])
    size = table.loc["the load generator shares the cores", "size in this run"]
    assert f"it used {share.groupby(sat['mode'], observed=True).mean().min():.0f}% " in size
    drift = intervals.drift(run3["results"])
    noise = table.loc["noise and drift of a shared VM", "size in this run"]
    assert f"{drift['relative'].min():.2f}-{drift['relative'].max():.2f}" in noise
    assert run3["env"]["dotnet"]["sdk"] in " ".join(table.index)


def test_sensitivity_compares_the_two_setups():
    shared = pd.DataFrame({"mode": ["kestrel"], "scenario": ["text"], "ratio": [2.5],
                           "ci_low": [2.3], "ci_high": [2.7], "n": [4]})  # fmt: skip
    isolated = shared.assign(ratio=[3.5], ci_low=[3.2], ci_high=[3.9])
    table = jcsi2018.sensitivity(shared, isolated, "k6 pinned")
    (row,) = table.itertuples(index=False)
    assert row[6] == pytest.approx(1.4) and row[7] == "yes"  # moved by 1.4x, both "faster"
    assert row[3] == row[5] == 4  # each side's blocks
    fewer = jcsi2018.sensitivity(shared, isolated.assign(n=[2]), "k6 pinned")
    assert fewer["same words"].iloc[0] == "n/a"  # 2 blocks: no words compared
    assert "k6 pinned" in table.columns
    # Set beside another sub-study (laid out as this one), the columns name it.
    other = jcsi2018.sensitivity(shared, isolated, "k6 pinned", "back-to-back")
    names = ["back-to-back", "n (back-to-back)", "moved (sub-study / back-to-back)"]
    assert set(names) <= set(other.columns) and "main study" not in other.columns


def test_each_sub_study_names_the_one_factor_it_changed():
    from hostbench.analysis import window_design
    from hostbench.params import StudyParams

    paper = StudyParams.from_file(STUDY.params_path("paper"))

    def laid_out(sub) -> list[str]:
        """The windows' layout, where the sub-study's differs from the main study's: a factor
        of its own, listed first (sorted by key) and said in words too."""
        if sub.interleave_slice_s == paper.interleave_slice_s:
            assert window_design.change(paper, sub) == ""
            return []
        assert window_design.change(paper, sub).startswith("Its windows ran ")
        ends = ["none" if v is None else f"{v:g}"
                for v in (paper.interleave_slice_s, sub.interleave_slice_s)]  # fmt: skip
        return [f"interleave_slice_s: {ends[0]} -> {ends[1]}"]

    isolated, bombardier = paper.sub_study("isolated"), paper.sub_study("bombardier")
    assert jcsi2018.changed_factors(paper, isolated) == "; ".join(
        [*laid_out(isolated), "loadgen_cpus: none -> 1"]
    )
    # bombardier cannot switch targets within a run: its windows run back to back too.
    assert jcsi2018.changed_factors(paper, bombardier) == "; ".join(
        [*laid_out(bombardier), "tools: k6 -> bombardier"]
    )
    back = paper.sub_study("back-to-back")
    assert laid_out(back), "the back-to-back sub-study lays out its windows otherwise"
    assert jcsi2018.changed_factors(paper, back) == "; ".join(laid_out(back))
    assert jcsi2018.changed_factors(paper, paper) == "nothing"


def test_modes_table_says_why_windows_modes_do_not_run_here():
    table = report.modes_table(["kestrel", "nginx"]).set_index("mode")
    assert table.loc["kestrel", "in this study"] == "runs in this study"
    assert table.loc["caddy", "in this study"] == "runs here, not requested"
    assert "only on Windows" in table.loc["httpsys", "in this study"]


@pytest.mark.live
def test_paper_tables_come_from_the_reference_data():
    k6 = jcsi2018.k6_table(8, 15.0).set_index("parameter")
    assert k6.loc["vus", "paper"] == "8" and k6.loc["duration", "paper"] == "15s"
    assert k6.loc["duration", "this run"] == "15s"
    script = k6_script("http://127.0.0.1:1/text", 8, 15.0)
    assert '"is status 200": (r) => r.status === 200' in script and "vus: 8" in script


def test_hosting_models_table_comes_from_the_catalog():
    table = jcsi2018.hosting_models_table().set_index("our mode")
    # the analog by mechanism first, then the other proxies that stand for the paper's baseline
    assert "nginx, nginx-keepalive, caddy" in table.index
    assert table.loc["nginx-uds", "paper's model"] == "Kestrel + IIS (in-process)"
    assert table.loc["none", "paper's model"] == "HTTP.sys"


def test_study_run_from_notebook_parameters_reads_the_profile_or_takes_params(tmp_path):
    from hostbench.errors import BadInput
    from hostbench.harness.notebook import StudyRun
    from hostbench.params import StudyParams

    run = StudyRun.from_parameters("jcsi2018", "quick", None, "x", str(tmp_path))
    assert run.params.smoke and run.params.tools == ["k6"]  # quick extends paper
    assert run.out_dir == tmp_path / "x"
    # One mode: nothing to interleave it with, so its windows are its own (params refuse it).
    given = {**run.params.to_dict(), "modes": ["kestrel"], "baseline": None, "focus": [],
             "interleave_slice_s": None}  # fmt: skip
    # Params from papermill are reproduce's, validated there: taken as they are, not again.
    validated = StudyParams.from_dict(given).to_dict()
    taken = StudyRun.from_parameters("jcsi2018", "quick", validated, "x")
    assert taken.params == StudyParams.from_dict(given) and taken.params.modes == ["kestrel"]
    with pytest.raises(BadInput, match="study 'jcsi2018' has no profile 'fast'"):
        StudyRun.from_parameters("jcsi2018", "fast", None, "x")


def test_the_example_numbers_in_the_readme_and_docs_are_the_example_runs():
    generated = STUDY.module("generated")
    run_dir = committed_run(STUDY)
    fresh = generated.sections(ROOT)
    names = [name for name, *_ in fresh]
    assert names == [generated.METHOD, generated.STUDY_README, RUNS_PAGE, generated.PAGE], (
        "its run is committed"
    )
    for name, new, start, end in fresh:
        text = (ROOT / name).read_text()
        written = text[text.index(start) : text.index(end) + len(end)]
        assert written == new, f"{name}'s example numbers are stale: python -m hostbench docs"
    # The example has a two-hosts sub-study: the README's line carries what loopback cost.
    assert (run_dir.parent / f"{run_dir.name}-two-hosts" / "results.csv").exists()
    assert "(two hosts / loopback)" in generated.line(run_dir)


def test_the_example_blocks_replace_only_what_is_between_their_markers(tmp_path):
    from hostbench.readmes import replace_in

    generated = STUDY.module("generated")
    (tmp_path / "docs").mkdir()
    runs = tmp_path / "data" / "runs"
    runs.mkdir(parents=True)
    (runs / STUDY.paper_run).symlink_to(committed_run(STUDY))
    readme = f"# x\n\n{generated.LINE_START}\nSTALE\n{generated.LINE_END}\n\nrest\n"
    page = f"# y\n{generated.START}\nSTALE\n{generated.END}\ntail\n"
    (tmp_path / RUNS_PAGE).write_text(readme)
    (tmp_path / generated.PAGE).write_text(page)
    for name, block, start, end in generated.sections(tmp_path):  # as `hostbench docs` does
        (tmp_path / name).write_text(replace_in((tmp_path / name).read_text(), block, start, end))
    text = (tmp_path / RUNS_PAGE).read_text()
    assert text.startswith("# x\n\n") and text.endswith("\n\nrest\n") and "STALE" not in text
    assert "Details: [docs/example.md](example.md)." in text  # from docs/, beside it
    text = (tmp_path / generated.PAGE).read_text()
    assert text.startswith("# y\n") and text.endswith("\ntail\n") and "| Kestrel | HTML |" in text
    with pytest.raises(ValueError, match="markers not found"):
        replace_in("no markers", "x", generated.START, generated.END)


def test_machine_state_reads_each_runs_readings(run3):
    text = report.machine_state(run3["results"])
    load = run3["results"]["load_avg_1m"]
    assert f"{load.min():.1f}-{load.max():.1f}" in text
    assert f"up to {run3['results']['cpu_steal_pct'].max():.1f}%" in text
    assert "predate the foreign-CPU reading" in text  # the recorded run has no foreign_cores
    busy = run3["results"].assign(foreign_cores=[0.05] * (len(run3["results"]) - 1) + [0.42])
    env = {"git_commit": "abc1234+dirty", "git_diff_sha256": "feed"}
    text = report.machine_state(busy, env)
    assert "median of 0.05 and at most 0.42 cores" in text
    assert "commit `abc1234`, **with uncommitted changes** (diff sha256 `feed`)" in text
    assert "uncommitted" not in report.machine_state(busy, {"git_commit": "abc1234"})


def test_an_interval_prints_the_same_in_table_sentence_and_headline(run3):
    ratios = run3["ratios"]
    r = ratios.set_index(["mode", "scenario"]).loc[("kestrel", "text")]
    printed = wording.ratio_text(r.ratio, r.ci_low, r.ci_high)
    table = wording.with_ratio_text(ratios).set_index(["mode", "scenario"])
    assert table.loc[("kestrel", "text"), "ours (95% CI)"] == printed
    assert f"text {printed}" in jcsi2018.headline(ratios)
    sentence = jcsi2018.ratio_sentences(ratios)
    assert wording.ci_text(r.ci_low, r.ci_high) in sentence
    assert f"{wording.pct_text(r.ratio)} of the baseline" in sentence
    cells = [wording.PCT_FORMATS[c](r[c]) for c in ("ratio_pct", "ci_low_pct", "ci_high_pct")]
    assert printed == f"{cells[0]} (95% CI {cells[1][:-1]}-{cells[2]})"


def test_a_smoke_run_writes_no_finding(tmp_path):
    record_params(tmp_path, smoke=True)
    assert report.write_headline(tmp_path, "Kestrel as % of nginx: text 250%") == (
        report.SMOKE_HEADLINE
    )
    assert (
        tmp_path / "headline.txt"
    ).read_text().strip() == "smoke run: checks the pipeline, not evidence"
    record_params(tmp_path, smoke=False)
    assert report.write_headline(tmp_path, "a finding") == "a finding"


@pytest.mark.live
def test_the_batch_index_never_quotes_a_smoke_run(tmp_path):
    from hostbench.reproduce import DONE_FILE, write_index

    for study, smoke in (("jcsi2018", True), ("selfhost-2012", False)):
        folder = tmp_path / study
        folder.mkdir()
        record_params(folder, smoke=smoke)
        (folder / "headline.txt").write_text(f"{study}: 250% of the baseline\n")
        (folder / DONE_FILE).write_text('{"wall_s": 60}')
    page = write_index(tmp_path, "quick").read_text()
    assert "jcsi2018: 250%" not in page and report.SMOKE_HEADLINE in page
    assert "selfhost-2012: 250%" in page


def test_validity_note_counts_left_out_runs_and_reruns(run3):
    all_runs = analysis.load_results(RUN3, valid_only=False)
    assert report.validity_note(all_runs) == f"All {len(all_runs)} runs are valid."
    marked = all_runs.assign(
        valid=[False] + [True] * (len(all_runs) - 1),
        invalid_reason=["machine busy: 0.42 cores used by other processes"]
        + [""] * (len(all_runs) - 1),
        attempt=[1] * (len(all_runs) - 1) + [2],
    )
    note = report.validity_note(marked)
    assert f"1 of {len(all_runs)} runs left out" in note and "1 run(s) were measured again" in note


def test_calibration_note_says_what_was_computed():
    findings = pd.DataFrame([
        dict(mode="kestrel", scenario="text", tool="k6", levels="1, 2, 4", blocks=3, knee=2,
             highest=4, cpu_busy_peak_pct=97.2, cpu_reached_100=False),
        dict(mode="nginx", scenario="text", tool="k6", levels="1, 2, 4", blocks=3,
             knee=float("nan"), highest=4, cpu_busy_peak_pct=99.7, cpu_reached_100=True),
        dict(mode="caddy", scenario="text", tool="k6", levels="2, 8", blocks=1,
             knee=float("nan"), highest=8, cpu_busy_peak_pct=80.0, cpu_reached_100=False),
    ])  # fmt: skip
    lines = report.calibration_note(findings).splitlines()
    assert "stops growing measurably at 2" in lines[0] and "peaked at 97% (not 100%)" in lines[0]
    assert "no knee within the range" in lines[1] and "peaked at 100%." in lines[1]
    assert "a level with 1 valid block (the others left out): no interval" in lines[2]


def test_a_table_cell_with_markup_shows_it_as_text():
    body = '<h1>HTML scenario</h1><item id="1">x</item>'
    page = report.table(pd.DataFrame({"scenario": ["html"], "body": [body], "n": [3]})).to_html()
    assert "<h1>" not in page and "&lt;h1&gt;HTML scenario&lt;/h1&gt;" in page
    assert "&lt;item id=&#34;1&#34;&gt;" in page or "&lt;item id=&quot;1&quot;&gt;" in page


def test_the_loopback_threat_is_sized_by_the_two_hosts_run(run3):
    # Recorded one after the other: the same cells over loopback and between two namespaces.
    folder = STUDY.fixtures_dir / "two-hosts"
    loopback = analysis.load_results(folder / "loopback")
    ratios = intervals.paired_ratios(loopback, "nginx")
    two_hosts = analysis.load_results(folder / "two-hosts", valid_only=False)
    row = "client and server on one machine over loopback"
    sized = jcsi2018.threats(loopback, run3["env"], ratios, two_hosts).set_index("threat")
    assert sized.loc[row, "size in this run"] == jcsi2018.localhost_cost(
        loopback, two_hosts, "nginx"
    )
    assert "moved by x" in sized.loc[row, "size in this run"]
    unsized = jcsi2018.threats(loopback, run3["env"], ratios).set_index("threat")
    assert unsized.loc[row, "size in this run"].startswith("not measured")


@pytest.mark.live
@pytest.mark.timeout(3600)  # the session's batch of every study's quick profile
def test_the_paper_reports_figures_results_and_executed_notebook(batch):
    """The quick batch's report of this study: the paper's figures, every row, the C# tour."""
    from hostbench.harness.tour import NOTEBOOK

    out = batch / STUDY.id
    executed = json.loads((out / STUDY.notebook).read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert [o for o in outputs if o["output_type"] == "error"] == []
    assert [o for o in outputs if o.get("name") == "stderr"] == []  # no progress dump on the page
    page = (out / "report.html").read_text()
    assert "Fig. 9" in page and "<Figure size" not in page
    modes = json.loads((out / "params.json").read_text())["modes"]
    expected = ["topology", "models", "all-models", "relative", "cpu", "cpu-per-request",
                "latency"]  # fmt: skip
    for name in expected:
        for ext in ("png", "svg"):
            path = out / "figures" / f"{name}.{ext}"
            assert path.stat().st_size > 1000, path
    assert page.count("data:image/png;base64") >= len(expected)  # each one inline, too
    results = (out / "results.csv").read_text().splitlines()
    assert len(results) == 1 + len(modes) * 4  # header + every mode x the paper's 4 scenarios
    # The C# tour ran first, on the .net-csharp kernel (tests/test_tour.py checks its contents).
    assert (out / "app_work.csv").exists()
    assert "The C# tour did not run" not in page
    tour = json.loads((out / NOTEBOOK.name).read_text())
    assert not [
        o for c in tour["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]


def test_an_order_claim_compares_only_the_analogs_of_the_papers_own_models():
    """ "The fastest" and "the slowest" are judged over the paper's models that run here: Kestrel
    and the analog of IIS out-of-process (the run's baseline), never nginx-uds or YARP."""
    models = STUDY.module("models")
    listed = load_claims(STUDY.id)
    order = listed[listed["kind"] == "order"]
    assert {"fastest", "slowest"} <= {w for c in order["claim"] for w in c.split()}
    kept = ("same", "analog by mechanism")
    same = {m for m, (_, how) in models.STANDS_FOR.items() if how in kept}
    for row in order.itertuples():
        assert row.mode in same
        assert row.relative_to == "baseline"  # the run's analog by mechanism of the baseline
        assert "HTTP.sys" in row.note and "in-process" in row.note  # named: cannot run here


# --- the measuring design: the main study's windows beside windows back to back

EXAMPLE = ROOT / "data" / "runs" / STUDY.paper_run


def _committed(name: str | None = None):
    """Every run and the params of the committed paper run, or of its sub-study `name`."""
    folder = EXAMPLE if name is None else EXAMPLE.parent / f"{EXAMPLE.name}-{name}"
    if not (folder / "results.csv").is_file():
        pytest.skip(f"{folder.name} is not committed")
    return analysis.load_results(folder, valid_only=False), analysis.load_params(folder)


def _check_designs(compared, main_runs, sub_runs, main_params, sub_params):
    """designs() against paired_ratios of each side, and its words and table against it."""
    from hostbench.analysis import window_design
    from hostbench.pagecheck import page_defects

    baseline = main_params.baseline_mode
    scenarios = set(main_runs["scenario"].astype(str)) & set(sub_runs["scenario"].astype(str))
    assert sorted(compared["scenario"]) == sorted(scenarios)
    for side, runs in (("main", main_runs), ("sub", sub_runs)):
        ratios = intervals.paired_ratios(runs, baseline)
        ratios = ratios[ratios["mode"].astype(str) == jcsi2018.HEADLINE_MODE]
        ratios = ratios.set_index(ratios["scenario"].astype(str))
        for row in compared.to_dict("records"):
            r = ratios.loc[row["scenario"]]
            assert row[f"ratio_{side}"] == pytest.approx(r.ratio)
            assert row[f"n_{side}"] == r.n
            assert row[f"half_{side}"] == pytest.approx(100 * (r.ci_high / r.ratio - 1),
                                                        nan_ok=True)  # fmt: skip
    assert compared.attrs["designs"] == (window_design.short(main_params),
                                         window_design.short(sub_params))  # fmt: skip
    text = jcsi2018.designs_sentences(compared)
    for row in compared.to_dict("records"):
        for side in ("main", "sub"):
            printed = wording.ratio_text(row[f"ratio_{side}"], row[f"ci_low_{side}"],
                                         row[f"ci_high_{side}"])  # fmt: skip
            assert printed in text
        if row["overlap"] is None:
            assert "one side has no interval" in text
            continue
        overlap = (row["ci_low_main"] <= row["ci_high_sub"]
                   and row["ci_low_sub"] <= row["ci_high_main"])  # fmt: skip
        assert row["overlap"] == overlap
        narrower = row["half_sub"] / row["half_main"]
        assert row["narrower"] == pytest.approx(narrower)
        times, word = (narrower, "narrower") if narrower >= 1 else (1 / narrower, "wider")
        said = f"interval is {times:.1f} times {word} than the sub-study's"
        if f"{times:.1f}" == "1.0":
            said = "interval is about as wide as the sub-study's"
        assert said in text, text
    table = jcsi2018.designs_table(compared)
    assert len(table) == len(compared)
    page = f"<html><body><main>{report.table(table).to_html()}</main></body></html>"
    assert page_defects(page) == []
    return text


def test_the_designs_set_the_main_studys_ratio_beside_a_sub_studys_on_recorded_runs():
    """The committed paper run and its isolated sub-study, both measured for real: the same
    pair, Kestrel and the baseline, on the scenarios both ran."""
    main_runs, main_params = _committed()
    sub_runs, sub_params = _committed("isolated")
    compared = jcsi2018.designs(main_runs, sub_runs, main_params, sub_params)
    assert len(compared)
    _check_designs(compared, main_runs, sub_runs, main_params, sub_params)
    # One block on one side: no interval there, so the widths are not compared.
    first = sub_runs[sub_runs["block"] == sub_runs["block"].min()]
    one = jcsi2018.designs(main_runs, first, main_params, sub_params)
    assert one["overlap"].isna().all()
    assert "one side has no interval" in _check_designs(one, main_runs, first, main_params,
                                                         sub_params)  # fmt: skip
    # A sub-study sharing no scenario with the main study: nothing compared, said so.
    others = main_runs[
        ~main_runs["scenario"].astype(str).isin(set(sub_runs["scenario"].astype(str)))
    ]
    none = jcsi2018.designs(others, sub_runs, main_params, sub_params)
    assert none.empty and "not compared" in jcsi2018.designs_sentences(none)


def test_the_designs_figure_draws_each_side_and_says_what_it_shows():
    main_runs, main_params = _committed()
    sub_runs, sub_params = _committed("isolated")
    compared = jcsi2018.designs(main_runs, sub_runs, main_params, sub_params)
    fig = jcsi2018.figures.designs_chart(compared)
    finding = jcsi2018.figures.designs_finding(compared)
    assert caption_text(fig).startswith(" ".join(finding.split()).rstrip(".") + ".")
    overlap = int(compared["overlap"].astype(bool).sum())
    assert finding.endswith(f"overlap in {overlap} of {len(compared)} scenarios"), finding
    assert len(fig.axes[0].get_yticklabels()) == 2 * len(compared)


def test_without_a_back_to_back_sub_study_the_designs_are_not_measured():
    from hostbench.params import StudyParams

    assert "is not in this run's profile" in jcsi2018.designs_missing(NGINX_BASELINE)
    subs = {jcsi2018.BACK_TO_BACK: {"repetitions": 2}}
    listed = StudyParams.from_dict({**NGINX_BASELINE.to_dict(), "sub_studies": subs})
    said = jcsi2018.designs_missing(listed)
    assert said.startswith("*Not measured") and "did not run on this machine" in said


def test_the_committed_back_to_back_sub_study_beside_the_main_study():
    """The committed example's own back-to-back sub-study: the comparison its page shows."""
    main_runs, main_params = _committed()
    sub_runs, sub_params = _committed(jcsi2018.BACK_TO_BACK)
    compared = jcsi2018.designs(main_runs, sub_runs, main_params, sub_params)
    assert set(compared["scenario"]) == set(sub_runs["scenario"].astype(str))
    _check_designs(compared, main_runs, sub_runs, main_params, sub_params)


def test_method_says_how_the_compared_modes_windows_were_laid_out(run3):
    from hostbench.params import StudyParams

    p = run3["params"]
    assert p.interleave_slice_s is None  # recorded back to back
    assert "windows back to back in an order that puts each mode" in jcsi2018.method(p)
    shared = StudyParams.from_dict({**p.to_dict(), "interleave_slice_s": 0.25, "focus": []})
    text = jcsi2018.method(shared)
    assert "back to back" not in text
    assert "whose slice of 0.25 s it is" in text
    assert f"each mode gets {p.duration_s:g} s of every window" in text


def test_method_says_how_the_modes_warmed_up_as_the_results_record_it(run3):
    from hostbench.params import StudyParams

    # A run measured before the column existed warmed up alone.
    assert "warmup_together" not in run3["results"]
    assert not analysis.warmed_up_together(run3["results"])
    rows = run3["results"].assign(warmup_together=False)
    assert not analysis.warmed_up_together(rows)
    assert analysis.warmed_up_together(rows.assign(warmup_together=True))
    p = StudyParams.from_dict({**run3["params"].to_dict(), "interleave_slice_s": 0.25})
    alone, shared = jcsi2018.method(p), jcsi2018.method(p, together=True)
    assert "warms up until three 1 s windows agree" in alone and "together" not in alone
    assert "warms the compared modes up together, in the window's slices" in shared
    assert "three 1 s windows" not in shared and "methods a second in three readings" in shared


def test_the_readmes_paper_profile_line_is_written_from_the_profile():
    from hostbench.analysis import window_design
    from hostbench.params import StudyParams

    generated = STUDY.module("generated")
    paper = StudyParams.from_file(STUDY.params_path("paper"))
    block = generated.profile_block()
    assert f"Windows {window_design.in_words(paper)};" in block
    for name in paper.sub_studies:
        sub = window_design.short(paper.sub_study(name))
        # Each sub-study sits in the group of its own layout, which says whether it is the
        # main study's.
        group = next(g for g in block.split("; ") if f"`{name}`" in g)
        assert f"with windows {sub}" in group
        same = sub == window_design.short(paper)
        assert ("as the main study's" if same else "unlike the main study's") in group
    quick = StudyParams.from_file(STUDY.params_path("quick"))  # its windows counted, not typed
    assert f"({len(quick.cells()) * quick.repetitions} of a mode each)" in block
    readme = (STUDY.folder / "README.md").read_text()
    assert block in readme, "stale: python -m hostbench docs"


def test_a_sub_study_laid_out_otherwise_is_set_beside_the_back_to_back_one():
    """A sub-study that cannot interleave (bombardier): beside an interleaved main study, its
    ratios are set beside the back-to-back sub-study's (one factor changed, not two)."""
    main_runs, main_params = _committed()
    _committed(jcsi2018.BACK_TO_BACK)  # committed with the example, or skip
    subs = {name: EXAMPLE.parent / f"{EXAMPLE.name}-{name}" for name in main_params.sub_studies}
    subs = {name: folder for name, folder in subs.items() if (folder / "results.csv").is_file()}
    for name, folder in subs.items():
        sub_params = analysis.load_params(folder)
        against, against_params, runs = jcsi2018.reference_for(sub_params, main_params,
                                                               main_runs, subs)  # fmt: skip
        if sub_params.interleave_slice_s == main_params.interleave_slice_s:
            assert against == "" and runs is main_runs, name
        else:
            assert against == jcsi2018.BACK_TO_BACK, name
            assert against_params.interleave_slice_s == sub_params.interleave_slice_s
        # Without a back-to-back sub-study, the main study, its other layout said beside.
        alone = {k: v for k, v in subs.items() if k != jcsi2018.BACK_TO_BACK}
        assert jcsi2018.reference_for(sub_params, main_params, main_runs, alone)[0] == ""
    if jcsi2018.TWO_HOSTS in subs:
        size = jcsi2018.localhost_size(main_params, main_runs, subs)
        two_hosts = analysis.load_params(subs[jcsi2018.TWO_HOSTS])
        if two_hosts.interleave_slice_s != main_params.interleave_slice_s:
            assert size.startswith(f"against the {jcsi2018.BACK_TO_BACK} sub-study, ")
        assert "(two hosts / loopback)" in size


def test_the_example_block_prints_a_small_steal_time_as_it_is_not_as_0():
    generated = STUDY.module("generated")
    run_dir = committed_run(STUDY)
    steal = analysis.load_results(run_dir, valid_only=False)["cpu_steal_pct"].max()
    assert 0 < steal < 0.5, "the example run's steal time rounds to 0 in whole percents"
    assert f"stole up to {steal:.1f}% of the CPU time" in generated.block(run_dir)
    assert [report.share_text(v) for v in (0.0, 0.04, 0.4, 2.34)] == ["0.0", "0.04", "0.4", "2.3"]
