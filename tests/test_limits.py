"""loadgen_limited: the rule (unit), and real runs where it fires and where it does not."""

import math
import os

import pytest

from conftest import SHORT_RUNS
from hostbench.harness.measure.limits import loadgen_limited, loadgen_limited_row
from hostbench.harness.measure.run import RunSpec, execute
from hostbench.params import StudyParams

NAN = math.nan


def limited(loadgen, server, proxy=NAN, busy=100.0, cpus=None, cores=2, foreign=NAN) -> bool:
    return loadgen_limited(
        cpu_loadgen_cores=loadgen,
        cpu_server_cores=server,
        cpu_proxy_cores=proxy,
        cpu_total_pct=busy,
        machine_cores=cores,
        loadgen_cpus=cpus,
        foreign_cores=foreign,
    )


# --- pinned: the generator's CPU against the CPUs it may use -------------------------


def test_pinned_fires_at_nine_tenths_of_its_cpus():
    assert limited(0.95, 0.9, cpus=[0])
    assert limited(0.9, 0.2, cpus=[0], busy=50)  # the machine's load does not matter
    assert not limited(0.85, 0.9, cpus=[0])
    assert not limited(1.7, 0.9, cpus=[0, 1], cores=4)  # 0.85 of its two CPUs
    assert limited(1.8, 0.9, cpus=[0, 1], cores=4)


# --- unpinned: a saturated machine, and the generator took at least the target's share


def test_unpinned_fires_when_saturated_and_the_generator_took_at_least_the_target():
    assert limited(1.0, 0.7, proxy=0.3)  # the "k6 0.93 cores" case, target cheaper
    assert limited(1.0, 0.95, busy=99.0)
    # The old rule (>= 0.9 x 2 cores) could never fire here; this one does.
    assert limited(0.93, 0.9, busy=98.0)


def test_unpinned_does_not_fire_when_the_target_got_the_larger_part():
    assert not limited(0.93, 1.0, busy=99.0)  # the paper's CPU-bound co-located run
    assert not limited(0.6, 0.5, proxy=0.8, busy=99.0)  # server + proxy count together


def test_unpinned_does_not_fire_on_a_machine_with_cpu_to_spare():
    assert not limited(0.8, 0.3, busy=60.0)
    assert not limited(0.8, 0.3, busy=89.0)
    assert limited(0.8, 0.3, busy=90.0)


def test_foreign_cpu_counts_only_through_the_machine_busy_share():
    # 0.6 cores of other work saturates the machine; the generator still beat the target.
    assert limited(0.7, 0.6, busy=95.0, foreign=0.6)
    assert limited(0.7, 0.6, busy=95.0, foreign=NAN)
    assert not limited(0.5, 0.6, busy=95.0, foreign=0.6)


def test_unreadable_cpu_is_not_shown_to_be_limited():
    assert not limited(NAN, 0.5)
    assert not limited(NAN, 0.5, cpus=[0])
    assert not limited(1.0, NAN)
    assert not limited(1.0, 0.5, busy=NAN)
    assert not limited(0.0, 0.0)  # no CPU used at all limits nothing


@pytest.mark.live
def test_on_a_row():
    row = {
        "cpu_loadgen_cores": 1.0,
        "cpu_server_cores": 0.6,
        "cpu_proxy_cores": NAN,
        "cpu_total_pct": 97.0,
        "machine_cores": 2,
    }
    assert loadgen_limited_row(row, None)
    assert not loadgen_limited_row(row | {"cpu_proxy_cores": 0.5}, None)
    assert not loadgen_limited_row(row | {"cpu_loadgen_cores": 0.8}, [0])


# --- live: the real app and load tools ---------------------------------------------


def _row(tmp_path, tool: str, concurrency: int, loadgen_cpus):
    params = StudyParams.from_dict(
        {
            "modes": ["kestrel"],
            "scenarios": ["text"],
            "tools": [tool],
            "concurrency": [concurrency],
            "duration_s": 3,
            "warmup_s": 1,
            "repetitions": 1,
            "sample_interval_s": 0.25,
            "loadgen_cpus": loadgen_cpus,
            **SHORT_RUNS,
        }
    )
    spec = RunSpec.of_cell(params, "kestrel", "text", tool, concurrency, 1, 1)
    row = execute(spec, tmp_path / spec.key, params)
    cpu = {k: row[k] for k in ("cpu_loadgen_cores", "cpu_server_cores", "cpu_total_pct")}
    print(tool, concurrency, loadgen_cpus, round(row["rps"]), cpu)
    return row


@pytest.mark.live
@pytest.mark.alone  # k6 must get 0.9 of its CPU: another test's load takes it (a skip)
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_fires_for_a_generator_held_to_one_cpu(tmp_path):
    # k6 on one CPU with 64 VUs, the app alone on the other(s): k6 runs JavaScript per
    # request and costs more CPU per request than the app, so k6 runs flat out (~0.95 of
    # its CPU here) while the app has room. (bombardier is cheaper per request than the
    # app: pinned alike, the app on one core is the limit and the rule rightly does not
    # fire.) Other work on that CPU takes part of it from k6, so up to 3 attempts.
    cpu = min(os.sched_getaffinity(0))
    seen = []
    for attempt in range(3):
        row = _row(tmp_path / str(attempt), "k6", 64, [cpu])
        assert row["loadgen_cpus"] == str(cpu) and row["server_cpus"] != str(cpu)
        seen.append(round(row["cpu_loadgen_cores"], 2))
        assert row["loadgen_limited"] == loadgen_limited_row(row, [cpu])  # the row says it
        if row["loadgen_limited"]:
            break
    else:
        # The rule's own cases are the unit tests above; here a real row must agree with it,
        # which it did on every attempt. A machine whose other work on that CPU (interrupts,
        # a busy neighbour) keeps k6 below 0.9 of it gives no firing case to observe.
        pytest.skip(f"k6 pinned to CPU {cpu} never used >= 0.9 of it here: {seen} cores")


@pytest.mark.live
def test_does_not_fire_for_one_connection(tmp_path):
    # One connection: each request waits for the last, so neither side is CPU-bound.
    row = _row(tmp_path, "bombardier", 1, None)
    assert not loadgen_limited_row(row, None) and row["loadgen_limited"] is False
