"""Every study folder the package discovers, held to one contract (docs/adding-a-study.md).

Nothing here names a study: a sixth folder is checked the moment it exists. Its own
behaviour is tested by the test_*.py in its folder.
"""

import inspect
import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from hostbench import readmes
from hostbench.analysis import claims, tables, verdicts
from hostbench.analysis.reference import load_claims, load_reference, load_setup
from hostbench.errors import BadInput
from hostbench.params import StudyParams, load_yaml
from hostbench.paths import ROOT
from hostbench.studies import DEFAULT_STUDY, HOOKS, STUDIES, Study, StudyHooks, available, discover

every_study = pytest.mark.parametrize("study", list(STUDIES.values()), ids=lambda s: s.id)


def _code_cells(study: Study) -> list[dict]:
    nb = json.loads(study.notebook_path.read_text())
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


@every_study
def test_the_folder_has_everything_a_study_needs(study):
    assert study.available and {"paper", "quick"} <= set(study.profiles())
    assert (study.folder / "README.md").is_file() and (study.folder / "analysis.py").is_file()
    assert study.analysis.__name__.endswith(".analysis")
    assert list(study.folder.glob("test_*.py")), "its own tests, beside its code"
    for name in ("reference/published.csv", "reference/setup.csv", "fixtures/quick-results.csv",
                 "fixtures/README.md"):  # fmt: skip
        assert (study.folder / name).is_file(), name
    readme = (study.folder / "README.md").read_text()
    assert readmes.PAPER_START in readme and readmes.PAPER_END in readme  # its paper-run line
    # Its notebook is numbered, not with the C# tour's 00. The number orders the studies; a
    # copied folder keeps its template's until renamed, and sorts beside it (by id).
    number = study.notebook.split("-")[0]
    assert number.isdigit() and number != "00", study.notebook


def test_the_studies_are_in_notebook_order_with_a_shared_number_ordered_by_id(tmp_path):
    for sid, notebook in (("b-2026", "02-b.ipynb"), ("a-2026", "02-b.ipynb"), ("c-2026", "01-c")):
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "study.yaml").write_text(
            f"title: T\narticle: a.txt\ncitation: C\nnotebook: {notebook}\n"
        )
    assert list(discover(tmp_path)) == ["c-2026", "a-2026", "b-2026"]


def test_one_study_is_the_default_and_comes_first():
    assert [s.id for s in STUDIES.values() if s.default] == [DEFAULT_STUDY]
    assert next(iter(STUDIES)) == DEFAULT_STUDY


def test_two_default_studies_are_refused_in_one_line(tmp_path):
    for sid in ("a-2026", "b-2026"):
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "study.yaml").write_text(
            "default: true\ntitle: T\narticle: a.txt\ncitation: C\nnotebook: n.ipynb\n"
        )
    with pytest.raises(Exception, match=r"only one study may say `default: true`; found "):
        discover(tmp_path)


def test_a_studys_paper_run_is_its_own_folder_unless_it_names_one(tmp_path):
    (tmp_path / "study.yaml").write_text("title: T\narticle: a.txt\ncitation: C\nnotebook: n\n")
    assert Study.from_folder(tmp_path).paper_run == f"example-{tmp_path.name}-paper"
    (tmp_path / "study.yaml").write_text(
        "title: T\narticle: a.txt\ncitation: C\nnotebook: n\npaper_run: example-mine\n"
    )
    assert Study.from_folder(tmp_path).paper_run == "example-mine"
    assert len({s.paper_run for s in STUDIES.values()}) == len(STUDIES)  # none shared


def test_a_studys_tighter_half_width_goals_are_read_from_its_study_yaml(tmp_path):
    from hostbench.errors import BadInput

    head = "title: T\narticle: a.txt\ncitation: C\nnotebook: n\n"
    (tmp_path / "study.yaml").write_text(head)
    assert Study.from_folder(tmp_path).halfwidth_goals == ()  # the package's goal alone
    (tmp_path / "study.yaml").write_text(head + "halfwidth_goals: {kestrel: 2, nginx: 2.5}\n")
    assert Study.from_folder(tmp_path).halfwidth_goals == (("kestrel", 2.0), ("nginx", 2.5))
    for bad in ("[kestrel]", "{kestrel: 0}", "{kestrel: two}"):
        (tmp_path / "study.yaml").write_text(head + f"halfwidth_goals: {bad}\n")
        with pytest.raises(BadInput, match=r"halfwidth_goals must map modes to a half-width"):
            Study.from_folder(tmp_path)
    # Every goal a study declares names a mode the catalog knows.
    from hostbench.catalog import MODES

    for study in STUDIES.values():
        assert {mode for mode, _ in study.halfwidth_goals} <= set(MODES), study.id


@every_study
def test_the_notebook_is_committed_clean_with_one_parameters_cell_leaving_its_study_to_its_folder(
    study, monkeypatch, tmp_path
):
    code = _code_cells(study)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    # No study id typed in it (a copy under a new id would name its template): the folder
    # names the study, where a reader's Jupyter and papermill run it.
    cell = "".join(tagged[0]["source"])
    assert re.search(r'^study = ""', cell, re.M) and re.search(r'^run_id = ""', cell, re.M)
    assert study.id not in cell
    from hostbench.harness.notebook import StudyRun

    monkeypatch.chdir(study.folder)
    run = StudyRun.from_parameters("", "quick", None, "", str(tmp_path))
    assert (run.study, run.run_id, run.profile) == (study.id, f"{study.id}-notebook", "quick")


@every_study
def test_each_profile_loads_and_quick_is_paper_made_small(study):
    for profile in study.profiles():
        StudyParams.from_file(study.params_path(profile))  # validated: raises on a bad key
    quick = load_yaml(study.params_path("quick"))
    assert quick["smoke"] is True  # a quick run says it is a smoke run, not evidence
    # Every other profile (quick, and any a study adds, e.g. convergence) is paper changed:
    # it extends paper, or a profile that does (scope extends claims), and states only what
    # differs from the profile it extends.
    for profile in set(study.profiles()) - {"paper"}:
        path = study.params_path(profile)
        parent = re.search(r"^extends: (\S+)$", path.read_text(), re.M)
        assert parent and parent[1] in study.profiles(), profile
        chain = [parent[1]]
        while chain[-1] != "paper":
            above = re.search(r"^extends: (\S+)$", study.params_path(chain[-1]).read_text(), re.M)
            assert above and above[1] not in chain, (profile, chain)
            chain.append(above[1])
        base = load_yaml(study.params_path(parent[1]))
        own = yaml.safe_load(path.read_text())
        assert all(k not in base or own[k] != base[k] for k in own if k != "extends"), profile


@every_study
def test_the_articles_numbers_and_settings_carry_their_quotes(study):
    published, setup = load_reference(study.id), load_setup(study.id)
    assert len(published) and len(setup)
    for frame in (published, setup):
        assert (frame["quote"].str.strip() != "").all()
        assert set(frame["source_file"]) == {study.article}


@every_study
def test_the_recorded_run_loads_and_matches_the_quick_profile(study):
    results = tables.load_results(study.fixtures_dir / "quick-results.csv", valid_only=False)
    quick = StudyParams.from_file(study.params_path("quick"))
    assert len(results) and set(results["mode"].astype(str)) <= set(quick.modes)
    assert set(results["scenario"].astype(str)) <= set(quick.scenarios)


@pytest.mark.live
@pytest.mark.timeout(3600)  # the session's batch of every study's quick profile
@every_study
def test_the_quick_report_shows_the_studys_figures_inline_and_a_headline(study, batch):
    out = batch / study.id
    executed = json.loads((out / study.notebook).read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert [o for o in outputs if o["output_type"] == "error"] == []
    assert [o for o in outputs if o.get("name") == "stderr"] == []  # no progress dump
    page = (out / "report.html").read_text()
    assert "<Figure size" not in page
    assert page.count("data:image/png;base64") >= len(study.figures)  # inline, in their sections
    for name in study.figures:
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{name}.{ext}").stat().st_size > 1000, name
    assert (out / "headline.txt").read_text().strip()
    params = StudyParams.from_file(study.params_path("quick"))
    rows = pd.read_csv(out / "results.csv")
    assert len(rows) == len(params.cells()) * params.repetitions


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_the_first_screen_has_one_row_per_claim_of_its_reference_file(study):
    """The claims contract (hostbench/analysis/claims.py), on the recorded quick run: exactly
    one row per claim reference/claims.csv lists, in its order, each with one verdict."""
    listed = load_claims(study.id)
    if listed is None:
        pytest.skip(f"{study.id} judges no claim")
    results = tables.load_results(study.fixtures_dir / "quick-results.csv", valid_only=False)
    table = claims.for_results(study.id, results, StudyParams.from_file(study.params_path("paper")))
    assert list(table[claims.CLAIM]) == list(dict.fromkeys(listed["claim"]))
    assert set(table[claims.VERDICT]) <= set(verdicts.VERDICTS)
    untestable = set(listed.loc[listed["kind"] == "not testable", "claim"])
    shown = table.set_index(claims.CLAIM)[claims.VERDICT]
    assert all(shown[c] == verdicts.NOT_TESTABLE for c in untestable)


# What `make check` runs that a new study folder could trip: its own tests, and those that
# hold every study and notebook to the contract. (The generated docs, its README's blocks
# and gallery page among them, are `python -m hostbench docs`'s to write, as for any change.)
CONTRACT_TESTS = (
    "tests/test_studies.py",
    "tests/test_notebooks.py",
    "tests/test_notebook_prose.py",
)


@pytest.mark.live
def test_a_copied_folder_is_a_new_study_with_no_other_file_changed(tmp_path):
    """Add a study the documented way (copy a folder, rename it, edit its study.yaml) in a
    copy of the checkout: it is listed, and its tests and the studies' contract pass there."""
    from hostbench.paths import tracked_files

    tree = tmp_path / "checkout"
    # The checkout as a clone has it, but its runs: a new study has none, and its tests say so.
    files = tracked_files()
    assert files, "the checkout's files are git's list of them: this needs git and a clone"
    for name in files:
        if not str(name).startswith("data/runs/") and (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    template = next(s for s in available() if not s.default)  # one default study only
    new = tree / "studies" / "my-proxies-2026"
    shutil.copytree(template.folder, new, ignore=shutil.ignore_patterns("__pycache__"))
    definition = new / "study.yaml"
    definition.write_text(definition.read_text().replace(template.title, "My proxies (2026)"))
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    listed = subprocess.run(
        [sys.executable, "-m", "hostbench", "studies"],
        cwd=tree, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert re.search(r"^my-proxies-2026 .*My proxies \(2026\)$", listed, re.M)
    assert len(listed.splitlines()) == len(STUDIES) + 1
    found = discover(tree / "studies")["my-proxies-2026"]
    assert found.analysis.__name__ == "hostbench_studies.my_proxies_2026.analysis"
    assert len(load_reference(found)) == len(load_reference(template.id))
    assert found.notebook == template.notebook  # the template's number and name, kept

    # Its tests (beside the template's, of the same file names) and the contract, as `make
    # check` runs them: they pass, the new study among those checked.
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-m", "not live", "-p", "no:cacheprovider",
         "-rs", f"studies/{new.name}", *CONTRACT_TESTS],
        cwd=tree, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    out = checked.stdout
    assert checked.returncode == 0, out[-3000:] + checked.stderr[-2000:]
    assert re.search(r"^=+ \d+ passed", out.splitlines()[-1])
    assert re.search(r"^tests/test_studies\.py::\w+\[my-proxies-2026\] PASSED", out, re.M)
    assert re.search(rf"^studies/{new.name}/test_\w+\.py::\w+ PASSED", out, re.M)
    # What it has no run for yet is skipped as such, not failed.
    assert "my-proxies-2026 has no committed run data/runs/example-my-proxies-2026-paper/" in out


def test_a_study_folder_with_a_misspelt_key_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "typo-2026"
    folder.mkdir()
    (folder / "study.yaml").write_text(
        "title: T\narticle: a.txt\ncitation: C\nnotebok: n.ipynb\n", encoding="utf-8"
    )
    with pytest.raises(Exception, match=r"unknown key 'notebok'; missing 'notebook'; allowed: "):
        discover(tmp_path)


@every_study
def test_the_hooks_a_study_defines_have_the_declared_signatures(study):
    # What the package calls on a study's analysis.py is declared once (studies.StudyHooks);
    # a study's own version takes the same parameters, by name and in order.
    for name in HOOKS:
        own = study.hook(name)
        if own is None:
            continue
        declared = list(inspect.signature(getattr(StudyHooks, name)).parameters)[1:]  # no self
        assert list(inspect.signature(own).parameters) == declared, (study.id, name)


def test_an_undeclared_hook_is_refused_in_one_line():
    with pytest.raises(BadInput, match="no study hook 'headlines'; the hooks: claims"):
        next(iter(STUDIES.values())).hook("headlines")


def test_no_page_sends_a_reader_to_the_maintainers_copy_of_the_articles():
    # The study READMEs said "seed file ... in `shared/seeds/`": a folder outside the package
    # that a reader's clone does not have. They cite the article by its public reference.
    from hostbench.paths import tracked_files

    mentions = [
        str(name) for name in tracked_files() or []
        if not str(name).startswith("tests/") and (ROOT / name).is_file()
        and "seeds/" in (ROOT / name).read_text(errors="replace")
    ]  # fmt: skip
    assert mentions == []


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_each_study_readme_cites_its_article_by_its_public_reference(study):
    readme = (study.folder / "README.md").read_text()
    block = readme.partition(readmes.ARTICLE_START)[2].partition(readmes.ARTICLE_END)[0]
    assert study.citation.rstrip(".") in block
    assert (f"<{study.url}>" in block) if study.url else ("names no public address" in block)
