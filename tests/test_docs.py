"""The docs a newcomer reads: a short README with the two commands on its first screen, and
no relative link that leads nowhere. Reads files only; starts no process."""

import re
from pathlib import Path

import pytest

from hostbench.paths import ROOT

README = ROOT / "README.md"
README_MAX_LINES = 200
FIRST_SCREEN = 60  # lines
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
