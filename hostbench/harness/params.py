"""What only a launch can check of a study's params: the preflight before anything starts.

The keys, their defaults, types and validation are data in hostbench.params, which the
analysis reads too (a cell's Load checks itself as it is made: hostbench/load.py). Here the
checks that need the harness: this machine can open the connections and has the CPUs
loadgen_cpus names, and each mode runs here with these options (Windows-only modes, an
external URL). Whatever launches a study calls check_runnable on its params once.
"""

import itertools
import os

from ..catalog import get_mode
from ..errors import BadInput
from ..params import (  # noqa: F401 - the harness's names for the core's
    NOT_MEASURED,
    OPTIONAL,
    REQUIRED,
    LaunchOptions,
    StudyParams,
    check_run_id,
    fingerprint,
    load_yaml,
)
from .launch.modes import check
from .measure.loadgen import check_connections


def check_runnable(params: StudyParams) -> StudyParams:
    """`params`, refused (BadInput, one line) when this machine or its tools cannot run them
    or one of their sub-studies."""
    _check_here(params)
    for name in params.sub_studies:
        try:
            _check_here(params.sub_study(name))
        except BadInput as e:
            raise BadInput(f"sub-study {name!r}: {e}") from None
    return params


def _check_here(params: StudyParams) -> None:
    for m in params.modes:
        check(get_mode(m), params.options)
    for t, c in itertools.product(params.tools, params.concurrency):
        check_connections(c, t)  # what this machine can open
    _check_cpus(params.loadgen_cpus)


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
