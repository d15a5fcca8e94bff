"""A study's run folder, data/runs/<run-id>/: what it records (params.json, environment.json,
results.csv, progress.log), the lock one process holds on it, and the checks a resume passes.

A run folder only ever holds rows measured with the settings its params.json states, on the
processor its environment.json names: resuming with other settings or on another processor is
refused, and one process at a time holds a folder (a lock the kernel releases when that
process dies). What a stopping rule lets a resume change (a raised time budget) it says
itself (harness/stopping.py).
"""

import fcntl
import json
import os
import shutil
import sys
import tarfile
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__, results
from ..catalog import get_mode
from ..errors import BadInput, HostbenchError
from ..params import NOT_MEASURED, PARAMS_FILE, SKIPPED_SUB_STUDIES, StudyParams, fingerprint
from ..params import optional as optional_keys
from . import environment
from .measure.run import read_json

LOCK_FILE = ".lock"
PROGRESS_FILE = "progress.log"  # one line per completed run
ENVIRONMENT_FILE = "environment.json"
LAUNCH_DIR = "launch__r{block}"  # a block's launch: each mode's logs, configs and warm-ups
# A committed run's window folders, packed by scripts/archive-runs.sh.
ARCHIVE = "runs.tar.gz"
# What a run folder of a discarded study holds besides run folders.
STUDY_FILES = (
    "results.csv", PARAMS_FILE, ENVIRONMENT_FILE, "ratios.csv", PROGRESS_FILE, "design.json",
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
        since = datetime.now(UTC).isoformat(timespec="seconds")
        self._file.write(f"process {os.getpid()} ({command}), since {since}\n")
        self._file.flush()
        return self

    def __exit__(self, *exc):
        self._file.close()  # releases the lock
        return False


def recorded(params: StudyParams, seed: int) -> dict:
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


def changes(old: dict, new: dict, accepted: frozenset[str] = frozenset()) -> list[str]:
    """Keys whose values differ between two params.json mappings (descriptive keys aside, and
    the `accepted` ones a stopping rule lets a resume change), as "key (old -> new)"."""
    # What is derived from the keys (the sub-studies skipped follow sub_studies) is not compared.
    keys = set(old) | set(new)
    keys = sorted(keys - set(NOT_MEASURED) - {"fingerprint", SKIPPED_SUB_STUDIES} - accepted)
    defaults = optional_keys()  # a key newer than a record: its default then
    before, after = ({k: p.get(k, defaults.get(k)) for k in keys} for p in (old, new))
    return [f"{k} ({before[k]!r} -> {after[k]!r})" for k in keys if before[k] != after[k]]


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json(path: Path, record: dict) -> None:
    write_atomically(path, json.dumps(record, indent=2))


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


def make_study_dir(study_dir: Path) -> None:
    try:
        study_dir.mkdir(parents=True, exist_ok=True)
        probe = study_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except FileExistsError:
        raise BadInput(f"runs folder: {study_dir} or a folder above it is a file") from None
    except OSError as e:
        raise BadInput(f"runs folder {study_dir} is not writable: {e.strerror}") from None


def read_record(path: Path) -> dict | None:
    """A run folder's JSON record (params.json, design.json, ...); None when there is none."""
    return read_json(path, "use another --run-id")


def environment_of(params: StudyParams) -> dict:
    """What record_environment records of `params` for this run alone: the test app's
    runtimes, whether a mode is on TLS, the runtime variants it launches."""
    return {"runtimes": params.runtime_builds, "tls": any(get_mode(m).tls for m in params.modes),
            "variants": params.variant_builds}  # fmt: skip


def record_environment(study_dir: Path, ssh=None, programs=(), tools=(), runtimes=(),
                       tls: bool = False, variants=()) -> None:  # fmt: skip
    """environment.json: the machine as the study first saw it (a resumed study keeps it),
    with the test app's `runtimes` (params.runtime_builds), openssl's version where `tls` (a
    mode on TLS), the runtime `variants`' builds (params.variant_builds:
    environment.run_dependent); under topology ssh both hosts too, read there
    (environment.hosts_record)."""
    path = study_dir / ENVIRONMENT_FILE
    if path.exists():
        return
    record = environment.collect()
    record["testapp_runtimes"] = environment.testapp_runtimes(list(runtimes))
    record |= environment.run_dependent(tls, list(variants))
    if ssh is not None:
        record["hosts"] = environment.hosts_record(ssh, programs, list(tools))
    write_json(path, record)


def check_unpacked(study_dir: Path) -> None:
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


def check_same_processor(study_dir: Path) -> None:
    """A resumed run stays on the processor it was measured on: a ratio moves with the
    processor, and one run's rows are read as one machine's (environment.json keeps the
    first). A run over ssh records its hosts, not this machine, and is not checked here."""
    changed = environment.processor_changed(read_record(study_dir / ENVIRONMENT_FILE) or {})
    if changed:
        raise BadInput(
            f"run folder {study_dir} was measured on another processor ({changed}); resume it "
            "on that processor, or use a new --run-id, or --discard-old to delete its runs"
        )


def progress_writer(study_dir: Path, progress: bool):
    """say(line): to the terminal (above the progress bar) and to progress.log, which
    `make reproduce` follows while a notebook runs."""
    from tqdm import tqdm

    def say(line: str, log_only: bool = False) -> None:
        if progress and not log_only:
            tqdm.write(line)
        with open(study_dir / PROGRESS_FILE, "a") as log:
            log.write(line + "\n")

    return say
