"""A study: the matrix of runs a params file describes, run in blocks and resumed as one.

Repetitions are blocks: each block runs every cell (mode x scenario x tool x
concurrency) once. Within a block the cells that are compared with each other
(every mode and variant of one scenario, tool and concurrency) run next to each
other, as a sub-block, so each comparison's two runs are close in time; the
sub-blocks' order is random (from a seed recorded in params.json) and the
order within them follows a Williams design: across blocks each mode runs
equally often in each position and after each other mode, so neither drift
nor the previous run can favour one mode. A run the machine was too busy for
is re-run at the end of its block (busy_reruns times at most). Each run's
artifacts go to data/runs/<run-id>/<run-key>/; results.csv is rebuilt from the
completed runs after each one, atomically, so an interrupted study loses at
most the run in flight and resumes where it was.

A run folder only ever holds rows measured with the settings its params.json
states: resuming with other settings is refused, and one process at a time
holds a folder (a lock the kernel releases when that process dies).
"""

import fcntl
import json
import os
import random
import shutil
import sys
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__, results
from ..catalog import get_mode, get_scenario
from ..errors import BadInput, HostbenchError
from ..params import PARAMS_FILE
from ..paths import RUNS
from . import environment, netns, remote
from .modes import check_socket_path
from .params import NOT_MEASURED, StudyParams, check_run_id, fingerprint
from .run import BUSY, RunSpec, completed_row, execute, read_json, run_settings

LOCK_FILE = ".lock"
PROGRESS_FILE = "progress.log"  # one line per completed run
# What a run folder of a discarded study holds besides run folders.
STUDY_FILES = ("results.csv", PARAMS_FILE, "environment.json", "ratios.csv", "progress.log")


def williams_rows(n: int) -> list[list[int]]:
    """Orders of n treatments, one per block, balanced for position and for the treatment
    just before (a Williams design: n rows for even n, 2n for odd n; each row a Latin-square
    row). Blocks beyond its rows start it over."""
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


def run_order(params: StudyParams, seed: int) -> list[RunSpec]:
    """Every run, block by block. A block is sub-blocks of the cells compared with each other
    (every mode and variant of one scenario, tool and concurrency), in a random order drawn
    from `seed`; within a sub-block the order is the block's row of a Williams design over a
    seeded permutation of its members."""
    rng = random.Random(seed)
    groups: dict[tuple, list[tuple[str, str]]] = {}
    for mode, variant, scenario, tool, c in params.cells():
        groups.setdefault((scenario, tool, c), []).append((mode, variant))
    members = {key: rng.sample(cells, len(cells)) for key, cells in groups.items()}
    designs = {key: williams_rows(len(cells)) for key, cells in groups.items()}
    # Each (scenario, tool, concurrency)'s load, made once: every run of it fires the same.
    loads = {key: params.load(*key) for key in groups}
    specs = []
    for block in range(1, params.repetitions + 1):
        keys = list(groups)
        rng.shuffle(keys)
        position = 0
        for key in keys:
            design = designs[key]
            row = design[(block - 1) % len(design)]
            scenario, tool, c = key
            for index in row:
                mode, variant = members[key][index]
                position += 1
                specs.append(
                    RunSpec(
                        get_mode(mode), get_scenario(scenario), loads[key], block, position, variant
                    )
                )
    return specs


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
    """params.json: the params, the seed of the order, and what shapes every run."""
    return {
        **params.to_dict(),
        "seed": seed,
        "hostbench_version": __version__,
        "fingerprint": fingerprint(params.measured_settings()),
    }


def _changes(old: dict, new: dict) -> list[str]:
    """Keys whose values differ between two params.json mappings (descriptive keys aside)."""
    keys = sorted((set(old) | set(new)) - set(NOT_MEASURED) - {"fingerprint"})
    return [f"{k} ({old.get(k)!r} -> {new.get(k)!r})" for k in keys if old.get(k) != new.get(k)]


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
) -> Path:
    """Run every pending run of the study; returns the path of results.csv.

    discard_old: a folder that holds runs with other settings is emptied first
    (otherwise that is refused, naming the settings that changed).
    """
    study_dir = Path(runs_dir) / check_run_id(run_id)
    _make_study_dir(study_dir)
    with StudyLock(study_dir):
        try:
            return _run_locked(params, study_dir, progress, discard_old)
        except OSError as e:
            # A full disk, a folder made read-only mid-study, a socket error from a
            # dying server: one line, and the completed rows stay as they are.
            where = f" ({e.filename})" if e.filename else ""
            raise HostbenchError(f"{type(e).__name__}: {e.strerror or e}{where}") from None


def _run_locked(params: StudyParams, study_dir: Path, progress: bool, discard_old: bool) -> Path:
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
        changed = _changes(old, new)
        if changed:
            raise BadInput(
                f"run folder {study_dir} holds runs measured with other settings: "
                f"{'; '.join(changed)}. Use a new --run-id, or --discard-old to delete those runs"
            )
    _write_atomically(study_dir / PARAMS_FILE, json.dumps(new, indent=2))
    env_path = study_dir / "environment.json"
    if not env_path.exists():  # the machine as the study first saw it
        _write_atomically(env_path, json.dumps(environment.collect(), indent=2))

    specs = run_order(params, seed)
    for spec in specs:  # before anything starts: a path nginx-uds could not bind
        check_socket_path(spec.mode, study_dir / spec.key)
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
    rows: dict[str, dict] = {}  # completed runs' rows, in the order they ran
    total = len(specs)  # grows by each re-run
    bar = tqdm(total=total, initial=done, disable=not progress, unit="run", dynamic_ncols=True)
    with ExitStack() as stack:
        stack.callback(bar.close)
        # topology netns: two namespaces as long as the study lasts, removed however it ends.
        two_hosts = stack.enter_context(netns.two_hosts()) if params.topology == "netns" else None
        # topology ssh: both hosts connected and checked, closed however it ends.
        ssh = None
        if params.topology == "ssh":
            proxies = tuple({get_mode(m).proxy for m in params.modes} - {None})
            ssh = stack.enter_context(
                remote.ssh_hosts(params.inventory, proxies, tuple(params.tools))
            )
        for block in range(1, params.repetitions + 1):
            todo = [spec for spec in specs if spec.block == block]
            for spec in todo:  # grows while it runs: re-runs go to the end of their block
                run_dir = study_dir / spec.key
                row = completed_row(run_dir)  # a resumed study: measured before (checked above)
                if row is None:
                    bar.set_description(f"block {spec.block}: {spec.key}")
                    row = execute(spec, run_dir, params, say=say, hosts=two_hosts, ssh=ssh)
                    rows[spec.key] = row
                    write_results(study_dir, list(rows.values()))
                    flag = "" if row["valid"] else f" INVALID: {row['invalid_reason']}"
                    summary = (
                        f"{row['rps']:,.0f} rps, cpu {row['cpu_total_pct']:.0f}%, "
                        f"others {row['foreign_cores']:.2f} cores{flag}"
                    )
                    bar.set_postfix_str(summary)
                    bar.update()
                    done += 1
                    say(f"[{done}/{total}] {spec.key}: {summary}", log_only=True)
                rows[spec.key] = row
                if BUSY in (row.get("invalid_reason") or "") and spec.attempt <= params.busy_reruns:
                    todo.append(replace(spec, attempt=spec.attempt + 1, position=len(todo) + 1))
                    total += 1
                    bar.total = total
    return write_results(study_dir, list(rows.values()))


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
