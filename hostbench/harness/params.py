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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import yaml

from .. import __version__
from ..catalog import check_serves, get_mode, get_scenario
from ..errors import BadInput
from ..load import Load
from .loadgen import GENERATORS, check_connections
from .modes import LaunchOptions, check

REQUIRED = ("modes", "scenarios", "tools", "concurrency", "duration_s", "warmup_s", "repetitions")
OPTIONAL = {
    "description": "",
    "baseline": None,  # the mode ratios are taken to (analysis only); default: see baseline_for
    "seed": None,  # of the run order within blocks; None: a new one, recorded in params.json
    "sample_interval_s": 0.5,  # CPU monitor period
    "steady_tolerance_pct": 5.0,  # warm-up ends when 3 one-second windows agree within this
    # A fixed request count per run (ab/bombardier -n), one number or one per scenario
    # ({values: 5000000, templates: 1000000}; scenarios not named run for duration_s);
    # duration_s bounds it.
    "requests": None,
    # Requests per write (wrk only, TechEmpower's pipeline.lua), one number or one per
    # scenario ({plaintext: 16}; scenarios not named: 1).
    "pipeline": 1,
    "keepalive": True,  # false: a new connection per request (ab without -k)
    "loadgen_cpus": None,  # CPU ids for the load generator; the app and proxy get the others
    "access_log": False,  # proxy access logs
    "url": None,  # external / IIS modes
    "watch": [],  # external: process names to sample as "server"
    "allow_remote": False,  # external: permit a non-loopback URL
    "app_args": [],  # extra options for the test app, e.g. ["--log-level", "Information"]
    # nginx's upstream keep-alive pool (modes with one, nginx-keepalive): idle connections kept
    # per worker; null: the catalog's NGINX_KEEPALIVE.
    "nginx_keepalive_pool": None,
    "nginx_workers": None,  # nginx worker processes; null: one per core nginx may run on
    # Smaller studies the notebook runs beside this one, each as overrides of these params,
    # e.g. {calibration: {concurrency: [1, 2, 4, 8]}, sensitivity: {tools: [bombardier]}}.
    "sub_studies": {},
    "app_env": {},  # environment variables for the test app, names to strings: {DOTNET_X: "1"}
    # Named settings of the test app, each a cell of its own (in the run key and results.csv):
    # {name: {app_args: [...], app_env: {...}}}, added to app_args/app_env; {} = none.
    "variants": {},
    # Scenarios that run under some modes only: {values-minimal: [kestrel]}; others: every mode.
    "scenario_modes": {},
    # A smoke run (the quick profiles): it checks the pipeline; its numbers are not evidence,
    # so its report writes no verdicts and no headline findings.
    "smoke": False,
    # A run shorter than this is invalid: too short to measure (raise requests or duration_s).
    "min_duration_s": 5.0,
    # The quiet-machine gate: before each run, wait up to quiet_wait_s until processes the
    # harness did not start use less than quiet_max_cores (and steal is below
    # quiet_max_steal_pct); a run during which they used more is invalid and re-run at the end
    # of its block, busy_reruns times at most. quiet_max_cores null: recorded, not enforced.
    "quiet_max_cores": 0.1,
    "quiet_max_steal_pct": 5.0,
    "quiet_wait_s": 120.0,
    "busy_reruns": 2,
    # A run whose warm-up never reached steady state is invalid (left out of the analysis).
    "require_steady": True,
    # Where the load generator and the server run (docs/hosts.md): local, over this machine's
    # loopback; netns, two hosts on this machine (network namespaces joined by a veth pair).
    "topology": "local",
}
TOPOLOGIES = ("local", "netns")
# Keys added after runs were recorded: part of a run's settings only when set, so the
# fingerprints of runs measured before them stay as they were.
SET_ONLY = ("nginx_keepalive_pool", "nginx_workers")
# Keys that describe or explain a study but do not change what a run measures.
NOT_MEASURED = (
    "description", "baseline", "seed", "sub_studies", "smoke", "quiet_wait_s", "busy_reruns",
)  # fmt: skip
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
VARIANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,39}$")  # no "_" or ".": run keys stay parseable
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
VARIANT_KEYS = ("app_args", "app_env")


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


def _env(key: str, value) -> dict[str, str]:
    """A mapping of environment variable names to string values."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadInput(f"params key {key!r} must be a mapping of names to strings, got {value!r}")
    for name, v in value.items():
        if not isinstance(name, str) or not ENV_NAME.match(name):
            raise BadInput(f"params key {key!r}: {name!r} is not an environment variable name")
        if not isinstance(v, str):
            raise BadInput(
                f"params key {key!r}: {name} must be a string (quote it: '{v}'), got {v!r}"
            )
    return dict(value)


def _per_scenario(key: str, value, scenarios: list[str], check) -> int | dict[str, int] | None:
    """One value for every scenario, or a mapping scenario -> value for some of them."""
    if not isinstance(value, dict):
        return check(key, value)
    if not value:
        raise BadInput(f"params key {key!r} is an empty mapping; name at least one scenario")
    unknown = [sc for sc in value if sc not in scenarios]
    if unknown:
        raise BadInput(
            f"params key {key!r} names scenario {unknown[0]!r}, not one of this study's "
            f"{', '.join(scenarios)}"
        )
    return {sc: check(f"{key}.{sc}", v) for sc, v in value.items()}


def _count(key: str, value) -> int:
    return _number(key, value, minimum=1, integer=True)


def _variants(value) -> dict[str, dict]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadInput(
            f"params key 'variants' must map names to settings ({{name: {{app_args: [...], "
            f"app_env: {{...}}}}}}), got {value!r}"
        )
    out = {}
    for name, body in value.items():
        if not isinstance(name, str) or not VARIANT.match(name):
            raise BadInput(
                f"variant name {name!r}: use up to 40 letters, digits and '-', "
                "starting with a letter or digit"
            )
        body = {} if body is None else body
        if not isinstance(body, dict):
            raise BadInput(f"variant {name!r} must be a mapping with app_args and/or app_env")
        unknown = sorted(set(body) - set(VARIANT_KEYS))
        if unknown:
            raise BadInput(
                f"variant {name!r}: unknown key(s) {', '.join(map(str, unknown))}; "
                f"allowed: {', '.join(VARIANT_KEYS)}"
            )
        out[name] = {
            "app_args": _strings(f"variants.{name}.app_args", body.get("app_args")),
            "app_env": _env(f"variants.{name}.app_env", body.get("app_env")),
        }
    return out


def _scenario_modes(value, modes: list[str], scenarios: list[str]) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadInput(
            f"params key 'scenario_modes' must map scenarios to lists of modes, got {value!r}"
        )
    out = {}
    for scenario, only in value.items():
        if scenario not in scenarios:
            raise BadInput(
                f"params key 'scenario_modes' names scenario {scenario!r}, not one of this "
                f"study's {', '.join(scenarios)}"
            )
        only = [str(m) for m in _as_list(f"scenario_modes.{scenario}", only)]
        only = _unique(f"scenario_modes.{scenario}", only)
        stray = [m for m in only if m not in modes]
        if stray:
            raise BadInput(
                f"params key 'scenario_modes': {scenario} lists mode {stray[0]!r}, not one of "
                f"this study's {', '.join(modes)}"
            )
        out[scenario] = only
    return out


def _nginx_setting(key: str, p: dict, modes: list[str]) -> int | None:
    """A count for the nginx modes among `modes` (null: nginx's default here); refused when
    no mode it shapes runs, since it would change nothing."""
    value = p[key]
    if value is None:
        return None
    value = _number(key, value, minimum=1, integer=True)
    pooled = key == "nginx_keepalive_pool"
    shaped = [
        m
        for m in modes
        if get_mode(m).proxy == "nginx" and (get_mode(m).keepalive is not None or not pooled)
    ]
    if not shaped:
        which = "an nginx mode with an upstream pool (nginx-keepalive)" if pooled else "nginx"
        raise BadInput(f"params key {key!r} shapes {which}, but no such mode is in {modes}")
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
    requests: int | dict[str, int] | None = None  # one count, or one per scenario
    pipeline: int | dict[str, int] = 1  # one depth, or one per scenario
    keepalive: bool = True
    loadgen_cpus: list[int] | None = None
    variants: dict[str, dict] = field(default_factory=dict)
    scenario_modes: dict[str, list[str]] = field(default_factory=dict)
    options: LaunchOptions = field(default_factory=LaunchOptions)
    sub_studies: dict[str, dict] = field(default_factory=dict)
    smoke: bool = False
    min_duration_s: float = 5.0
    quiet_max_cores: float | None = 0.1
    quiet_max_steal_pct: float = 5.0
    quiet_wait_s: float = 120.0
    busy_reruns: int = 2
    require_steady: bool = True
    topology: str = "local"

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
            app_env=_env("app_env", p["app_env"]),
            nginx_keepalive_pool=_nginx_setting("nginx_keepalive_pool", p, modes),
            nginx_workers=_nginx_setting("nginx_workers", p, modes),
        )
        variants = _variants(p["variants"])
        scenario_modes = _scenario_modes(p["scenario_modes"], modes, scenarios)
        for m in modes:
            mode = get_mode(m)
            check(mode, opts)
            if variants and mode.server != "TestApp":
                raise BadInput(
                    f"params key 'variants' sets test-app options, but mode {m!r} runs "
                    f"{mode.server}; give variants to TestApp modes only"
                )
            for sc in scenarios:
                if m not in scenario_modes.get(sc, modes):
                    continue
                try:
                    check_serves(mode, get_scenario(sc))
                except BadInput as e:
                    raise BadInput(
                        f"{e} (params key scenario_modes can run a scenario under some modes only)"
                    ) from None
        baseline = p["baseline"]
        if baseline is not None and baseline not in modes:
            raise BadInput(f"params key 'baseline' {baseline!r} is not one of the modes {modes}")
        seed = p["seed"]
        if seed is not None:
            seed = _number("seed", seed, minimum=0, integer=True)
        requests = p["requests"]
        if requests is not None:
            requests = _per_scenario("requests", requests, scenarios, _count)
        pipeline = _per_scenario("pipeline", p["pipeline"], scenarios, _count)
        keepalive = _bool("keepalive", p["keepalive"])
        concurrency = _unique(
            "concurrency",
            [
                _number("concurrency", c, minimum=1, integer=True)
                for c in _as_list("concurrency", p["concurrency"])
            ],
        )
        duration_s = float(_number("duration_s", p["duration_s"], minimum=1))
        min_duration_s = float(_number("min_duration_s", p["min_duration_s"], minimum=0))
        if duration_s < min_duration_s:
            raise BadInput(
                f"params key 'duration_s' is {duration_s:g}, shorter than min_duration_s "
                f"{min_duration_s:g}: every run would be invalid; raise duration_s"
            )
        for t, c in itertools.product(tools, concurrency):
            check_connections(c, t)  # what this machine can open
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
        params = cls(
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
            pipeline=pipeline,
            keepalive=keepalive,
            loadgen_cpus=_cpus(p["loadgen_cpus"]),
            variants=variants,
            scenario_modes=scenario_modes,
            options=opts,
            sub_studies=sub_studies,
            smoke=_bool("smoke", p["smoke"]),
            min_duration_s=min_duration_s,
            quiet_max_cores=None
            if p["quiet_max_cores"] is None
            else float(_number("quiet_max_cores", p["quiet_max_cores"], minimum=0.01)),
            quiet_max_steal_pct=float(
                _number("quiet_max_steal_pct", p["quiet_max_steal_pct"], minimum=0)
            ),
            quiet_wait_s=float(_number("quiet_wait_s", p["quiet_wait_s"], minimum=0)),
            busy_reruns=_number("busy_reruns", p["busy_reruns"], minimum=0, integer=True),
            require_steady=_bool("require_steady", p["require_steady"]),
            topology=_topology(p["topology"], modes),
        )
        # Each tool can fire each scenario's load (a Load checks itself as it is made): a load
        # no tool can fire is refused here, before anything starts.
        for sc, t, c in itertools.product(scenarios, tools, concurrency):
            try:
                params.load(sc, t, c)
            except BadInput as e:
                raise BadInput(f"{e} (scenario {sc})") from None
        return params

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

    def requests_for(self, scenario: str) -> int | None:
        """The fixed request count of a scenario's runs; None: they run for duration_s."""
        return _for(self.requests, scenario, None)

    def pipeline_for(self, scenario: str) -> int:
        """Requests per write in a scenario's runs (1: no pipelining)."""
        return _for(self.pipeline, scenario, 1)

    def load(self, scenario: str, tool: str, concurrency: int) -> Load:
        """The load of a cell's runs (checked as it is made; BadInput names the problem)."""
        cpus = self.loadgen_cpus
        return Load(
            tool,
            concurrency,
            self.duration_s,
            requests=self.requests_for(scenario),
            warmup_s=self.warmup_s,
            keepalive=self.keepalive,
            pipeline=self.pipeline_for(scenario),
            cpus=tuple(cpus) if cpus else None,
            path=get_scenario(scenario).path,
        )

    def options_for(self, variant: str) -> LaunchOptions:
        """The launch options of a variant's runs: the study's, then the variant's added."""
        if not variant:
            return self.options
        v = self.variants[variant]
        return replace(
            self.options,
            app_args=[*self.options.app_args, *v["app_args"]],
            app_env={**self.options.app_env, **v["app_env"]},
        )

    def cells(self) -> list[tuple[str, str, str, str, int]]:
        """Every (mode, variant, scenario, tool, concurrency) a block runs once.

        variant is "" when the study has none; scenario_modes leaves out the modes a scenario
        does not run under.
        """
        variants = list(self.variants) or [""]
        return [
            (m, v, sc, t, c)
            for m, v, sc, t, c in itertools.product(
                self.modes, variants, self.scenarios, self.tools, self.concurrency
            )
            if m in self.scenario_modes.get(sc, self.modes)
        ]

    @property
    def baseline_mode(self) -> str:
        """The mode ratios are taken to: the params' baseline, else the first mode."""
        return self.baseline or self.modes[0]

    def measured_settings(self) -> dict:
        """What shapes every run's measurement, besides its cell: resuming must not change it."""
        return {
            "duration_s": self.duration_s,
            "warmup_s": self.warmup_s,
            "steady_tolerance_pct": self.steady_tolerance_pct,
            "requests": self.requests,
            "pipeline": self.pipeline,
            "keepalive": self.keepalive,
            "sample_interval_s": self.sample_interval_s,
            "loadgen_cpus": self.loadgen_cpus,
            "min_duration_s": self.min_duration_s,
            "quiet_max_cores": self.quiet_max_cores,
            "quiet_max_steal_pct": self.quiet_max_steal_pct,
            "require_steady": self.require_steady,
            # Only when not the default, so runs recorded before the key keep their fingerprint.
            **({"topology": self.topology} if self.topology != "local" else {}),
            **{k: v for k, v in asdict(self.options).items() if k not in SET_ONLY or v is not None},
            "hostbench_version": __version__,
        }


def _topology(value, modes: list[str]) -> str:
    if value not in TOPOLOGIES:
        later = " (ssh, real hosts: not built yet)" if value == "ssh" else ""
        raise BadInput(f"params key 'topology' {value!r}{later}; allowed: {', '.join(TOPOLOGIES)}")
    external = [m for m in modes if get_mode(m).launch == "external"]
    if value == "netns" and external:
        raise BadInput(
            f"topology netns runs the servers the harness launches; {', '.join(external)} "
            "runs where you started it: use topology local"
        )
    return value


def _overlay(raw: dict, overrides: dict) -> dict:
    """A sub-study's params: the study's, with its overrides (and no sub-studies of its own)."""
    out = {**raw, **overrides, "sub_studies": {}}
    if "baseline" not in overrides and out.get("baseline") not in _as_list("modes", out["modes"]):
        out["baseline"] = None  # the study's baseline is not among the sub-study's modes
    return out


def _for(value, scenario: str, default):
    """A per-scenario setting's value for `scenario` (a plain value applies to all)."""
    if isinstance(value, dict):
        return value.get(scenario, default)
    return default if value is None else value


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
