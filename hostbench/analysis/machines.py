"""A claim's verdict on every machine on record: each processor that ran the study (its
committed examples, data/runs/example-*/, and the re-runs under data/runs/community/, any
profile but a smoke run), the verdict its runs reach, and whether it depends on the machine.

A verdict read off one run is about that run's machine; beside it the report's first screen
says whether the other machines agree ("the same on every machine on record") or which way
each went ("depends on the machine: Intel Xeon: smaller ...; AMD EPYC: reproduced"); a machine
whose intervals are still undecided is named apart and differs from none ("reproduced wherever
decided (Intel Xeon); undecided at this precision on AMD EPYC"). Two runs on one processor
that disagree are both named. Each run's verdicts are claims.of_run's, kept
by the files' content (kept.py), so a page that asks again pays nothing.
"""

import json
import re
from pathlib import Path

import pandas as pd

from ..errors import BadInput
from ..paths import RUNS, committed
from . import claims, tables
from .compare import DONE_FILE
from .verdicts import CONSISTENT, DIFFERS, LARGER, NOT_ENOUGH, SMALLER, UNDECIDED

COMMUNITY = "community"  # the folder under the runs dir for runs from other machines
EXAMPLES = "example-*"  # the committed examples' folders under the runs dir
MACHINES = "by machine on record"  # the findings box's column
# The processor's identity beside its model name, where environment.json records it (older
# runs have the model name alone); the vendor is in the model name already.
IDENTITY = ("cpu_family", "cpu_model_number", "cpu_stepping")
# A run's name where its model name covers two recorded identities and it recorded none: it
# may have been either, so it is no machine of its own and not taken for one of them.
UNIDENTIFIED = "(family not recorded)"
# What a CPU model name carries that tells no processor from another.
_NOISE = re.compile(r"\((R|TM|tm)\)|\bCPU\b|\bProcessor\b|@\s*[\d.]+\s*GHz")


def processor(env: dict) -> str:
    """The processor a run measured on, in a few words: its model name without trademarks
    and clock ("Intel Xeon Platinum 8370C"), with its family, model and stepping where
    recorded ("Intel Xeon (family 6, model 106, stepping 6)"); "an unrecorded processor"."""
    known = tables.processor_identity(env, IDENTITY)
    return f"{model_name(env)} ({', '.join(known)})" if known else model_name(env)


def model_name(env: dict) -> str:
    """The model name without trademarks and clock; "an unrecorded processor" without one."""
    name = " ".join(_NOISE.sub(" ", str(env.get("cpu_model") or "")).split())
    return name or "an unrecorded processor"


def runs_on_record(study_id: str, runs_dir: Path = RUNS) -> list[Path]:
    """The study's finished runs under the runs dir, a committed example or a re-run under
    community/, each a main run (its sub-studies are its sensitivity column's conditions),
    none a smoke run; in folder order, the examples first. In the checkout, the runs git
    tracks (paths.committed): a run copied into community/ is on record once added, as the
    gallery shows it."""
    runs_dir = Path(runs_dir)
    found = []
    for pattern in (EXAMPLES, f"{COMMUNITY}/*"):
        for done in committed(runs_dir, f"{pattern}/{DONE_FILE}"):
            run = done.parent
            if json.loads(done.read_text()).get("study") != study_id:
                continue
            if (run / "results.csv").is_file() and not tables.is_smoke(run):
                found.append(run)
    return found


def verdicts(study_id: str, table: pd.DataFrame | None = None, run_dir: str | Path | None = None,
             runs_dir: Path = RUNS) -> dict[str, str]:  # fmt: skip
    """{claim: its verdict on each machine on record, in words (in_words)}, over the study's
    runs on record and the run at `run_dir` (whose claims `table` is, when given: not judged
    again). Empty for a study without claims."""
    return {claim: in_words(seen, unmeasured)
            for claim, (seen, unmeasured) in seen_by_claim(study_id, table, run_dir,
                                                           runs_dir).items()}  # fmt: skip


def seen_by_claim(study_id: str, table: pd.DataFrame | None = None,
                  run_dir: str | Path | None = None,
                  runs_dir: Path = RUNS) -> dict[str, tuple[dict, dict]]:  # fmt: skip
    """{claim: ({processor: {verdict: runs}}, {processor: runs that did not measure it})}: what
    `verdicts` words, as counts (in_words, in_short take them)."""
    runs = runs_on_record(study_id, runs_dir)
    here = Path(run_dir).resolve() if run_dir is not None else None
    if here is not None and here not in {r.resolve() for r in runs}:
        runs.append(here)
    by_run, envs = [], []  # (judged, its env's index, {claim: its env's index}), every env
    for run in runs:
        mine = table is not None and here is not None and run.resolve() == here
        judged = table if mine else claims.of_run(study_id, run)
        if judged is None:
            return {}
        # A claim judged on a sub-study was measured where that sub-study ran (its folder
        # beside the run's: another day, commit or machine), so its processor is read there.
        own, where = len(envs), {}
        envs.append(environment(run))
        for claim, sub in judged.attrs.get(claims.JUDGED_ON, {}).items():
            folder = run.parent / f"{run.name}-{sub}"
            if folder.is_dir():
                where[claim] = len(envs)
                envs.append(environment(folder))
        # Its (claim, verdict) pairs as plain values: a table's attrs (every condition's
        # points) are deep-copied by each pandas operation on it, which cost more than this.
        pairs = list(zip(judged[claims.CLAIM], judged[claims.VERDICT], strict=True))
        by_run.append((pairs, set(judged.attrs.get(claims.NOT_RUN, ())), own, where))
    names = [name for name, _ in one_name_per_machine([(env, None) for env in envs])]
    out = {}
    for claim in dict.fromkeys(c for pairs, *_ in by_run for c, _ in pairs):
        seen, unmeasured = {}, {}  # {processor: {verdict: runs}}, {processor: runs}
        for pairs, not_run, own, where in by_run:
            name = names[where.get(claim, own)]
            if claim in not_run:  # a run older than its comparisons
                unmeasured[name] = unmeasured.get(name, 0) + 1
                continue
            for verdict in (v for c, v in pairs if c == claim):
                counts = seen.setdefault(name, {})
                counts[verdict] = counts.get(verdict, 0) + 1
        out[claim] = (seen, unmeasured)
    return out


def one_name_per_machine(by_run: list[tuple[dict, pd.DataFrame]]) -> list[tuple[str, pd.DataFrame]]:
    """Each run's processor named (environment, judged) -> (name, judged): runs of one model
    name whose recorded identities do not differ (older runs lack family, model and
    stepping) are one machine, named by the model name alone; two recorded identities under
    one model name are two machines, each named with its identity (processor), and a run of
    that name without one is named UNIDENTIFIED ("AMD EPYC (family not recorded)")."""
    identities: dict[str, set[tuple]] = {}
    for env, _ in by_run:
        if _recorded(env):
            identities.setdefault(model_name(env), set()).add(_identity(env))

    def name(env: dict) -> str:
        if len(identities.get(model_name(env), ())) < 2:
            return model_name(env)
        return processor(env) if _recorded(env) else f"{model_name(env)} {UNIDENTIFIED}"

    return [(name(env), t) for env, t in by_run]


def _identity(env: dict) -> tuple:
    return tuple(env.get(key) for key in IDENTITY)


def _recorded(env: dict) -> bool:
    return any(v not in (None, "", "unknown") for v in _identity(env))


def environment(run: Path) -> dict:
    """The run's environment.json ({} where a run has none: its processor unrecorded)."""
    try:
        return tables.load_environment(run)
    except BadInput:
        return {}


def in_words(seen: dict[str, dict[str, int]], unmeasured: dict[str, int] | None = None) -> str:
    """A claim's verdicts by processor ({processor: {verdict: runs}}), the first words saying
    whether it depends on the machine: "the same on all 2 machines on record (Intel Xeon, AMD
    EPYC): reproduced", "depends on the machine: Intel Xeon: smaller; AMD EPYC: reproduced",
    "one machine on record: Intel Xeon: reproduced (2 runs)"; two runs on one processor
    that disagree are both named ("Intel Xeon: smaller (1 run), reproduced (1 run)"), and runs
    whose processor is UNIDENTIFIED are not counted as a machine ("the same on every machine on
    record (AMD EPYC (family not recorded), 2 runs; AMD EPYC (family 26, ...)): ..."). A
    machine still undecided disagrees with none: "reproduced wherever decided (Intel Xeon);
    undecided at this precision on AMD EPYC". A run whose intervals were too few to judge
    (NOT_ENOUGH: a convergence run's one block) disagrees with none: it is named after them
    ("1 run too short to judge it, on AMD EPYC"), and so is a run that measured none of its
    comparisons ({processor: runs} in `unmeasured`: "2 runs did not measure it, on Intel
    Xeon")."""
    short = {name: counts[NOT_ENOUGH] for name, counts in seen.items()
             if NOT_ENOUGH in counts}  # fmt: skip
    judged = {name: {v: n for v, n in counts.items() if v != NOT_ENOUGH}
              for name, counts in seen.items()}  # fmt: skip
    judged = {name: counts for name, counts in judged.items() if counts}
    if not judged:
        return f"{NOT_ENOUGH} on any run on record"
    words = _judged_in_words(judged)
    for runs, what in ((short, "too short to judge it"), (unmeasured or {}, "did not measure it")):
        if runs:
            words += f"; {_runs(sum(runs.values()))} {what}, on {', '.join(runs)}"
    return words


def _judged_in_words(seen: dict[str, dict[str, int]]) -> str:
    def on(counts: dict[str, int]) -> str:
        if len(counts) == 1:
            (verdict, n), *_ = counts.items()
            return verdict + (f" ({n} runs)" if n > 1 else "")
        return ", ".join(f"{v} ({_runs(n)})" for v, n in counts.items())

    each = "; ".join(f"{name}: {on(counts)}" for name, counts in seen.items())
    # Undecided is no verdict of its own: a machine whose interval still straddles a line
    # disagrees with none, so it is named apart, never read as "depends on the machine".
    decided = {v for counts in seen.values() for v in counts if v != UNDECIDED}
    if len(seen) == 1:
        if len(decided) > 1:
            return f"differs between runs on one machine: {each}"
        return f"one machine on record: {each}"
    if len(decided) > 1:
        return f"depends on the machine: {each}"
    if not decided:
        return f"{_same_on(seen)}: {UNDECIDED}"
    (verdict,) = decided
    where = {name: counts[verdict] for name, counts in seen.items() if verdict in counts}
    open_ = {name: counts[UNDECIDED] for name, counts in seen.items() if UNDECIDED in counts}
    if not open_:
        return f"{_same_on(seen)}: {verdict}"
    every = _runs_by(seen)
    return (f"{verdict} wherever decided ({_listed(where, every)}); {UNDECIDED} on "
            f"{_listed(open_, every)}")  # fmt: skip


def _same_on(seen: dict[str, dict[str, int]]) -> str:
    """ "the same on all N machines on record (...)", or, where a run's processor is
    UNIDENTIFIED (it was one of the others, or a third), "the same on every machine on record
    (...)", with no count of machines."""
    if not any(name.endswith(UNIDENTIFIED) for name in seen):
        return f"the same on {_every(len(seen))} machines on record ({', '.join(seen)})"
    return f"the same on every machine on record ({_listed(_runs_by(seen))})"


def _runs_by(seen: dict[str, dict[str, int]]) -> dict[str, int]:
    return {name: sum(counts.values()) for name, counts in seen.items()}


def _listed(runs: dict[str, int], every: dict[str, int] | None = None) -> str:
    """Processors by name, an UNIDENTIFIED one with its runs ("AMD EPYC (family not recorded),
    2 runs; Intel Xeon"): it is counted as no machine, so its runs are. With `every` (each
    processor's runs in all), one whose runs split between lists says how ("Intel Xeon, 1 of 2
    runs"): a machine on both lists is no contradiction, its runs went both ways."""
    every = every or runs

    def named(name: str, n: int) -> str:
        if n < every[name]:
            return f"{name}, {n} of {every[name]} runs"
        return f"{name}, {_runs(n)}" if name.endswith(UNIDENTIFIED) else name

    return "; ".join(named(name, n) for name, n in runs.items())


def _runs(n: int) -> str:
    return f"{n} run{'s' * (n != 1)}"


def with_machines(table: pd.DataFrame, study_id: str, run_dir: str | Path | None = None,
                  runs_dir: Path = RUNS, seen: dict | None = None) -> pd.DataFrame:  # fmt: skip
    """The claims table with the MACHINES column after the verdict's: each claim's verdict on
    every machine on record (verdicts); empty for a claim no interval judges (one without a
    sensitivity either, claims.judge_table). run_dir: this run's folder, None where it is on
    record already or its page does not name it. seen: seen_by_claim's counts, where the
    caller has them already."""
    if seen is None:
        seen = seen_by_claim(study_id, table, run_dir, runs_dir)
    words = {claim: in_words(*counts) for claim, counts in seen.items()}
    out = table.copy()
    judged = out[claims.SENSITIVITY].fillna("") != ""
    column = [words.get(c, "") if j else "" for c, j in zip(out[claims.CLAIM], judged, strict=True)]
    out.insert(out.columns.get_loc(claims.VERDICT) + 1, MACHINES, column)
    return out


# The card's words on where a verdict holds stay within this many words (else counts).
SHORT_WORDS = 15
# A verdict in few words, where the card names it beside a machine.
SHORT_VERDICT = {SMALLER: "smaller", LARGER: "larger", DIFFERS: "differs", UNDECIDED: "still open",
                 CONSISTENT: "consistent"}  # fmt: skip
_IDENTIFIED = re.compile(r"^(?P<name>.*) \(family (?P<family>\d+), model (?P<model>\d+), "
                         r"stepping \d+\)$")  # fmt: skip


def short_names(names) -> dict[str, str]:
    """{processor as named on record: its name for a first screen or a picture's row}: the model
    name with as much of its identity as tells it from the others named ("AMD EPYC family 25",
    "AMD EPYC family 25 model 17" where two models of one family are on record), the stepping
    never; an UNIDENTIFIED one "AMD EPYC family unknown"."""
    found = {n: _IDENTIFIED.match(n) for n in names}
    families: dict[tuple, set] = {}
    for m in filter(None, found.values()):
        families.setdefault((m["name"], m["family"]), set()).add(m["model"])
    out = {}
    for name, m in found.items():
        if m is None:
            out[name] = name.replace(UNIDENTIFIED, "family unknown")
            continue
        model = f" model {m['model']}" if len(families[(m["name"], m["family"])]) > 1 else ""
        out[name] = f"{m['name']} family {m['family']}{model}"
    return out


def in_short(seen: dict[str, dict[str, int]], counted: bool = False) -> str:
    """Where a claim's verdicts hold ({processor: {verdict: runs}}, as in_words takes), in at
    most SHORT_WORDS words for a first screen: "the same on 3 machines", "one machine on record",
    "smaller on Intel Xeon; reproduced on AMD EPYC family 25", "reproduced where decided (2 of
    3 machines)". A run whose processor is UNIDENTIFIED counts as no machine, and a run too
    short to judge is left to the details. counted: machines counted, never named ("reproduced
    on 2 machines; smaller on 1"), for a line with more to say."""
    judged = {name: {v: n for v, n in counts.items() if v != NOT_ENOUGH}
              for name, counts in seen.items()}  # fmt: skip
    judged = {name: counts for name, counts in judged.items() if counts}
    machines_ = [name for name in judged if not name.endswith(UNIDENTIFIED)] or list(judged)
    if not judged:
        return f"{NOT_ENOUGH} on any run on record"
    decided: dict[str, list[str]] = {}  # {verdict: processors}
    for name in machines_:
        for verdict in judged[name]:
            if verdict != UNDECIDED:
                decided.setdefault(verdict, []).append(name)
    n = len(machines_)
    if len(machines_) == 1 and len(decided) <= 1:
        return "one machine on record"
    if not decided:
        return f"still open on {_every(n)} machines"
    if len(decided) == 1:
        ((verdict, where),) = decided.items()
        if len(where) == n:
            return f"the same on {n} machines"
        return f"{SHORT_VERDICT.get(verdict, verdict)} where decided ({len(where)} of {n} machines)"
    short = short_names(machines_)
    words = "; ".join(f"{SHORT_VERDICT.get(verdict, verdict)} on "
                      f"{_joined([short[w] for w in where], list(short.values()))}"
                      for verdict, where in decided.items())  # fmt: skip
    if not counted and len(words.split()) <= SHORT_WORDS:
        return words
    counts = [f"{SHORT_VERDICT.get(verdict, verdict)} on {len(where)}"
              for verdict, where in decided.items()]  # fmt: skip
    return f"{counts[0]} machine{'s' * (len(decided[next(iter(decided))]) != 1)}" + "".join(
        f"; {c}" for c in counts[1:]
    )


def _joined(names: list[str], every: list[str]) -> str:
    """ "AMD EPYC family 25 and 26, Intel Xeon": short names (short_names) with one model name
    and its family word said once, and the model name alone where these are all of its
    machines among `every` ("AMD EPYC")."""
    groups: dict[str, list[str]] = {}
    for name in names:
        head, sep, tail = name.partition(" family ")
        groups.setdefault(head + sep, []).append(tail)
    out = []
    for head, tails in groups.items():
        if not head.endswith(" family "):
            out.append(head)
        elif len(tails) == sum(n.startswith(head) for n in every):
            out.append(head.removesuffix(" family "))
        else:
            out.append(head + " and ".join(tails))
    return ", ".join(out)


def _every(n: int) -> str:
    """Every one of `n` machines, as a sentence counts them: "both", "all 3"."""
    return "both" if n == 2 else f"all {n}"
