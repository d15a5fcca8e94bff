"""What the analysis read from files, kept by what the files held: a docs page, the gallery, the
artifact appendix and a report read the same committed runs many times, and typing, judging and
comparing them is what takes the time. A file written again (even at its size) is read again:
its content is the key."""

import hashlib
from collections.abc import Callable
from pathlib import Path

KEPT_MAX = 1024  # entries (a test session makes about 160, 3 MB); the oldest dropped beyond
_KEPT: dict[tuple, object] = {}


def keep(key: tuple, make: Callable):
    """What make() returns, made once per key, which names the content it reads (content_key).
    Shared: the caller copies what it hands on."""
    if key not in _KEPT:
        if len(_KEPT) >= KEPT_MAX:
            del _KEPT[next(iter(_KEPT))]
        _KEPT[key] = make()
    return _KEPT[key]


def content_key(*files: Path) -> str:
    """A hash of the files' contents (a missing one counts as empty)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes() if file.is_file() else b"")
        digest.update(b"\0")
    return digest.hexdigest()
