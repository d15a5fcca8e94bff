"""The slices of a window that two or more targets share: which target each stretch of
`slice_s` seconds goes to, in whole rounds of one slice per target, each round in a seeded
random order, so every target gets the same total time and no target is always first.

Either interleaved design fires its window in these slices: k6 switching target within one
run (interleave.py, its script in k6_interleaved.py), the other tools alternating short runs
(alternate.py). The schedule is recorded in the window's interleave.json.
"""

import math
import random
from dataclasses import dataclass

from ...errors import BadInput

MIN_SLICE_S = 0.05  # k6 reads the wall clock in ms; a slice is many requests long


@dataclass(frozen=True)
class SliceSchedule:
    """Which target each slice of a window goes to: `order[i]` is the target (an index into
    the window's targets) of seconds [i * slice_s, (i + 1) * slice_s) from the start."""

    targets: int
    slice_s: float
    seed: int
    order: tuple[int, ...]

    @property
    def duration_s(self) -> float:
        return len(self.order) * self.slice_s

    @property
    def rounds(self) -> int:
        return len(self.order) // self.targets

    def seconds(self, target: int) -> float:
        """The time target `target` had: the sum of its slices."""
        return self.order.count(target) * self.slice_s

    def seconds_between(self, target: int, a: float, b: float) -> float:
        """The time target `target` had between `a` and `b` seconds from the start. The
        script sends a request before the first slice to the first slice's target and one
        after the last to the last's, so those stretches count for them."""
        s, order, end = self.slice_s, self.order, self.duration_s
        total = 0.0
        if a < 0 and order[0] == target:
            total += min(b, 0.0) - a
        if b > end and order[-1] == target:
            total += b - max(a, end)
        lo, hi = max(a, 0.0), min(b, end)
        for j in range(max(0, math.floor(lo / s)), min(len(order), math.ceil(hi / s))):
            if order[j] == target:
                total += max(0.0, min(hi, (j + 1) * s) - max(lo, j * s))
        return total


def slice_schedule(targets: int, slice_s: float, window_s: float, seed: int) -> SliceSchedule:
    """The slices of a window of about `window_s` seconds over `targets` targets: whole
    rounds (the nearest number to window_s, at least one), each round one slice per target
    in an order drawn from `seed`, so each target gets the same total time."""
    if not isinstance(targets, int) or targets < 2:
        raise BadInput(f"an interleaved window needs 2 or more targets, got {targets!r}")
    if not isinstance(slice_s, int | float) or not math.isfinite(slice_s) or slice_s < MIN_SLICE_S:
        raise BadInput(f"slice_s must be a number >= {MIN_SLICE_S:g} s, got {slice_s!r}")
    if not isinstance(window_s, int | float) or not window_s >= targets * slice_s:
        raise BadInput(
            f"window_s {window_s!r} is shorter than one slice per target "
            f"({targets} x {slice_s:g} s); use window_s >= {targets * slice_s:g}"
        )
    if round(slice_s * 1000) != slice_s * 1000:
        raise BadInput(f"slice_s {slice_s:g}: k6's clock counts whole milliseconds")
    rng = random.Random(seed)
    rounds = max(1, round(window_s / (targets * slice_s)))
    order = []
    for _ in range(rounds):
        order += rng.sample(range(targets), targets)
    return SliceSchedule(targets, float(slice_s), seed, tuple(order))
