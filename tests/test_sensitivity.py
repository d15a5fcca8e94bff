"""The localhost shortcut sized from recorded rows (hostbench/analysis/sensitivity.py).

Each study's fixtures/two-hosts/ holds two small real runs of the same cells, recorded one
after the other on the development machine: `loopback` (topology local) and `two-hosts`
(topology netns). The sizes are recomputed here from the rows by hand and compared.
"""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import sensitivity, tables
from hostbench.catalog import mode_label
from hostbench.studies import available, get_study

RECORDED = "two-hosts"  # a study's fixtures/two-hosts/: loopback/ and two-hosts/
# (study, the baseline its recordings ran with) for every study that recorded both.
CASES = [
    (s.id, tables.load_params(s.fixtures_dir / RECORDED / "loopback").baseline_mode)
    for s in available()
    if (s.fixtures_dir / RECORDED).is_dir()
]


def _recorded(study: str):
    folder = get_study(study).fixtures_dir / RECORDED
    return (tables.load_results(folder / "loopback", valid_only=False),
            tables.load_results(folder / "two-hosts", valid_only=False))  # fmt: skip


def _by_hand_ratios(runs: pd.DataFrame, baseline: str) -> pd.Series:
    """Geometric mean over blocks of mode / baseline, per (mode, scenario, concurrency)."""
    runs = runs.assign(mode=runs["mode"].astype(str), scenario=runs["scenario"].astype(str))
    keys = ["scenario", "concurrency", "block"]
    base = runs[runs["mode"] == baseline].set_index(keys)["rps"]
    others = runs[runs["mode"] != baseline].set_index(keys)
    logs = np.log(others["rps"] / base.reindex(others.index))
    logs = pd.DataFrame({"mode": others["mode"], "log": logs}).reset_index()
    return np.exp(logs.groupby(["mode", "scenario", "concurrency"])["log"].mean())


def _by_hand_cpu_us(runs: pd.DataFrame, baseline: str) -> float:
    mine = runs[runs["mode"].astype(str) == baseline]
    cores = mine[["cpu_server_cores", "cpu_proxy_cores", "cpu_loadgen_cores"]].astype(float)
    per_setup = cores.fillna(0).groupby(mine["concurrency"]).mean().sum(axis=1)
    rps = mine.groupby("concurrency")["rps"].mean()
    return float((1e6 * per_setup / rps).mean())


def test_the_recordings_cover_a_study_with_several_concurrencies_and_one_without():
    several = [_recorded(study)[0]["concurrency"].nunique() > 1 for study, _ in CASES]
    assert True in several and False in several  # both of the table's forms are tested


@pytest.mark.parametrize(("study", "baseline"), CASES)
def test_the_shortcut_is_sized_from_both_recordings(study, baseline):
    loopback, two_hosts = _recorded(study)
    assert set(loopback["topology"]) == {"local"} and set(two_hosts["topology"]) == {"netns"}
    moved = _by_hand_ratios(two_hosts, baseline) / _by_hand_ratios(loopback, baseline)
    text = sensitivity.localhost_cost(loopback, two_hosts, baseline)
    assert f"the {len(moved)} ratio" in text
    assert f"moved by x{moved.min():.2f}" in text and f"x{moved.max():.2f} (two hosts" in text
    assert f"{_by_hand_cpu_us(loopback, baseline):.0f} µs of CPU per request over loopback" in text
    assert f"{_by_hand_cpu_us(two_hosts, baseline):.0f} µs over the veth" in text
    assert mode_label(baseline) in text


@pytest.mark.parametrize(("study", "baseline"), CASES)
def test_the_words_are_compared_ratio_by_ratio(study, baseline):
    from hostbench.analysis import intervals, verdicts

    loopback, two_hosts = _recorded(study)
    main, variant = (intervals.paired_ratios(runs, baseline) for runs in (loopback, two_hosts))
    table = sensitivity.sensitivity(main, variant, "two hosts")
    same = (table[sensitivity.SAME] == "yes").sum()
    judged = (table[sensitivity.SAME] != "n/a").sum()
    text = sensitivity.localhost_cost(loopback, two_hosts, baseline)
    if judged:
        assert f"the words stayed the same for {same} of {judged}" in text
    else:  # fewer than 3 blocks on a side: no words compared (verdicts.MIN_UNITS)
        assert "so their words are not compared" in text
        assert (table[["n (main)", "n (two hosts)"]].min(axis=1) < verdicts.MIN_UNITS).all()
    # A recording of several concurrencies: each is its own row, named in its own column.
    several = loopback["concurrency"].nunique() > 1
    assert ("concurrency" in table.columns) == several
    assert len(table) == len(_by_hand_ratios(loopback, baseline))


def test_without_a_two_hosts_run_it_says_so():
    study, baseline = CASES[0]
    loopback, _ = _recorded(study)
    assert sensitivity.localhost_cost(loopback, None, baseline) == sensitivity.NOT_MEASURED
    assert "not measured" in sensitivity.NOT_MEASURED


@pytest.mark.parametrize(("study", "baseline"), CASES)
def test_a_scenario_measured_on_one_side_only_enters_no_comparison(study, baseline):
    """The CPU sentence compares loopback and the veth on the setups both measured: a scenario
    only the main study ran (here a copy of one at half the rate, so twice the CPU per
    request) changes nothing in it."""
    loopback, two_hosts = _recorded(study)
    extra = loopback.assign(scenario="extra-only-here", rps=loopback["rps"] / 2)
    unmatched = pd.concat([loopback.astype({"scenario": str}), extra], ignore_index=True)
    text = sensitivity.localhost_cost(unmatched, two_hosts, baseline)
    assert text == sensitivity.localhost_cost(loopback, two_hosts, baseline)
    assert "extra-only-here" not in text
