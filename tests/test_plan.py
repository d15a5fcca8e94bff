"""How long a run will take, said before it measures (hostbench/plan.py): from the committed
runs on record, cut by the profile's budget, and the budget; `--plan` measures nothing."""

import shutil

import pandas as pd
import pytest

from hostbench import plan, readmes
from hostbench.__main__ import main
from hostbench.analysis import tables
from hostbench.paths import ROOT, RUNS
from hostbench.studies import DEFAULT_STUDY, STUDIES

PROFILES_ON_RECORD = [(sid, p) for sid, s in STUDIES.items() for p in s.profiles()
                      if plan.Plan.of(sid, p).estimates]  # fmt: skip


def test_every_study_has_its_claims_profile_planned_from_a_run_on_record():
    assert {sid for sid, p in PROFILES_ON_RECORD if p == "claims"} == set(STUDIES)


@pytest.mark.parametrize(("study", "profile"), PROFILES_ON_RECORD)
def test_the_plan_of_each_committed_runs_profile_lies_within_its_budget(study, profile):
    # Each run on record stands for the profile as far as the profile's budget would have let
    # it go; its first blocks are never cut, so a budget those alone pass would show here.
    p = plan.Plan.of(study, profile)
    for estimate in p.estimates:
        for name, part in estimate.parts.items():
            budget = p.budgets[name]
            if budget is not None:
                assert part.minutes <= budget, (study, profile, name, estimate.took.path.name)
        if p.budget is not None:  # with the tour, notebook and report on top
            assert estimate.minutes <= p.budget, (study, profile, estimate.took.path.name)
    assert f"about {p.minutes:.0f} min" in p.text()


def test_the_first_verdict_is_planned_within_15_minutes_and_every_claims_run_within_60():
    # The committed examples (listed first, here=None) as a newcomer's machine would take them.
    first = plan.Plan.of(DEFAULT_STUDY, "claims")
    assert first.estimates[0].took.path.parent == RUNS and first.minutes <= 15
    assert sum(plan.Plan.of(sid, "claims").minutes for sid in STUDIES) <= 60


def test_a_run_on_record_with_a_budget_set_on_the_command_line_is_cut_to_the_profiles():
    # selfhost-2012's committed claims run was resumed with a larger max_minutes: it stands for
    # the profile only as far as the profile's own budget, and says what it ran with.
    run = RUNS / STUDIES["selfhost-2012"].claims_run
    took = plan.took(run)
    assert "max_minutes" in took.set_on_command_line
    p = plan.Plan.of("selfhost-2012", "claims")
    example = next(e for e in p.estimates if e.took.path == run)
    assert example.parts[plan.MAIN].blocks < took.main.blocks
    assert example.parts[plan.MAIN].minutes <= p.budget < took.main.minutes
    assert f"{took.set_text()}" in p.text() and "set on the command line" in took.set_text()
    listed = readmes.claims_section(ROOT)
    line = next(x for x in listed.splitlines() if x.startswith("- `selfhost-2012`"))
    assert f"{took.set_text()} (the profile's budget: {p.budget:g} min)" in line
    assert f"in {took.own_minutes:.0f} min" in line


def test_the_claims_profiles_have_no_sub_studies_and_the_scope_profile_has_theirs():
    # The committed claims runs measured their sub-studies with the claims profile as it was;
    # the scope profile is that profile: the same main run, then the same sub-studies, and any
    # added since that run (go-vs-dotnet-2017's aot-gc), which no committed run measured yet.
    moved = 0
    for sid, study in STUDIES.items():
        claims = plan.Plan.of(sid, "claims").params
        assert claims.sub_studies == {}, sid
        recorded = tables.load_params(RUNS / study.claims_run)
        if not recorded.sub_studies:
            assert "scope" not in study.profiles(), sid
            continue
        scope = plan.Plan.of(sid, "scope").params
        assert plan.measures_the_same(scope, claims)
        assert set(recorded.sub_studies) <= set(scope.sub_studies), sid
        assert list(scope.sub_studies)[: len(recorded.sub_studies)] == list(recorded.sub_studies)
        for name in recorded.sub_studies:
            assert plan.measures_the_same(scope.sub_study(name), recorded.sub_study(name))
            assert plan.profile_running(sid, "claims", name) == "scope"
        moved += 1
    assert moved >= 2


def test_the_readme_lists_a_claims_runs_own_time_and_its_sub_study_as_the_scope_profiles():
    listed = readmes.claims_section(ROOT)
    for sid, study in STUDIES.items():
        took = plan.took(RUNS / study.claims_run)
        line = next(x for x in listed.splitlines() if x.startswith(f"- `{sid}`"))
        assert f"{took.main.windows} windows in {took.own_minutes:.0f} min" in line
        for name in took.parts.keys() - {plan.MAIN}:
            assert f"[its {name} sub-study](data/runs/{study.claims_run}-{name}/)" in line
            assert "to the `scope` profile" in line
    total = sum(plan.Plan.of(sid, "claims").minutes for sid in STUDIES)
    assert f"`make reproduce-all PROFILE=claims` takes about {total:.0f} min" in listed
    assert "`make reproduce PROFILE=scope`" in listed
    page = (ROOT / readmes.RUNS_PAGE).read_text()
    assert readmes.from_docs(readmes.claims_section(ROOT)) in page


def test_plan_measures_nothing_and_prints_the_estimate(tmp_path, capsys):
    assert main(["reproduce", "--plan", "--profile", "claims", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"{DEFAULT_STUDY}, profile claims: about ")
    budget = plan.Plan.of(DEFAULT_STUDY, "claims").budget
    assert f"at most {budget:g} min of measurement by its budget" in out
    assert list(tmp_path.iterdir()) == []  # no run folder, nothing measured


def test_a_batch_plan_runs_the_studies_with_the_profile_and_sums_them(tmp_path, capsys):
    args = ["reproduce-all", "--plan", "--profile", "scope", "--runs-dir", str(tmp_path)]
    assert main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    having = [sid for sid, s in STUDIES.items() if "scope" in s.profiles()]
    lacking = [sid for sid in STUDIES if sid not in having]
    assert lines[0] == f"not in this batch (no scope profile): {', '.join(lacking)}"
    assert [x.split(",")[0] for x in lines[1:-1]] == having
    assert lines[-1].startswith("The batch: about ") and f"for {len(having)} studies" in lines[-1]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["reproduce", "--plan", "--profile", "nope"], "has no profile 'nope'; allowed: "),
        (["reproduce-all", "--plan", "--profile", "nope"], "no study has a profile 'nope'"),
        (
            ["reproduce-all", "--plan", "--profile", "scope", "--study", "selfhost-2012"],
            "has no profile 'scope'",
        ),
        (["reproduce", "--plan", "--render-only"], "measures nothing; it takes no --render-only"),
    ],
)
def test_a_plan_of_bad_input_is_refused_in_one_line(args, said, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err


def test_without_a_run_on_record_the_params_say_it():
    p = plan.Plan.of(DEFAULT_STUDY, "quick")
    assert not p.estimates
    parts = [p.params, *(p.params.sub_study(n) for n in p.params.sub_studies_run)]
    assert p.minutes == sum(plan.params_estimate_s(x) for x in parts) / 60
    assert "by its params" in p.text() and "no time budget" in p.text()


def test_a_run_on_record_is_timed_by_its_files_as_they_are_now(tmp_path):
    # A run's parts are kept by its files' content (kept.py): one whose results lose a block
    # is timed again, with one block less.
    source = RUNS / STUDIES[DEFAULT_STUDY].claims_run
    run = tmp_path / source.name
    shutil.copytree(source, run)
    before = plan.took(run).main
    results = pd.read_csv(run / "results.csv", dtype=str, keep_default_na=False)
    results[results["block"] != str(before.blocks)].to_csv(run / "results.csv", index=False)
    assert plan.took(run).main.blocks == before.blocks - 1
    assert plan.took(source).main == before
