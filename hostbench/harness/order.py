"""Every window of a study in the order it runs: blocks, sub-blocks in a seeded random order,
rounds in the order of the run's schedule (hostbench/schedules.py, params key `schedule`)."""

import random

from ..catalog import get_mode, get_scenario
from ..params import StudyParams
from ..schedules import schedule_of
from .measure.window import RunSpec


def run_order(params: StudyParams, seed: int, blocks: int | None = None) -> list[RunSpec]:
    """Every window, block by block (`blocks`, default the params' repetitions). A block is
    one launch of every mode; in it, sub-blocks of the cells compared with each other (every
    mode and variant of one scenario, tool and concurrency) in a random order drawn from
    `seed`. A sub-block runs `windows` rounds; a round is one window of each focus member
    (the focus modes and the baseline; every member when there is no focus) in a row of the
    run's schedule over a seeded permutation of them, rows following each other across
    rounds and blocks (Williams: A B, then B A: each pair adjacent, its order balanced). A
    member off the focus runs one window per block, after the focus members of one round,
    the rounds taken in turn, and only in the params' repetitions: blocks that
    target_halfwidth_pct adds measure the focus alone."""
    rng = random.Random(seed)
    schedule = schedule_of(params)
    groups: dict[tuple, list[tuple[str, str]]] = {}
    for mode, variant, scenario, tool, c in params.cells():
        groups.setdefault((scenario, tool, c), []).append((mode, variant))
    focus = set(params.focus) | {params.baseline_mode} if params.focus else None
    members = {key: rng.sample(cells, len(cells)) for key, cells in groups.items()}
    designs = {
        key: schedule.rows(len([m for m in cells if focus is None or m[0] in focus]))
        for key, cells in groups.items()
    }
    # Each (scenario, tool, concurrency)'s load, made once: every run of it fires the same.
    loads = {key: params.load(*key) for key in groups}
    specs = []
    for block in range(1, (blocks or params.repetitions) + 1):
        keys = list(groups)
        rng.shuffle(keys)
        position = 0
        for key in keys:
            scenario, tool, c = key
            core = [m for m in members[key] if focus is None or m[0] in focus]
            others = [m for m in members[key] if m not in core]
            rng.shuffle(others)
            if block > params.repetitions:  # blocks a target added are for the focus only
                others = []
            design = designs[key]
            for window in range(1, params.windows + 1):
                row = design[((block - 1) * params.windows + window - 1) % len(design)]
                ordered = [(core[i], window) for i in row]
                ordered += [
                    (m, 1) for j, m in enumerate(others) if j % params.windows == window - 1
                ]
                for (mode, variant), w in ordered:
                    position += 1
                    specs.append(RunSpec(get_mode(mode), get_scenario(scenario), loads[key],
                                         block, position, variant, window=w))  # fmt: skip
    return specs
