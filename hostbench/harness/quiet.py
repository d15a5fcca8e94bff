"""A quiet machine, checked: the CPU that processes the harness did not start use.

A measurement taken while other work runs is worthless here (2 cores: a test
suite beside a run takes 0.2-0.9 of them and decided the first example's
result). Before each run the study waits, for a bounded time, until that
foreign CPU and the hypervisor's steal stay below their limits; during the run
the CPU monitor measures both again, and a run above the limits is invalid and
re-run. `python -m hostbench doctor` prints the same readings as a table.
"""

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from .cpumonitor import machine_shares

WINDOW_S = 0.5  # one reading of the machine
QUIET_WINDOWS = 2  # the machine is quiet when this many readings in a row are
SAY_EVERY_S = 10.0  # while waiting, say what for this often


@dataclass(frozen=True)
class Reading:
    """One window of the machine: cores used by foreign processes, steal, the busiest."""

    foreign_cores: float
    steal_pct: float
    busy_pct: float
    top: list[tuple[str, int, float]]  # (name, pid, cores) of the busiest foreign processes

    def quiet(self, max_cores: float, max_steal_pct: float) -> bool:
        return self.foreign_cores <= max_cores and not self.steal_pct > max_steal_pct

    def describe(self) -> str:
        busiest = ", ".join(f"{name} (pid {pid}) {cores:.2f}" for name, pid, cores in self.top)
        return (
            f"{self.foreign_cores:.2f} cores used by other processes"
            + (f" ({busiest})" if busiest else "")
            + f", steal {self.steal_pct:.0f}%"
        )


def _own_pids() -> set[int]:
    """The harness and everything it started (its descendants)."""
    me = psutil.Process()
    pids = {me.pid}
    try:
        pids.update(p.pid for p in me.children(recursive=True))
    except psutil.NoSuchProcess:
        pass
    return pids


def _cpu_seconds() -> dict[int, tuple[str, float]]:
    out = {}
    for p in psutil.process_iter(["name", "cpu_times"]):
        times = p.info["cpu_times"]
        if times is not None:
            out[p.pid] = (p.info["name"] or "?", times.user + times.system)
    return out


def read(window_s: float = WINDOW_S, top: int = 3) -> Reading:
    """The machine over `window_s`: CPU of every process but the harness's own, and steal."""
    own = _own_pids()
    machine0, procs0 = psutil.cpu_times(), _cpu_seconds()
    time.sleep(window_s)
    machine1, procs1 = psutil.cpu_times(), _cpu_seconds()
    shares = machine_shares(machine0, machine1, psutil.cpu_count() or 1)
    if math.isnan(shares["process_cores"]):
        return Reading(math.nan, math.nan, math.nan, [])
    own |= _own_pids()  # children started during the window are ours too
    own_cores = (
        sum(
            used - procs0[pid][1]
            for pid, (_, used) in procs1.items()
            if pid in own and pid in procs0
        )
        / window_s
    )
    foreign = [
        (name, pid, (used - procs0[pid][1]) / window_s)
        for pid, (name, used) in procs1.items()
        if pid not in own and pid in procs0 and used > procs0[pid][1]
    ]
    foreign.sort(key=lambda item: -item[2])
    return Reading(
        foreign_cores=max(0.0, shares["process_cores"] - own_cores),
        steal_pct=shares["steal_pct"],
        busy_pct=shares["busy_pct"],
        top=[(n, p, round(c, 2)) for n, p, c in foreign[:top] if c >= 0.01],
    )


def wait_until_quiet(
    max_cores: float,
    max_steal_pct: float,
    timeout_s: float,
    say: Callable[[str], None] = print,
) -> dict:
    """Wait until the machine is quiet for QUIET_WINDOWS readings in a row, `timeout_s` at
    most; then go on either way (the run's own reading decides whether it is valid).

    Returns what the wait found: quiet_wait_s, and the last reading's foreign_cores.
    """
    t0 = time.monotonic()
    said = -math.inf
    quiet_in_a_row = 0
    while True:
        reading = read()
        quiet_in_a_row = quiet_in_a_row + 1 if reading.quiet(max_cores, max_steal_pct) else 0
        waited = time.monotonic() - t0
        if quiet_in_a_row >= QUIET_WINDOWS:
            return {"quiet_wait_s": round(waited, 1), "quiet_before_cores": reading.foreign_cores}
        if waited >= timeout_s:
            say(
                f"machine still busy after {waited:.0f} s ({reading.describe()}); measuring "
                f"anyway: a run that stays busy is marked invalid and re-run"
            )
            return {"quiet_wait_s": round(waited, 1), "quiet_before_cores": reading.foreign_cores}
        if quiet_in_a_row == 0 and waited - said >= SAY_EVERY_S:
            said = waited
            say(
                f"waiting for a quiet machine (at most {max_cores:g} cores used by other "
                f"processes, steal at most {max_steal_pct:g}%; up to {timeout_s:.0f} s): "
                f"{reading.describe()}"
            )


def _governor() -> str:
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") as f:
            return f.read().strip()
    except OSError:
        return "not readable"


def doctor(
    max_cores: float = 0.1, max_steal_pct: float = 5.0, seconds: int = 3
) -> tuple[list[tuple[str, str]], bool]:
    """The machine's readiness to measure, as (what, reading) rows, and whether it is quiet."""
    from .environment import cpu_model, tool_versions

    readings = [read(1.0) for _ in range(seconds)]
    foreign = max(r.foreign_cores for r in readings)
    steal = max(r.steal_pct for r in readings)
    busiest = max(readings, key=lambda r: r.foreign_cores)
    freq = psutil.cpu_freq()
    quiet = all(r.quiet(max_cores, max_steal_pct) for r in readings)
    rows = [
        ("CPU", cpu_model()),
        ("cores (logical)", str(psutil.cpu_count())),
        ("cores this process may use", ",".join(map(str, sorted(os.sched_getaffinity(0))))),
        ("frequency", f"{freq.current:.0f} MHz" if freq else "not readable"),
        ("governor", _governor()),
        ("load average (1 min)", f"{os.getloadavg()[0]:.2f}"),
        (
            f"foreign CPU, max over {seconds} s",
            f"{foreign:.2f} cores (limit {max_cores:g})"
            + (f": {', '.join(f'{n} {c:.2f}' for n, _, c in busiest.top)}" if busiest.top else ""),
        ),
        (f"steal, max over {seconds} s", f"{steal:.1f}% (limit {max_steal_pct:g}%)"),
    ]
    rows += [(f"tool {name}", version) for name, version in tool_versions().items()]
    rows.append(("verdict", "quiet: ready to measure" if quiet else "busy: do not measure now"))
    return rows, quiet
