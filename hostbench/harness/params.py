"""A study's parameters: validated before anything starts, and the settings each run carries.

Params are data (as crank's job definitions): modes x scenarios x tools x
concurrency, repeated in blocks, plus the settings that shape every run. A
profile file may say `extends: paper` and state only what differs. Every key
has an effect or is refused, and each problem is one line naming what was
wrong and what is allowed.
"""

import hashlib
import itertools
import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from .. import __version__
from ..catalog import check_serves, get_mode, get_scenario
from ..errors import BadInput
from .loadgen import GENERATORS, Load
from .modes import LaunchOptions, check

REQUIRED = ("modes", "scenarios", "tools", "concurrency", "duration_s", "warmup_s", "repetitions")
OPTIONAL = {
    "description": "",
    "baseline": None,  # the mode ratios are taken to (analysis only); default: see baseline_for
    "seed": None,  # of the run order within blocks; None: a new one, recorded in params.json
    "sample_interval_s": 0.5,  # CPU monitor period
    "steady_tolerance_pct": 5.0,  # warm-up ends when 3 one-second windows agree within this
    "requests": None,  # a fixed request count per run (ab/bombardier -n); duration_s bounds it
    "keepalive": True,  # false: a new connection per request (ab without -k)
    "loadgen_cpus": None,  # CPU ids for the load generator; the app and proxy get the others
    "access_log": False,  # proxy access logs
    "url": None,  # external / IIS modes
    "watch": [],  # external: process names to sample as "server"
    "allow_remote": False,  # external: permit a non-loopback URL
    "app_args": [],  # extra options for the test app, e.g. ["--log-level", "Information"]
    # Smaller studies the notebook runs beside this one, each as overrides of these params,
    # e.g. {calibration: {concurrency: [1, 2, 4, 8]}, sensitivity: {tools: [bombardier]}}.
    "sub_studies": {},
}
# Keys that describe or explain a study but do not change what a run measures.
NOT_MEASURED = ("description", "baseline", "seed", "sub_studies")
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _as_list(key: str, value) -> list:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise BadInput(f"params key {key!r} is an empty list; give at least one value")
    return items


def _unique(key: str, items: list) -> list:
    for item in items:
        if items.count(item) > 1:
            raise BadInput(f"params key {key!r} lists {item!r} twice; give each value once")
    return items


def _strings(key: str, value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadInput(f"params key {key!r} must be a list of strings, got {value!r}")
    return value


def _bool(key: str, value) -> bool:
    if not isinstance(value, bool):
        raise BadInput(f"params key {key!r} must be true or false, got {value!r}")
    return value


def _number(key: str, value, *, minimum: float, integer: bool = False):
    kind = "an integer" if integer else "a number"
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < minimum:
        raise BadInput(f"params key {key!r} must be {kind} >= {minimum}, got {value!r}")
    return value


def _cpus(value) -> list[int] | None:
    if value is None:
        return None
    available = sorted(os.sched_getaffinity(0))
    items = _as_list("loadgen_cpus", value)
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in items):
        raise BadInput(f"params key 'loadgen_cpus' must be a list of CPU ids, got {value!r}")
    unknown = [c for c in items if c not in available]
    if unknown or len(set(items)) >= len(available):
        raise BadInput(
            f"params key 'loadgen_cpus' {items}: give some, not all, of this machine's CPUs "
            f"{available} (the app and proxy get the rest)"
        )
    return sorted(set(items))


@dataclass
class StudyParams:
    modes: list[str]
    scenarios: list[str]
    tools: list[str]
    concurrency: list[int]
    duration_s: float
    warmup_s: float  # the longest warm-up; it ends earlier once throughput is steady
    repetitions: int  # blocks: every cell once per block, in a seeded random order
    description: str = ""
    baseline: str | None = None
    seed: int | None = None
    sample_interval_s: float = 0.5
    steady_tolerance_pct: float = 5.0
    requests: int | None = None
    keepalive: bool = True
    loadgen_cpus: list[int] | None = None
    options: LaunchOptions = field(default_factory=LaunchOptions)
    sub_studies: dict[str, dict] = field(default_factory=dict)

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
        modes = _unique("modes", [str(m) for m in _as_list("modes", p["modes"])])
        scenarios = _unique("scenarios", [str(s) for s in _as_list("scenarios", p["scenarios"])])
        tools = _unique("tools", [str(t) for t in _as_list("tools", p["tools"])])
        for t in tools:
            if t not in GENERATORS:
                raise BadInput(f"unknown tool {t!r}; allowed: {', '.join(sorted(GENERATORS))}")
        for s in scenarios:
            get_scenario(s)
        url = p["url"]
        if url is not None and not isinstance(url, str):
            raise BadInput(
                f"params key 'url' must be a URL like http://127.0.0.1:5000/, got {url!r}"
            )
        opts = LaunchOptions(
            app_args=_strings("app_args", p["app_args"]),
            access_log=_bool("access_log", p["access_log"]),
            url=url,
            watch=_strings("watch", p["watch"]),
            allow_remote=_bool("allow_remote", p["allow_remote"]),
        )
        for m in modes:
            check(get_mode(m), opts)
            for sc in scenarios:
                check_serves(get_mode(m), get_scenario(sc))
        baseline = p["baseline"]
        if baseline is not None and baseline not in modes:
            raise BadInput(f"params key 'baseline' {baseline!r} is not one of the modes {modes}")
        seed = p["seed"]
        if seed is not None:
            seed = _number("seed", seed, minimum=0, integer=True)
        for key in ("duration_s", "warmup_s"):
            value = p[key]
            whole = [t for t in tools if GENERATORS[t].whole_seconds]
            if whole and isinstance(value, float) and not value.is_integer():
                raise BadInput(
                    f"params key {key!r} is {value}, but {', '.join(whole)} take whole seconds"
                )
        requests = p["requests"]
        if requests is not None:
            requests = _number("requests", requests, minimum=1, integer=True)
        keepalive = _bool("keepalive", p["keepalive"])
        concurrency = _unique(
            "concurrency",
            [
                _number("concurrency", c, minimum=1, integer=True)
                for c in _as_list("concurrency", p["concurrency"])
            ],
        )
        duration_s = float(_number("duration_s", p["duration_s"], minimum=1))
        for t, c in itertools.product(tools, concurrency):  # each tool can fire this load
            GENERATORS[t]().check(Load(c, duration_s, requests, keepalive=keepalive))
        sub_studies = p["sub_studies"] or {}
        if not isinstance(sub_studies, dict) or not all(
            isinstance(k, str) and RUN_ID.match(k) and isinstance(v, dict)
            for k, v in sub_studies.items()
        ):
            raise BadInput(
                "params key 'sub_studies' must map names (letters, digits, '-') to params "
                f"overrides, got {sub_studies!r}"
            )
        for name, overrides in sub_studies.items():
            if "sub_studies" in overrides:
                raise BadInput(f"sub-study {name!r}: a sub-study cannot have sub-studies")
            try:
                cls.from_dict(_overlay(raw, overrides))
            except BadInput as e:
                raise BadInput(f"sub-study {name!r}: {e}") from None
        return cls(
            modes=modes,
            scenarios=scenarios,
            tools=tools,
            concurrency=concurrency,
            duration_s=duration_s,
            warmup_s=float(_number("warmup_s", p["warmup_s"], minimum=0)),
            repetitions=_number("repetitions", p["repetitions"], minimum=1, integer=True),
            description=str(p["description"] or ""),
            baseline=baseline,
            seed=seed,
            sample_interval_s=float(
                _number("sample_interval_s", p["sample_interval_s"], minimum=0.05)
            ),
            steady_tolerance_pct=float(
                _number("steady_tolerance_pct", p["steady_tolerance_pct"], minimum=0.1)
            ),
            requests=requests,
            keepalive=keepalive,
            loadgen_cpus=_cpus(p["loadgen_cpus"]),
            options=opts,
            sub_studies=sub_studies,
        )

    @classmethod
    def from_file(cls, path: Path, overrides: dict | None = None) -> "StudyParams":
        """Params from a YAML file (following `extends:`), with `overrides` applied last."""
        raw = load_yaml(Path(path))
        if overrides:
            raw = {**raw, **overrides}
        return cls.from_dict(raw)

    def to_dict(self) -> dict:
        """The params as a params file would state them (round-trips through from_dict)."""
        out = {k: v for k, v in asdict(self).items() if k != "options"}
        out.update(asdict(self.options))
        return out

    def sub_study(self, name: str) -> "StudyParams":
        """The params of sub-study `name`: these params with its overrides."""
        if name not in self.sub_studies:
            allowed = ", ".join(self.sub_studies) or "none"
            raise BadInput(f"no sub-study {name!r} in these params; allowed: {allowed}")
        return StudyParams.from_dict(_overlay(self.to_dict(), self.sub_studies[name]))

    @property
    def baseline_mode(self) -> str:
        """The mode ratios are taken to: the params' baseline, else the catalog's default."""
        from ..catalog import DEFAULT_BASELINE

        if self.baseline:
            return self.baseline
        return DEFAULT_BASELINE if DEFAULT_BASELINE in self.modes else self.modes[0]

    def measured_settings(self) -> dict:
        """What shapes every run's measurement, besides its cell: resuming must not change it."""
        return {
            "duration_s": self.duration_s,
            "warmup_s": self.warmup_s,
            "steady_tolerance_pct": self.steady_tolerance_pct,
            "requests": self.requests,
            "keepalive": self.keepalive,
            "sample_interval_s": self.sample_interval_s,
            "loadgen_cpus": self.loadgen_cpus,
            **asdict(self.options),
            "hostbench_version": __version__,
        }


def _overlay(raw: dict, overrides: dict) -> dict:
    """A sub-study's params: the study's, with its overrides (and no sub-studies of its own)."""
    out = {**raw, **overrides, "sub_studies": {}}
    if "baseline" not in overrides and out.get("baseline") not in _as_list("modes", out["modes"]):
        out["baseline"] = None  # the study's baseline is not among the sub-study's modes
    return out


def fingerprint(settings: dict) -> str:
    """A short stable hash of a settings mapping."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_yaml(path: Path, _seen: tuple[Path, ...] = ()) -> dict:
    """A params file as a mapping; `extends: NAME` first loads NAME.yaml beside it."""
    if not path.is_file():
        raise BadInput(f"params file {path} not found")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        first_line = str(e).splitlines()[0]
        raise BadInput(f"params file {path} is not valid YAML: {first_line}") from None
    except OSError as e:
        raise BadInput(f"params file {path} cannot be read: {e.strerror}") from None
    if not isinstance(raw, dict):
        raise BadInput(f"params file {path} must be a mapping of keys to values")
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    if not isinstance(parent, str) or "/" in parent:
        raise BadInput(f"params file {path}: 'extends' names a profile beside it, got {parent!r}")
    parent_path = path.with_name(f"{parent}.yaml")
    if parent_path in (*_seen, path):
        raise BadInput(f"params file {path}: 'extends' makes a loop through {parent_path.name}")
    return {**load_yaml(parent_path, (*_seen, path)), **raw}


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        raise BadInput(
            f"run id {run_id!r}: use up to 64 letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return run_id
