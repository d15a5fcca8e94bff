"""Where things live in the checkout, and which of its runs are committed."""

import functools
import subprocess
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
BIN = BUILD / "bin"
TESTAPP = BUILD / "testapp" / "TestApp"
YARP_PROXY = BUILD / "yarp" / "YarpProxy"  # the `yarp` mode's proxy (testapp/yarp)
DATA = ROOT / "data"
RUNS = DATA / "runs"
STUDIES_DIR = ROOT / "studies"  # one folder per study (hostbench.studies)
NOTEBOOKS = ROOT / "notebooks"
BENCHMARKS = ROOT / "benchmarks"  # the scripts and params that check the machinery (A/A, ...)


@functools.cache
def tracked_files() -> frozenset[PurePosixPath] | None:
    """The checkout's files git tracks (`git ls-files`: committed or added), relative to ROOT,
    listed once a process; None where git cannot say (no git, or a checkout without .git:
    an unpacked archive)."""
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                                stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    return frozenset(PurePosixPath(p) for p in listed.stdout.decode().split("\0") if p)


def committed(folder: Path, pattern: str) -> list[Path]:
    """What git tracks under `folder` matching `pattern` (as Path.glob reads it, part by part:
    "*/report.html", "example-*/params.json"; a folder matches when it holds a tracked file),
    sorted. A reader's own runs beside the committed ones (a `make reproduce-all` batch, a run
    not yet added) are never listed. Where git cannot say (a folder outside the checkout,
    such as a test's copy of runs, or no git): every match on disk."""
    folder = Path(folder).resolve()
    files = tracked_files()
    if files is None or not folder.is_relative_to(ROOT):
        return sorted(folder.glob(pattern))
    under, parts = folder.relative_to(ROOT).as_posix(), pattern.split("/")
    prefix = "" if under == "." else f"{under}/"
    found = set()
    for path in _tracked_texts():  # as text: a docs page asks this for every run it names
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :].split("/")
        if len(rest) >= len(parts) and all(map(fnmatchcase, rest, parts)):
            found.add(folder.joinpath(*rest[: len(parts)]))
    return sorted(p for p in found if p.exists())  # a file deleted but not yet `git rm`ed


@functools.cache
def _tracked_texts() -> tuple[str, ...]:
    return tuple(path.as_posix() for path in tracked_files() or ())
