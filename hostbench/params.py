"""A study's parameters as data: every key declared once, validated once, read back typed.

Params are data (as crank's job definitions): modes x scenarios x tools x concurrency,
repeated in blocks, plus the settings that shape every run. A profile file may say
`extends: paper` and state only what differs. Every key has an effect or is refused, and
each problem is one line naming what was wrong and what is allowed.

Each key's declaration in KEYS states what its values may be (a Rule: type, range or
choices; its form: one value, a list, or one per scenario); validation is one loop over the
declarations, then the rules between keys (_check_together), and docs/params.md is written
from the same declarations (`python -m hostbench docs`). A cell's Load is built (and checked)
once, when the params are, and kept. This module is the core: the harness adds what only a
launch can check (harness/params.py check_runnable: the tools' own limits, this machine's
CPUs and connections, Windows-only modes), and the analysis reads a run's params.json back
as StudyParams (StudyParams.from_run). Nothing here imports the harness.
"""

import copy
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import yaml

from . import __version__
from .catalog import MODES, SCENARIOS, ModesIn, check_serves, get_mode, get_scenario
from .errors import BadInput
from .load import TOOLS, Load, tools_in_words, tools_with

PARAMS_FILE = "params.json"  # a run folder's params, as the harness recorded them
TOPOLOGIES = ("local", "netns", "ssh")
# The modes topology ssh runs: those whose catalog entry says so (read when checked).
SSH_MODES = ModesIn("ssh")
REQUIRED_KEY = object()  # the default of a key a params file must state
AS_DEFAULT = object()  # a key missing from an older params.json means its default
# A key's form: one value, a list of values (each once; one value alone is a list of one), or
# one value for every scenario or a mapping {scenario: value} for some of them.
ONE, LIST, PER_SCENARIO = "one", "list", "per scenario"


@dataclass(frozen=True)
class Rule:
    """What each value of a key may be: its type and its range or choices. Stated once: the
    validation checks it and docs/params.md writes it."""

    type: str  # int, float, bool or str
    minimum: float | None = None  # int and float: the least value allowed
    # str: the values allowed, or the registry whose names they are (read when checked, so a
    # name added to it is allowed); none: any string.
    choices: Collection[str] = ()
    noun: str = ""  # what a choice is called in an error ("unknown tool 'x'"), or what a str is

    @property
    def text(self) -> str:
        """The values allowed, in words (">= 1", "local, netns, ssh")."""
        if self.minimum is not None:
            return f">= {self.minimum}"
        return ", ".join(self.choices)

    def check(self, key: str, value):
        """The value, as the params hold it; BadInput (one line) when the rule refuses it."""
        if self.type == "bool":
            if not isinstance(value, bool):
                raise BadInput(f"params key {key!r} must be true or false, got {value!r}")
            return value
        if self.type == "str":
            if self.choices and (not isinstance(value, str) or value not in self.choices):
                raise BadInput(f"unknown {self.noun} {value!r}; allowed: {self.text}")
            if not isinstance(value, str):
                what = self.noun or "a string"
                raise BadInput(f"params key {key!r} must be {what}, got {value!r}")
            return value
        integer = self.type == "int"
        ok = isinstance(value, int) if integer else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or not math.isfinite(value) or value < self.minimum:
            kind = "an integer" if integer else "a number"
            raise BadInput(f"params key {key!r} must be {kind} >= {self.minimum}, got {value!r}")
        return value if integer else float(value)


@dataclass(frozen=True)
class Key:
    """One params key, declared once: its default, unit and meaning, and what its values may
    be (a Rule in a form, or a check of its own for a key shaped like no other). Validation
    and docs/params.md both read it from here."""

    name: str
    default: object
    unit: str
    meaning: str  # one sentence
    rule: Rule | None = None  # what each value may be; None: `check` decides
    form: str = ONE  # ONE, LIST or PER_SCENARIO
    null: str | None = None  # what null means where it is allowed ("": nothing to add)
    also: str = ""  # in words: the rules it obeys together with other keys (_check_together)
    check: Callable | None = None  # a key of its own shape: (key, value, earlier keys) -> value
    shape: str = ""  # the type of a key with a check of its own, as a params file writes it
    # What a params.json recorded before this key existed means: what the harness then did.
    before: object = AS_DEFAULT
    smoke: object = AS_DEFAULT  # what `smoke: true` makes it, unless the params state it

    @property
    def required(self) -> bool:
        return self.default is REQUIRED_KEY

    @property
    def type(self) -> str:
        """The type as a params file writes it ("list of int", "int, {scenario: int} or null")."""
        if self.rule is None:
            return self.shape
        t = self.rule.type
        parts = {ONE: [t], LIST: [f"list of {t}"], PER_SCENARIO: [t, f"{{scenario: {t}}}"]}
        kinds = parts[self.form] + (["null"] if self.null is not None else [])
        return " or ".join(kinds) if len(kinds) < 3 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"

    @property
    def allowed(self) -> str:
        """The values allowed, in words: the rule's, the rules with other keys, what null is."""
        if self.rule is None:
            return self.also
        null = f"null: {self.null}" if self.null else ""
        return "; ".join(t for t in (self.rule.text, self.also, null) if t)

    def read(self, value, earlier: dict):
        """The value checked against this declaration, as the params hold it; `earlier`: the keys
        declared before it, as read (a per-scenario key needs the scenarios)."""
        if self.rule is None:
            return self.check(self.name, value, earlier)
        if value is None and self.null is not None:
            return None
        if self.form == PER_SCENARIO:
            return _per_scenario(self.name, value, earlier["scenarios"], self.rule.check)
        if self.form == LIST:
            items = [] if value is None else value if isinstance(value, list) else [value]
            if not items and self.default != []:  # an empty list where none is the default
                raise BadInput(
                    f"params key {self.name!r} is an empty list; give at least one value"
                )
            return _unique(self.name, [self.rule.check(self.name, v) for v in items])
        return self.rule.check(self.name, value)


# Keys added after runs were recorded: part of a run's settings only when set, so the
# fingerprints of runs measured before them stay as they were.
SET_ONLY = ("nginx_keepalive_pool", "nginx_workers")
# Keys that describe or explain a study but do not change what a run measures.
NOT_MEASURED = (
    "description", "baseline", "seed", "sub_studies", "smoke", "quiet_wait_s", "busy_reruns",
)  # fmt: skip
# Keys that say how many units the schedule measures, not what a window measures.
SCHEDULE = ("repetitions", "windows", "focus", "target_halfwidth_pct", "max_repetitions",
            "max_minutes")  # fmt: skip
# What params.json holds besides the keys: the version that ran and the settings' hash.
RECORDED = ("hostbench_version", "fingerprint")
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
VARIANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,39}$")  # no "_" or ".": run keys stay parseable
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
VARIANT_KEYS = ("app_args", "app_env")
# variant_sweep's n in words: the values they stand for on a machine with `cores` CPUs.
SWEEP_WORDS = {"cores": lambda cores: cores, "cores-x2": lambda cores: 2 * cores}
SWEEP_KEYS = ("n", "variants", "cores", "values")  # cores, values: what params.json records


def machine_cores() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0))


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


def _strings(key: str, value, earlier=None) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadInput(f"params key {key!r} must be a list of strings, got {value!r}")
    return value


def _text(key: str, value, earlier=None) -> str:
    return str(value or "")


def _env(key: str, value, earlier=None) -> dict[str, str]:
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


def _variants(key: str, value, earlier=None) -> dict[str, dict]:
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
        _refuse_unknown(f"variant {name!r}", body, VARIANT_KEYS)
        out[name] = {
            "app_args": _strings(f"variants.{name}.app_args", body.get("app_args")),
            "app_env": _env(f"variants.{name}.app_env", body.get("app_env")),
        }
    return out


def _refuse_unknown(what: str, given: dict, allowed) -> None:
    """BadInput naming the keys of `given` that `allowed` lacks, and what is allowed."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise BadInput(
            f"{what}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(allowed)}"
        )


_COUNT = Rule("int", minimum=1)  # the sweep's n and cores


def _sweep(key: str, value, earlier=None) -> dict | None:
    """variant_sweep resolved on this machine: its n in words becomes `values`, with the
    `cores` they were read from; values already recorded (a params.json) stay as recorded."""
    if value is None:
        return None
    allowed = "cores, cores-x2, or a list of integers >= 1 (cores, cores-x2 among them)"
    if not isinstance(value, dict) or not {"n", "variants"} <= set(value):
        raise BadInput(f"params key 'variant_sweep' must be {{n: {allowed}, variants: {{...}}}}")
    _refuse_unknown("params key 'variant_sweep'", value, SWEEP_KEYS)
    n = value["n"]
    items = n if isinstance(n, list) and n else [n]
    if not all(v in SWEEP_WORDS or isinstance(v, int) for v in items):
        raise BadInput(f"params key 'variant_sweep.n' is {n!r}; allowed: {allowed}")
    words = [v for v in items if v in SWEEP_WORDS]
    cores = value.get("cores") or (machine_cores() if words else None)
    if cores is not None:
        cores = _COUNT.check("variant_sweep.cores", cores)
    if "values" in value:  # as a run recorded them, on the machine it ran on
        values = value["values"]
    elif isinstance(n, list):  # the values named, a word standing for its number
        values = [SWEEP_WORDS[v](cores) if v in SWEEP_WORDS else v for v in n]
    else:  # a word alone: 1 up to its number
        values = list(range(1, SWEEP_WORDS[n](cores) + 1))
    values = _unique("variant_sweep.n", [_COUNT.check("variant_sweep.n", v)
                                         for v in _as_list("variant_sweep.n", values)])  # fmt: skip
    templates = value["variants"]
    if not isinstance(templates, dict) or not templates:
        raise BadInput("params key 'variant_sweep.variants' must map names with {n} to settings")
    for name in templates:
        if "{n}" not in str(name):
            raise BadInput(f"variant_sweep template {name!r} must contain {{n}} in its name")
    return {"n": n, "cores": cores, "values": values, "variants": templates}


def expand_sweep(sweep: dict | None) -> dict[str, dict]:
    """The variants a resolved sweep makes: every template at every value, value by value."""
    if not sweep:
        return {}

    def put(text, n: int):
        if isinstance(text, str):
            return text.replace("{n}", str(n))
        if isinstance(text, list):
            return [put(t, n) for t in text]
        if isinstance(text, dict):
            return {k: put(v, n) for k, v in text.items()}
        return text

    return {put(name, n): put(body, n) for n in sweep["values"]
            for name, body in sweep["variants"].items()}  # fmt: skip


def _scenario_modes(key: str, value, earlier: dict) -> dict[str, list[str]]:
    """{scenario: modes}: this study's scenarios, each with some of its modes."""
    if value is None:
        return {}
    modes, scenarios = earlier["modes"], earlier["scenarios"]
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


def _cpus(key: str, value, earlier=None) -> list[int] | None:
    """CPU ids as a sorted list; whether this machine has them is the harness's check."""
    if value is None:
        return None
    items = _as_list(key, value)
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in items):
        raise BadInput(f"params key {key!r} must be a list of CPU ids, got {value!r}")
    return sorted(set(items))


def _sub_studies(key: str, value, earlier=None) -> dict[str, dict]:
    sub_studies = value or {}
    if not isinstance(sub_studies, dict) or not all(
        isinstance(k, str) and RUN_ID.match(k) and isinstance(v, dict)
        for k, v in sub_studies.items()
    ):
        raise BadInput(
            f"params key {key!r} must map names (letters, digits, '-') to params "
            f"overrides, got {sub_studies!r}"
        )
    for name, overrides in sub_studies.items():
        if "sub_studies" in overrides:
            raise BadInput(f"sub-study {name!r}: a sub-study cannot have sub-studies")
    return sub_studies


_k = Key  # the declarations below, one per line where they fit
_R = REQUIRED_KEY
INT_1, INT_0 = Rule("int", minimum=1), Rule("int", minimum=0)
SECONDS_0 = Rule("float", minimum=0)
BOOL, STR = Rule("bool"), Rule("str")
# In the order params.json states them.
KEYS: tuple[Key, ...] = (
    _k("modes", _R, "", "The hosting modes to compare.",
       Rule("str", choices=MODES, noun="mode"), LIST),
    _k("scenarios", _R, "", "The endpoints the load requests.",
       Rule("str", choices=SCENARIOS, noun="scenario"), LIST),
    _k("tools", _R, "", "The load generators; each a cell of its own.",
       Rule("str", choices=TOOLS, noun="tool"), LIST),
    _k("concurrency", _R, "connections",
       "Connections (virtual users) the load keeps open; each level a cell of its own.",
       INT_1, LIST),
    _k("duration_s", _R, "s",
       "How long each measured run fires its load (with `requests`: the longest it may take).",
       Rule("float", minimum=1),
       also=f">= min_duration_s; whole seconds for {tools_in_words('whole_seconds')}"),
    _k("warmup_s", _R, "s",
       "The longest warm-up before each run (0: none); it ends earlier once throughput is "
       "steady.", SECONDS_0, also=f"whole seconds for {tools_in_words('whole_seconds')}"),
    _k("repetitions", _R, "blocks",
       "Blocks: each runs every cell once, in a seeded Williams order.", INT_1),
    _k("windows", 1, "windows",
       "Measured windows of each cell per block: a block launches each mode once, warms it up "
       "per scenario, and runs the compared modes' windows back to back in a balanced order "
       "(A B, B A, ...). The launch is the independent unit of every interval.", INT_1),
    _k("focus", [], "",
       "The modes whose comparison with the baseline the headline rests on: they and the "
       "baseline get `windows` windows per block, the other modes one (and none in blocks "
       "target_halfwidth_pct adds); empty: every mode.",
       STR, LIST, also="some of modes, not the baseline"),
    _k("interleave_slice_s", None, "s",
       "Interleaved windows: every compared mode of a cell, launched and warmed up together, "
       "shares each window, k6 sending each request to the mode whose slice of this length it "
       "is (one slice per mode per round, in a seeded random order); each mode gets duration_s "
       "in all and its rate is its requests over its own slices' time (docs/method.md).",
       Rule("float", minimum=0.05), null="each mode's windows back to back",
       also="tools [k6] only; topology local; no focus; at most duration_s; whole ms"),
    _k("target_halfwidth_pct", None, "%",
       "The 95% half-width wanted for each focus mode's ratio to the baseline: after the "
       "`repetitions` blocks, the blocks are raised once to what their spread calls for "
       "(Stein's two-stage rule), up to max_repetitions and max_minutes; null: `repetitions` "
       "blocks.", Rule("float", minimum=0.01), null="off"),
    _k("max_repetitions", 12, "blocks",
       "The most blocks target_halfwidth_pct may call for.", INT_1, also=">= repetitions"),
    _k("max_minutes", None, "min",
       "The time the blocks target_halfwidth_pct calls for may take in all (the first blocks "
       "included), estimated from the first blocks; null: no limit.",
       Rule("float", minimum=0.01), null="no limit"),
    _k("description", "", "", "What this study is, in a line (reports quote it).",
       check=_text, shape="str"),
    _k("baseline", None, "",
       "The mode ratios are taken to (analysis only); null: nginx if run, else the first mode.",
       STR, null="", also="one of modes"),
    _k("seed", None, "",
       "Seed of the run order; null: a new one, recorded in params.json.", INT_0, null=""),
    _k("sample_interval_s", 0.5, "s", "The CPU monitor's sampling period.",
       Rule("float", minimum=0.05)),
    _k("progress_interval_s", None, "s",
       "While each measured load runs, read the server's own request counter (one GET /__stats "
       "from the harness, not counted, off the measured path) and its RSS without file-mapped "
       "pages this often, into the run's progress.csv: how the rate and memory converge.",
       Rule("float", minimum=0.5), null="off"),
    _k("steady_tolerance_pct", 5.0, "%",
       "Warm-up ends when three one-second windows agree within this (and the JIT has "
       "settled).", Rule("float", minimum=0.1)),
    _k("requests", None, "requests",
       "A fixed request count per run (ab/bombardier -n), one or per scenario; scenarios not "
       "named run for duration_s.", INT_1, PER_SCENARIO, null="",
       also=f"{tools_in_words('counts_requests')} only"),
    _k("pipeline", 1, "requests per write",
       "Requests per write (TechEmpower's pipeline.lua), one or per scenario (others: 1).",
       INT_1, PER_SCENARIO, also=f"above 1 {tools_in_words('pipelines')} only"),
    _k("keepalive", True, "",
       "Whether the load reuses connections (false: a new one per request, ab without -k).",
       BOOL),
    _k("loadgen_cpus", None, "CPU ids",
       "The CPUs the load generator is pinned to; the app and proxy get the others; null: "
       "every process may run anywhere.", check=_cpus, shape="list of int or null",
       also="some, not all, of this machine's CPU ids"),
    _k("variants", {}, "",
       "Named settings of the test app, each a cell of its own (in the run key and "
       "results.csv), added to app_args and app_env.", check=_variants,
       shape="{name: {app_args, app_env}}",
       also="names of letters, digits and '-'; TestApp modes only"),
    _k("variant_sweep", None, "",
       "Variants made from templates: each `{n}` in a template's name, app_args and app_env "
       "values becomes each value of n, added after `variants` (params.json records the values "
       "and this machine's cores).", check=_sweep, shape="{n, variants} or null",
       also="n: cores (1 .. cores), cores-x2 (1 .. 2 x cores), or a list of integers >= 1 and "
       "these words (each its number); cores = the CPUs this process may run on"),
    _k("scenario_modes", {}, "",
       "Scenarios that run under some modes only; scenarios not named run under every mode.",
       check=_scenario_modes, shape="{scenario: list of str}",
       also="this study's scenarios and modes"),
    _k("sub_studies", {}, "",
       "Smaller studies the notebook runs beside this one, each as overrides of these params.",
       check=_sub_studies, shape="{name: params overrides}",
       also="names of letters, digits and '-'; no sub-studies of their own"),
    _k("smoke", False, "",
       "A smoke run (the quick profiles): it checks the pipeline, so its report writes no "
       "verdicts and no headline findings; the keys whose default names a smoke value get it "
       "unless the params state them.", BOOL),
    _k("min_duration_s", 5.0, "s",
       "A run shorter than this is invalid: too short to measure.", SECONDS_0, before=0.0),
    _k("quiet_max_cores", 0.1, "cores",
       "Before each run, wait until processes the harness did not start use less; a run during "
       "which they used more is invalid and re-run.", Rule("float", minimum=0.01),
       null="recorded, not enforced", before=None, smoke=None),
    _k("quiet_max_steal_pct", 5.0, "%",
       "Likewise for CPU time the hypervisor steals.", SECONDS_0),
    _k("quiet_wait_s", 120.0, "s",
       "How long to wait for a quiet machine before measuring anyway.", SECONDS_0, before=0.0),
    _k("busy_reruns", 2, "runs",
       "How often a window the machine was too busy for, or whose warm-up never got steady "
       "(warmed up again first), is measured again, at once.", INT_0,
       before=0),
    _k("require_steady", True, "",
       "Whether a run whose warm-up never got steady is invalid.", BOOL, smoke=False),
    _k("topology", "local", "",
       "Where the load generator and the server run (docs/hosts.md): this machine's loopback, "
       "two network namespaces joined by a veth pair, or two hosts over ssh.",
       Rule("str", choices=TOPOLOGIES, noun="topology")),
    _k("inventory", None, "",
       "topology ssh: the Ansible inventory naming the `server` and `loadgen` hosts.",
       STR, null="", also="a path; with topology ssh only"),
    _k("app_args", [], "",
       "Extra options for the test app, e.g. [--log-level, Information].",
       check=_strings, shape="list of str"),
    _k("access_log", False, "", "Whether the proxies write access logs.", BOOL),
    _k("url", None, "", "The URL of your server (external and IIS modes).",
       Rule("str", noun="a URL like http://127.0.0.1:5000/"), null="",
       also="an http:// URL; loopback unless allow_remote"),
    _k("watch", [], "",
       "External modes: process names whose CPU is sampled as the server's.",
       check=_strings, shape="list of str"),
    _k("allow_remote", False, "", "External modes: permit a non-loopback URL.", BOOL),
    _k("app_env", {}, "",
       "Environment variables for the test app, names to strings: {DOTNET_X: '1'}.",
       check=_env, shape="{str: str}", also="environment variable names; values quoted"),
    _k("nginx_keepalive_pool", None, "connections",
       "nginx's upstream keep-alive pool in the modes that have one (nginx-keepalive): idle "
       "connections kept per worker; null: the catalog's NGINX_KEEPALIVE.",
       INT_1, null="", also="with an nginx mode that has a pool"),
    _k("nginx_workers", None, "processes",
       "nginx's worker processes; null: one per core nginx may run on.",
       INT_1, null="", also="with an nginx mode"),
)  # fmt: skip
KEY = {k.name: k for k in KEYS}
REQUIRED = tuple(k.name for k in KEYS if k.required)
OPTIONAL = {k.name: k.default for k in KEYS if not k.required}


def _default(name: str):
    """A dataclass field with KEYS' default (a fresh copy of a list or mapping)."""
    value = KEY[name].default
    if isinstance(value, list | dict):
        return field(default_factory=lambda: copy.deepcopy(value))
    return field(default=value)


def _read(raw) -> dict:
    """Every key of a params mapping checked against its declaration, in KEYS' order (a key
    missing: its default; with `smoke: true`, its smoke value)."""
    if not isinstance(raw, dict):
        raise BadInput("params must be a mapping of keys to values")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise BadInput(f"params missing key(s): {', '.join(missing)}")
    unknown = sorted(set(raw) - set(KEY))
    if unknown:
        allowed = ", ".join(KEY)
        raise BadInput(f"unknown params key(s): {', '.join(unknown)}; allowed: {allowed}")
    smoke = {k.name: k.smoke for k in KEYS if k.smoke is not AS_DEFAULT}
    given = {**OPTIONAL, **(smoke if raw.get("smoke") is True else {}), **raw}
    read: dict = {}
    for k in KEYS:
        read[k.name] = k.read(given[k.name], read)
    return read


def _check_together(p: dict) -> None:
    """The rules between keys (each key's own rule is in its declaration); BadInput names the
    first one broken. The Loads each tool fires are checked when they are made (StudyParams)."""
    modes, scenarios = p["modes"], p["scenarios"]
    if p["duration_s"] < p["min_duration_s"]:
        raise BadInput(
            f"params key 'duration_s' is {p['duration_s']:g}, shorter than min_duration_s "
            f"{p['min_duration_s']:g}: every run would be invalid; raise duration_s"
        )
    if p["target_halfwidth_pct"] is not None and p["max_repetitions"] < p["repetitions"]:
        raise BadInput(
            f"params key 'max_repetitions' is {p['max_repetitions']}, fewer than repetitions "
            f"{p['repetitions']}; the first blocks are never cut"
        )
    baseline = p["baseline"]
    if baseline is not None and baseline not in modes:
        raise BadInput(f"params key 'baseline' {baseline!r} is not one of the modes {modes}")
    for m in p["focus"]:
        if m not in modes:
            raise BadInput(f"params key 'focus' names {m!r}, not one of the modes {modes}")
        if m == (baseline or modes[0]):
            raise BadInput(f"params key 'focus' names the baseline {m!r}; name the modes "
                           "compared with it")  # fmt: skip
    swept = _variants("variant_sweep", expand_sweep(p["variant_sweep"]))
    for name in swept:
        if name in p["variants"]:
            raise BadInput(f"variant_sweep makes variant {name!r}, already in 'variants'")
    for m in modes:
        mode = get_mode(m)
        if (p["variants"] or swept) and mode.server != "TestApp":
            raise BadInput(
                f"params key 'variants' sets test-app options, but mode {m!r} runs "
                f"{mode.server}; give variants to TestApp modes only"
            )
        for sc in scenarios:
            if m not in p["scenario_modes"].get(sc, modes):
                continue
            try:
                check_serves(mode, get_scenario(sc))
            except BadInput as e:
                raise BadInput(
                    f"{e} (params key scenario_modes can run a scenario under some modes only)"
                ) from None
    for key in ("nginx_keepalive_pool", "nginx_workers"):
        _nginx_setting(key, p[key], modes)
    _interleave(p)
    _topology(p["topology"], modes)
    _inventory(p, modes, p["tools"])


@dataclass
class LaunchOptions:
    app_args: list[str] = _default("app_args")  # extra TestApp options
    access_log: bool = _default("access_log")  # proxy access logs (off, as in a tuned setup)
    url: str | None = _default("url")  # external / IIS modes: where the user's server answers
    watch: list[str] = _default("watch")  # external: process names to sample
    allow_remote: bool = _default("allow_remote")  # external: permit a non-loopback URL
    app_env: dict[str, str] = _default("app_env")  # extra environment of the test app
    # nginx modes with an upstream pool: idle connections kept per worker; None: the catalog's.
    nginx_keepalive_pool: int | None = _default("nginx_keepalive_pool")
    nginx_workers: int | None = _default("nginx_workers")  # None: one per core it may use


@dataclass
class StudyParams:
    """A study's params, validated; each field is the KEYS entry of its name (the launch
    options are in `options`)."""

    modes: list[str]
    scenarios: list[str]
    tools: list[str]
    concurrency: list[int]
    duration_s: float
    warmup_s: float  # the longest warm-up; it ends earlier once throughput is steady
    repetitions: int  # blocks: every cell once per block, in a seeded random order
    windows: int = _default("windows")  # measured windows per cell and block
    focus: list[str] = _default("focus")  # modes that get `windows` windows (all when empty)
    interleave_slice_s: float | None = _default("interleave_slice_s")  # None: back to back
    target_halfwidth_pct: float | None = _default("target_halfwidth_pct")
    max_repetitions: int = _default("max_repetitions")
    max_minutes: float | None = _default("max_minutes")
    description: str = _default("description")
    baseline: str | None = _default("baseline")
    seed: int | None = _default("seed")
    sample_interval_s: float = _default("sample_interval_s")
    progress_interval_s: float | None = _default("progress_interval_s")
    steady_tolerance_pct: float = _default("steady_tolerance_pct")
    requests: int | dict[str, int] | None = _default("requests")  # one, or one per scenario
    pipeline: int | dict[str, int] = _default("pipeline")  # one depth, or one per scenario
    keepalive: bool = _default("keepalive")
    loadgen_cpus: list[int] | None = _default("loadgen_cpus")
    variants: dict[str, dict] = _default("variants")  # the stated ones, then the swept ones
    variant_sweep: dict | None = _default("variant_sweep")  # as resolved: values and cores
    scenario_modes: dict[str, list[str]] = _default("scenario_modes")
    options: LaunchOptions = field(default_factory=LaunchOptions)
    sub_studies: dict[str, dict] = _default("sub_studies")
    smoke: bool = _default("smoke")
    min_duration_s: float = _default("min_duration_s")
    quiet_max_cores: float | None = _default("quiet_max_cores")
    quiet_max_steal_pct: float = _default("quiet_max_steal_pct")
    quiet_wait_s: float = _default("quiet_wait_s")
    busy_reruns: int = _default("busy_reruns")
    require_steady: bool = _default("require_steady")
    topology: str = _default("topology")
    inventory: str | None = _default("inventory")

    @classmethod
    def from_dict(cls, raw) -> "StudyParams":
        """Validate a params mapping; BadInput names the first problem and what is allowed.

        Each key against its declaration, the rules between keys, then each cell's Load as it
        is made (kept: the runs fire it) and each sub-study's params (kept: its runs use them).
        """
        values = _read(raw)
        _check_together(values)
        params = cls.from_validated(values)
        # Each tool can fire each scenario's load: a load no tool can fire is refused here,
        # before anything starts.
        for sc, t, c in itertools.product(params.scenarios, params.tools, params.concurrency):
            try:
                params.load(sc, t, c)
            except BadInput as e:
                raise BadInput(f"{e} (scenario {sc})") from None
        for name in params.sub_studies:
            try:
                params.sub_study(name)
            except BadInput as e:
                raise BadInput(f"sub-study {name!r}: {e}") from None
        return params

    @classmethod
    def from_validated(cls, values: dict) -> "StudyParams":
        """Params from values validated already, as from_dict reads them or to_dict writes them
        (papermill hands a study notebook to_dict's): built, not checked again."""
        options = LaunchOptions(**{f.name: values[f.name] for f in fields(LaunchOptions)})
        swept = _variants("variant_sweep", expand_sweep(values["variant_sweep"]))
        own = {f.name: values[f.name] for f in fields(cls) if f.name != "options"}
        return cls(**{**own, "variants": {**values["variants"], **swept}}, options=options)

    @classmethod
    def from_file(cls, path: Path, overrides: dict | None = None) -> "StudyParams":
        """Params from a YAML file (following `extends:`), with `overrides` applied last."""
        raw = load_yaml(Path(path))
        if overrides:
            raw = {**raw, **overrides}
        return cls.from_dict(raw)

    @classmethod
    def from_run(cls, run_dir: str | Path) -> "StudyParams":
        """The params a study ran with, from its run folder's params.json (or from beside its
        results.csv), validated; the recorded seed is the one its order was drawn from."""
        run_dir = Path(run_dir)
        if run_dir.is_file():  # results.csv, as a study's measure() returns it
            run_dir = run_dir.parent
        path = run_dir / PARAMS_FILE
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            raise BadInput(f"no {PARAMS_FILE} at {run_dir}: run the study first") from None
        except (OSError, ValueError) as e:
            raise BadInput(f"{path} is damaged ({type(e).__name__})") from None
        if not isinstance(raw, dict):
            raise BadInput(f"{path} must be a mapping of params keys to values")
        # Keys newer than the record: what the harness did before they existed (their default
        # unless `before` says otherwise; never a smoke value, which is for params files).
        older = {k.name: k.default if k.before is AS_DEFAULT else k.before
                 for k in KEYS if k.name not in raw and not k.required}  # fmt: skip
        try:
            return cls.from_dict({**older, **{k: v for k, v in raw.items() if k not in RECORDED}})
        except BadInput as e:
            raise BadInput(f"{path}: {e}") from None

    def to_dict(self) -> dict:
        """The params as a params file would state them (round-trips through from_dict)."""
        out = {k: v for k, v in asdict(self).items() if k != "options"}
        out.update(asdict(self.options))
        swept = expand_sweep(self.variant_sweep)  # stated once, as the sweep
        out["variants"] = {k: v for k, v in out["variants"].items() if k not in swept}
        return out

    def _made(self, what: str) -> dict:
        """What these params made once and keep (their cells' loads, their sub-studies)."""
        return self.__dict__.setdefault(f"_{what}", {})

    def sub_study(self, name: str) -> "StudyParams":
        """The params of sub-study `name`: these params with its overrides, validated once."""
        if name not in self.sub_studies:
            allowed = ", ".join(self.sub_studies) or "none"
            raise BadInput(f"no sub-study {name!r} in these params; allowed: {allowed}")
        made = self._made("sub_studies")
        if name not in made:
            made[name] = type(self).from_dict(_overlay(self.to_dict(), self.sub_studies[name]))
        return made[name]

    def requests_for(self, scenario: str) -> int | None:
        """The fixed request count of a scenario's runs; None: they run for duration_s."""
        return _for(self.requests, scenario, None)

    def pipeline_for(self, scenario: str) -> int:
        """Requests per write in a scenario's runs (1: no pipelining)."""
        return _for(self.pipeline, scenario, 1)

    def load(self, scenario: str, tool: str, concurrency: int) -> Load:
        """The load of a cell's runs, made (and checked: BadInput names the problem) once;
        every run of the cell fires this one value."""
        made = self._made("loads")
        cell = (scenario, tool, concurrency)
        if cell not in made:
            cpus = self.loadgen_cpus
            made[cell] = Load(
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
        return made[cell]

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
            # Only when set: runs without progress keep their fingerprints.
            **(
                {"progress_interval_s": self.progress_interval_s}
                if self.progress_interval_s is not None
                else {}
            ),
            "loadgen_cpus": self.loadgen_cpus,
            "min_duration_s": self.min_duration_s,
            "quiet_max_cores": self.quiet_max_cores,
            "quiet_max_steal_pct": self.quiet_max_steal_pct,
            "require_steady": self.require_steady,
            # Only when not the default, so runs recorded before the key keep their fingerprint.
            **({"topology": self.topology} if self.topology != "local" else {}),
            **(
                {"interleave_slice_s": self.interleave_slice_s}
                if self.interleave_slice_s is not None
                else {}
            ),
            **({"inventory": self.inventory} if self.inventory else {}),
            **{k: v for k, v in asdict(self.options).items() if k not in SET_ONLY or v is not None},
            "hostbench_version": __version__,
        }


def _nginx_setting(key: str, value: int | None, modes: list[str]) -> None:
    """A count for the nginx modes among `modes` (null: nginx's default here); refused when
    no mode it shapes runs, since it would change nothing."""
    if value is None:
        return
    pooled = key == "nginx_keepalive_pool"
    shaped = [
        m
        for m in modes
        if get_mode(m).proxy == "nginx" and (get_mode(m).keepalive is not None or not pooled)
    ]
    if not shaped:
        which = "an nginx mode with an upstream pool (nginx-keepalive)" if pooled else "nginx"
        raise BadInput(f"params key {key!r} shapes {which}, but no such mode is in {modes}")


def _inventory(p: dict, modes: list[str], tools: list[str]) -> None:
    """The inventory path: required with topology ssh, refused without it."""
    value = p["inventory"]
    if p["topology"] != "ssh":
        if value is not None:
            raise BadInput("params key 'inventory' is for topology ssh; drop it or set topology")
        return
    if not value:
        raise BadInput("topology ssh needs params key 'inventory': the path of an Ansible "
                       "inventory with groups server and loadgen (docs/hosts.md)")  # fmt: skip
    ssh_tools = tools_with("remote")
    for key, names, allowed in (("modes", modes, SSH_MODES), ("tools", tools, ssh_tools)):
        if other := [n for n in names if n not in allowed]:
            raise BadInput(f"topology ssh runs {key} {', '.join(allowed)} only (not "
                           f"{', '.join(other)})")  # fmt: skip
    if p["loadgen_cpus"] is not None:
        raise BadInput("topology ssh: loadgen_cpus pins on one machine; the load tool has "
                       "its own host: drop loadgen_cpus")  # fmt: skip


def _interleave(p: dict) -> None:
    """interleave_slice_s: what the interleaved window (harness/measure/interleave.py) can do."""
    slice_s = p["interleave_slice_s"]
    if slice_s is None:
        return
    what = f"params key 'interleave_slice_s' {slice_s:g}"
    if p["tools"] != ["k6"]:
        raise BadInput(f"{what}: only k6 switches target within a run; tools must be [k6], "
                       f"got {p['tools']}")  # fmt: skip
    if p["topology"] != "local":
        raise BadInput(f"{what}: interleaved windows run on topology local only")
    if p["focus"]:
        raise BadInput(f"{what}: every mode shares every window, so focus has no effect; "
                       "leave focus out")  # fmt: skip
    if slice_s > p["duration_s"]:
        raise BadInput(f"{what} is longer than duration_s {p['duration_s']:g}: each mode gets "
                       "duration_s in slices of it")  # fmt: skip
    if round(slice_s * 1000) != slice_s * 1000:
        raise BadInput(f"{what}: k6's clock counts whole milliseconds")


def _topology(value: str, modes: list[str]) -> None:
    external = [m for m in modes if get_mode(m).launch == "external"]
    if value == "netns" and external:
        raise BadInput(
            f"topology netns runs the servers the harness launches; {', '.join(external)} "
            "runs where you started it: use topology local"
        )


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


def markdown() -> str:
    """docs/params.md: every params key."""
    lines = [
        "# params",
        "",
        "The keys of a study's params file (`studies/<study>/params/<profile>.yaml`) and of the",
        "`params.json` the harness records in each run folder (which adds",
        f"{', '.join(f'`{k}`' for k in RECORDED)}). Each key is declared once in",
        "`hostbench/params.py`; generated by `python -m hostbench docs`, do not edit by hand.",
        "A profile may say `extends: paper` and state only what differs.",
        "",
        "| key | type | default | unit | meaning | allowed |",
        "|---|---|---|---|---|---|",
    ]
    for k in KEYS:
        default = "required" if k.required else f"`{json.dumps(k.default)}`"
        if k.smoke is not AS_DEFAULT:
            default += f" (smoke: `{json.dumps(k.smoke)}`)"
        lines.append(
            f"| `{k.name}` | {k.type} | {default} | {k.unit} | {k.meaning} | {k.allowed} |"
        )
    return "\n".join(lines) + "\n"
