"""`make test`'s lanes (Makefile, docs/testing.md): three pytest processes at once, the first
running every file the other two do not. A lane's file list names files that exist, each in one
lane, and only the first reads the session's quick batch: a file beside it that asked for the
`batch` fixture would run every study's notebook a second time."""

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


def _asks_for_batch(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "batch" in [a.arg for a in node.args.args]
    ]


def test_each_lanes_files_exist_and_each_sits_in_one_lane():
    files = [f for lane in LANES for f in _make_list(lane)]
    assert files and len(files) == len(set(files)), files
    assert [f for f in files if not (ROOT / f).is_file()] == []


def test_only_the_first_lane_reads_the_quick_batch():
    beside = {f: _asks_for_batch(ROOT / f) for lane in LANES for f in _make_list(lane)}
    assert {f: names for f, names in beside.items() if names} == {}
    # The check sees a reader where there is one.
    assert _asks_for_batch(ROOT / "tests" / "test_notebooks.py")
