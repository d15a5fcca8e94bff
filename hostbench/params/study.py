"""A study's params, validated (StudyParams): each key read against its declaration (keys.py),
then the rules between keys (_check_together), then each cell's Load as it is made (checked
once, kept: its runs fire it) and each sub-study's params. The analysis reads a run's
params.json back as StudyParams (StudyParams.from_run)."""

import copy
import itertools
import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from .. import __version__
from ..catalog import check_serves, get_mode, get_scenario
from ..errors import BadInput
from ..load import Load, check_slice
from ..runtime_variants import check_env, check_mode, get_variant
from ..runtime_variants import check_serves as check_variant_serves
from ..runtimes import DEFAULT_RUNTIME, label, variant_name
from . import keys
from .expansion import expand_sweep, overlay
from .loading import load_yaml
from .record import PARAMS_FILE, RECORDED
from .rules import AS_DEFAULT
from .topology import check_topology, skipped_under


def _default(name: str):
    """A dataclass field with KEYS' default (a fresh copy of a list or mapping)."""
    value = keys.KEY[name].default
    if isinstance(value, list | dict):
        return field(default_factory=lambda: copy.deepcopy(value))
    return field(default=value)


def _program_defaults() -> dict:
    """The programs' own keys at their defaults (launch options made without params)."""
    return {k.name: copy.deepcopy(k.default) for k in keys.program_keys()}


def _swept(sweep: dict | None) -> dict[str, dict]:
    """The variants a resolved variant_sweep makes, each checked as a stated one."""
    return keys.read_variants("variant_sweep", expand_sweep(sweep))


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
    if p["stop_when_decided"]:
        _until_decided(p)
    baseline = p["baseline"]
    if baseline is not None and baseline not in modes:
        raise BadInput(f"params key 'baseline' {baseline!r} is not one of the modes {modes}")
    for m in p["focus"]:
        if m not in modes:
            raise BadInput(f"params key 'focus' names {m!r}, not one of the modes {modes}")
        if m == (baseline or modes[0]):
            raise BadInput(f"params key 'focus' names the baseline {m!r}; name the modes "
                           "compared with it")  # fmt: skip
    swept = _swept(p["variant_sweep"])
    for name in swept:
        if name in p["variants"]:
            raise BadInput(f"variant_sweep makes variant {name!r}, already in 'variants'")
    _runtimes(p, swept)
    _runtime_variants(p, swept)
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
    _program_settings(p)
    _interleave(p)
    check_topology(p)


def takes_runtime(mode: str) -> bool:
    """Whether `mode` launches the test app, so runs it on the params' runtimes (the Go servers
    and a server you started do not; behind YARP, the app does and YARP stays on its own)."""
    m = get_mode(mode)
    return m.server == "TestApp" and m.launch != "external"


def _runtimes(p: dict, swept: dict) -> None:
    """runtimes: other than the default, for a study that launches the test app; several (each a
    variant of the TestApp modes) not beside variants of its own."""
    runtimes = p["runtimes"]
    if runtimes == [DEFAULT_RUNTIME]:
        return
    if not any(takes_runtime(m) for m in p["modes"]):
        raise BadInput(f"params key 'runtimes' {runtimes} runs the test app on them, but none "
                       f"of the modes {p['modes']} launches it")  # fmt: skip
    if len(runtimes) > 1 and (p["variants"] or swept):
        raise BadInput(f"params key 'runtimes' lists {len(runtimes)} runtimes, each a "
                       "variant of the TestApp modes; give variants or several runtimes, "
                       "not both")  # fmt: skip


def _runtime_variants(p: dict, swept: dict) -> None:
    """runtime_variants: each a variant of the TestApp modes, as several runtimes are, so not
    beside those or variants of the study's own; each runs under every mode that launches the
    test app (check_mode), with app_env leaving its GC setting alone, and serves every scenario
    those modes run (check_serves)."""
    names, what = p["runtime_variants"], "params key 'runtime_variants'"
    if not names:
        return
    if p["runtimes"] != [DEFAULT_RUNTIME]:
        raise BadInput(f"{what} and runtimes {p['runtimes']} both set the test app's "
                       "runtime; a runtime variant names its own (aot-net8): leave runtimes "
                       "out")  # fmt: skip
    if p["variants"] or swept:
        raise BadInput(f"{what} and variants both make variants of the TestApp modes; give "
                       "one of them")  # fmt: skip
    launching = [m for m in p["modes"] if takes_runtime(m)]
    if not launching:
        raise BadInput(f"{what} {names} runs the test app other ways, but none of the modes "
                       f"{p['modes']} launches it")  # fmt: skip
    for name in names:
        variant = get_variant(name)
        check_env(variant, p["app_env"])
        for m in launching:
            check_mode(variant, get_mode(m))
            for sc in p["scenarios"]:
                if m in p["scenario_modes"].get(sc, p["modes"]):
                    check_variant_serves(variant, sc)


def _until_decided(p: dict) -> None:
    """stop_when_decided: looks from the first blocks (3 at least: fewer decide nothing) up to
    max_repetitions, which plans the intervals; one stopping rule at a time."""
    what = "params key 'stop_when_decided'"
    if p["target_halfwidth_pct"] is not None:
        raise BadInput(f"{what} and target_halfwidth_pct both set the blocks; keep one "
                       "(target_halfwidth_pct: null)")  # fmt: skip
    if p["repetitions"] < 3:
        raise BadInput(f"{what}: repetitions is {p['repetitions']}; the first look needs 3 "
                       "blocks (fewer decide nothing)")  # fmt: skip
    if p["max_repetitions"] <= p["repetitions"]:
        raise BadInput(
            f"{what}: max_repetitions ({p['max_repetitions']}) must be above repetitions "
            f"({p['repetitions']}), or there is nothing to stop early"
        )


def _interleave(p: dict) -> None:
    """interleave_slice_s: what an interleaved window can do. Its design follows the tool: k6
    switches target within one run (harness/measure/interleave.py), the others alternate
    short runs, one per slice (harness/measure/alternate.py), which their shortest timed run
    bounds (load.check_slice)."""
    slice_s = p["interleave_slice_s"]
    if slice_s is None:
        return
    what = f"params key 'interleave_slice_s' {slice_s:g}"
    if not (
        p["variants"]
        or p["variant_sweep"]
        or len(p["runtimes"]) > 1
        or len(p["runtime_variants"]) > 1
    ):  # else a mode's variants share the window
        for sc in p["scenarios"]:
            serving = p["scenario_modes"].get(sc, p["modes"])
            if len([m for m in p["modes"] if m in serving]) < 2:
                raise BadInput(f"{what}: scenario {sc} has one mode to measure, nothing to "
                               "interleave it with; give 2 or more modes, or leave "
                               "interleave_slice_s out (null)")  # fmt: skip
    if p["requests"]:
        raise BadInput(f"{what}: an interleaved window is timed, each mode getting duration_s "
                       "in slices; leave requests out")  # fmt: skip
    if slice_s > p["duration_s"]:
        raise BadInput(f"{what} is longer than duration_s {p['duration_s']:g}: each mode gets "
                       "duration_s in slices of it")  # fmt: skip
    if round(slice_s * 1000) != slice_s * 1000:
        raise BadInput(f"{what}: k6's clock and bombardier's -d count whole milliseconds")
    for tool in p["tools"]:
        try:
            check_slice(tool, slice_s)
        except BadInput as e:
            raise BadInput(f"{what}: {e}") from None


@dataclass
class LaunchOptions:
    app_args: list[str] = _default("app_args")  # extra TestApp options
    access_log: bool = _default("access_log")  # proxy access logs (off, as in a tuned setup)
    url: str | None = _default("url")  # external / IIS modes: where the user's server answers
    watch: list[str] = _default("watch")  # external: process names to sample
    allow_remote: bool = _default("allow_remote")  # external: permit a non-loopback URL
    app_env: dict[str, str] = _default("app_env")  # extra environment of the test app
    # The keys the programs own (nginx_workers, ...: hostbench/programs), by name; each program
    # reads its own.
    program_settings: dict[str, object] = field(default_factory=_program_defaults)
    # The test app's runtime (params key runtimes, per variant): None, make setup's build.
    runtime: str | None = None
    # A runtime variant's name (hostbench/runtime_variants.py: its build, GC and runtime, in
    # place of `runtime`; params key runtime_variants, per variant); None: none.
    runtime_variant: str | None = None

    def as_params(self) -> dict:
        """Its params keys with their values, as params.json states them: the general ones (its
        fields named as keys), then each program's own."""
        general = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in NOT_KEYS}
        return copy.deepcopy({**general, **self.program_settings})


# LaunchOptions' fields that are no params key of their name.
NOT_KEYS = ("program_settings", "runtime", "runtime_variant")


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
    schedule: str = _default("schedule")  # the rounds' order (hostbench/schedules.py)
    focus: list[str] = _default("focus")  # modes that get `windows` windows (all when empty)
    interleave_slice_s: float | None = _default("interleave_slice_s")  # None: back to back
    target_halfwidth_pct: float | None = _default("target_halfwidth_pct")
    stop_when_decided: bool = _default("stop_when_decided")  # a claims profile: until decided
    max_repetitions: int = _default("max_repetitions")
    max_minutes: float | None = _default("max_minutes")
    description: str = _default("description")
    baseline: str | None = _default("baseline")
    seed: int | None = _default("seed")
    set_on_command_line: dict[str, str] = _default("set_on_command_line")  # --set's, as typed
    sample_interval_s: float = _default("sample_interval_s")
    progress_interval_s: float | None = _default("progress_interval_s")
    steady_tolerance_pct: float = _default("steady_tolerance_pct")
    requests: int | dict[str, int] | None = _default("requests")  # one, or one per scenario
    pipeline: int | dict[str, int] = _default("pipeline")  # one depth, or one per scenario
    keepalive: bool = _default("keepalive")
    loadgen_cpus: list[int] | None = _default("loadgen_cpus")
    variants: dict[str, dict] = _default("variants")  # the stated ones, then the swept ones
    variant_sweep: dict | None = _default("variant_sweep")  # as resolved: values and cores
    runtimes: list[str] = _default("runtimes")  # several: each a variant of the TestApp modes
    runtime_variants: list[str] = _default("runtime_variants")  # each a variant of them too
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
        values = keys.read(raw)
        _check_together(values)
        params = cls.from_validated(values)
        # Each tool can fire each scenario's load: a load no tool can fire is refused here,
        # before anything starts.
        for sc, t, c in itertools.product(params.scenarios, params.tools, params.concurrency):
            try:
                params.load(sc, t, c)
            except BadInput as e:
                raise BadInput(f"{e} (scenario {sc})") from None
        for name in params.sub_studies_run:
            try:
                params.sub_study(name)
            except BadInput as e:
                raise BadInput(f"sub-study {name!r}: {e}") from None
        return params

    @classmethod
    def from_validated(cls, values: dict) -> "StudyParams":
        """Params from values validated already, as from_dict reads them or to_dict writes them
        (papermill hands a study notebook to_dict's): built, not checked again."""
        runtimes = values["runtimes"]
        runtime = None if runtimes == [DEFAULT_RUNTIME] or len(runtimes) > 1 else runtimes[0]
        programs = {k.name: values[k.name] for k in keys.program_keys()}
        options = LaunchOptions(**{f.name: values[f.name] for f in fields(LaunchOptions)
                                   if f.name not in NOT_KEYS}, program_settings=programs,
                                runtime=runtime)  # fmt: skip
        swept = _swept(values["variant_sweep"])
        own = {f.name: values[f.name] for f in fields(cls) if f.name != "options"}
        return cls(**{**own, "variants": {**values["variants"], **swept}}, options=options)

    @classmethod
    def from_file(cls, path: Path, overrides: dict | None = None) -> "StudyParams":
        """Params from a YAML file (following `extends:`), with `overrides` applied last."""
        raw = load_yaml(Path(path))
        inventory = raw.get("inventory")
        if isinstance(inventory, str) and inventory and not Path(inventory).is_absolute():
            # Beside the params file, wherever it is read from (a notebook runs elsewhere).
            raw["inventory"] = str((Path(path).parent / inventory).resolve())
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
                 for k in keys.declared() if k.name not in raw and not k.required}  # fmt: skip
        try:
            return cls.from_dict({**older, **{k: v for k, v in raw.items() if k not in RECORDED}})
        except BadInput as e:
            raise BadInput(f"{path}: {e}") from None

    def to_dict(self) -> dict:
        """The params as a params file would state them (round-trips through from_dict)."""
        out = {k: v for k, v in asdict(self).items() if k != "options"}
        out.update(self.options.as_params())
        swept = expand_sweep(self.variant_sweep)  # stated once, as the sweep
        out["variants"] = {k: v for k, v in out["variants"].items() if k not in swept}
        return out

    def _made(self, what: str) -> dict:
        """What these params made once and keep (their cells' loads, their sub-studies)."""
        return self.__dict__.setdefault(f"_{what}", {})

    @property
    def sub_studies_skipped(self) -> dict[str, str]:
        """{name: why} of the sub-studies that do not run where this study runs (over ssh:
        those about one machine, topology.skipped_under)."""
        return {name: why for name, overrides in self.sub_studies.items()
                if (why := skipped_under(self.topology, overrides))}  # fmt: skip

    @property
    def sub_studies_run(self) -> list[str]:
        """The sub-studies that run beside this study, in the params' order."""
        skipped = self.sub_studies_skipped
        return [name for name in self.sub_studies if name not in skipped]

    def sub_study(self, name: str) -> "StudyParams":
        """The params of sub-study `name`: these params with its overrides, validated once
        (BadInput for one that is skipped where this study runs)."""
        if name not in self.sub_studies:
            allowed = ", ".join(self.sub_studies) or "none"
            raise BadInput(f"no sub-study {name!r} in these params; allowed: {allowed}")
        if why := self.sub_studies_skipped.get(name):
            raise BadInput(f"sub-study {name!r} does not run: {why}")
        made = self._made("sub_studies")
        if name not in made:
            made[name] = type(self).from_dict(overlay(self.to_dict(), self.sub_studies[name]))
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

    @property
    def runtime_comparison(self) -> dict[str, str]:
        """{variant: runtime} when the params compare runtimes (several), else empty."""
        if len(self.runtimes) < 2:
            return {}
        return {variant_name(r): r for r in self.runtimes}

    @property
    def app_comparison(self) -> dict[str, str]:
        """{variant: how a reader names it} of the test app's variants a run compares, each
        read on its own rows beside the modes that launch no test app (analysis/runtimes.py):
        several runtimes (".NET 8"), or the runtime variants (their labels); else empty."""
        if self.runtime_comparison:
            return {v: label(v) for v in self.runtime_comparison}
        return {name: get_variant(name).label for name in self.runtime_variants}

    @property
    def variant_builds(self) -> list[str]:
        """The runtime variants whose builds the runs launch (notebook.ensure_variant publishes
        each before the study measures)."""
        return list(self.runtime_variants) if any(map(takes_runtime, self.modes)) else []

    @property
    def runtime_builds(self) -> list[str]:
        """The runtimes whose self-contained builds the runs launch (none: make setup's)."""
        if self.runtimes == [DEFAULT_RUNTIME] or not any(map(takes_runtime, self.modes)):
            return []
        return list(self.runtimes)

    def variants_of(self, mode: str) -> list[str]:
        """The variants `mode` runs in: its runtimes when the params compare them (a mode that
        does not launch the test app: none), else the params' variants; [""]: none."""
        compared = self.runtime_comparison or self.runtime_variants
        if compared:
            return list(compared) if takes_runtime(mode) else [""]
        return list(self.variants) or [""]

    def variant_settings(self, variant: str) -> dict:
        """What a variant sets, as a run's settings record it."""
        if variant in self.runtime_comparison:
            return {"runtime": self.runtime_comparison[variant]}
        if variant in self.runtime_variants:
            v = get_variant(variant)
            return {"runtime_variant": variant, "build": v.build.kind, "runtime": v.runtime,
                    "app_env": v.env}  # fmt: skip
        return self.variants[variant]

    def options_for(self, variant: str) -> LaunchOptions:
        """The launch options of a variant's runs: the study's, then the variant's added."""
        if not variant:
            return self.options
        if variant in self.runtime_comparison:
            return replace(self.options, runtime=self.runtime_comparison[variant])
        if variant in self.runtime_variants:
            return replace(self.options, runtime_variant=variant)
        v = self.variants[variant]
        return replace(
            self.options,
            app_args=[*self.options.app_args, *v["app_args"]],
            app_env={**self.options.app_env, **v["app_env"]},
        )

    def cells(self) -> list[tuple[str, str, str, str, int]]:
        """Every (mode, variant, scenario, tool, concurrency) a block runs once.

        variant is "" when the study has none (variants_of); scenario_modes leaves out the modes
        a scenario does not run under.
        """
        return [
            (m, v, sc, t, c)
            for m in self.modes
            for v, sc, t, c in itertools.product(
                self.variants_of(m), self.scenarios, self.tools, self.concurrency
            )
            if m in self.scenario_modes.get(sc, self.modes)
        ]

    @property
    def baseline_mode(self) -> str:
        """The mode ratios are taken to: the params' baseline, else the first mode."""
        return self.baseline or self.modes[0]

    def measured_settings(self) -> dict:
        """What shapes every run's measurement, besides its cell: resuming must not change it.
        Each key whose kind (Key.kind) is measured, at its value here (one measured when set
        only when not its default), the runtime when one is set, and the version that ran."""
        values = {**asdict(self), **self.options.as_params()}
        return {
            **{k.name: values[k.name] for k in keys.declared() if k.in_fingerprint(values[k.name])},
            # Only when set, so runs measured before runtimes keep their fingerprints.
            **({"runtime": self.options.runtime} if self.options.runtime is not None else {}),
            "hostbench_version": __version__,
        }


def _program_settings(p: dict) -> None:
    """A key a program owns (hostbench/programs Setting), set (not null), is refused when no mode
    it shapes runs, since it would change nothing."""
    modes = p["modes"]
    for program in keys.programs():
        for setting in program.settings:
            name = setting.key.name
            if p[name] is not None and not any(program.shapes(setting, get_mode(m)) for m in modes):
                raise BadInput(f"params key {name!r} shapes {setting.shapes}, but no such mode "
                               f"is in {modes}")  # fmt: skip


def _for(value, scenario: str, default):
    """A per-scenario setting's value for `scenario` (a plain value applies to all)."""
    if isinstance(value, dict):
        return value.get(scenario, default)
    return default if value is None else value
