"""What a params key is: its declaration (Key), the rule each of its values obeys (Rule) and
its form (one value, a list, one per scenario). The declarations themselves are in keys.py;
these checks are shared by them and by the sweep's expansion."""

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum

from ..errors import BadInput

REQUIRED_KEY = object()  # the default of a key a params file must state
AS_DEFAULT = object()  # a key missing from an older params.json means its default
# A key's form: one value, a list of values (each once; one value alone is a list of one), or
# one value for every scenario or a mapping {scenario: value} for some of them.
ONE, LIST, PER_SCENARIO = "one", "list", "per scenario"


class Kind(StrEnum):
    """What a key changes of a study, which says where the harness records it (KIND_MEANING).
    A key declared without one is MEASURED_WHEN_SET: a key added later leaves the runs
    recorded before it as they were."""

    CELL = "cell"
    MEASURED = "measured"
    MEASURED_WHEN_SET = "measured when set"
    SCHEDULE = "schedule"
    NOT_MEASURED = "not measured"


KIND_MEANING = {
    Kind.CELL: "what the cells are (a run's key names its cell); a resume must not change it",
    Kind.MEASURED: "shapes every window's measurement: in every run's fingerprint, and a "
    "resume must not change it",
    Kind.MEASURED_WHEN_SET: "likewise, but in the fingerprint only when not its default (the "
    "runs recorded before the key keep theirs)",
    Kind.SCHEDULE: "how many units the schedule measures and when it stops, not what a window "
    "measures: in no fingerprint; a resume must not change it (but a larger max_minutes for a "
    "run measured until decided)",
    Kind.NOT_MEASURED: "describes or explains a study, or how the harness copes with a busy "
    "machine: a resume may change it",
}


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
    also: str = ""  # in words: the rules it obeys with other keys (study.py _check_together)
    check: Callable | None = None  # a key of its own shape: (key, value, earlier keys) -> value
    shape: str = ""  # the type of a key with a check of its own, as a params file writes it
    # What a params.json recorded before this key existed means: what the harness then did.
    before: object = AS_DEFAULT
    smoke: object = AS_DEFAULT  # what `smoke: true` makes it, unless the params state it
    kind: Kind = Kind.MEASURED_WHEN_SET

    def in_fingerprint(self, value) -> bool:
        """Whether a run's fingerprint holds this key at `value`."""
        return self.kind == Kind.MEASURED or (
            self.kind == Kind.MEASURED_WHEN_SET and value != self.default
        )

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
            return unique(self.name, [self.rule.check(self.name, v) for v in items])
        return self.rule.check(self.name, value)


def as_list(key: str, value) -> list:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise BadInput(f"params key {key!r} is an empty list; give at least one value")
    return items


def unique(key: str, items: list) -> list:
    for item in items:
        if items.count(item) > 1:
            raise BadInput(f"params key {key!r} lists {item!r} twice; give each value once")
    return items


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


def refuse_unknown(what: str, given: dict, allowed) -> None:
    """BadInput naming the keys of `given` that `allowed` lacks, and what is allowed."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise BadInput(
            f"{what}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(allowed)}"
        )
