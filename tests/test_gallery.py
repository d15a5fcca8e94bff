"""The gallery of re-runs (hostbench.gallery) and the artifact appendix (hostbench.artifact):
generated from the committed runs, fresh, and listing what they should."""

import re
import shutil

import pytest

from hostbench import artifact, gallery
from hostbench.analysis import claims, compare, machines, tables, verdicts
from hostbench.paths import ROOT, RUNS
from hostbench.studies import STUDIES

COPIED = ("params.json", "environment.json", "results.csv", "reproduce.json", "ratios.csv")


def _committed(study: str) -> list[compare.Run]:
    return [r for r in gallery.runs_of(study) if gallery.COMMUNITY not in r.path.parts]


def _copy_run(src, dest, scale: float | None = None):
    dest.mkdir(parents=True)
    for name in COPIED:
        if (src / name).exists():
            shutil.copy(src / name, dest / name)


@pytest.mark.parametrize("study", list(STUDIES))
def test_the_gallery_page_shows_every_committed_run_of_its_study(study):
    text = (ROOT / gallery.page_path(study)).read_text()
    runs = _committed(study)
    for run in runs:
        assert f"[{run.name}](../../data/runs/{run.name}/)" in text
    # and no other study's committed runs
    for other in STUDIES:
        if other != study and STUDIES[other].paper_run not in STUDIES[study].paper_run:
            assert f"[{STUDIES[other].paper_run}]" not in text


def test_the_gallery_page_lists_every_run_in_the_community_folder(tmp_path):
    study = next(s for s in STUDIES if (RUNS / STUDIES[s].paper_run / "reproduce.json").exists())
    main = RUNS / STUDIES[study].paper_run
    _copy_run(main, tmp_path / main.name)
    for name in ("alice-laptop", "bob-server"):
        _copy_run(main, tmp_path / gallery.COMMUNITY / f"{study}-{name}")
    other = next(s for s in STUDIES if s != study and (RUNS / STUDIES[s].paper_run).is_dir())
    _copy_run(RUNS / STUDIES[other].paper_run, tmp_path / gallery.COMMUNITY / f"{other}-carol")
    (tmp_path / gallery.COMMUNITY / "half-copied").mkdir()  # no params.json: not a run
    text = gallery.page(study, tmp_path)
    for name in (main.name, f"{gallery.COMMUNITY}/{study}-alice-laptop",
                 f"{gallery.COMMUNITY}/{study}-bob-server"):  # fmt: skip
        assert f"[{name}](../../data/runs/{name}/)" in text
    assert "carol" not in text and "half-copied" not in text
    # a copy of the committed run is reproduced in every ratio it shares
    row = next(line for line in text.splitlines() if "alice-laptop](" in line)
    assert re.search(rf"\| (\d+) {verdicts.REPRODUCED} \(of \1\) \|$", row), row


def test_a_study_without_runs_says_how_to_add_one(tmp_path):
    study = next(iter(STUDIES))
    assert "No run of this study is committed yet" in gallery.page(study, tmp_path)


def test_generated_pages_are_fresh(stale_docs):
    stale = [n for n in stale_docs if n.startswith(("docs/gallery/", artifact.PAGE))]
    assert stale == [], f"{', '.join(stale)}: run `python -m hostbench docs` and commit them"


def _artifact_ranges(text: str) -> dict[str, list[tuple[str, str, str, str]]]:
    """{run folder: [(claim, committed, range, blocks)]} from the appendix's tables."""
    out, run = {}, None
    for line in text.splitlines():
        heading = re.match(r"Expected ranges, .*\(\[([^\]]+)\]", line)
        if heading:
            run = heading.group(1)
            out[run] = []
        elif run and line.startswith("| ") and not line.startswith("| claim"):
            out[run].append(tuple(c.strip() for c in line.strip("|").split(" | ")))
        elif run and out[run] and not line.startswith("|"):  # the table ended
            run = None
    return out


def _with_claims_sub_studies(study: str) -> list[compare.Run]:
    """The committed runs, and the sub-studies of the claims run (the appendix shows them)."""
    runs = _committed(study)
    claims_run = RUNS / STUDIES[study].claims_run
    if any(r.path == claims_run for r in runs):
        for sub in tables.load_params(claims_run).sub_studies:
            folder = RUNS / f"{claims_run.name}-{sub}"
            if (folder / "results.csv").is_file():
                runs.append(compare.Run(folder, study, sub))
    return runs


def test_the_artifact_ranges_equal_the_committed_intervals():
    text = (ROOT / artifact.PAGE).read_text()
    ranges = _artifact_ranges(text)
    expected_runs = [r for s in STUDIES for r in _with_claims_sub_studies(s)]
    assert sorted(ranges) == sorted(r.name for r in expected_runs)
    # Each named by its profile: a claims run is not "the paper profile".
    for study in STUDIES:
        claims_run = STUDIES[study].claims_run
        if claims_run in ranges:
            assert f"Expected ranges, the claims profile ([{claims_run}]" in text
            for sub in tables.load_params(RUNS / claims_run).sub_studies:
                assert f"the {sub} sub-study of the claims profile ([{claims_run}-{sub}]" in text
    for run in expected_runs:
        ratios = compare.run_ratios(run.path, run.study)
        assert len(ranges[run.name]) == len(ratios.dropna(subset=["ratio"]))
        shown = {claim: (value, interval, n) for claim, value, interval, n in ranges[run.name]}
        for _, r in ratios.iterrows():
            value, interval, n = shown[compare.ratio_name(r)]
            cell = compare.interval_cell(100 * r["ratio"], 100 * r["ci_low"], 100 * r["ci_high"])
            assert cell == f"{value} ({interval})" if "-" in interval else f"{value} (no interval)"
            assert int(n) == int(r["n"])


def test_the_artifact_names_each_studys_command_time_and_hardware():
    text = (ROOT / artifact.PAGE).read_text()
    for study in STUDIES:
        if _committed(study):
            section = text.split(f"## {study}:", 1)[1].split("\n## ", 1)[0]
            assert f"make reproduce STUDY={study}" in section
            assert "make compare RUN=" in section
            assert re.search(r"Time here: \d+ min for \d+ windows", section)
            assert "Measured on: " in section


def test_the_artifact_says_how_each_rerun_on_record_came_out():
    """A reviewer reads whether the ranges carried over: every contributed run of a study,
    with its verdict counts against the committed run, as the gallery gives them."""
    text = (ROOT / artifact.PAGE).read_text()
    for study in STUDIES:
        if not _committed(study):
            continue
        section = text.split(f"## {study}:", 1)[1].split("\n## ", 1)[0]
        reruns = [r for r in gallery.runs_of(study)
                  if gallery.COMMUNITY in r.path.parts and not r.sub_study]  # fmt: skip
        if not reruns:
            assert "- Re-runs on record: none yet" in section
        for run in reruns:
            assert f"`{run.name}` (" in section
            assert f"): {gallery.answer(run, gallery.RUNS)[0]}" in section


def test_the_artifact_and_the_gallery_give_each_claims_verdicts_from_the_committed_run():
    """Per claim, the committed run's one verdict, its verdict on every machine on record and
    its agreement as its findings box gives them (the artifact), and every main run's verdict
    beside it (the gallery)."""
    text = (ROOT / artifact.PAGE).read_text()
    judged = [s for s in STUDIES if _committed(s)
              and claims.of_run(s, _committed(s)[0].path) is not None]  # fmt: skip
    if not judged:
        pytest.skip("no committed run of a study that judges claims")
    for study in judged:
        table = machines.with_machines(claims.of_run(study, _committed(study)[0].path), study)
        section = text.split(f"## {study}:", 1)[1].split("\n## ", 1)[0]
        shown = [claims.CLAIM, claims.VERDICT, machines.MACHINES, claims.AGAINST]
        for claim, verdict, by_machine, against in table[shown].values:
            row = f"| {claim} | {verdict} | {by_machine} | {against} |"
            assert row in section.replace("\\|", "|")
        page = (ROOT / gallery.page_path(study)).read_text()
        assert "## The article's claims, run by run" in page
        for verdict in table[claims.VERDICT]:
            assert f"| {verdict} |" in page
