"""A study: the matrix of runs a params file describes, run and resumed as one.

Params are data (as crank's job definitions): modes x scenarios x tools x
concurrency x repetitions, plus run settings. Everything is validated before
anything starts. Each run's artifacts go to data/runs/<run-id>/<run-key>/;
results.csv is rebuilt from the completed runs after each one, atomically, so
an interrupted study loses at most the run in flight and resumes where it was.
"""

import csv
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import environment
from .errors import BadInput
from .loadgen import GENERATORS
from .modes import LaunchOptions, get_mode
from .paths import RUNS
from .run import RunSpec, completed_row, execute
from .scenarios import get_scenario

REQUIRED = ("modes", "scenarios", "tools", "concurrency", "duration_s", "warmup_s", "repetitions")
OPTIONAL = {
    "sample_interval_s": 0.5,  # CPU monitor period
    "access_log": False,  # proxy access logs
    "url": None,  # external / IIS modes
    "watch": [],  # external: process names to sample as "server"
    "allow_remote": False,  # external: permit a non-loopback URL
    "app_args": [],  # extra options for the test app, e.g. ["--log-level", "Information"]
    "description": "",
}
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

RESULT_COLUMNS = [
    "run_key", "mode", "scenario", "tool", "tool_version", "concurrency", "repetition",
    "started_at", "duration_target_s", "warmup_s", "duration_s", "requests", "rps",
    "latency_mean_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_max_ms",
    "non_2xx", "errors", "bytes_read", "server_requests", "count_diff_pct",
    "cpu_total_pct", "cpu_total_pct_max", "cpu_server_cores", "cpu_proxy_cores",
    "cpu_loadgen_cores", "rss_server_mb", "cpu_samples", "cpu_sampler_cores", "machine_cores",
]  # fmt: skip


def _as_list(key: str, value) -> list:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise BadInput(f"params key {key!r} is an empty list; give at least one value")
    return items


def _number(key: str, value, *, minimum: float, integer: bool = False):
    kind = "an integer" if integer else "a number"
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < minimum:
        raise BadInput(f"params key {key!r} must be {kind} >= {minimum}, got {value!r}")
    return value


@dataclass
class StudyParams:
    modes: list[str]
    scenarios: list[str]
    tools: list[str]
    concurrency: list[int]
    duration_s: float
    warmup_s: float
    repetitions: int
    sample_interval_s: float = 0.5
    options: LaunchOptions = field(default_factory=LaunchOptions)
    description: str = ""

    @classmethod
    def from_dict(cls, raw) -> "StudyParams":
        """Validate a params mapping; BadInput names the first problem and what is allowed."""
        if not isinstance(raw, dict):
            raise BadInput("params must be a mapping of keys to values")
        missing = [k for k in REQUIRED if k not in raw]
        if missing:
            raise BadInput(f"params missing key(s): {', '.join(missing)}")
        unknown = sorted(set(raw) - set(REQUIRED) - set(OPTIONAL))
        if unknown:
            allowed = ", ".join([*REQUIRED, *OPTIONAL])
            raise BadInput(f"unknown params key(s): {', '.join(unknown)}; allowed: {allowed}")
        p = {**OPTIONAL, **raw}
        modes = [str(m) for m in _as_list("modes", p["modes"])]
        scenarios = [str(s) for s in _as_list("scenarios", p["scenarios"])]
        tools = [str(t) for t in _as_list("tools", p["tools"])]
        for t in tools:
            if t not in GENERATORS:
                raise BadInput(f"unknown tool {t!r}; allowed: {', '.join(sorted(GENERATORS))}")
        for s in scenarios:
            get_scenario(s)
        opts = LaunchOptions(
            app_args=[str(a) for a in p["app_args"] or []],
            access_log=bool(p["access_log"]),
            url=p["url"],
            watch=[str(w) for w in p["watch"] or []],
            allow_remote=bool(p["allow_remote"]),
        )
        for m in modes:
            get_mode(m).check(opts)
        return cls(
            modes=modes,
            scenarios=scenarios,
            tools=tools,
            concurrency=[
                _number("concurrency", c, minimum=1, integer=True)
                for c in _as_list("concurrency", p["concurrency"])
            ],
            duration_s=float(_number("duration_s", p["duration_s"], minimum=1)),
            warmup_s=float(_number("warmup_s", p["warmup_s"], minimum=0)),
            repetitions=_number("repetitions", p["repetitions"], minimum=1, integer=True),
            sample_interval_s=float(
                _number("sample_interval_s", p["sample_interval_s"], minimum=0.05)
            ),
            options=opts,
            description=str(p["description"] or ""),
        )

    @classmethod
    def from_file(cls, path: Path, overrides: dict | None = None) -> "StudyParams":
        """Params from a YAML file, with command-line `overrides` applied before validation."""
        path = Path(path)
        if not path.is_file():
            raise BadInput(f"params file {path} not found")
        try:
            raw = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            first_line = str(e).splitlines()[0]
            raise BadInput(f"params file {path} is not valid YAML: {first_line}") from None
        if overrides and isinstance(raw, dict):
            raw = {**raw, **overrides}
        return cls.from_dict(raw)

    def runs(self) -> list[RunSpec]:
        """The matrix, repetitions outermost so a partial study has every cell once first."""
        return [
            RunSpec(m, s, t, c, r, self.duration_s, self.warmup_s)
            for r, m, s, t, c in itertools.product(
                range(1, self.repetitions + 1),
                self.modes,
                self.scenarios,
                self.tools,
                self.concurrency,
            )
        ]


def check_run_id(run_id: str) -> str:
    if not RUN_ID.match(run_id or ""):
        raise BadInput(f"run id {run_id!r}: use letters, digits, '.', '_' and '-'")
    return run_id


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


def run_study(
    params: StudyParams,
    run_id: str,
    runs_dir: Path = RUNS,
    progress: bool = True,
) -> Path:
    """Run every pending run of the matrix; returns the path of results.csv."""
    from tqdm import tqdm  # plain text: readable in a terminal, a notebook and papermill logs

    study_dir = Path(runs_dir) / check_run_id(run_id)
    study_dir.mkdir(parents=True, exist_ok=True)
    env_path = study_dir / "environment.json"
    if not env_path.exists():  # the machine as the study first saw it
        env_path.write_text(json.dumps(environment.collect(), indent=2))
    (study_dir / "params.json").write_text(
        json.dumps({**params.__dict__, "options": params.options.__dict__}, indent=2)
    )
    specs = params.runs()
    # Rows of runs completed earlier (a resumed study), read once; None = pending.
    rows = {s.key: completed_row(study_dir / s.key) for s in specs}
    pending = [s for s in specs if rows[s.key] is None]

    def completed() -> list[dict]:  # in matrix order
        return [row for row in rows.values() if row is not None]

    done = len(specs) - len(pending)
    bar = tqdm(total=len(specs), initial=done, disable=not progress, unit="run", dynamic_ncols=True)
    try:
        for spec in pending:
            bar.set_description(spec.key)
            row = execute(spec, study_dir / spec.key, params.options, params.sample_interval_s)
            rows[spec.key] = row
            write_results(study_dir, completed())
            bar.set_postfix(rps=f"{row['rps']:.0f}", cpu=f"{row['cpu_total_pct']:.0f}%")
            bar.update()
    finally:
        bar.close()
    return write_results(study_dir, completed())
