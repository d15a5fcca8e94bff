"""The docs a newcomer reads: a short README with the two commands on its first screen, and
no relative link that leads nowhere. Reads files only; starts no process."""

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import measured_studies
from hostbench.analysis import tables
from hostbench.paths import ROOT
from hostbench.studies import available

README = ROOT / "README.md"
README_MAX_LINES = 200
README_MAX_CHARS = 8000  # a newcomer reads it in a few minutes (papermill's is about 8k)
FIRST_SCREEN = 60  # lines
FIRST_CHARS = 1500  # the pitch, the first command and the main study's verdict picture
COMMANDS = ("make reproduce", "make test")

LINK = re.compile(r"\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [README, *docs, *sorted(ROOT.glob("studies/*/README.md"))]


def relative_links(text: str) -> list[str]:
    """The relative link targets of a Markdown text, without #anchors, outside code."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = []
    for target in LINK.findall(text):
        target = target.strip("<>")
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # https:, mailto:, or an anchor in the same page
        targets.append(target.split("#", 1)[0])
    return targets


def test_relative_links_ignore_urls_anchors_and_code():
    text = (
        "[a](docs/a.md) [b](https://x.org/y) [c](#here) [d](../e.md#part) `[f](g.md)`\n"
        "```\n[h](i.md)\n```\n[j](<k l.md>)"
    )
    assert relative_links(text) == ["docs/a.md", "../e.md", "k l.md"]


def test_readme_is_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most 200)"


def test_readme_is_short_and_opens_with_a_command_and_the_verdict_picture():
    text = README.read_text()
    assert len(text) <= README_MAX_CHARS, f"README.md has {len(text)} characters"
    head = text[:FIRST_CHARS]
    assert "make reproduce PROFILE=claims" in head and "about " in head  # a command, its time
    picture = re.search(r"!\[[^\]]+\]\((docs/gallery/[^)]+-verdicts\.png)\)", head)
    assert picture and (ROOT / picture.group(1)).is_file()


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_shows_the_two_commands_on_its_first_screen(command):
    first = "\n".join(README.read_text().splitlines()[:FIRST_SCREEN])
    assert command in first, f"{command!r} is not in README.md's first {FIRST_SCREEN} lines"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_that_exists(page):
    missing = [
        target for target in relative_links(page.read_text()) if not (page.parent / target).exists()
    ]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def _committed_paper_runs() -> dict[str, Path]:
    """Each available study's committed paper run, for those that have one (its files stand in
    for any study's run where a test needs a real one)."""
    runs = {s.id: ROOT / "data" / "runs" / s.paper_run for s in available()}
    return {sid: run for sid, run in runs.items() if (run / "reproduce.json").is_file()}


def test_each_study_readme_states_its_committed_paper_run_fresh(stale_docs):
    stale = [name for name in stale_docs if name.startswith("studies/")]
    assert stale == [], f"{', '.join(stale)}: run `python -m hostbench docs` and commit the result"
    committed = _committed_paper_runs()
    for study in available():
        readme = (study.folder / "README.md").read_text()
        if study.id not in committed:
            assert "no paper run of this study is committed yet" in readme, study.id
            continue
        run = committed[study.id]
        wall = json.loads((run / "reproduce.json").read_text())["wall_s"]
        assert f"took {wall:,} s" in readme, study.id
        assert (run / "headline.txt").read_text().strip() in readme, study.id


def test_a_paper_run_committed_later_reaches_its_readme(
    tmp_path, generated_pages, committed_pictures
):
    """When a study's paper run (data/runs/<its paper_run>/) appears, `docs` writes it into
    its README."""
    from hostbench import docs

    source = next(iter(_committed_paper_runs().values()))  # a real run's files stand in
    study = available()[-1]
    readme = tmp_path / "studies" / study.id / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text((study.folder / "README.md").read_text())
    # the generated docs/ pages too, so only the README can go stale (rendered once a session)
    committed_pictures(tmp_path)
    docs.write(tmp_path, generated_pages)
    assert docs.stale(tmp_path, generated_pages) == []  # nothing committed: "not yet" is fresh
    run = tmp_path / "data" / "runs" / study.paper_run
    shutil.copytree(source, run)
    assert docs.stale(tmp_path, generated_pages) == [f"studies/{study.id}/README.md"]
    docs.write(tmp_path, generated_pages)
    assert docs.stale(tmp_path, generated_pages) == []
    text = readme.read_text()
    wall = json.loads((run / "reproduce.json").read_text())["wall_s"]
    cores = json.loads((run / "environment.json").read_text())["cpu_cores_logical"]
    link = f"data/runs/{study.paper_run}/"
    assert f"[{link}](../../{link})" in text
    assert f"took {wall:,} s" in text and f"{cores}-core" in text


def test_the_runs_page_lists_every_studys_paper_run_and_the_batchs_wall_time(
    tmp_path, stale_docs, generated_pages, committed_pictures
):
    """The runs page's list (docs/runs.md) is fresh, and it says the batch takes longer while a
    study is missing; once every study has its run, the batch's time is their sum."""
    from hostbench import docs, readmes
    from hostbench.studies import STUDIES

    page = readmes.RUNS_PAGE
    assert page not in stale_docs, f"run `python -m hostbench docs` and commit {page}"
    (tmp_path / page).parent.mkdir(parents=True)
    shutil.copy(ROOT / page, tmp_path / page)
    committed_pictures(tmp_path)
    docs.write(tmp_path, generated_pages)  # the generated docs/ pages too: only this can go stale
    assert "not measured yet" in (tmp_path / page).read_text()  # no run in tmp_path
    source = next(iter(_committed_paper_runs().values()))
    walls = []
    for study in STUDIES.values():  # one real run's files stand in for every study's paper run
        run = tmp_path / "data" / "runs" / study.paper_run
        shutil.copytree(source, run)
        walls.append(json.loads((run / "reproduce.json").read_text())["wall_s"])
    assert docs.stale(tmp_path, generated_pages) == [page]
    docs.write(tmp_path, generated_pages)
    text = (tmp_path / page).read_text()
    assert "not measured yet" not in text
    cpu = tables.processor(json.loads((source / "environment.json").read_text()))
    assert f"takes about {sum(walls) / 60:.0f} min on {cpu}: the sum of its examples' times" in text
    for study in STUDIES.values():
        assert f"../data/runs/{study.paper_run}/report.html" in text


def test_the_batchs_time_names_the_processors_its_examples_ran_on():
    """Examples measured on different processors sum to no one machine's batch: the README
    says each processor's part and which studies ran there."""
    from hostbench import readmes

    on = {}
    for study in measured_studies():  # one not measured yet is listed as such, on none
        env = json.loads(
            (ROOT / "data" / "runs" / study.paper_run / "environment.json").read_text()
        )
        on.setdefault(tables.processor(env), []).append(study.id)
    whole = readmes.batch_section(ROOT).splitlines()[-2]
    if len(on) == 1:
        assert f" on {next(iter(on))}: the sum of its examples' times." in whole
        return
    assert whole.startswith("The examples' times sum to about ") and " here" not in whole
    assert f"measured on {len(on)} processors" in whole
    for cpu, sids in on.items():
        assert f"min on {cpu} ({', '.join(f'`{s}`' for s in sids)})" in whole


def test_a_committed_run_measured_before_its_profile_changed_says_which_keys_changed(tmp_path):
    from hostbench.readmes import profile_changes
    from hostbench.studies import get_study

    study = get_study("selfhost-2012")
    run = tmp_path / "run"
    shutil.copytree(ROOT / "data" / "runs" / study.paper_run, run,
                    ignore=shutil.ignore_patterns("*.tar.gz", "*.html", "*.ipynb"))  # fmt: skip
    assert profile_changes(study.id, run) == []
    recorded = json.loads((run / "params.json").read_text())
    recorded["repetitions"] += 1
    (run / "params.json").write_text(json.dumps(recorded))
    assert profile_changes(study.id, run) == ["repetitions"]


def test_every_page_counts_a_committed_runs_windows_the_same_way(generated_pages):
    """One unit for every count: the same paper run is "N windows" on the README's list, its
    study README, the artifact appendix and docs/example.md (was 215 windows, 215 runs and 249
    runs: the appendix counted the claims run's rows too)."""
    from hostbench import readmes

    blocks = "\n".join(block for _, block, _, _ in readmes.readme_sections(ROOT))
    artifact = generated_pages["docs/artifact.md"]
    for sid, run in _committed_paper_runs().items():
        wall, windows = readmes.wall_time(run)
        assert f"{windows} windows in {wall / 60:.0f} min" in blocks, sid  # the README's list
        assert f"about {wall / 60:.0f} min) for {windows} windows" in blocks, sid  # its README
        assert f"Time here: {wall / 60:.0f} min for {windows} windows" in artifact, sid
    for text in (blocks, artifact):
        assert not re.search(r"\d runs, (the )?sub-studies", text)
    assert "s per window" in blocks  # docs/example.md's account of the time


# "(README, Prerequisites)", "(README, *On Windows*)", "(docs/method.md, "Verdicts")": a page
# and one of its sections, named by a heading or a bold item's title ("**Interleaved windows
# (opt-in).**"). The quotes may stand escaped, inside a notebook's JSON.
POINTER = re.compile(
    r"\((README|docs/[\w-]+\.md)(?: in the package)?, "
    r"(?:\*([^*]+)\*|\\?\"([^\"\\]+)\\?\"|([A-Z][A-Za-z ]+))\)"
)


def _section_references() -> list[tuple[str, str, str]]:
    """(file, page, section) for each pointer to a page's section in the package's tracked
    prose and code."""
    from hostbench.paths import tracked_files

    found = []
    for name in map(str, tracked_files() or []):
        if not name.endswith((".py", ".ipynb", ".md")) or name.startswith(("data/", "tests/")):
            continue
        for page, *section in POINTER.findall((ROOT / name).read_text(errors="replace")):
            page = "README.md" if page == "README" else page
            found.append((name, page, next(s for s in section if s)))
    return found


def _sections(page: str) -> list[str]:
    text = (ROOT / page).read_text()
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    return headings + [t.strip() for t in re.findall(r"\*\*([^*]+?)[.:]?\*\*", text)]


def test_a_pointer_to_a_pages_section_names_a_section_it_has():
    # The jcsi2018 notebook sent readers to "(README, On Windows)", a section the README
    # does not have; what it meant is docs/windows.md.
    references = _section_references()
    for name, page, section in references:
        assert any(s.startswith(section) for s in _sections(page)), (
            f"{name} points at {page}, {section!r}: no such section"
        )
    assert any(page == "docs/windows.md" for _, page, _ in references)
