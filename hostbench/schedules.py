"""The block schedules: in which order a sub-block's compared members take their windows, round
by round (params key `schedule`).

A sub-block (every mode and variant of one scenario, tool and concurrency) runs `windows`
rounds per block; a round is one window of each compared member. A Schedule gives the orders
of n members, one per round, taken in turn across rounds and blocks (harness/order.py draws
the members' permutation from the run's seed and applies them). Neither the harness nor the
analysis reaches into a schedule's rows: the harness asks for them, the analysis for its
words, so a new schedule is one class here and its name in SCHEDULES.
"""

from typing import Protocol


class Schedule(Protocol):
    """How the compared members of a sub-block take turns, round by round."""

    name: str  # the params key's value that chooses it

    def rows(self, n: int) -> list[list[int]]:
        """Orders of members 0..n-1, one per round; rounds beyond them start them over."""
        ...

    def in_words(self) -> str:
        """What a report says of the order, after "in": "an order that puts each mode equally
        often first (a Williams design: A B, then B A)"."""
        ...


class Williams:
    """Balanced for position and for the member just before (a Williams design): n rows for
    even n, 2n for odd n, each a Latin-square row. With two members: A B, then B A."""

    name = "williams"

    def rows(self, n: int) -> list[list[int]]:
        first, low, high = [0], 1, n - 1
        while len(first) < n:  # 0, 1, n-1, 2, n-2, ...
            first.append(low)
            low += 1
            if len(first) < n:
                first.append(high)
                high -= 1
        rows = [[(t + i) % n for t in first] for i in range(n)]
        if n % 2:  # odd n: the mirrored square completes the carry-over balance
            rows += [row[::-1] for row in rows]
        return rows

    def in_words(self) -> str:
        return "an order that puts each mode equally often first (a Williams design: A B, then B A)"


class RoundRobin:
    """Every round the members in one seeded order (A B, A B, ...): simple, but the member
    first in a round is always the same, so a drift within the round favours one side."""

    name = "round-robin"

    def rows(self, n: int) -> list[list[int]]:
        return [list(range(n))]

    def in_words(self) -> str:
        return "one seeded order kept every round (round robin: A B, then A B)"


SCHEDULES: dict[str, Schedule] = {s.name: s for s in (Williams(), RoundRobin())}


def schedule_of(params) -> Schedule:
    """The schedule a run's params chose (key `schedule`)."""
    return SCHEDULES[params.schedule]
