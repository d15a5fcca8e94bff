"""The window designs: how a block's windows lay the load on its modes, each a WindowDesign
(window.py) that groups a block's runs into windows, warms their modes up, measures a window
and reads a finished one back.

- back to back (BACK_TO_BACK_DESIGN): one mode a window, a sub-block's windows one after
  another, seconds apart, each mode warmed up alone as its sub-block starts (run.py).
- switching target (SWITCHING_DESIGN): every compared mode of a cell in slices of one window,
  one k6 run sending each request to the mode whose slice it is (interleave.py).
- alternating runs (ALTERNATING_DESIGN): the same slices, each one short run of a tool that
  cannot switch target within a run (alternate.py).

The params choose (window_design): `interleave_slice_s` unset, back to back; set, the design
the tool can make. The analysis says them in its own words (analysis/window_design.py), read
from the same params.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...analysis.window_design import BACK_TO_BACK
from ...errors import HostbenchError
from ...load import TOOLS
from ...params import StudyParams, fingerprint
from ..launch.modes import Target
from .alternate import ALTERNATING, alternating_window
from .interleave import (
    SWITCHING,
    InterleavedWindow,
    can_warm_up_together,
    interleaved_window,
    measure_interleaved,
    warm_up_together,
)
from .run import completed_row, measure_window, prepare
from .where import LOOPBACK, Where
from .window import BUSY, UNSTEADY, RunSpec, WindowDesign

Ready = dict[tuple[str, str], dict]  # what prepare left, by (member, cell key), in one launch


def redo(row: dict) -> bool:
    """A window measured again at once: the machine was busy, or the warm-up never settled
    (its number says nothing about the mode, and the launch is still up beside its pair)."""
    reason = row.get("invalid_reason") or ""
    return BUSY in reason or UNSTEADY in reason


def completed(window: list[RunSpec], study_dir: Path, params: StudyParams):
    """A window's finished rows (with its busy re-dos), by key, and what is still to measure
    of it: the window whole at its next attempt (an interrupted one is measured again whole);
    [] when done."""
    kept = {}
    while True:
        found = [completed_row(study_dir / s.key) for s in window]
        if any(row is None for row in found):
            return kept, window
        kept.update({s.key: row for s, row in zip(window, found, strict=True)})
        if not any(redo(row) for row in found) or window[0].attempt > params.busy_reruns:
            return kept, []
        window = [replace(s, attempt=s.attempt + 1) for s in window]


def warmup_folder(launch_dir: Path, spec: RunSpec, again: bool) -> Path:
    """Where `spec`'s warm-up keeps its files: the cell's, or beside it for a re-run's."""
    name = f"warmup__{spec.cell_key}" + (f"__a{spec.attempt}" if again else "")
    return launch_dir / spec.member / name


class BackToBack:
    """The WindowDesign of one mode a window (run.measure_window), the windows back to back."""

    name = BACK_TO_BACK  # as the analysis says it (window_design)

    def windows(self, specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
        return [[s] for s in specs]

    def warm_up(self, window: Sequence[RunSpec], block: Sequence[RunSpec],
                targets: dict[str, Target], launch_dir: Path, params: StudyParams,
                where: Where, ready: Ready, again: bool = False) -> None:  # fmt: skip
        """As a sub-block starts (its first window's mode not ready), every mode of it, each
        alone (run.prepare), one after another; `again`: the window's mode alone, beside its
        first warm-up."""
        for spec in window:
            if again:
                ready[spec.member, spec.cell_key] = prepare(
                    spec, targets[spec.member], warmup_folder(launch_dir, spec, True), params,
                    where)  # fmt: skip
                continue
            if (spec.member, spec.cell_key) in ready:
                continue
            group = [s for s in block if s.load == spec.load and s.scenario == spec.scenario]
            for s in group:
                if (s.member, s.cell_key) not in ready:
                    ready[s.member, s.cell_key] = prepare(
                        s, targets[s.member], warmup_folder(launch_dir, s, False), params, where
                    )

    def measure(self, specs: Sequence[RunSpec], targets: Sequence[Target],
                ready: Sequence[dict], run_dirs: Sequence[Path], params: StudyParams,
                say=print, where: Where = LOOPBACK) -> list[dict]:  # fmt: skip
        if len(specs) != 1:
            raise HostbenchError(f"a window back to back measures one mode, got {len(specs)}")
        return [measure_window(specs[0], targets[0], ready[0], run_dirs[0], params, say, where)]

    def read_back(self, window: list[RunSpec], study_dir: Path, params: StudyParams):
        return completed(window, study_dir, params)


Fire = Callable[..., InterleavedWindow]  # interleaved_window, alternate.alternating_window


@dataclass(frozen=True)
class InterleavedDesign:
    """The WindowDesign of several modes in slices of one window (measure_interleaved),
    loaded by `fire`."""

    name: str  # as interleave.json says it
    fire: Fire

    def windows(self, specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
        """Each window's specs, in order: the compared modes of one cell that share it (the
        same scenario, load, window and attempt)."""
        windows: dict[tuple, list[RunSpec]] = {}
        for s in specs:
            windows.setdefault((s.scenario.id, s.load, s.window, s.attempt), []).append(s)
        return list(windows.values())

    def warm_up(self, window: Sequence[RunSpec], block: Sequence[RunSpec],
                targets: dict[str, Target], launch_dir: Path, params: StudyParams,
                where: Where, ready: Ready, again: bool = False) -> None:  # fmt: skip
        """The window's modes not ready (or, `again`, all of them): together, in the
        window's slices (interleave.warm_up_together), when there are two or more, a warm-up
        and a tool that can; else each alone, one after another (run.prepare). A re-run's
        warm-up goes beside the first's."""
        specs = [s for s in window if again or (s.member, s.cell_key) not in ready]

        def folder(s):
            return warmup_folder(launch_dir, s, s.attempt > 1)

        if (len(specs) < 2 or specs[0].load.warmup_s <= 0
                or not can_warm_up_together(specs[0].tool, where)):  # fmt: skip
            for s in specs:
                ready[s.member, s.cell_key] = prepare(s, targets[s.member], folder(s), params,
                                                      where)  # fmt: skip
            return
        checked = [prepare(s, targets[s.member], folder(s), params, where, warm=False)
                   for s in specs]  # fmt: skip
        seed = int(fingerprint({"warm-up": specs[0].key})[:8], 16)
        warmed = warm_up_together([targets[s.member] for s in specs], specs[0].load,
                                  params.interleave_slice_s, params.steady_tolerance_pct,
                                  [folder(s) for s in specs], seed, where)  # fmt: skip
        for s, own, warm in zip(specs, checked, warmed, strict=True):
            ready[s.member, s.cell_key] = {**own, **warm, "warmup_together": True}

    def measure(self, specs: Sequence[RunSpec], targets: Sequence[Target],
                ready: Sequence[dict], run_dirs: Sequence[Path], params: StudyParams,
                say=print, where: Where = LOOPBACK) -> list[dict]:  # fmt: skip
        return measure_interleaved(list(specs), list(targets), list(ready), list(run_dirs),
                                   params, say, self.fire, where)  # fmt: skip

    def read_back(self, window: list[RunSpec], study_dir: Path, params: StudyParams):
        return completed(window, study_dir, params)


BACK_TO_BACK_DESIGN = BackToBack()
SWITCHING_DESIGN = InterleavedDesign(SWITCHING, interleaved_window)
ALTERNATING_DESIGN = InterleavedDesign(ALTERNATING, alternating_window)
DESIGNS: tuple[WindowDesign, ...] = (BACK_TO_BACK_DESIGN, SWITCHING_DESIGN, ALTERNATING_DESIGN)


def design_for(tool: str) -> WindowDesign:
    """The design of `tool`'s interleaved windows: one run switching target, or alternating
    runs (load.py's switches_target)."""
    return SWITCHING_DESIGN if TOOLS[tool].switches_target else ALTERNATING_DESIGN


def window_for(tool: str) -> Fire:
    """The interleaved window of `tool`'s design (design_for): both take the same arguments
    and give the same record."""
    return design_for(tool).fire


def window_design(params: StudyParams, tool: str) -> WindowDesign:
    """The design of a run's windows of `tool`: back to back without interleave_slice_s,
    else the interleaved design the tool can make."""
    return BACK_TO_BACK_DESIGN if params.interleave_slice_s is None else design_for(tool)


def block_windows(params: StudyParams, specs: Sequence[RunSpec]):
    """A block's windows in order, each with its design: [(design, window specs)]."""
    by_tool: dict[str, list[RunSpec]] = {}
    for s in specs:
        by_tool.setdefault(s.tool, []).append(s)
    # Grouped by each design, then back in the block's order (a window's first spec's place).
    place = {s.key: i for i, s in enumerate(specs)}
    found = [(window_design(params, tool), w) for tool, own in by_tool.items()
             for w in window_design(params, tool).windows(own)]  # fmt: skip
    return sorted(found, key=lambda dw: place[dw[1][0].key])


def read_back(params: StudyParams, specs: Sequence[RunSpec], study_dir: Path):
    """A block's finished windows' rows (with busy re-dos), by key, and the windows still to
    measure, each at its next attempt, in order (a resumed study keeps what it measured)."""
    kept, pending = {}, []
    for design, window in block_windows(params, specs):
        rows, todo = design.read_back(window, study_dir, params)
        kept.update(rows)
        pending += todo
    return kept, pending
