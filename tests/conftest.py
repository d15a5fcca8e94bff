"""Shared test helpers."""

import os
import time

import pytest


@pytest.fixture
def group_gone():
    """group_gone(pid) -> True once no process is left in process group `pid`."""
    return _group_gone


def _group_gone(pid: int) -> bool:
    # Killed children may linger a moment as zombies.
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
