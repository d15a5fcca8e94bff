"""A quiet machine, checked: the CPU that processes the harness did not start use.

A measurement taken while other work runs is worthless here (2 cores: a test
suite beside a run takes 0.2-0.9 of them and decided the first example's
result). Before each run the study waits, for a bounded time, until that
foreign CPU and the hypervisor's steal stay below their limits; during the run
the CPU monitor measures both again, and a run above the limits is invalid and
re-run. `python -m hostbench doctor` prints the same readings as a table.
"""

import fcntl
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from .cpumonitor import (
    foreign_by_process,
    harness_pids,
    machine_shares,
    process_cpu_seconds,
    stat_times,
)

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


def _reading(shares: dict, used: list[tuple[str, int, float]], seconds: float, top: int,
             label: str = "") -> Reading:  # fmt: skip
    """A Reading from the machine's shares (machine_shares) and the foreign processes' CPU
    seconds (foreign_by_process) over `seconds`; `label` names the host of each busiest."""
    if math.isnan(shares["process_cores"]) or seconds <= 0:
        return Reading(math.nan, math.nan, math.nan, [])
    foreign = [(label + name, pid, used_s / seconds) for name, pid, used_s in used]
    foreign.sort(key=lambda item: -item[2])
    return Reading(
        foreign_cores=sum(cores for _, _, cores in foreign),
        steal_pct=shares["steal_pct"],
        busy_pct=shares["busy_pct"],
        top=[(n, p, round(c, 2)) for n, p, c in foreign[:top] if c >= 0.01],
    )


def read(window_s: float = WINDOW_S, top: int = 3) -> Reading:
    """The machine over `window_s`: CPU of every process but the harness's own, and steal."""
    machine0, procs0 = psutil.cpu_times(), process_cpu_seconds()
    time.sleep(window_s)
    machine1, procs1 = psutil.cpu_times(), process_cpu_seconds()
    shares = machine_shares(machine0, machine1, psutil.cpu_count() or 1)
    return _reading(shares, foreign_by_process(procs0, procs1, harness_pids()), window_s, top)


def read_host(host, window_s: float = WINDOW_S, top: int = 3) -> Reading:
    """An ssh host (remote.Connection) over about `window_s`, read there by the harness's
    helper: CPU of every process but what the harness started there, and steal; the busiest
    named with the host ("bench-client: stress")."""
    before = host.processes()
    time.sleep(window_s)
    after = host.processes()
    shares = machine_shares(stat_times(before["stat"]), stat_times(after["stat"]), after["cores"])
    used = foreign_by_process(before["procs"], after["procs"], before["ours"] | after["ours"])
    return _reading(shares, used, after["t"] - before["t"], top, f"{host.host.name}: ")


def combined(readings: list[Reading], top: int = 3) -> Reading:
    """Several machines as one (topology ssh: both hosts): the foreign CPU of all, the largest
    steal and busy share, the busiest processes of all."""
    if len(readings) == 1:
        return readings[0]
    busiest = sorted((t for r in readings for t in r.top), key=lambda item: -item[2])
    return Reading(
        foreign_cores=sum(r.foreign_cores for r in readings),
        steal_pct=max(r.steal_pct for r in readings),
        busy_pct=max(r.busy_pct for r in readings),
        top=busiest[:top],
    )


def wait_until_quiet(
    max_cores: float,
    max_steal_pct: float,
    timeout_s: float,
    say: Callable[[str], None] = print,
    hosts=(),
) -> dict:
    """Wait until the machine is quiet for QUIET_WINDOWS readings in a row, `timeout_s` at
    most; then go on either way (the run's own reading decides whether it is valid).
    `hosts` (topology ssh: the server and the load host, remote.Connections): those machines,
    read there, instead of this one; quiet when all of them together are.

    Returns what the wait found: quiet_wait_s, and the last reading's foreign_cores.
    """
    t0 = time.monotonic()
    said = -math.inf
    quiet_in_a_row = 0
    while True:
        reading = combined([read_host(h) for h in hosts]) if hosts else read()
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
    from ..environment import cpu_model, tool_versions

    readings = [read(1.0) for _ in range(seconds)]
    freq = psutil.cpu_freq()
    rows = [
        ("CPU", cpu_model()),
        ("cores (logical)", str(psutil.cpu_count())),
        ("cores this process may use", ",".join(map(str, sorted(os.sched_getaffinity(0))))),
        ("frequency", f"{freq.current:.0f} MHz" if freq else "not readable"),
        ("governor", _governor()),
        ("load average (1 min)", f"{os.getloadavg()[0]:.2f}"),
        *_quietness_rows("", readings, max_cores, max_steal_pct),
    ]
    rows += [(f"tool {name}", version) for name, version in tool_versions().items()]
    return _with_verdict(rows, readings, max_cores, max_steal_pct)


def doctor_hosts(
    inventory, max_cores: float = 0.1, max_steal_pct: float = 5.0, seconds: int = 3
) -> tuple[list[tuple[str, str]], bool]:
    """doctor for topology ssh: each host of `inventory` reached as a study reaches it, its
    machine, and its foreign CPU and steal read there over `seconds`; quiet when both are."""
    from ..launch.remote import ssh_hosts

    rows, every = [], []
    with ssh_hosts(inventory) as ssh:
        for role, host in zip(("server", "loadgen"), ssh.both, strict=True):
            machine = host.machine()
            readings = [read_host(host, 1.0) for _ in range(seconds)]
            every += readings
            rows.append((f"{role} host", f"{host.host.name}: {machine['cpu_model']}, "
                         f"{machine['cpu_cores_logical']} cores, {machine['os']}"))  # fmt: skip
            rows += _quietness_rows(f"{role}: ", readings, max_cores, max_steal_pct)
    return _with_verdict(rows, every, max_cores, max_steal_pct)


def _quietness_rows(label: str, readings: list[Reading], max_cores: float, max_steal_pct: float):
    """doctor's rows on a machine's foreign CPU and steal over `readings` (one a second)."""
    busiest = max(readings, key=lambda r: r.foreign_cores)
    top = ", ".join(f"{n} {c:.2f}" for n, _, c in busiest.top)
    steal = max(r.steal_pct for r in readings)
    return [
        (f"{label}foreign CPU, max over {len(readings)} s",
         f"{busiest.foreign_cores:.2f} cores (limit {max_cores:g})" + (f": {top}" if top else "")),
        (f"{label}steal, max over {len(readings)} s", f"{steal:.1f}% (limit {max_steal_pct:g}%)"),
    ]  # fmt: skip


def _with_verdict(rows, readings: list[Reading], max_cores: float, max_steal_pct: float):
    quiet = all(r.quiet(max_cores, max_steal_pct) for r in readings)
    verdict = "quiet: ready to measure" if quiet else "busy: do not measure now"
    return [*rows, ("verdict", verdict)], quiet


# One measurement per machine at a time: two studies that both saw a quiet machine would
# otherwise start in the same second and spoil each other's windows.
MACHINE_LOCK = Path(tempfile.gettempdir()) / "hostbench-measuring.lock"


@contextmanager
def measuring_alone(
    holder: str, say: Callable[[str], None] = print, path: Path = MACHINE_LOCK
) -> Iterator[None]:
    """Hold the machine-wide measuring lock (flock: the kernel releases it when the holder
    dies); while another process holds it, wait, saying who holds it every SAY_EVERY_S."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        said = -math.inf
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - t0
                if waited - said >= SAY_EVERY_S:
                    who = os.pread(fd, 500, 0).decode(errors="replace").strip()
                    # The holder writes its name just after it takes the lock: a blank name
                    # is read again next time, and said blank only after SAY_EVERY_S.
                    if who or waited >= SAY_EVERY_S:
                        said = waited
                        say(f"waiting for the machine: {who or 'another study'} is measuring "
                            f"({waited:.0f} s so far)")  # fmt: skip
                time.sleep(WINDOW_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
