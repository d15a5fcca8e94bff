"""How long a run will take, said before it measures: `make reproduce` prints it first,
`--plan` prints it alone, and the README's lists of committed runs take their times from here.

A run on record is timed in parts (`Took`): its main run's measurement and each sub-study's
(design.json's minutes per block, the clock its budget counts; else its results' first start
to last end), the rest of reproduce.json's wall time being the tour, the notebook and the
report. A profile's plan (`Plan.of`) takes each committed run of the study that measured the
same main run (its params but for how long it may go on, and its sub-studies), keeps the
parts the profile runs, each cut where the profile's budget (max_minutes, max_repetitions)
would have stopped it, and states that budget. Where no run is on record, or a run lacks a
sub-study the profile runs, the params alone say it: every window's warm-up at most, its load
and OVERHEAD_S, for the blocks known to be measured.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from .analysis import machines, tables
from .analysis.kept import content_key, keep
from .analysis.until_decided import DESIGN_FILE
from .params import COMMAND_LINE_KEY, StudyParams, params_with_settings, settings_text
from .paths import RUNS
from .studies import get_study, profile_name

DONE_FILE = "reproduce.json"  # hostbench.reproduce.DONE_FILE: a complete run's wall time
# Per window, besides its load and warm-up: launching the app and proxy, the response check,
# the CPU readings and stopping everything (about 2 s on a 2-core machine), rounded up.
OVERHEAD_S = 3.0
SUB_STUDIES_SHOWN = 2  # a plan names each sub-study's blocks up to this many, else counts them
MAIN = ""  # the main run's part, beside each sub-study's (named by the sub-study)
# The keys that say how long a run may go on, not what it measures: a run on record with the
# same main run, cut where these stop it, stands for the params.
LENGTH_KEYS = ("max_minutes", "max_repetitions")
NOT_MEASURED = ("description", "seed", "sub_studies", COMMAND_LINE_KEY, *LENGTH_KEYS)


def params_estimate_s(params: StudyParams, blocks: int | None = None) -> float:
    """About how long `blocks` blocks (default: its `repetitions`) of one study or sub-study
    take by its params alone: every window's warm-up at most, its load and OVERHEAD_S (a
    quiet-machine wait or a re-run comes on top)."""
    per_window = params.warmup_s + params.duration_s + OVERHEAD_S
    return len(params.cells()) * (params.repetitions if blocks is None else blocks) * per_window


def stops_by_time(params: StudyParams) -> bool:
    """Whether its blocks are decided as it runs (measured until decided, or to a target
    half-width), so max_minutes and max_repetitions bound it; else it runs `repetitions`."""
    return params.stop_when_decided or params.target_halfwidth_pct is not None


def budget_minutes(params: StudyParams) -> float | None:
    """The minutes of measurement its budget allows; None for a fixed number of blocks."""
    return params.max_minutes if stops_by_time(params) else None


@dataclass(frozen=True)
class Part:
    """One part of a run on record: its main run ("") or a sub-study, as measured."""

    name: str
    blocks: int
    windows: int
    block_minutes: tuple[float, ...]  # design.json's, each block's; () where not recorded
    span_minutes: float  # its results' first start to last end

    @property
    def minutes(self) -> float:
        return sum(self.block_minutes) if self.block_minutes else self.span_minutes

    def cut(self, params: StudyParams) -> "Part":
        """This part as far as the params' budget would have let it go: after the first
        `repetitions` blocks, a block whose minutes would pass max_minutes, or beyond
        max_repetitions, is not measured (as the harness decides it, from the blocks so far)."""
        if not self.block_minutes or not stops_by_time(params):
            return self
        kept: list[float] = []
        for block, minutes in enumerate(self.block_minutes, start=1):
            over = params.max_minutes is not None and sum(kept) + minutes > params.max_minutes
            if block > params.max_repetitions or (block > params.repetitions and over):
                break
            kept.append(minutes)
        return replace(self, blocks=len(kept), block_minutes=tuple(kept))


def _part(folder: Path, name: str) -> Part:
    # Read once per content of its files (kept.py): every plan of the study's profiles, and
    # every page that states a run's time, reads each run on record.
    key = ("plan part", name, content_key(folder / "results.csv", folder / DESIGN_FILE))
    return keep(key, lambda: _read_part(folder, name))


def _read_part(folder: Path, name: str) -> Part:
    results = tables.load_results(folder, valid_only=False)
    start = pd.to_datetime(results["started_at"])
    end = start + pd.to_timedelta(results["duration_s"].fillna(0), unit="s")
    try:
        recorded = json.loads((folder / DESIGN_FILE).read_text()).get("minutes") or {}
    except (OSError, ValueError):
        recorded = {}
    minutes = tuple(float(recorded[k]) for k in sorted(recorded, key=int))
    return Part(name, int(results["block"].max()), int(results["windows"].sum()), minutes,
                (end.max() - start.min()).total_seconds() / 60)  # fmt: skip


@dataclass(frozen=True)
class Took:
    """How long a complete run on record took, in parts (Part): reproduce.json's wall time,
    its main run's and each sub-study's measurement, the rest the tour, notebook and report."""

    path: Path
    study: str
    profile: str
    wall_minutes: float
    parts: dict[str, Part]  # MAIN first, then each sub-study measured
    env: dict
    set_on_command_line: dict[str, str]
    started: pd.Timestamp

    @property
    def rest_minutes(self) -> float:
        return max(0.0, self.wall_minutes - sum(p.minutes for p in self.parts.values()))

    @property
    def own_minutes(self) -> float:
        """The main run's own time: its measurement and the rest, without its sub-studies."""
        return self.parts[MAIN].minutes + self.rest_minutes

    @property
    def main(self) -> Part:
        return self.parts[MAIN]

    def set_text(self) -> str:
        """ "max_minutes=25 set on the command line", or "" where nothing was."""
        typed = self.set_on_command_line
        return f"{settings_text(typed)} set on the command line" if typed else ""


def took(run_dir: str | Path) -> Took | None:
    """A complete run's time in parts (its reproduce.json, results and design.json, and its
    sub-studies' folders beside it); None for a run without reproduce.json or results."""
    run_dir = Path(run_dir)
    if not (run_dir / DONE_FILE).is_file() or not (run_dir / "results.csv").is_file():
        return None
    done = json.loads((run_dir / DONE_FILE).read_text())
    params = tables.load_params(run_dir)
    parts = {MAIN: _part(run_dir, MAIN)}
    for name in params.sub_studies:
        folder = run_dir.parent / f"{run_dir.name}-{name}"
        if (folder / "results.csv").is_file():
            parts[name] = _part(folder, name)
    # As _part: read once per content of the results.
    started = keep(("first start", content_key(run_dir / "results.csv")),
                   lambda: _first_start(run_dir))  # fmt: skip
    try:
        env = tables.load_environment(run_dir)
    except Exception:  # noqa: BLE001 - a run without environment.json: its processor unknown
        env = {}
    return Took(run_dir, done["study"], done["profile"], done["wall_s"] / 60, parts, env,
                dict(params.set_on_command_line), started)  # fmt: skip


def _first_start(run_dir: Path) -> pd.Timestamp:
    return pd.to_datetime(tables.load_results(run_dir, valid_only=False)["started_at"]).min()


def measures_the_same(a: StudyParams, b: StudyParams) -> bool:
    """Whether two params measure the same main run: every key but how long it may go on
    (LENGTH_KEYS), its sub-studies and what only describes it."""

    def main(p: StudyParams) -> dict:
        return {k: v for k, v in p.to_dict().items() if k not in NOT_MEASURED}

    return main(a) == main(b)


@dataclass(frozen=True)
class Estimate:
    """A run on record standing for the params: its parts as the params' budgets cut them."""

    took: Took
    processor: str
    parts: dict[str, Part]  # the parts on record the params run, cut (Part.cut)
    by_params: dict[str, float]  # {sub-study: minutes by its params}: those it lacks

    @property
    def minutes(self) -> float:
        return (self.took.rest_minutes + sum(p.minutes for p in self.parts.values())
                + sum(self.by_params.values()))  # fmt: skip

    def text(self) -> str:
        """ "14 min: 7 blocks, then 8 of its runtimes sub-study, on AMD EPYC (...)"."""
        return f"{self.minutes:.0f} min: {self.detail()}"

    def detail(self) -> str:
        """ "7 blocks, then 8 of its runtimes sub-study, on AMD EPYC (the committed run ...)"."""
        blocks = [f"{self.parts[MAIN].blocks} blocks"]
        subs = {name: p for name, p in self.parts.items() if name != MAIN}
        if len(subs) > SUB_STUDIES_SHOWN:
            blocks.append(f"its {len(subs)} sub-studies on record")
        else:
            blocks += [f"{p.blocks} of its {name} sub-study" for name, p in subs.items()]
        blocks += [f"its {name} sub-study by its params" for name in self.by_params]
        measured = self.took.main.blocks
        note = self.took.set_text()
        if note or measured != self.parts[MAIN].blocks:
            done = f"{measured} blocks in {self.took.own_minutes:.0f} min"
            note = f"; it measured {done}" + (f" with {note}" if note else "")
        name = self.took.path.relative_to(self.took.path.parent.parent).as_posix()
        if self.took.path.parent.name != machines.COMMUNITY:
            name = self.took.path.name
        return (
            f"{', then '.join(blocks)} on {self.processor} ({name}, "
            f"{self.took.started:%Y-%m-%d}{note})"
        )


@dataclass(frozen=True)
class Plan:
    """How long a study's run of a profile will take: the runs on record standing for it
    (Estimate, this machine's processor first where one ran on it), else its params alone;
    and its budget."""

    study: str
    profile: str
    params: StudyParams
    estimates: tuple[Estimate, ...]
    here: str  # the name of this machine's processor among them, "" where none ran on it

    @classmethod
    def of(cls, study_id: str, profile: str, settings: Sequence[str] = (),
           runs_dir: Path = RUNS, here: dict | None = None) -> "Plan":  # fmt: skip
        """The plan of `make reproduce STUDY=study_id PROFILE=profile` with `--set` settings;
        here: this machine's processor (environment.processor()), to put its runs first."""
        params = params_with_settings(get_study(study_id).params_path(profile), settings)
        return cls.for_params(study_id, profile_name(profile), params, runs_dir, here)

    @classmethod
    def for_params(cls, study_id: str, profile: str, params: StudyParams, runs_dir: Path = RUNS,
                   here: dict | None = None) -> "Plan":  # fmt: skip
        """The plan of validated params (Plan.of: a profile with its settings)."""
        found = []
        for run in machines.runs_on_record(study_id, runs_dir):
            recorded = took(run)
            if recorded is None or not _stands_for(recorded, params):
                continue
            parts = {MAIN: recorded.main.cut(params)}
            missing = {}
            for name in params.sub_studies_run:
                sub = params.sub_study(name)
                if name in recorded.parts:
                    parts[name] = recorded.parts[name].cut(sub)
                else:
                    missing[name] = params_estimate_s(sub) / 60
            found.append((recorded, parts, missing))
        named = machines.one_name_per_machine([(r.env, None) for r, _, _ in found])
        estimates = [Estimate(r, name, parts, missing) for (r, parts, missing), (name, _)
                     in zip(found, named, strict=True)]  # fmt: skip
        mine = ""
        if here is not None:
            from .harness.environment import processor_changed

            same = [e for e in estimates if e.took.env and not processor_changed(e.took.env)]
            mine = same[0].processor if same else ""
            estimates = same + [e for e in estimates if e not in same]
        return cls(study_id, profile, params, tuple(estimates), mine)

    @property
    def minutes(self) -> float:
        """The time it will take: the first run on record's (this machine's processor's where
        one ran on it), else by the params."""
        return self.estimates[0].minutes if self.estimates else self.params_minutes

    @property
    def params_minutes(self) -> float:
        """By the params alone: the blocks known to be measured (`repetitions`) of the study
        and of each sub-study it runs."""
        parts = [self.params, *(self.params.sub_study(n) for n in self.params.sub_studies_run)]
        return sum(params_estimate_s(p) for p in parts) / 60

    @property
    def budgets(self) -> dict[str, float | None]:
        """{"" (the main run) or sub-study: its minutes of measurement at most, or None}."""
        parts = {MAIN: self.params, **{n: self.params.sub_study(n)
                                       for n in self.params.sub_studies_run}}  # fmt: skip
        return {name: budget_minutes(p) for name, p in parts.items()}

    @property
    def budget(self) -> float | None:
        """Its minutes of measurement at most, every part's together; None where a part runs a
        fixed number of blocks."""
        values = list(self.budgets.values())
        return None if None in values else sum(values)

    def budget_text(self) -> str:
        """ "at most 65 min of measurement by its budgets (15 min, then 50 for its runtimes
        sub-study)", with what was set on the command line."""
        budgets = self.budgets
        fixed = [name for name, m in budgets.items() if m is None]
        timed = {name: m for name, m in budgets.items() if m is not None}
        if not timed:
            text = "no time budget: a fixed number of blocks"
        elif not fixed:
            text = f"at most {self.budget:g} min of measurement by its budget"
            text += f"s ({self.budgets_text()})" if len(timed) > 1 else " (max_minutes)"
        else:
            text = (f"at most {sum(timed.values()):g} min of measurement by the budget of "
                    f"{', '.join(name or 'the main run' for name in timed)}; "
                    f"{_parts_text(fixed)}: a fixed number of blocks")  # fmt: skip
        typed = self.params.set_on_command_line
        return text + (f", with {settings_text(typed)} set on the command line" if typed else "")

    def budgets_text(self) -> str:
        """ "15 min, then 50 for its runtimes sub-study": each part's budget where every part
        has one (max_minutes); "" where one runs a fixed number of blocks."""
        if self.budget is None:
            return ""
        budgets = self.budgets
        subs = [f", then {m:g} for its {name} sub-study" for name, m in budgets.items() if name]
        return f"{budgets[MAIN]:g} min" + "".join(subs)

    def text(self) -> str:
        """The plan in a sentence: "jcsi2018, profile claims: about 14 min: 7 blocks on AMD
        EPYC (example-jcsi2018-claims, 2026-11-28); at most 15 min of measurement by its
        budget (max_minutes).", the other runs on record after the first."""
        head = f"{self.study}, profile {self.profile}: about {self.minutes:.0f} min"
        if self.estimates:
            first, *others = self.estimates
            where = ", this machine's processor" if self.here else ""
            said = f"{head}: {first.detail()}{where}"
            if others:
                said += "; also on record: " + "; ".join(e.text() for e in others)
        else:
            said = (f"{head} by its params ({self._blocks_text()}; no committed run of this "
                    "profile on record)")  # fmt: skip
        return f"{said}; {self.budget_text()}."

    def _blocks_text(self) -> str:
        p = self.params
        first = "its first " if stops_by_time(p) else ""
        blocks = f"{p.repetitions} block{'s' if p.repetitions != 1 else ''}"
        return (
            f"{first}{blocks} of {len(p.cells())} windows, each up to {p.warmup_s:g} s of "
            f"warm-up and {p.duration_s:g} s of load"
        )


def profile_running(study_id: str, profile: str, sub_study: str) -> str | None:
    """The profile that runs `sub_study`: `profile` where it still does, else another profile
    of the study that measures the same main run and runs it (the scope profile, for the
    sub-studies a claims run measured before its profile left them); None where none does."""
    study = get_study(study_id)
    profiles = {p: StudyParams.from_file(study.params_path(p)) for p in study.profiles()}
    if profile not in profiles:
        return None
    if sub_study in profiles[profile].sub_studies:
        return profile
    return next((p for p, params in profiles.items() if sub_study in params.sub_studies
                 and measures_the_same(params, profiles[profile])), None)  # fmt: skip


def _parts_text(names: list[str]) -> str:
    """ "the main run, the sub-studies a, b", "the sub-study a"."""
    subs = [n for n in names if n != MAIN]
    said = ["the main run"] if MAIN in names else []
    if subs:
        said.append(f"the sub-stud{'ies' if len(subs) > 1 else 'y'} {', '.join(subs)}")
    return ", ".join(said)


def _stands_for(recorded: Took, params: StudyParams) -> bool:
    """Whether a run on record measured the main run the params measure (measures_the_same,
    against its params.json)."""
    try:
        return measures_the_same(tables.load_params(recorded.path), params)
    except Exception:  # noqa: BLE001 - a record older than a key's rules: it stands for nothing
        return False


def batch_text(plans: Sequence[Plan]) -> str:
    """A batch's plan in a sentence: its studies' times together, each processor's part where
    they come from runs on several, and their budgets together."""
    total = sum(p.minutes for p in plans)
    on: dict[str, list[str]] = {}
    for p in plans:
        where = f"on {p.estimates[0].processor}" if p.estimates else "by their params"
        on.setdefault(where, []).append(p.study)
    source = "; ".join(f"{', '.join(sids)} {where}" for where, sids in on.items())
    budgets = [p.budget for p in plans]
    limit = (f"at most {sum(budgets):g} min of measurement by their budgets" if None not in budgets
             else "no budget for all of them (a part runs a fixed number of blocks)")  # fmt: skip
    return f"The batch: about {total:.0f} min for {len(plans)} studies ({source}); {limit}."
