"""A study: the matrix of windows a params file describes, run in blocks and resumed as one.

A block is one launch of every mode (and variant) the study compares, kept up while the
block measures: each sub-block (every mode of one scenario, tool and concurrency) is
warmed up, then its windows run back to back, seconds apart, in a Williams design's order
across rounds and blocks, so neither drift nor the window before favours a mode; the
sub-blocks' order is random (from a seed recorded in params.json). With interleave_slice_s,
the modes of a sub-block share each window instead, in slices (measure/interleave.py: one k6
run switching target; measure/alternate.py: a short run per slice of the tools that cannot). A
window the machine was too busy for, or whose launch's warm-up ran out before the rate
settled (then warmed up again first), is measured again at once, beside its pair
(busy_reruns times at most). The
launch is the unit of every interval (docs/method.md); with target_halfwidth_pct the first
blocks' spread sets the number of blocks once (design.py). A block holds the machine-wide
measuring lock, so two studies on one machine take turns. Each window's artifacts go to
data/runs/<run-id>/<run-key>/, each launch's to launch__r<block>/; results.csv is rebuilt
from the completed windows after each one, atomically, so an interrupted study loses at most
the window in flight and resumes where it was.

A run folder only ever holds rows measured with the settings its params.json
states, on the processor its environment.json names: resuming with other settings or on
another processor is refused, and one process at a time
holds a folder (a lock the kernel releases when that process dies).
"""

import fcntl
import json
import math
import os
import random
import shutil
import sys
import tarfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__, results
from ..analysis import until_decided
from ..analysis.sequential import Plan
from ..catalog import get_mode
from ..errors import BadInput, HostbenchError
from ..params import (
    NOT_MEASURED,
    PARAMS_FILE,
    SKIPPED_SUB_STUDIES,
    StudyParams,
    check_run_id,
    fingerprint,
    optional,
)
from ..paths import RUNS
from ..programs import programs_of
from . import environment
from .design import blocks_needed
from .launch import netns, remote
from .launch.modes import check_socket_path
from .measure.alternate import design_for
from .measure.interleave import can_warm_up_together, warm_up_together
from .measure.loadgen import get_generator
from .measure.quiet import measuring_alone
from .measure.run import completed_row, launched, measure_window, prepare, read_json
from .measure.window import BUSY, UNSTEADY, RunSpec, Where, run_settings
from .order import run_order

LOCK_FILE = ".lock"
PROGRESS_FILE = "progress.log"  # one line per completed run
# A committed run's window folders, packed by scripts/archive-runs.sh.
ARCHIVE = "runs.tar.gz"
# What a run folder of a discarded study holds besides run folders.
STUDY_FILES = (
    "results.csv", PARAMS_FILE, "environment.json", "ratios.csv", "progress.log", "design.json",
    ARCHIVE,
)  # fmt: skip


class StudyLock:
    """One study process per run folder.

    flock: the kernel releases it when the holder exits or is killed, so a
    crashed study never blocks the next start.
    """

    def __init__(self, study_dir: Path):
        self.path = study_dir / LOCK_FILE
        self._file = None

    def __enter__(self):
        self._file = open(self.path, "a+")  # noqa: SIM115 - held for the study's lifetime
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            raise HostbenchError(
                f"run folder {self.path.parent} is in use by {holder}; wait for it to finish, "
                "or use another --run-id"
            ) from None
        self._file.seek(0)
        self._file.truncate()
        command = " ".join(["python", "-m", "hostbench", *sys.argv[1:]])
        self._file.write(f"process {os.getpid()} ({command}), since {_now()}\n")
        self._file.flush()
        return self

    def __exit__(self, *exc):
        self._file.close()  # releases the lock
        return False


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _recorded(params: StudyParams, seed: int) -> dict:
    """params.json: the params, the seed of the order, and what shapes every run, and the
    sub-studies skipped where it runs (each with why; only when there are any)."""
    skipped = params.sub_studies_skipped
    return {
        **params.to_dict(),
        "seed": seed,
        "hostbench_version": __version__,
        "fingerprint": fingerprint(params.measured_settings()),
        **({SKIPPED_SUB_STUDIES: skipped} if skipped else {}),
    }


def _changes(old: dict, new: dict) -> list[str]:
    """Keys whose values differ between two params.json mappings (descriptive keys aside),
    but for a time budget raised on a run measured until decided (_more_time)."""
    # What is derived from the keys (the sub-studies skipped follow sub_studies) is not compared.
    keys = sorted((set(old) | set(new)) - set(NOT_MEASURED) - {"fingerprint", SKIPPED_SUB_STUDIES})
    defaults = optional()  # a key newer than a record: its default then
    before, after = ({k: p.get(k, defaults.get(k)) for k in keys} for p in (old, new))
    if _more_time(before, after):
        keys.remove("max_minutes")
    return [f"{k} ({before[k]!r} -> {after[k]!r})" for k in keys if before[k] != after[k]]


def continued(old: dict, new: dict) -> str:
    """Why a fixed design (no half-width target, no stopping rule) may not be resumed with
    more repetitions, in one line; "" for any other resume. Blocks added after its intervals
    were seen make its number of blocks depend on them (optional continuation: the A/A
    alternating check grew so from 24 to 72 blocks), which its plain t intervals, valid for a
    number fixed before any block, do not cover."""

    def fixed(p: dict) -> bool:
        return p.get("target_halfwidth_pct") is None and not p.get("stop_when_decided")

    if not (fixed(old) and fixed(new) and new["repetitions"] > old["repetitions"]):
        return ""
    return (
        f"a fixed design of {old['repetitions']} blocks resumed with {new['repetitions']} "
        "would add blocks after its intervals were seen, which its t intervals (valid for a "
        f"number of blocks fixed beforehand) do not cover: measure repetitions="
        f"{new['repetitions']} under a new --run-id, or let the data set the blocks "
        "(target_halfwidth_pct: Stein's two-stage; stop_when_decided: repeated intervals)"
    )


def _more_time(old: dict, new: dict) -> bool:
    """A run measured until decided, resumed with a larger time budget (or none), goes on where
    its budget stopped it (_reopened): its repeated intervals hold their 95% over every look
    up to max_repetitions whatever stops the run, a budget raised after a look included
    (docs/method.md). A smaller one is refused (the blocks beyond it would stay)."""

    def budget(p: dict) -> float:
        return math.inf if p.get("max_minutes") is None else p["max_minutes"]

    until_decided_run = old.get("stop_when_decided") and new.get("stop_when_decided")
    return bool(until_decided_run) and budget(new) > budget(old)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def discard(study_dir: Path) -> None:
    """Delete a study's runs and records, and nothing else (not a notebook writing there)."""
    for child in study_dir.iterdir():
        if child.is_dir() and "__" in child.name:
            shutil.rmtree(child)
        elif child.name in STUDY_FILES:
            child.unlink()


def write_results(study_dir: Path, rows: list[dict]) -> Path:
    """results.csv from the completed runs' rows, through the results schema (an unknown key
    is refused, not dropped); replaced atomically."""
    return results.write_results(study_dir / results.RESULTS_FILE, rows)


def _make_study_dir(study_dir: Path) -> None:
    try:
        study_dir.mkdir(parents=True, exist_ok=True)
        probe = study_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except FileExistsError:
        raise BadInput(f"runs folder: {study_dir} or a folder above it is a file") from None
    except OSError as e:
        raise BadInput(f"runs folder {study_dir} is not writable: {e.strerror}") from None


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
    _make_study_dir(study_dir)
    with StudyLock(study_dir):
        try:
            return _run_locked(params, study_dir, progress, discard_old, study)
        except OSError as e:
            # A full disk, a folder made read-only mid-study, a socket error from a
            # dying server: one line, and the completed rows stay as they are.
            where = f" ({e.filename})" if e.filename else ""
            raise HostbenchError(f"{type(e).__name__}: {e.strerror or e}{where}") from None


# Set (by `reproduce --render-only`) to re-render a complete run from its own data: the study
# then measures nothing and refuses, in one line, a run with a window still to measure.
RENDER_ONLY = "HOSTBENCH_RENDER_ONLY"


def _rendered(params: StudyParams, study_dir: Path) -> Path:
    """results.csv of a complete run, measuring nothing (RENDER_ONLY)."""
    old = read_json(study_dir / PARAMS_FILE, "use another --run-id")
    if old is None:
        raise BadInput(f"{study_dir}: no run to re-render (no {PARAMS_FILE})")
    changed = _changes(old, _recorded(params, old.get("seed")))
    if changed:
        raise BadInput(f"{study_dir} was measured with other settings: {'; '.join(changed)}")
    design = _design(study_dir, params)
    rows, missing = {}, 0
    order = run_order(params, old["seed"], design["blocks"])
    for block in range(1, design["blocks"] + 1):
        specs = _in_block(order, block, design)
        kept, pending = _state_for(params)(specs, study_dir, params)
        rows.update(kept)
        missing += len(pending)
    if missing:
        raise BadInput(
            f"{study_dir}: {missing} window(s) not measured (or their folders packed: "
            "scripts/archive-runs.sh unpack); --render-only re-renders a complete run, it never "
            "measures"
        )
    return write_results(study_dir, list(rows.values()))


def _run_locked(params: StudyParams, study_dir: Path, progress: bool, discard_old: bool,
                study: str | None) -> Path:  # fmt: skip
    from tqdm import tqdm  # plain text: readable in a terminal, a notebook and papermill logs

    old = read_json(study_dir / PARAMS_FILE, "use another --run-id")
    if old is not None and discard_old:
        discard(study_dir)
        old = None
    seed = params.seed if params.seed is not None else (old or {}).get("seed")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    new = _recorded(params, seed)
    if old is not None:
        if why := continued(old, new):
            raise BadInput(f"run folder {study_dir}: {why}")
        changed = _changes(old, new)
        if changed:
            raise BadInput(
                f"run folder {study_dir} holds runs measured with other settings: "
                f"{'; '.join(changed)}. Use a new --run-id, or --discard-old to delete those runs"
            )
        _check_unpacked(study_dir)
        if params.topology != "ssh":
            _check_same_processor(study_dir)
    _write_atomically(study_dir / PARAMS_FILE, json.dumps(new, indent=2))
    if params.topology != "ssh":  # over ssh, once both hosts are connected (below)
        _record_environment(study_dir, runtimes=params.runtime_builds)

    design = _design(study_dir, params)
    if old is not None and _more_time(old, new):
        design = _reopened(study_dir, design, params)
    specs = run_order(params, seed, design["blocks"])
    for spec in specs:  # before anything starts: a path nginx-uds could not bind
        check_socket_path(spec.mode, study_dir / LAUNCH_DIR.format(block=spec.block) / spec.member)
    done = 0
    for spec in specs:  # before anything starts: runs measured with other settings
        row = completed_row(study_dir / spec.key)
        done += row is not None
        if row is not None and row.get("fingerprint") != fingerprint(run_settings(spec, params)):
            raise BadInput(
                f"{study_dir / spec.key} was measured with other settings than params.json "
                "states; use a new --run-id, or --discard-old"
            )
    say = _progress_writer(study_dir, progress)
    for name, why in params.sub_studies_skipped.items():
        say(f"sub-study {name}: {why}")
    rows: dict[str, dict] = {}  # completed windows' rows, in the order they ran
    planned = len(_planned(specs, design, params))
    bar = _Counter(tqdm(total=planned, initial=done, disable=not progress, unit="window",
                        dynamic_ncols=True), done, planned)  # fmt: skip
    with ExitStack() as stack:
        stack.callback(bar.close)
        # topology netns: two namespaces as long as the study lasts, removed however it ends.
        two_hosts = stack.enter_context(netns.two_hosts()) if params.topology == "netns" else None
        # topology ssh: both hosts connected and checked, closed however it ends.
        ssh = None
        if params.topology == "ssh":
            # Each host's programs, found there or copied, before anything starts.
            programs = {p.name: p for m in params.modes for p in programs_of(get_mode(m))}
            servers = {(p.tool, p.ships) for p in programs.values()}
            generators = [get_generator(t) for t in params.tools]
            loadgens = {(g.name, g.ships()) for g in generators}
            ssh = stack.enter_context(remote.ssh_hosts(params.inventory, servers, loadgens))
            _record_environment(
                study_dir, ssh, list(programs.values()), generators, params.runtime_builds
            )
        where = Where(two_hosts, ssh)
        block, block_minutes = 1, []
        while block <= design["blocks"]:
            in_block = _in_block(specs, block, design)
            kept, pending = _state_for(params)(in_block, study_dir, params)
            rows.update(kept)
            if pending:  # not run, or interrupted: its missing windows, on a launch of its own
                bar.set_description(f"block {block} of {design['blocks']}")
                t0 = time.monotonic()
                _run_block(pending, study_dir, params, say, where, bar, rows)
                block_minutes.append((time.monotonic() - t0) / 60)
                design.setdefault("minutes", {})[str(block)] = round(block_minutes[-1], 3)
            if params.stop_when_decided and block >= params.repetitions:
                design = _look(study, study_dir, params, design, block, say)
                if block < design["blocks"]:  # the next block's windows, as far as known
                    bar.grow(len(_in_block(specs, block + 1, design)))
            elif block == params.repetitions and not design["decision"]:  # decided once
                pace = sum(block_minutes) / len(block_minutes) if block_minutes else 0.0
                design = _size_design(study_dir, params, list(rows.values()), pace, seed)
                if design["blocks"] > block:
                    specs = run_order(params, seed, design["blocks"])
                    bar.grow(sum(s.block > block for s in specs))
                    say(design["decision"])
            block += 1
    return write_results(study_dir, list(rows.values()))


ENVIRONMENT_FILE = "environment.json"


def _record_environment(study_dir: Path, ssh=None, programs=(), tools=(), runtimes=()) -> None:
    """environment.json: the machine as the study first saw it (a resumed study keeps it),
    with the test app's `runtimes` (params.runtime_builds); under topology ssh both hosts too,
    read there (environment.hosts_record)."""
    path = study_dir / ENVIRONMENT_FILE
    if path.exists():
        return
    record = environment.collect()
    record["testapp_runtimes"] = environment.testapp_runtimes(list(runtimes))
    if ssh is not None:
        record["hosts"] = environment.hosts_record(ssh, programs, list(tools))
    _write_atomically(path, json.dumps(record, indent=2))


def _check_unpacked(study_dir: Path) -> None:
    """A run whose run folders (windows, launches) are packed, as a committed run that stopped
    short is, resumes only once they are unpacked: else the harness, which knows a window done
    by its folder, would measure them again, and results.csv, rebuilt from the folders, would
    lose them."""
    archive = study_dir / ARCHIVE
    if not archive.exists():
        return
    with tarfile.open(archive) as tar:
        packed = {name.split("/", 1)[0] for name in tar.getnames()}
    missing = sorted(name for name in packed if not (study_dir / name).is_dir())
    if missing:
        raise BadInput(
            f"{study_dir}: {len(missing)} run folder(s) are packed in {ARCHIVE}; unpack them "
            f"first (scripts/archive-runs.sh unpack {study_dir}), or use a new --run-id"
        )


def _check_same_processor(study_dir: Path) -> None:
    """A resumed run stays on the processor it was measured on: a ratio moves with the
    processor, and one run's rows are read as one machine's (environment.json keeps the
    first). A run over ssh records its hosts, not this machine, and is not checked here."""
    recorded = read_json(study_dir / ENVIRONMENT_FILE, "use another --run-id")
    changed = environment.processor_changed(recorded or {})
    if changed:
        raise BadInput(
            f"run folder {study_dir} was measured on another processor ({changed}); resume it "
            "on that processor, or use a new --run-id, or --discard-old to delete its runs"
        )


LAUNCH_DIR = "launch__r{block}"  # a block's launch: each mode's logs, configs and warm-ups
DESIGN_FILE = "design.json"  # how many blocks, and why
BUDGET_STOPPED = "the next block would pass the profile's time budget"  # design.json's "stopped"


def _state_for(params: StudyParams):
    """How a block's completed windows are read back: interleaved windows whole, else each
    mode's alone (a resume and a re-render must read them as they were measured)."""
    return _interleaved_state if params.interleave_slice_s is not None else _block_state


def _block_state(specs: list[RunSpec], study_dir: Path, params: StudyParams):
    """A block's completed windows (with busy windows' re-dos), by key, and the windows still
    to measure, each at its next attempt, in order (a resumed study keeps what it measured)."""
    kept, pending = {}, []
    for spec in specs:
        while True:
            row = completed_row(study_dir / spec.key)
            if row is None:
                pending.append(spec)
                break
            kept[spec.key] = row
            if not _redo(row) or spec.attempt > params.busy_reruns:
                break
            spec = replace(spec, attempt=spec.attempt + 1)
    return kept, pending


def _windows(specs: list[RunSpec]) -> list[list[RunSpec]]:
    """Interleaved: the windows of a block's specs, in order, each the compared modes of one
    cell that share it (the same scenario, load, window and attempt)."""
    windows: dict[tuple, list[RunSpec]] = {}
    for s in specs:
        windows.setdefault((s.scenario.id, s.load, s.window, s.attempt), []).append(s)
    return list(windows.values())


def _interleaved_state(specs: list[RunSpec], study_dir: Path, params: StudyParams):
    """_block_state for interleaved windows, of either design (a window's rows are alike):
    a window counts only when every mode's row of it is there (an interrupted one is
    measured again whole), and is measured again whole."""
    kept, pending = {}, []
    for window in _windows(specs):
        while True:
            found = [completed_row(study_dir / s.key) for s in window]
            if any(row is None for row in found):
                pending += window
                break
            kept.update({s.key: row for s, row in zip(window, found, strict=True)})
            if not any(_redo(row) for row in found) or window[0].attempt > params.busy_reruns:
                break
            window = [replace(s, attempt=s.attempt + 1) for s in window]
    return kept, pending


def _redo(row: dict) -> bool:
    """A window measured again at once: the machine was busy, or the warm-up never settled
    (its number says nothing about the mode, and the launch is still up beside its pair)."""
    reason = row.get("invalid_reason") or ""
    return BUSY in reason or UNSTEADY in reason


def _run_block(specs, study_dir: Path, params, say, where: Where, bar, rows: dict) -> None:
    """The pending windows of one block: launch each member they need once, prepare each
    sub-block's members (check, warm up) just before its windows, and measure the windows in
    order; a window the machine was too busy for is measured again at once. Holds the machine
    for the whole launch."""
    launch_dir = study_dir / LAUNCH_DIR.format(block=specs[0].block)
    if launch_dir.exists():  # an interrupted launch's files: this launch starts clean
        shutil.rmtree(launch_dir)
    stopping = remote.StopTogether(where.ssh, say)  # ssh hosts': one round trip, one deadline
    with measuring_alone(f"run {study_dir.name} (process {os.getpid()})", say), stopping as up:
        targets = {}
        for spec in specs:
            if spec.member not in targets:
                targets[spec.member] = up.enter_context(
                    launched(spec, launch_dir / spec.member, params, where)
                )
        if params.interleave_slice_s is not None:
            _run_interleaved(specs, targets, launch_dir, study_dir, params, say, bar, rows, where)
            return
        ready: dict[tuple[str, str], dict] = {}
        for spec in specs:
            if (spec.member, spec.cell_key) not in ready:  # the sub-block starts: warm it up
                group = [s for s in specs if s.load == spec.load and s.scenario == spec.scenario]
                for s in group:
                    if (s.member, s.cell_key) not in ready:
                        warmup = launch_dir / s.member / f"warmup__{s.cell_key}"
                        ready[s.member, s.cell_key] = prepare(s, targets[s.member], warmup,
                                                              params, where)  # fmt: skip
            while True:
                row = measure_window(spec, targets[spec.member], ready[spec.member, spec.cell_key],
                                     study_dir / spec.key, params, say, where)  # fmt: skip
                rows[spec.key] = row
                write_results(study_dir, list(rows.values()))
                _report(row, bar, say)
                if not _redo(row) or spec.attempt > params.busy_reruns:
                    break
                spec = replace(spec, attempt=spec.attempt + 1)  # at once, beside its pair
                if UNSTEADY in (row.get("invalid_reason") or ""):  # warm this one up again
                    warmup = launch_dir / spec.member / f"warmup__{spec.cell_key}__a{spec.attempt}"
                    ready[spec.member, spec.cell_key] = prepare(
                        spec, targets[spec.member], warmup, params, where
                    )
                bar.grow(1)


def _run_interleaved(specs, targets, launch_dir: Path, study_dir: Path, params, say, bar,
                     rows: dict, where: Where) -> None:  # fmt: skip
    """_run_block's windows when they are interleaved: each window's modes, launched, are
    warmed up (once per cell, just before the cell's first window; together, in the window's
    slices, where its tool can: _warm), then share the window, in the design of its tool
    (alternate.design_for: k6 switching target within one run, the others alternating short
    runs); a window the machine was too busy for, or one of whose modes never got steady
    (warmed up again first), is measured again whole, at once."""
    ready: dict[tuple[str, str], dict] = {}
    for window in _windows(specs):
        cold = [s for s in window if (s.member, s.cell_key) not in ready]
        _warm(cold, targets, launch_dir, params, where, ready)
        while True:
            new = design_for(window[0].tool).measure(
                window, [targets[s.member] for s in window],
                [ready[s.member, s.cell_key] for s in window],
                [study_dir / s.key for s in window], params, say, where)  # fmt: skip
            rows.update({row["run_key"]: row for row in new})
            write_results(study_dir, list(rows.values()))
            for row in new:
                _report(row, bar, say)
            if not any(_redo(row) for row in new) or window[0].attempt > params.busy_reruns:
                break
            window = [replace(s, attempt=s.attempt + 1) for s in window]
            unsteady = [s for s, row in zip(window, new, strict=True)
                        if UNSTEADY in (row.get("invalid_reason") or "")]  # fmt: skip
            _warm(unsteady, targets, launch_dir, params, where, ready)  # these ones again
            bar.grow(len(window))


def _warm(specs, targets, launch_dir: Path, params, where: Where, ready: dict) -> None:
    """Prepare `specs` (modes of one interleaved window) into `ready`: together, in the
    window's slices (interleave.warm_up_together), when there are two or more, a warm-up
    and a tool that can; else each alone, one after another (run.prepare)."""

    def folder(s):  # a re-run's warm-up beside the first's
        return launch_dir / s.member / (f"warmup__{s.cell_key}"
                                        + (f"__a{s.attempt}" if s.attempt > 1 else ""))  # fmt: skip

    if (
        len(specs) < 2
        or specs[0].load.warmup_s <= 0
        or not can_warm_up_together(specs[0].tool, where)
    ):
        for s in specs:
            ready[s.member, s.cell_key] = prepare(s, targets[s.member], folder(s), params, where)
        return
    checked = [prepare(s, targets[s.member], folder(s), params, where, warm=False) for s in specs]
    seed = int(fingerprint({"warm-up": specs[0].key})[:8], 16)
    warmed = warm_up_together([targets[s.member] for s in specs], specs[0].load,
                              params.interleave_slice_s, params.steady_tolerance_pct,
                              [folder(s) for s in specs], seed, where)  # fmt: skip
    for s, own, warm in zip(specs, checked, warmed, strict=True):
        ready[s.member, s.cell_key] = {**own, **warm, "warmup_together": True}


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


def _design(study_dir: Path, params: StudyParams) -> dict:
    """The study's number of blocks: as design.json recorded it (a resumed study), else the
    params' repetitions (raised after them when a half-width is targeted; with
    stop_when_decided, at most max_repetitions, each look after a block recorded)."""
    recorded = read_json(study_dir / DESIGN_FILE, "use another --run-id")
    if recorded is not None:
        return recorded
    if params.stop_when_decided:
        return {
            "blocks": params.max_repetitions,
            "decision": "",
            "rule": Plan.of(params).describe(),
            "first_blocks": params.repetitions,
            "max_blocks": params.max_repetitions,
            "minutes": {},
            until_decided.LOOKS: [],
        }
    return {"blocks": params.repetitions, "decision": ""}


def _reopened(study_dir: Path, design: dict, params: StudyParams) -> dict:
    """A run its time budget stopped, resumed with a larger one (_more_time): its blocks up to
    max_repetitions again and its last look to be taken again, now under the new budget (the
    same windows judged again: the same verdicts). Recorded at once, so an interruption
    before that look leaves the run open, not stopped by the old budget."""
    if not str(design.get("stopped", "")).startswith(BUDGET_STOPPED):
        return design
    kept = {key: value for key, value in design.items() if key != "stopped"}
    reopened = {**kept, "blocks": params.max_repetitions,
                until_decided.LOOKS: design[until_decided.LOOKS][:-1]}  # fmt: skip
    _write_atomically(study_dir / DESIGN_FILE, json.dumps(reopened, indent=2))
    return reopened


def _planned(specs: list[RunSpec], design: dict, params: StudyParams) -> list[RunSpec]:
    """The windows known to be measured: every block's, or, in a run that stops when decided,
    those of the blocks up to the one after its last look (the rest wait on the looks)."""
    last = design["blocks"]
    if params.stop_when_decided:
        looked = [x["after_block"] for x in design[until_decided.LOOKS]]
        last = min(last, max([params.repetitions - 1, *looked]) + 1)
    return [s for b in range(1, last + 1) for s in _in_block(specs, b, design)]


def _in_block(specs: list[RunSpec], block: int, design: dict) -> list[RunSpec]:
    """The windows of `block`: all its cells, or, in a run that stops when decided, the cells
    the look after the block before found an open claim needing."""
    in_block = [s for s in specs if s.block == block]
    before = [x for x in design.get(until_decided.LOOKS, []) if x["after_block"] == block - 1]
    if not before:
        return in_block
    cells = before[0]["cells"]
    return [s for s in in_block if until_decided.cell_allowed(s.scenario.id, s.concurrency, cells)]


def _look(study: str, study_dir: Path, params: StudyParams, design: dict, block: int,
          say) -> dict:  # fmt: skip
    """After `block`: judge the claims on every window so far (until_decided.look), record the
    look in design.json and, where the run stops (every claim decided, max_repetitions
    reached, or the next block would pass max_minutes), the blocks it ran and why. A look
    already recorded (a resumed run) stands."""
    from ..analysis import tables

    if any(x["after_block"] == block for x in design[until_decided.LOOKS]):
        return design
    results = tables.load_results(study_dir, valid_only=False)
    minutes = sum(design["minutes"].values())
    found = until_decided.look(study, results, params, block, minutes)
    design = until_decided.record(design, found)
    say(found.progress())
    stopped = ""
    if not found.open:
        stopped = "every claim decided"
    elif block >= params.max_repetitions:
        stopped = f"the profile's most blocks ({params.max_repetitions}) reached"
    elif params.max_minutes is not None:
        last = design["minutes"].get(str(block), 0.0)
        share = len(found.cells) / max(1, len(_cells_measured(results, block)))
        if minutes + last * share > params.max_minutes:
            stopped = (f"{BUDGET_STOPPED} ({params.max_minutes:g} min; {minutes:.0f} min "
                       "measured)")  # fmt: skip
    if stopped:
        design = {**design, "blocks": block, "stopped": stopped}
        say(f"stopped after block {block}: {stopped}")
    _write_atomically(study_dir / DESIGN_FILE, json.dumps(design, indent=2))
    return design


def _cells_measured(results, block: int) -> set[tuple]:
    """The (scenario, concurrency) cells `block` measured."""
    rows = results[results["block"] == block]
    return set(zip(rows["scenario"].astype(str), rows["concurrency"], strict=True))


def _size_design(
    study_dir: Path, params: StudyParams, rows: list[dict], pace: float, seed: int
) -> dict:
    """After the first blocks: the blocks the target half-width calls for (design.blocks_needed),
    recorded in design.json, so a resumed study keeps them."""
    if params.target_halfwidth_pct is None:
        return {"blocks": params.repetitions, "decision": ""}
    design = blocks_needed(rows, params, pace, _added_block_share(params, seed))
    _write_atomically(study_dir / DESIGN_FILE, json.dumps(design, indent=2))
    return design


def _added_block_share(params: StudyParams, seed: int) -> float:
    """An added block's windows over a first-stage block's: the focus alone, so the time
    cap counts its real pace."""
    n0 = params.repetitions
    per_block = Counter(s.block for s in run_order(params, seed, n0 + 1))
    return per_block[n0 + 1] / per_block[1] if per_block[1] else 1.0


def _progress_writer(study_dir: Path, progress: bool):
    """say(line): to the terminal (above the progress bar) and to progress.log, which
    `make reproduce` follows while a notebook runs."""
    from tqdm import tqdm

    def say(line: str, log_only: bool = False) -> None:
        if progress and not log_only:
            tqdm.write(line)
        with open(study_dir / PROGRESS_FILE, "a") as log:
            log.write(line + "\n")

    return say
