"""Every params key, declared once: its default, unit and meaning, and the rule its values obey.
The general keys are declared here (KEYS); a key a program owns (nginx's worker count) is
declared with its program (hostbench/programs), and `declared` collects both. Reading a
params mapping is one loop over these declarations (`read`); docs/params.md is written from
them too (docs_page.py). The rules between keys are study.py's _check_together."""

import re

from ..catalog import MODES, SCENARIOS
from ..errors import BadInput
from ..load import TOOLS, alternating_tools, slice_rules_in_words, tools_in_words
from ..runtime_variants import VARIANTS
from ..runtimes import DEFAULT_RUNTIME, RUNTIMES
from ..schedules import SCHEDULES
from .expansion import resolve_sweep
from .record import RUN_ID
from .rules import (
    AS_DEFAULT,
    LIST,
    PER_SCENARIO,
    REQUIRED_KEY,
    Key,
    Kind,
    Rule,
    as_list,
    refuse_unknown,
    unique,
)
from .topology import TOPOLOGIES

VARIANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,39}$")  # no "_" or ".": run keys stay parseable
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
VARIANT_KEYS = ("app_args", "app_env")


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


def read_variants(key: str, value, earlier=None) -> dict[str, dict]:
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
        refuse_unknown(f"variant {name!r}", body, VARIANT_KEYS)
        out[name] = {
            "app_args": _strings(f"variants.{name}.app_args", body.get("app_args")),
            "app_env": _env(f"variants.{name}.app_env", body.get("app_env")),
        }
    return out


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
        only = [str(m) for m in as_list(f"scenario_modes.{scenario}", only)]
        only = unique(f"scenario_modes.{scenario}", only)
        stray = [m for m in only if m not in modes]
        if stray:
            raise BadInput(
                f"params key 'scenario_modes': {scenario} lists mode {stray[0]!r}, not one of "
                f"this study's {', '.join(modes)}"
            )
        out[scenario] = only
    return out


def _command_line(key: str, value, earlier=None) -> dict[str, str]:
    """{key: value as typed} of the keys `--set` gave (command_line.py); not a key of its own."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadInput(f"params key {key!r} must map params keys to values as typed, got {value!r}")
    stray = [name for name in value if name not in {k.name for k in declared()} or name == key]
    if stray:
        raise BadInput(f"params key {key!r} names {stray[0]!r}, not a key --set may set")
    return dict(value)


def _cpus(key: str, value, earlier=None) -> list[int] | None:
    """CPU ids as a sorted list; whether this machine has them is the harness's check."""
    if value is None:
        return None
    items = as_list(key, value)
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
# The general keys, in the order params.json states them (each program's own follow: declared).
# Each states its kind (rules.Kind): what a run folder does with it, which the fingerprint of
# measured settings (StudyParams.measured_settings) and the resume's checks follow.
KEYS: tuple[Key, ...] = (
    _k("modes", _R, "", "The hosting modes to compare.",
       Rule("str", choices=MODES, noun="mode"), LIST, kind=Kind.CELL),
    _k("scenarios", _R, "", "The endpoints the load requests.",
       Rule("str", choices=SCENARIOS, noun="scenario"), LIST, kind=Kind.CELL),
    _k("tools", _R, "", "The load generators; each a cell of its own.",
       Rule("str", choices=TOOLS, noun="tool"), LIST, kind=Kind.CELL),
    _k("concurrency", _R, "connections",
       "Connections (virtual users) the load keeps open; each level a cell of its own.",
       INT_1, LIST, kind=Kind.CELL),
    _k("duration_s", _R, "s",
       "How long each measured run fires its load (with `requests`: the longest it may take).",
       Rule("float", minimum=1),
       also=f">= min_duration_s; whole seconds for {tools_in_words('whole_seconds')}",
       kind=Kind.MEASURED),
    _k("warmup_s", _R, "s",
       "The longest warm-up before each run (0: none); it ends earlier once throughput is "
       "steady.", SECONDS_0, also=f"whole seconds for {tools_in_words('whole_seconds')}",
       kind=Kind.MEASURED),
    _k("repetitions", _R, "blocks",
       "Blocks: each runs every cell once, in a seeded Williams order.", INT_1, kind=Kind.SCHEDULE),
    _k("windows", 1, "windows",
       "Measured windows of each cell per block: a block launches each mode once, warms it up "
       "per scenario, and runs the compared modes' windows back to back in a balanced order "
       "(A B, B A, ...). The launch is the independent unit of every interval.", INT_1,
       kind=Kind.SCHEDULE),
    _k("schedule", "williams", "",
       "The order the compared members of a sub-block take their windows in, round by round: "
       "williams balances each member's position and the member before it (A B, then B A); "
       "round-robin keeps one seeded order every round (A B, A B).",
       Rule("str", choices=SCHEDULES, noun="schedule"), kind=Kind.SCHEDULE),
    _k("focus", [], "",
       "The modes whose comparison with the baseline the headline rests on: they and the "
       "baseline get `windows` windows per block, the other modes one (and none in blocks "
       "target_halfwidth_pct adds); empty: every mode.",
       STR, LIST, also="some of modes, not the baseline", kind=Kind.SCHEDULE),
    _k("interleave_slice_s", None, "s",
       "Interleaved windows: every compared mode of a cell, launched and warmed up together, "
       "shares each window in slices of this length (one slice per mode per round, in a seeded "
       f"random order). The design follows the tool: {tools_in_words('switches_target')} sends "
       "each request to the mode whose slice it is; a tool that cannot switch target within a run "
       f"({', '.join(alternating_tools())}) runs once per slice, against its mode "
       "(alternating short runs). Each mode gets duration_s in all and its rate is its "
       "requests over its own time (docs/method.md).",
       Rule("float", minimum=0.05), null="each mode's windows back to back",
       also="no requests; at most duration_s; whole ms; "
            f"{slice_rules_in_words()}; with focus, a block's first window holds every "
            "mode and its others the focus and baseline", kind=Kind.MEASURED_WHEN_SET),
    _k("target_halfwidth_pct", None, "%",
       "The 95% half-width wanted for each focus mode's ratio to the baseline: after the "
       "`repetitions` blocks, the blocks are raised once to what their spread calls for "
       "(Stein's two-stage rule), up to max_repetitions and max_minutes; null: `repetitions` "
       "blocks.", Rule("float", minimum=0.01), null="off", kind=Kind.SCHEDULE),
    _k("stop_when_decided", False, "",
       "Measure until the article's claims are decided (a claims profile): after each block "
       "from the `repetitions`-th, every claim is judged again with repeated 95% intervals, "
       "valid over all the looks (docs/method.md, \"Measuring until decided\"); the next "
       "block measures only the cells an undecided claim needs, and the run stops when every "
       "claim is decided, at max_repetitions blocks, or when the next block would pass "
       "max_minutes.", BOOL,
       also="with repetitions >= 3 and max_repetitions above it; not with target_halfwidth_pct",
       kind=Kind.SCHEDULE),
    _k("max_repetitions", 12, "blocks",
       "The most blocks target_halfwidth_pct may call for, or stop_when_decided may run (its "
       "intervals are planned for looks up to it).", INT_1, also=">= repetitions",
       kind=Kind.SCHEDULE),
    _k("max_minutes", None, "min",
       "The time the blocks target_halfwidth_pct calls for, or stop_when_decided runs, may take "
       "in all (the first blocks included), estimated from the blocks measured; null: no "
       "limit. A stop_when_decided run this budget stopped resumes with a larger one.",
       Rule("float", minimum=0.01), null="no limit", kind=Kind.SCHEDULE),
    _k("description", "", "", "What this study is, in a line (reports quote it).",
       check=_text, shape="str", kind=Kind.NOT_MEASURED),
    _k("baseline", None, "",
       "The mode ratios are taken to (analysis only); null: nginx if run, else the first mode.",
       STR, null="", also="one of modes", kind=Kind.NOT_MEASURED),
    _k("seed", None, "",
       "Seed of the run order; null: a new one, recorded in params.json.", INT_0, null="",
       kind=Kind.NOT_MEASURED),
    _k("set_on_command_line", {}, "",
       "The keys `--set KEY=VALUE` set over the profile (`run`, `reproduce`, `lab`), each with its "
       "value as typed: recorded, so params.json and the report name them.",
       check=_command_line, shape="{key: str}", also="written by --set, not by a params file",
       kind=Kind.NOT_MEASURED),
    _k("sample_interval_s", 0.5, "s", "The CPU monitor's sampling period.",
       Rule("float", minimum=0.05), kind=Kind.MEASURED),
    _k("progress_interval_s", None, "s",
       "While each measured load runs, read the server's own request counter (one GET /__stats "
       "from the harness, not counted, off the measured path) and its RSS without file-mapped "
       "pages this often, into the run's progress.csv: how the rate and memory converge.",
       Rule("float", minimum=0.5), null="off", kind=Kind.MEASURED_WHEN_SET),
    _k("steady_tolerance_pct", 5.0, "%",
       "Warm-up ends when three one-second windows agree within this (and the JIT has "
       "settled).", Rule("float", minimum=0.1), kind=Kind.MEASURED),
    _k("requests", None, "requests",
       "A fixed request count per run (ab/bombardier -n), one or per scenario; scenarios not "
       "named run for duration_s.", INT_1, PER_SCENARIO, null="",
       also=f"{tools_in_words('counts_requests')} only", kind=Kind.MEASURED),
    _k("pipeline", 1, "requests per write",
       "Requests per write (TechEmpower's pipeline.lua), one or per scenario (others: 1).",
       INT_1, PER_SCENARIO, also=f"above 1 {tools_in_words('pipelines')} only", kind=Kind.MEASURED),
    _k("keepalive", True, "",
       "Whether the load reuses connections (false: a new one per request, ab without -k).",
       BOOL, kind=Kind.MEASURED),
    _k("loadgen_cpus", None, "CPU ids",
       "The CPUs the load generator is pinned to; the app and proxy get the others; null: "
       "every process may run anywhere.", check=_cpus, shape="list of int or null",
       also="some, not all, of this machine's CPU ids", kind=Kind.MEASURED),
    _k("variants", {}, "",
       "Named settings of the test app, each a cell of its own (in the run key and "
       "results.csv), added to app_args and app_env.", check=read_variants,
       shape="{name: {app_args, app_env}}",
       also="names of letters, digits and '-'; TestApp modes only", kind=Kind.CELL),
    _k("variant_sweep", None, "",
       "Variants made from templates: each `{n}` in a template's name, app_args and app_env "
       "values becomes each value of n, added after `variants` (params.json records the values "
       "and this machine's cores).", check=resolve_sweep, shape="{n, variants} or null",
       also="n: cores (1 .. cores), cores-x2 (1 .. 2 x cores), or a list of integers >= 1 and "
       "these words (each its number); cores = the CPUs this process may run on", kind=Kind.CELL),
    _k("runtimes", [DEFAULT_RUNTIME], "",
       "The .NET runtimes the test app runs on, by target framework (e.g. [net8.0, net10.0]); "
       "each a variant of every TestApp mode when there are several (its own cell, sharing "
       "the window), named without '.0' (net8). The default runs `make setup`'s build on the "
       "installed runtime; any other list runs self-contained builds (build/testapp-net8.0/ for "
       "net8.0), published on demand. Each row records the runtime's exact version "
       "(runtime_version); the YARP proxy, Go servers and nginx are unchanged.",
       Rule("str", choices=RUNTIMES, noun="runtime"), LIST,
       also="with a TestApp mode unless the default; several: not with variants", kind=Kind.CELL),
    _k("runtime_variants", [], "",
       "The test app compiled and run other ways (hostbench/runtime_variants.py), by name (e.g. "
       "[jit, jit-datas, aot, aot-datas]): its build (the MVC app, or testapp/aot's minimal "
       "APIs JIT-compiled or Native AOT), its GC setting and its runtime; each a variant of "
       "every TestApp mode (its own cell, sharing the window, as a runtime of `runtimes`), its "
       "build published before the study measures. Each row records what the app reported it "
       "ran (build, gc, runtime_version), its startup and its memory at rest; the modes that "
       "launch no test app (the Go servers) run once, beside every variant.",
       Rule("str", choices=VARIANTS, noun="runtime variant"), LIST,
       also="with a TestApp mode; scenarios each variant's app serves; not with variants or "
            "runtimes other than the default", kind=Kind.CELL),
    _k("scenario_modes", {}, "",
       "Scenarios that run under some modes only; scenarios not named run under every mode.",
       check=_scenario_modes, shape="{scenario: list of str}",
       also="this study's scenarios and modes", kind=Kind.CELL),
    _k("sub_studies", {}, "",
       "Smaller studies the notebook runs beside this one, each as overrides of these params.",
       check=_sub_studies, shape="{name: params overrides}",
       also="names of letters, digits and '-'; no sub-studies of their own",
       kind=Kind.NOT_MEASURED),
    _k("smoke", False, "",
       "A smoke run (the quick profiles): it checks the pipeline, so its report writes no "
       "verdicts and no headline findings; the keys whose default names a smoke value get it "
       "unless the params state them.", BOOL, kind=Kind.NOT_MEASURED),
    _k("min_duration_s", 5.0, "s",
       "A run shorter than this is invalid: too short to measure.", SECONDS_0, before=0.0,
       kind=Kind.MEASURED),
    _k("quiet_max_cores", 0.1, "cores",
       "Before each run, wait until processes the harness did not start use less; a run during "
       "which they used more is invalid and re-run.", Rule("float", minimum=0.01),
       null="recorded, not enforced", before=None, smoke=None, kind=Kind.MEASURED),
    _k("quiet_max_steal_pct", 5.0, "%",
       "Likewise for CPU time the hypervisor steals.", SECONDS_0, kind=Kind.MEASURED),
    _k("quiet_wait_s", 120.0, "s",
       "How long to wait for a quiet machine before measuring anyway.", SECONDS_0, before=0.0,
       kind=Kind.NOT_MEASURED),
    _k("busy_reruns", 2, "runs",
       "How often a window the machine was too busy for, or whose warm-up never got steady "
       "(warmed up again first), is measured again, at once.", INT_0,
       before=0, kind=Kind.NOT_MEASURED),
    _k("require_steady", True, "",
       "Whether a run whose warm-up never got steady is invalid.", BOOL, smoke=False,
       kind=Kind.MEASURED),
    _k("topology", "local", "",
       "Where the load generator and the server run (docs/hosts.md): this machine's loopback, "
       "two network namespaces joined by a veth pair, or two hosts over ssh.",
       Rule("str", choices=TOPOLOGIES, noun="topology"), kind=Kind.MEASURED_WHEN_SET),
    _k("inventory", None, "",
       "topology ssh: the Ansible inventory naming the `server` and `loadgen` hosts.",
       STR, null="", also="a path; with topology ssh only", kind=Kind.MEASURED_WHEN_SET),
    _k("app_args", [], "",
       "Extra options for the test app, e.g. [--log-level, Information].",
       check=_strings, shape="list of str", kind=Kind.MEASURED),
    _k("access_log", False, "", "Whether the proxies write access logs.", BOOL, kind=Kind.MEASURED),
    _k("url", None, "", "The URL of your server (external and IIS modes).",
       Rule("str", noun="a URL like http://127.0.0.1:5000/"), null="",
       also="an http:// URL; loopback unless allow_remote", kind=Kind.MEASURED),
    _k("watch", [], "",
       "External modes: process names whose CPU is sampled as the server's.",
       check=_strings, shape="list of str", kind=Kind.MEASURED),
    _k("allow_remote", False, "", "External modes: permit a non-loopback URL.", BOOL,
       kind=Kind.MEASURED),
    _k("app_env", {}, "",
       "Environment variables for the test app, names to strings: {DOTNET_X: '1'}.",
       check=_env, shape="{str: str}", also="environment variable names; values quoted",
       kind=Kind.MEASURED),
)  # fmt: skip
KEY = {k.name: k for k in KEYS}
REQUIRED = tuple(k.name for k in KEYS if k.required)  # a program's own keys have defaults
# The keys of a kind (rules.py), by name: a resume compares every key but the ones not
# measured; the analysis's sensitivity reads what the schedule alone sets.
NOT_MEASURED = tuple(k.name for k in KEYS if k.kind == Kind.NOT_MEASURED)
SCHEDULE = tuple(k.name for k in KEYS if k.kind == Kind.SCHEDULE)


def programs():
    """The programs (hostbench/programs PROGRAMS), imported when asked, not at the top: they
    declare their keys with this package's Key, so this package comes first; and a program
    registered later is in."""
    from ..programs import PROGRAMS

    return PROGRAMS.values()


def program_keys() -> tuple[Key, ...]:
    """The keys the programs own, each as its program declares it, in PROGRAMS' order."""
    return tuple(s.key for p in programs() for s in p.settings)


def declared() -> tuple[Key, ...]:
    """Every params key, in the order params.json states them: KEYS, then the programs' own."""
    return (*KEYS, *program_keys())


def optional() -> dict:
    """{key: default} of every key a params file may leave out."""
    return {k.name: k.default for k in declared() if not k.required}


def read(raw) -> dict:
    """Every key of a params mapping checked against its declaration, in declared()'s order (a
    key missing: its default; with `smoke: true`, its smoke value)."""
    if not isinstance(raw, dict):
        raise BadInput("params must be a mapping of keys to values")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise BadInput(f"params missing key(s): {', '.join(missing)}")
    every = declared()
    unknown = sorted(set(raw) - {k.name for k in every})
    if unknown:
        allowed = ", ".join(k.name for k in every)
        raise BadInput(f"unknown params key(s): {', '.join(unknown)}; allowed: {allowed}")
    smoke = {k.name: k.smoke for k in every if k.smoke is not AS_DEFAULT}
    given = {**optional(), **(smoke if raw.get("smoke") is True else {}), **raw}
    read: dict = {}
    for k in every:
        read[k.name] = k.read(given[k.name], read)
    return read
