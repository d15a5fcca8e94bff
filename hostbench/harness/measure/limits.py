"""Whether the load generator, rather than the system under test, limited a run.

A run's throughput is a property of the target only when the target is what runs
out first. The load generator limits it when it cannot get more CPU than it used:

- Pinned (`loadgen_cpus`): the generator used (nearly) all of the CPUs it may run
  on, >= LOADGEN_BUSY_SHARE of them. The server and proxy run elsewhere, so this is
  the generator's own ceiling.
- Unpinned: the generator shares every CPU with the server and proxy, so it can
  never use 0.9 of the whole machine while they also run, and the pinned rule
  cannot fire. What limits there is the machine: it is saturated (busy >=
  MACHINE_BUSY_PCT, all processes counted) and the generator took at least its fair
  share of the CPU it competed for, i.e. at least as many cores as the server and
  proxy together (two parties split the CPU left by other processes). Then every
  core it used is one the target did not get, and the target got no more than
  half: a cheaper generator would have measured a higher number, so the number
  describes the pair, not the target. A generator that used less than the target
  on a saturated machine left the target the larger part; that is the normal,
  CPU-bound measurement of a co-located benchmark (the paper's setup) and is not
  flagged.

  The rule is stated against the server and proxy rather than against "the cores
  left after the others" because, on a saturated machine, the generator's cores
  are by construction about machine - foreign - server - proxy: a test against that
  remainder would fire on every saturated run. CPU of other processes (foreign)
  only decides whether the machine counts as saturated; it is part of the total.

Any input the decision needs that is NaN (a CPU that could not be read) gives
False: "not shown to be limited"; such rows are flagged elsewhere as unreadable.
"""

import math
from collections.abc import Sequence

# Pinned: the share of its CPUs a generator uses when it is the bottleneck.
LOADGEN_BUSY_SHARE = 0.9
# Unpinned: the machine counts as saturated from this busy % (all CPUs, 0-100).
MACHINE_BUSY_PCT = 90.0


def _known(*values: float) -> bool:
    return all(v is not None and not math.isnan(v) for v in values)


def loadgen_limited(
    *,
    cpu_loadgen_cores: float,
    cpu_server_cores: float,
    cpu_proxy_cores: float | None,
    cpu_total_pct: float,
    machine_cores: int,
    loadgen_cpus: Sequence[int] | None,
    foreign_cores: float | None = math.nan,
) -> bool:
    """True when the load generator, not the target, is what limited the run (see module doc).

    cpu_*_cores: mean cores each used during the measured load (proxy: None or NaN
    without a proxy, counted as 0); cpu_total_pct: the whole machine's busy %, 0-100;
    loadgen_cpus: the CPU ids the generator was pinned to, None (or empty) when
    unpinned; foreign_cores: CPU of processes the harness did not start (unused by the
    rule, which counts it through cpu_total_pct; accepted so callers pass the row).
    """
    del foreign_cores  # part of cpu_total_pct; see the module doc
    if not _known(cpu_loadgen_cores):
        return False
    if loadgen_cpus:
        return cpu_loadgen_cores >= LOADGEN_BUSY_SHARE * len(loadgen_cpus)
    proxy = 0.0 if cpu_proxy_cores is None or math.isnan(cpu_proxy_cores) else cpu_proxy_cores
    if not _known(cpu_server_cores, cpu_total_pct) or machine_cores < 1:
        return False
    saturated = cpu_total_pct >= MACHINE_BUSY_PCT
    return saturated and cpu_loadgen_cores > 0 and cpu_loadgen_cores >= cpu_server_cores + proxy


def loadgen_limited_row(row: dict, loadgen_cpus: Sequence[int] | None) -> bool:
    """loadgen_limited() on a run's row (the CPU monitor's summary columns)."""
    return loadgen_limited(
        cpu_loadgen_cores=row["cpu_loadgen_cores"],
        cpu_server_cores=row["cpu_server_cores"],
        cpu_proxy_cores=row.get("cpu_proxy_cores"),
        cpu_total_pct=row["cpu_total_pct"],
        machine_cores=row["machine_cores"],
        loadgen_cpus=loadgen_cpus,
        foreign_cores=row.get("foreign_cores", math.nan),
    )
