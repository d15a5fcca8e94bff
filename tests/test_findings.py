"""The findings box a report opens with (hostbench.analysis.findings): the claims table of
the section below it, verbatim, with the machine in one line; a smoke run's banner instead of
verdicts. And every committed report passes the page check (hostbench.pagecheck)."""

import json
import math
import re

import pandas as pd
import pytest
from bs4 import BeautifulSoup

from conftest import measured_studies
from hostbench.analysis import (
    claims,
    findings,
    intervals,
    prose,
    student_t,
    tables,
    until_decided,
    verdict_card,
    verdicts,
    wording,
)
from hostbench.pagecheck import page_defects
from hostbench.paths import ROOT, committed
from hostbench.paths import RUNS as RUNS_DIR
from hostbench.studies import STUDIES

COMMITTED_PAGES = committed(RUNS_DIR, "*/report.html") + committed(RUNS_DIR, "*/index.html")

CLAIMS = pd.DataFrame(
    {
        "the article's claim": [
            "Kestrel alone is the fastest",
            "IIS in-process beats out-of-process",
        ],
        "our evidence": [
            wording.describe(1.55, 1.41, 1.70) + ", n = 5",
            wording.describe(1.22, 1.0077, 1.49) + ", n = 5",
        ],
        "verdict": [verdicts.SUPPORTED, verdicts.SUPPORTED],
    }
)
RUNS = pd.DataFrame(
    {
        "valid": [True, True, False],
        "cpu_steal_pct": [0.0, 1.2, 16.9],
        "load_avg_1m": [0.4, 0.9, 1.5],
        "foreign_cores": [0.012, 0.004, 0.6],
    }
)
ENV = {"cpu_model": "AMD EPYC", "cpu_cores_logical": 2, "os": "Debian GNU/Linux 12 (bookworm)"}


def _page(box) -> str:
    return f"<html><body><main>{box._repr_html_()}</main></body></html>"


def test_the_findings_box_is_the_claims_table_below_it_with_the_machine_in_one_line():
    box = findings.findings_box(CLAIMS, RUNS, ENV)
    page = _page(box)
    # The very table the section shows, cell for cell, one click below the verdict card.
    cells = [td.get_text() for td in BeautifulSoup(page, "html.parser").select("details td")]
    section = BeautifulSoup(prose.table(CLAIMS).to_html(), "html.parser").find_all("td")
    assert cells == [td.get_text() for td in section] == list(CLAIMS.to_numpy().ravel())
    assert "Machine: AMD EPYC, 2 cores, Debian GNU/Linux 12 (bookworm)." in page
    assert ("2 of 3 windows kept; other processes at most 0.60 cores; load average 0.4-1.5; "
            "steal at most 16.9%") in page  # fmt: skip
    assert "100.7-149%" in page and findings.SMOKE_BANNER not in page
    assert page_defects(page) == []


def test_other_processes_under_half_a_hundredth_of_a_core_are_not_printed_as_zero():
    quiet = RUNS.assign(foreign_cores=[0.001, 0.004, 0.0])
    assert "; other processes under 0.005 cores; " in findings.machine_line(quiet, ENV)
    # Results from before the reading: the line says nothing of it.
    older = findings.machine_line(RUNS.drop(columns="foreign_cores"), ENV)
    assert "other processes" not in older and "load average 0.4-1.5" in older


def test_over_ssh_the_machine_line_names_the_server_host_and_the_load_host():
    env = tables.where_it_ran(
        {
            **ENV,
            "hosts": {
                "server": {"cpu_model": "Intel Xeon", "cpu_cores_logical": 16, "os": "Debian 13"},
                "loadgen": {"cpu_model": "AMD EPYC", "cpu_cores_logical": 4, "os": "Ubuntu 24.04"},
            },
        }
    )
    line = findings.machine_line(RUNS, env)
    assert line.startswith(
        "Machine: the server host Intel Xeon, 16 cores, Debian 13; "
        "the load host AMD EPYC, 4 cores, Ubuntu 24.04. Quietness: "
    )


def test_a_smoke_run_gets_the_banner_and_no_verdicts():
    page = _page(findings.findings_box(CLAIMS, RUNS, ENV, smoke=True))
    assert findings.SMOKE_BANNER in page and "checks the pipeline, not evidence" in page
    assert verdicts.SUPPORTED not in page and "<table" not in page


def test_a_study_without_a_claims_table_shows_its_headline():
    box = findings.findings_box(None, RUNS, {}, headline="Kestrel 264% of the baseline")
    page = _page(box)
    assert "<strong>Kestrel 264% of the baseline</strong>" in page
    assert "Machine: not recorded." in page and "<table" not in page


@pytest.mark.parametrize("page", COMMITTED_PAGES, ids=lambda p: p.parent.name)
def test_every_committed_report_passes_the_page_check(page):
    assert page_defects(page.read_text()) == []


def test_every_committed_report_opens_with_its_findings_box():
    for page in COMMITTED_PAGES:
        text = page.read_text()
        assert 'class="findings"' in text, page.parent.name
        # Above the first numbered section: only the introduction and the measurement cell
        # come before it.
        first_section = re.search(r"<h2[^>]*>1\. ", text)
        assert first_section and text.index('class="findings"') < first_section.start(), page


def test_the_box_shows_one_row_per_claim_and_the_rule_it_was_judged_by():
    page = _page(findings.findings_box(CLAIMS, RUNS, ENV))
    soup = BeautifulSoup(page, "html.parser")
    assert len(soup.select("details tbody tr")) == len(CLAIMS)
    # The card above it: each claim's verdict, a chip of its colour.
    chips = soup.select(".verdict-card .chip")
    assert [c.get_text() for c in chips] == list(CLAIMS["verdict"])
    assert all(verdict_card.VERDICT_COLOURS[verdicts.SUPPORTED] in c["style"] for c in chips)
    assert wording.tolerance_text() in soup.get_text(" ")
    assert f"±{verdicts.TOLERANCE_PCT:g}%" in wording.tolerance_text()


def test_the_batch_index_opens_with_its_findings_and_a_smoke_runs_banner(tmp_path):
    from hostbench.params import StudyParams
    from hostbench.reproduce import DONE_FILE, write_index
    from hostbench.studies import available

    study = available()[0]
    folder = tmp_path / "b1" / study.id
    folder.mkdir(parents=True)
    quick = StudyParams.from_file(study.params_path("quick"))
    assert quick.smoke
    (folder / "params.json").write_text(json.dumps({**quick.to_dict(), "seed": 1}))
    (folder / DONE_FILE).write_text(json.dumps({"study": study.id, "wall_s": 60}))
    page = write_index(tmp_path / "b1", "quick").read_text()
    assert page.index('class="smoke-banner"') < page.index('class="findings"')
    assert "check the pipeline, not evidence" in page and page_defects(page) == []


def _committed_with_design():
    # A run whose blocks a target half-width set (a claims run's design.json holds its looks).
    for design in committed(RUNS_DIR, "example-*/design.json"):
        if "wanted_blocks" in json.loads(design.read_text()):
            return design.parent
    pytest.skip("no committed run was designed to a target")


def test_the_precision_line_sets_the_reached_half_widths_beside_the_target():
    from hostbench.analysis import tables

    run_dir = _committed_with_design()
    design = json.loads((run_dir / "design.json").read_text())
    params = tables.load_params(run_dir)
    results = tables.load_results(run_dir, valid_only=False)
    line = findings.precision_line(run_dir, results)
    assert line.startswith(f"Precision: targeted ±{params.target_halfwidth_pct:g}%; "), line
    assert f"asked for {design['wanted_blocks']} blocks" in line
    ratios = intervals.paired_ratios(results, params.baseline_mode)
    # The focus modes where the profile names them, else every mode against the baseline.
    compared = params.focus or [m for m in params.modes if m != params.baseline_mode]
    focus = ratios[ratios["mode"].astype(str).isin(compared)]
    half = 100 * (focus["ci_high"] / focus["ratio"] - 1)
    assert f"95% half-widths of {prose.span(half, '.0f')}% over" in line
    within = int((half <= params.target_halfwidth_pct).sum())
    assert f", {within} of {len(focus)} within it." in line, line
    others = ratios[~ratios["mode"].astype(str).isin(compared) & (ratios["n"] >= 2)]
    if len(others):  # the modes outside the focus, held to the package's aim
        assert f" The other {len(others)} ratios: 95% half-widths of " in line, line
        assert line.endswith(f"; {findings.goal_clause(others)}."), line
    box = findings.findings_box(None, results, {}, run_dir=run_dir)
    assert line in box._repr_html_().replace("&#x27;", "'")
    smoke = findings.findings_box(None, results, {}, smoke=True, run_dir=run_dir)
    assert "Precision" not in smoke._repr_html_()


def test_the_precision_line_counts_the_compared_modes_beyond_two():
    """Mode labels hold commas and "and" ("Kestrel, AddMvcCore"): beyond two, a count."""
    from hostbench.analysis import tables

    seen = 0
    for params_file in committed(RUNS_DIR, "example-*/params.json"):
        params = tables.load_params(params_file.parent)
        if params.baseline_mode is None or params.smoke:
            continue
        compared = params.focus or [m for m in params.modes if m != params.baseline_mode]
        results = tables.load_results(params_file.parent, valid_only=False)
        line = findings.precision_line(params_file.parent, results)
        if len(compared) > 2 and "half-widths" in line:
            assert f"the {len(compared)} other modes against " in line, line
            seen += 1
    if not seen:
        pytest.skip("no committed run compares more than two modes with its baseline")


def test_a_run_of_one_block_says_it_has_no_interval():
    """go-vs-dotnet's convergence run: one block a cell, so the line says why there is none."""
    from hostbench.analysis import tables

    for params_file in committed(RUNS_DIR, "example-*/params.json"):
        run = params_file.parent
        params = tables.load_params(run)
        if params.baseline_mode and params.repetitions == 1 and not params.smoke:
            break
    else:
        pytest.skip("no committed run of one block")
    results = tables.load_results(run, valid_only=False)
    line = findings.precision_line(run, results)
    assert line == "Precision: no interval to state: each cell ran in one block, and one needs two."
    more = pd.concat([results, results.assign(block=results["block"] + 1)])
    assert "half-widths" in findings.precision_line(run, more)  # two blocks: an interval


def test_a_run_without_one_baseline_states_the_precision_of_the_ratios_it_publishes():
    """kestrel-transports' settings against the defaults: the count and half-widths of its
    ratios.csv's requests/s ratios."""
    from hostbench.analysis import compare, tables

    for page in committed(RUNS_DIR, "example-*/report.html"):  # a study's run, not a sub-study
        run = page.parent
        results = tables.load_results(run, valid_only=False)
        if not (run / "ratios.csv").is_file() or findings.precision_line(run, results):
            continue
        if (pd.read_csv(run / "ratios.csv")["n"] >= 2).any():  # ratios with intervals
            break
    else:
        pytest.skip("no committed run publishes ratios other than modes against a baseline")
    ratios = pd.read_csv(run / "ratios.csv")
    rps = ratios[ratios["measure"] == "rps"] if "measure" in ratios else ratios
    rps = rps[rps["n"] >= 2]  # a ratio from one block has no interval
    half = 100 * (rps["ci_high"] / rps["ratio"] - 1)
    line = findings.ratios_precision(compare.run_ratios(run))
    blocks = prose.span(rps["n"], ".0f")
    assert line.startswith(f"Precision: {len(rps)} compared ratios, 95% half-widths of "
                           f"{prose.span(half, '.0f')}% over {blocks} blocks; ")  # fmt: skip
    assert findings.ratios_precision(rps.assign(n=1)) == ""  # no interval, no precision
    # The report's first screen says it as the README does: the half-widths it reached (its
    # goal clause is the package's goal as of the report's render).
    reached = line.partition("; ")[0]
    assert reached in (run / "report.html").read_text().replace("&#x27;", "'")


def test_a_run_without_a_target_says_what_the_goal_would_take_by_steins_rule():
    """Three blocks whose log ratios spread 0.2 (sd): 1 of 2 ratios within the goal, and the other
    asks (t(0.975, 2) x 0.2 / log(1 + goal))^2 blocks; ratios already narrow say so."""
    t2 = student_t.t_quantile(0.975, 2)
    wide, narrow = 0.2, 0.01
    rows = pd.DataFrame({
        "ratio": [1.5, 0.9], "n": [3, 3],
        "ci_high": [1.5 * math.exp(t2 * wide / math.sqrt(3)),
                    0.9 * math.exp(t2 * narrow / math.sqrt(3))],
    })  # fmt: skip
    wanted = math.ceil((t2 * wide / math.log(1 + findings.GOAL_HALFWIDTH_PCT / 100)) ** 2)
    clause = findings.goal_clause(rows)
    goal = findings.GOAL_HALFWIDTH_PCT
    assert clause == (f"1 of 2 within ±{goal:g}%; all 2 would take about {wanted} blocks "
                      "by Stein's rule on this spread, against 3 here")  # fmt: skip
    assert findings.goal_clause(rows.iloc[[1]]) == f"all within ±{findings.GOAL_HALFWIDTH_PCT:g}%"


def _run_of_a_study_with_its_own_goals():
    """A committed paper run of a study that declares tighter goals (study.yaml
    halfwidth_goals), with its ratios.csv."""
    for study in STUDIES.values():
        run = ROOT / "data" / "runs" / study.paper_run
        if study.halfwidth_goals and (run / "ratios.csv").is_file():
            return study, run
    pytest.skip("no committed run of a study with goals of its own")


def _half(rows: pd.DataFrame) -> pd.Series:
    return 100 * (rows["ci_high"] / rows["ratio"] - 1)


def test_the_goals_line_sets_a_runs_half_widths_beside_the_studys_goals_and_the_packages():
    from hostbench.analysis import compare, tables
    from hostbench.catalog import mode_label

    study, run = _run_of_a_study_with_its_own_goals()
    ratios = pd.read_csv(run / "ratios.csv")
    rps = ratios[ratios["measure"] == "rps"] if "measure" in ratios else ratios
    rps = rps[rps["n"] >= 2]
    line = findings.goals_line(study.id, compare.run_ratios(run, study.id))
    assert line.startswith("Goals for the 95% half-widths: "), line
    for mode, goal in study.halfwidth_goals:
        mine = rps[rps["mode"] == mode]
        half = _half(mine)
        ratios_word = "ratios" if len(mine) != 1 else "ratio"
        assert (f"{mode_label(mode)} against the baseline ±{prose.span(half, '.1f')}% (goal "
                f"±{goal:g}%; {int((half <= goal).sum())} of {len(mine)} {ratios_word} within "
                "it)") in line  # fmt: skip
    half, goal = _half(rps), findings.GOAL_HALFWIDTH_PCT
    within = int((half <= goal).sum())
    assert line.endswith(f"all ratios ±{prose.span(half, '.1f')}% (goal ±{goal:g}%; "
                         f"{within} of {len(rps)} ratios within it).")  # fmt: skip
    # The report's first screen carries it after the precision line; a smoke run's does not.
    results = tables.load_results(run, valid_only=False)
    box = findings.findings_box(None, results, {}, run_dir=run, study=study.id)._repr_html_()
    assert line in box.replace("&#x27;", "'")
    assert findings.precision_line(run, results) in box.replace("&#x27;", "'")
    smoke = findings.findings_box(None, results, {}, smoke=True, run_dir=run, study=study.id)
    assert "Goals" not in smoke._repr_html_()


def test_the_goals_line_holds_every_ratio_to_the_packages_goal_and_counts_each():
    """Three blocks: half-widths of 3% and 8% (a ratio of one block has no interval, left
    out); a study without goals of its own is held to the package's alone."""
    from hostbench.studies import STUDIES

    plain = next((s for s in STUDIES.values() if not s.halfwidth_goals), None)
    if plain is None:
        pytest.skip("every study declares goals of its own")
    rows = pd.DataFrame({"mode": ["a", "b", "c"], "ratio": [1.5, 2.0, 1.1], "n": [3, 3, 1],
                         "ci_high": [1.5 * 1.03, 2.0 * 1.08, math.nan]})  # fmt: skip
    goal = findings.GOAL_HALFWIDTH_PCT
    within = int(3.0 <= goal) + int(8.0 <= goal)
    assert findings.goals_line(plain.id, rows) == (
        f"Goals for the 95% half-widths: all ratios ±3.0-8.0% (goal ±{goal:g}%; {within} of 2 "
        "ratios within it)."
    )
    assert findings.goals_line(plain.id, rows.iloc[[2]]) == ""  # no interval, no line
    # A study's own goal for a mode the run did not compare leaves the package's alone.
    study, _ = _run_of_a_study_with_its_own_goals()
    assert findings.goals_line(study.id, rows).startswith("Goals for the 95% half-widths: all")


def test_the_readmes_list_and_the_artifact_appendix_carry_each_runs_goals_line():
    from hostbench import artifact, readmes
    from hostbench.analysis import compare
    from hostbench.studies import STUDIES

    listed, appendix = readmes.batch_section(ROOT), artifact.markdown()
    seen = 0
    for sid, study in STUDIES.items():
        run = ROOT / "data" / "runs" / study.paper_run
        if not (run / "results.csv").is_file():
            continue
        line = findings.goals_line(sid, compare.run_ratios(run, sid))
        if line:
            assert line in listed, sid
            assert line in appendix, sid
            seen += 1
    if not seen:
        pytest.skip("no committed paper run with intervals")


def test_when_windows_ran_is_read_from_their_start_times():
    day = pd.DataFrame({"started_at": ["2026-11-28T08:13:05+00:00", "2026-11-28T08:01:40+00:00"]})
    assert findings.measured_when(day) == "Measured 2026-11-28 08:01-08:13 UTC."
    night = pd.DataFrame({"started_at": ["2026-11-28T23:50:00+00:00", "2026-11-29T00:20:00+00:00"]})
    assert findings.measured_when(night) == "Measured 2026-11-28 23:50 UTC to 2026-11-29 00:20 UTC."
    assert findings.measured_when(pd.DataFrame({"rps": [1.0]})) == ""


def test_each_committed_claims_run_says_on_its_first_screen_how_far_it_got():
    # A run measured until decided states its stopping account (until_decided.summary) in its
    # findings box: the claims decided, those left open, why it stopped. Every study's.
    checked = 0
    for study in STUDIES.values():
        if not committed(RUNS_DIR, f"{study.claims_run}/report.html"):
            continue
        run = RUNS_DIR / study.claims_run
        account = until_decided.summary(run, study.id)
        page = BeautifulSoup((run / "report.html").read_text(), "html.parser").get_text(" ")
        assert account.split(" (")[0] in " ".join(page.split()), study.id
        checked += 1
    assert checked == len(measured_studies())  # every study measured yet


def test_the_verdict_picture_is_drawn_when_the_page_is_not_when_the_box_is_made():
    # About a second a picture (matplotlib): a box read as text or for its card draws none.
    drawn = []

    def picture():
        drawn.append(1)
        return '<figure class="verdict-picture"></figure>'

    card = pd.DataFrame({verdict_card.CLAIM: ["c"], verdict_card.VERDICT: [verdicts.REPRODUCED],
                         verdict_card.OURS: ["ours"], verdict_card.ARTICLE: ["theirs"],
                         verdict_card.WHERE: ["one machine"]})  # fmt: skip
    table = pd.DataFrame({claims.CLAIM: ["c"], claims.VERDICT: [verdicts.REPRODUCED]})
    box = findings.FindingsBox(table, "machine", smoke=False, card=card, picture=picture)
    assert "machine" in repr(box) and drawn == []
    page = box._repr_html_()
    assert 'class="verdict-picture"' in page and drawn == [1]
    box._repr_html_()
    assert drawn == [1]
