"""What the analysis read from files, kept by what the files held: a docs page, the gallery, the
artifact appendix and a report read the same committed runs many times, and typing, judging and
comparing them is what takes the time. A file written again (even at its size) is read again:
its content is the key."""

import hashlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd

KEPT_MAX = 1024  # entries (a test session makes about 160, 3 MB); the oldest dropped beyond
# Intervals of one frame: judging a run's claims asks for the same comparison 2-3 times (its
# Holm split, a restated claim, a condition that did not change it), each a frame of a few
# rows. Kept apart, so that they never push out what files held.
FRAMES_KEPT_MAX = 8192
_KEPT: dict[tuple, object] = {}
_FRAMES_KEPT: dict[tuple, object] = {}


def keep(key: tuple, make: Callable):
    """What make() returns, made once per key, which names the content it reads (content_key).
    Shared: the caller copies what it hands on."""
    return _kept_in(_KEPT, KEPT_MAX, key, make)


def keep_of_frame(key: tuple, make: Callable):
    """keep, for what is computed from a frame (frame_key in `key`), kept apart from what files
    held."""
    return _kept_in(_FRAMES_KEPT, FRAMES_KEPT_MAX, key, make)


def _kept_in(kept: dict, most: int, key: tuple, make: Callable):
    if key not in kept:
        if len(kept) >= most:
            del kept[next(iter(kept))]
        kept[key] = make()
    return kept[key]


def frame_key(df: pd.DataFrame) -> str:
    """A hash of a frame's content: its columns, their types (a category's order too) and
    every value, row by row in order; not its index or attrs."""
    digest = hashlib.sha256(repr([(c, repr(t)) for c, t in df.dtypes.items()]).encode())
    rows = pd.util.hash_pandas_object(df, index=False, categorize=False)
    digest.update(rows.to_numpy().tobytes())
    return digest.hexdigest()


def content_key(*files: Path) -> str:
    """A hash of the files' contents (a missing one counts as empty)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes() if file.is_file() else b"")
        digest.update(b"\0")
    return digest.hexdigest()


class SharedList(list):
    """A list in a table's attrs that every copy of the table shares: pandas deep-copies attrs
    on each operation on a frame (indexing a claims table row by row copied its every point
    thousands of times). What holds one only reads it."""

    def __deepcopy__(self, memo):
        return self


class SharedDict(dict):
    """A dict in a table's attrs that every copy of the table shares (SharedList's reason)."""

    def __deepcopy__(self, memo):
        return self
