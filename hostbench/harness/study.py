"""A study: the matrix of windows a params file describes, run in blocks and resumed as one.

The executor of the run's three designs: for each block its stopping rule allows
(harness/stopping.py: fixed, two-stage, sequential, within a budget), the windows in the
order its schedule gives (harness/order.py, hostbench/schedules.py), each measured by its
window design (back to back, switching target, alternating runs).

A block is one launch of every mode (and variant) the study compares, kept up while the
block measures: each sub-block (every mode of one scenario, tool and concurrency) is
warmed up, then its windows run seconds apart, in the schedule's order; the sub-blocks' order
is random (from a seed recorded in params.json). A window the machine was too busy for, or
whose launch's warm-up ran out before the rate settled (then warmed up again first), is
measured again at once, beside its pair (busy_reruns times at most). The launch is the unit
of every interval (docs/method.md). A block holds the machine-wide measuring lock, so two
studies on one machine take turns. Each window's artifacts go to
data/runs/<run-id>/<run-key>/, each launch's to launch__r<block>/; results.csv is rebuilt
from the completed windows after each one, atomically, so an interrupted study loses at most
the window in flight and resumes where it was (harness/run_folder.py: what a resume must
keep).
"""

import os
import random
import shutil
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from ..catalog import get_mode
from ..errors import BadInput, HostbenchError
from ..params import PARAMS_FILE, StudyParams, check_run_id, fingerprint
from ..paths import RUNS
from ..programs import programs_of
from .launch import netns, remote
from .launch.modes import check_socket_path
from .measure.designs import block_windows, read_back, redo
from .measure.loadgen import get_generator
from .measure.quiet import measuring_alone
from .measure.run import completed_row, launched
from .measure.where import LOOPBACK, TwoNamespaces, TwoSshHosts, Where
from .measure.window import UNSTEADY, RunSpec, run_settings
from .order import run_order
from .run_folder import (
    LAUNCH_DIR,
    StudyLock,
    changes,
    check_same_processor,
    check_unpacked,
    discard,
    environment_of,
    make_study_dir,
    progress_writer,
    read_record,
    record_environment,
    recorded,
    write_json,
    write_results,
)
from .stopping import Measured, planned, stopping_rule

# Set (by `reproduce --render-only`) to re-render a complete run from its own data: the study
# then measures nothing and refuses, in one line, a run with a window still to measure.
RENDER_ONLY = "HOSTBENCH_RENDER_ONLY"


def run_study(
    params: StudyParams,
    run_id: str,
    runs_dir: Path = RUNS,
    progress: bool = True,
    discard_old: bool = False,
    study: str | None = None,
) -> Path:
    """Run every pending run of the study; returns the path of results.csv.

    discard_old: a folder that holds runs with other settings is emptied first
    (otherwise that is refused, naming the settings that changed).
    study: the study's id, whose claims a run that stops when decided judges after each block
    (params stop_when_decided; required for it).
    """
    study_dir = Path(runs_dir) / check_run_id(run_id)
    if params.stop_when_decided and study is None:
        raise BadInput(
            "params stop_when_decided judges a study's claims after each block: run it as a "
            "study's profile (reproduce --study, or run <study id>)"
        )
    if os.environ.get(RENDER_ONLY):
        return _rendered(params, study_dir)
    make_study_dir(study_dir)
    with StudyLock(study_dir):
        try:
            return _run_locked(params, study_dir, progress, discard_old, study)
        except OSError as e:
            # A full disk, a folder made read-only mid-study, a socket error from a
            # dying server: one line, and the completed rows stay as they are.
            where = f" ({e.filename})" if e.filename else ""
            raise HostbenchError(f"{type(e).__name__}: {e.strerror or e}{where}") from None


def _rendered(params: StudyParams, study_dir: Path) -> Path:
    """results.csv of a complete run, measuring nothing (RENDER_ONLY)."""
    old = read_record(study_dir / PARAMS_FILE)
    if old is None:
        raise BadInput(f"{study_dir}: no run to re-render (no {PARAMS_FILE})")
    rule = stopping_rule(params)
    new = recorded(params, old.get("seed"))
    changed = changes(old, new, rule.accepted(old, new))
    if changed:
        raise BadInput(f"{study_dir} was measured with other settings: {'; '.join(changed)}")
    state = rule.state(study_dir)
    rows, missing = {}, 0
    order = run_order(params, old["seed"], state["blocks"])
    for block in range(1, state["blocks"] + 1):
        kept, pending = read_back(params, rule.in_block(order, block, state), study_dir)
        rows.update(kept)
        missing += len(pending)
    if missing:
        raise BadInput(
            f"{study_dir}: {missing} window(s) not measured (or their folders packed: "
            "scripts/archive-runs.sh unpack); --render-only re-renders a complete run, it never "
            "measures"
        )
    return write_results(study_dir, list(rows.values()))


def _resumable(study_dir: Path, params: StudyParams, rule, old: dict, new: dict) -> None:
    """A resume's checks: the rule's, the settings, the folders unpacked, the processor."""
    if why := rule.refused(old, new):
        raise BadInput(f"run folder {study_dir}: {why}")
    changed = changes(old, new, rule.accepted(old, new))
    if changed:
        raise BadInput(
            f"run folder {study_dir} holds runs measured with other settings: "
            f"{'; '.join(changed)}. Use a new --run-id, or --discard-old to delete those runs"
        )
    check_unpacked(study_dir)
    if params.topology != "ssh":
        check_same_processor(study_dir)


def _run_locked(params: StudyParams, study_dir: Path, progress: bool, discard_old: bool,
                study: str | None) -> Path:  # fmt: skip
    from tqdm import tqdm  # plain text: readable in a terminal, a notebook and papermill logs

    old = read_record(study_dir / PARAMS_FILE)
    if old is not None and discard_old:
        discard(study_dir)
        old = None
    seed = params.seed if params.seed is not None else (old or {}).get("seed")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    new = recorded(params, seed)
    rule = stopping_rule(params)
    if old is not None:
        _resumable(study_dir, params, rule, old, new)
    write_json(study_dir / PARAMS_FILE, new)
    if params.topology != "ssh":  # over ssh, once both hosts are connected (below)
        record_environment(study_dir, **environment_of(params))

    state = rule.state(study_dir)
    if old is not None:
        state = rule.resumed(study_dir, state, old, new)
    specs = run_order(params, seed, state["blocks"])
    _check_before_start(specs, study_dir, params)
    done = sum(completed_row(study_dir / spec.key) is not None for spec in specs)
    say = progress_writer(study_dir, progress)
    for name, why in params.sub_studies_skipped.items():
        say(f"sub-study {name}: {why}")
    rows: dict[str, dict] = {}  # completed windows' rows, in the order they ran
    measured = Measured(study_dir, study, [], seed, say)
    total = len(planned(rule, specs, state))
    bar = _Counter(tqdm(total=total, initial=done, disable=not progress, unit="window",
                        dynamic_ncols=True), done, total)  # fmt: skip
    with ExitStack() as stack:
        stack.callback(bar.close)
        where = _where(stack, params, study_dir)
        block = 1
        while block <= state["blocks"]:
            kept, pending = read_back(params, rule.in_block(specs, block, state), study_dir)
            rows.update(kept)
            if pending:  # not run, or interrupted: its missing windows, on a launch of its own
                bar.set_description(f"block {block} of {state['blocks']}")
                t0 = time.monotonic()
                _run_block(pending, study_dir, params, say, where, bar, rows)
                measured.block_minutes.append((time.monotonic() - t0) / 60)
                state.setdefault("minutes", {})[str(block)] = round(measured.block_minutes[-1], 3)
            before = len(planned(rule, specs, state))
            measured.rows = list(rows.values())
            state = rule.after_block(block, state, measured)
            if state["blocks"] > specs[-1].block:  # the rule added blocks: their windows too
                specs = run_order(params, seed, state["blocks"])
            bar.grow(len(planned(rule, specs, state)) - before)
            block += 1
    return write_results(study_dir, list(rows.values()))


def _check_before_start(specs: list[RunSpec], study_dir: Path, params: StudyParams) -> None:
    """Before anything starts: a path nginx-uds could not bind, runs measured with other
    settings than params.json states."""
    for spec in specs:
        check_socket_path(spec.mode, study_dir / LAUNCH_DIR.format(block=spec.block) / spec.member)
    for spec in specs:
        row = completed_row(study_dir / spec.key)
        if row is not None and row.get("fingerprint") != fingerprint(run_settings(spec, params)):
            raise BadInput(
                f"{study_dir / spec.key} was measured with other settings than params.json "
                "states; use a new --run-id, or --discard-old"
            )


def _where(stack: ExitStack, params: StudyParams, study_dir: Path) -> Where:
    """Where the study's processes run, set up for as long as it lasts and removed however it
    ends: topology netns's two namespaces, or topology ssh's two hosts, connected and checked
    (each host's programs found there or copied, its environment recorded)."""
    if params.topology == "netns":
        return TwoNamespaces(stack.enter_context(netns.two_hosts()))
    if params.topology == "ssh":
        programs = {p.name: p for m in params.modes for p in programs_of(get_mode(m))}
        servers = {(p.tool, p.ships) for p in programs.values()}
        generators = [get_generator(t) for t in params.tools]
        loadgens = {(g.name, g.ships()) for g in generators}
        ssh = stack.enter_context(remote.ssh_hosts(params.inventory, servers, loadgens))
        record_environment(study_dir, ssh, list(programs.values()), generators,
                           **environment_of(params))  # fmt: skip
        return TwoSshHosts(ssh)
    return LOOPBACK


def _run_block(specs, study_dir: Path, params, say, where: Where, bar, rows: dict) -> None:
    """The pending windows of one block: launch each member they need once, then window by
    window, in its design (designs.window_design): its modes prepared (checked, warmed up)
    just before, the window measured; a window the machine was too busy for, or one of whose
    modes never got steady (warmed up again first), is measured again whole, at once. Holds
    the machine for the whole launch."""
    launch_dir = study_dir / LAUNCH_DIR.format(block=specs[0].block)
    if launch_dir.exists():  # an interrupted launch's files: this launch starts clean
        shutil.rmtree(launch_dir)
    stopping = where.stopping(say)  # ssh hosts': one round trip a host, one deadline
    with measuring_alone(f"run {study_dir.name} (process {os.getpid()})", say), stopping as up:
        targets = {}
        for spec in specs:
            if spec.member not in targets:
                targets[spec.member] = up.enter_context(
                    launched(spec, launch_dir / spec.member, params, where)
                )
        ready: dict[tuple[str, str], dict] = {}
        for design, window in block_windows(params, specs):
            design.warm_up(window, specs, targets, launch_dir, params, where, ready)
            while True:
                new = design.measure(window, [targets[s.member] for s in window],
                                     [ready[s.member, s.cell_key] for s in window],
                                     [study_dir / s.key for s in window], params, say,
                                     where)  # fmt: skip
                rows.update({row["run_key"]: row for row in new})
                write_results(study_dir, list(rows.values()))
                for row in new:
                    _report(row, bar, say)
                if not any(redo(row) for row in new) or window[0].attempt > params.busy_reruns:
                    break
                window = [replace(s, attempt=s.attempt + 1) for s in window]  # beside its pair
                unsteady = [s for s, row in zip(window, new, strict=True)
                            if UNSTEADY in (row.get("invalid_reason") or "")]  # fmt: skip
                design.warm_up(unsteady, specs, targets, launch_dir, params, where, ready,
                               again=True)  # fmt: skip
                bar.grow(len(window))


class _Counter:
    """Windows done and to do, on the terminal's progress bar (when shown) and in the log."""

    def __init__(self, bar, done: int, total: int):
        self.bar, self.done, self.total = bar, done, total

    def grow(self, windows: int) -> None:
        self.total += windows
        self.bar.total = self.total

    def set_description(self, text: str) -> None:
        self.bar.set_description(text)

    def close(self) -> None:
        self.bar.close()


def _report(row: dict, bar: _Counter, say) -> None:
    flag = "" if row["valid"] else f" INVALID: {row['invalid_reason']}"
    summary = (
        f"{row['rps']:,.0f} rps, cpu {row['cpu_total_pct']:.0f}%, "
        f"others {row['foreign_cores']:.2f} cores{flag}"
    )
    bar.done += 1
    bar.bar.set_postfix_str(summary)
    bar.bar.update()
    say(f"[{bar.done}/{bar.total}] {row['run_key']}: {summary}", log_only=True)
