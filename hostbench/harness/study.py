"""A study: the matrix of runs a params file describes, run in blocks and resumed as one.

Repetitions are blocks: each block runs every cell (mode x scenario x tool x
concurrency) once, in a random order drawn from a seed recorded in
params.json, so drift over the study cannot favour one mode. Each run's
artifacts go to data/runs/<run-id>/<run-key>/; results.csv is rebuilt from the
completed runs after each one, atomically, so an interrupted study loses at
most the run in flight and resumes where it was.

A run folder only ever holds rows measured with the settings its params.json
states: resuming with other settings is refused, and one process at a time
holds a folder (a lock the kernel releases when that process dies).
"""

import csv
import fcntl
import itertools
import json
import os
import random
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__
from ..catalog import get_mode
from ..errors import BadInput, HostbenchError
from ..paths import RUNS
from . import environment
from .modes import check_socket_path
from .params import NOT_MEASURED, StudyParams, check_run_id, fingerprint
from .run import RunSpec, completed_row, execute, read_json, run_settings

RESULT_COLUMNS = [
    "run_key", "mode", "scenario", "tool", "tool_version", "concurrency", "block", "position",
    "started_at", "duration_target_s", "requests_target", "keepalive", "warmup_max_s", "warmup_s",
    "warmup_steady", "duration_s", "requests", "rps", "latency_mean_ms", "latency_p50_ms",
    "latency_p90_ms", "latency_p99_ms", "latency_max_ms", "non_2xx", "errors", "bytes_read",
    "server_requests", "count_diff_pct", "valid", "invalid_reason", "cpu_total_pct",
    "cpu_total_pct_max", "cpu_server_cores", "cpu_proxy_cores", "cpu_loadgen_cores",
    "rss_server_mb", "cpu_samples", "cpu_sampler_cores", "machine_cores", "loadgen_cpus",
    "server_cpus", "loadgen_limited", "load_avg_1m", "cpu_freq_mhz", "cpu_steal_pct",
    "fingerprint",
]  # fmt: skip
PARAMS_FILE = "params.json"
LOCK_FILE = ".lock"
PROGRESS_FILE = "progress.log"  # one line per completed run
# What a run folder of a discarded study holds besides run folders.
STUDY_FILES = ("results.csv", PARAMS_FILE, "environment.json", "ratios.csv", "progress.log")


def run_order(params: StudyParams, seed: int) -> list[RunSpec]:
    """Every run, block by block, each block's cells in a random order drawn from `seed`."""
    cells = list(
        itertools.product(params.modes, params.scenarios, params.tools, params.concurrency)
    )
    rng = random.Random(seed)
    specs = []
    for block in range(1, params.repetitions + 1):
        order = cells[:]
        rng.shuffle(order)
        specs += [RunSpec(*cell, block, i + 1) for i, cell in enumerate(order)]
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
    """results.csv from the completed runs' rows; replaced atomically."""
    path = study_dir / "results.csv"
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)
    return path


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
        check_socket_path(get_mode(spec.mode), study_dir / spec.key)
    # Rows of runs completed earlier (a resumed study), read once; None = pending.
    rows = {s.key: completed_row(study_dir / s.key) for s in specs}
    for spec in specs:
        row = rows[spec.key]
        if row is not None and row.get("fingerprint") != fingerprint(run_settings(spec, params)):
            raise BadInput(
                f"{study_dir / spec.key} was measured with other settings than params.json "
                "states; use a new --run-id, or --discard-old"
            )
    pending = [s for s in specs if rows[s.key] is None]

    def completed() -> list[dict]:  # in run order
        return [rows[s.key] for s in specs if rows[s.key] is not None]

    bar = tqdm(
        total=len(specs),
        initial=len(specs) - len(pending),
        disable=not progress,
        unit="run",
        dynamic_ncols=True,
    )
    try:
        for spec in pending:
            bar.set_description(f"block {spec.block}: {spec.key}")
            row = execute(spec, study_dir / spec.key, params)
            rows[spec.key] = row
            write_results(study_dir, completed())
            flag = "" if row["valid"] else f" INVALID: {row['invalid_reason']}"
            summary = f"{row['rps']:,.0f} rps, cpu {row['cpu_total_pct']:.0f}%{flag}"
            bar.set_postfix_str(summary)
            bar.update()
            done = sum(r is not None for r in rows.values())
            # For whoever runs the notebook: `make reproduce` shows these lines in the terminal.
            with open(study_dir / PROGRESS_FILE, "a") as log:
                log.write(f"[{done}/{len(specs)}] {spec.key}: {summary}\n")
    finally:
        bar.close()
    return write_results(study_dir, completed())
