"""`make test`'s lanes (Makefile, docs/testing.md): three pytest processes at once, the first
running every file the other two do not. A lane's file list names files that exist, each in one
lane, and only the first reads the session's quick batch: a file beside it that asked for the
`batch` fixture would run every study's notebook a second time; and the files that publish
the runtime variants into build/ (conftest.variant_builds) share one lane, so that no two
pytest processes publish one build at once."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANES = ("TEST_LANE_2", "TEST_LANE_3")


def _make_list(name: str) -> list[str]:
    """The words of a `NAME := ...` assignment in the Makefile, continuation lines included."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    (line,) = re.findall(rf"^{name} :=(.*)$", text, flags=re.M)
    return line.split()


def _asks_for(path: Path, fixture: str = "batch") -> list[str]:
    """The functions of test file `path` (tests and fixtures) that ask for `fixture`."""
    tree = ast.parse(path.read_text())
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and fixture in [a.arg for a in node.args.args]
    ]


def _lane_of(path: str) -> str:
    return next((lane for lane in LANES if path in _make_list(lane)), "the first")


def test_each_lanes_files_exist_and_each_sits_in_one_lane():
    files = [f for lane in LANES for f in _make_list(lane)]
    assert files and len(files) == len(set(files)), files
    assert [f for f in files if not (ROOT / f).is_file()] == []


def test_only_the_first_lane_reads_the_quick_batch():
    beside = {f: _asks_for(ROOT / f) for lane in LANES for f in _make_list(lane)}
    assert {f: names for f, names in beside.items() if names} == {}
    # The check sees a reader where there is one.
    assert _asks_for(ROOT / "tests" / "test_notebooks.py")


def test_the_files_that_publish_the_runtime_variants_share_one_lane():
    publishing = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "tests").glob("test_*.py"))
                  if _asks_for(p, "variant_builds")]  # fmt: skip
    assert len(publishing) >= 2, publishing  # the check sees them: the launches' and the hosts'
    assert len({_lane_of(f) for f in publishing}) == 1, publishing
