"""A study's params as the harness runs them: the core's (hostbench/params.py), plus what only
a launch can check.

The keys, their defaults, types and validation are data in hostbench.params, which the
analysis reads too (a cell's Load checks itself as it is made: hostbench/load.py). Here the
checks that need the harness: this machine can open the connections and has the CPUs
loadgen_cpus names, and each mode runs here with these options (Windows-only modes, an
external URL).
"""

import itertools
import os

from .. import params as core
from ..catalog import get_mode
from ..errors import BadInput
from ..params import (  # noqa: F401 - the harness's names for the core's
    NOT_MEASURED,
    OPTIONAL,
    REQUIRED,
    LaunchOptions,
    check_run_id,
    fingerprint,
    load_yaml,
)
from .loadgen import check_connections
from .modes import check


class StudyParams(core.StudyParams):
    """hostbench.params.StudyParams, refused when this machine or its tools cannot run it."""

    def check_runnable(self) -> None:
        for m in self.modes:
            check(get_mode(m), self.options)
        for t, c in itertools.product(self.tools, self.concurrency):
            check_connections(c, t)  # what this machine can open
        _check_cpus(self.loadgen_cpus)


def _check_cpus(cpus: list[int] | None) -> None:
    """loadgen_cpus names some, not all, of the CPUs this process may run on."""
    if cpus is None:
        return
    available = sorted(os.sched_getaffinity(0))
    unknown = [c for c in cpus if c not in available]
    if unknown or len(cpus) >= len(available):
        raise BadInput(
            f"params key 'loadgen_cpus' {cpus}: give some, not all, of this machine's CPUs "
            f"{available} (the app and proxy get the rest)"
        )
