"""A block schedule is one class and its name (hostbench/schedules.py): the package's
round-robin keeps one order every round, and a schedule written here, registered under a name
of its own, is accepted by the params key and runs a study in its order."""

import pytest

from conftest import SHORT_RUNS
from hostbench.errors import BadInput
from hostbench.harness.order import run_order
from hostbench.harness.study import run_study
from hostbench.params import StudyParams
from hostbench.results import read_results
from hostbench.schedules import SCHEDULES

BASE = {"modes": ["kestrel", "nginx", "kestrel-twin"], "scenarios": ["text"],
        "tools": ["bombardier"], "concurrency": [2], "duration_s": 1, "warmup_s": 0,
        "repetitions": 1, "windows": 3, **SHORT_RUNS}  # fmt: skip


class Rotating:
    """Each round starts with the member after the one that started the round before (A B C,
    B C A, C A B): every member as often in each position, the member before it not balanced."""

    name = "rotating"

    def rows(self, n: int) -> list[list[int]]:
        return [[(start + i) % n for i in range(n)] for start in range(n)]

    def in_words(self) -> str:
        return "a rotating order (A B C, B C A, C A B)"


def _rounds(modes_in_order: list[str], members: int) -> list[list[str]]:
    return [modes_in_order[i : i + members] for i in range(0, len(modes_in_order), members)]


def test_round_robin_keeps_one_order_every_round_and_williams_does_not():
    orders = {}
    for schedule in ("round-robin", "williams"):
        params = StudyParams.from_dict({**BASE, "repetitions": 2, "schedule": schedule})
        specs = run_order(params, seed=3)
        orders[schedule] = _rounds([s.mode.id for s in specs], 3)
    assert len(orders["round-robin"]) == 6
    assert all(r == orders["round-robin"][0] for r in orders["round-robin"])
    assert len({tuple(r) for r in orders["williams"]}) > 1
    # The schedule reorders, never adds or drops: the same windows either way.
    assert sorted(map(sorted, orders["williams"])) == sorted(map(sorted, orders["round-robin"]))


def test_an_unknown_schedule_is_one_line_naming_the_allowed_ones():
    with pytest.raises(BadInput, match="unknown schedule 'zigzag'; allowed: williams, round-robin"):
        StudyParams.from_dict({**BASE, "schedule": "zigzag"})


def test_a_run_recorded_before_the_key_reads_as_williams():
    params = StudyParams.from_dict(BASE)
    assert params.schedule == "williams" and "schedule" in params.to_dict()


@pytest.mark.live
def test_a_schedule_added_here_runs_a_study_in_its_order(tmp_path, monkeypatch):
    monkeypatch.setitem(SCHEDULES, Rotating.name, Rotating())
    params = StudyParams.from_dict({**BASE, "schedule": "rotating", "seed": 11})
    run_dir = run_study(params, "rotating", tmp_path, progress=False).parent
    rows = read_results(run_dir).sort_values("position")
    assert len(rows) == 9 and rows["valid"].all(), rows["invalid_reason"].tolist()
    rounds = _rounds(rows["mode"].tolist(), 3)
    assert [rows["window"].tolist()[i] for i in (0, 3, 6)] == [1, 2, 3]
    first = rounds[0]
    assert rounds == [first[k:] + first[:k] for k in range(3)]  # each round the next rotation
