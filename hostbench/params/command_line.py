"""Params keys set on the command line: `--set KEY=VALUE` (repeatable) over a profile.

Each value is read as YAML, as in a params file (5, null, [kestrel, nginx]), and the result is
validated by the same declarations as a params file (keys.py). A setting applies to the
study's params as its profile's top level does: its sub-studies inherit it unless they set
that key themselves. The settings, as typed, are recorded in the params' own key
COMMAND_LINE_KEY, so params.json and the report name them.

The parser (`parse_assignment`) also reads the hosting lab's `--what-if NAME=VALUE`.
"""

from collections.abc import Sequence
from pathlib import Path

import yaml

from ..errors import BadInput
from . import keys
from .study import StudyParams

COMMAND_LINE_KEY = "set_on_command_line"  # {key: value as typed}; declared in keys.py


def settable() -> tuple[str, ...]:
    """Every params key may be set (a program's own too), but the record of what was set."""
    return tuple(k.name for k in keys.declared() if k.name != COMMAND_LINE_KEY)


def parse_assignment(text: str, allowed: Sequence[str], what: str) -> tuple[str, object]:
    """NAME=VALUE, the value read as YAML (1, Debug, [kestrel, nginx], null); BadInput in one
    line, starting with `what` and the text, for a name not in `allowed` or an unreadable value."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or name not in allowed:
        raise BadInput(f"{what} {text!r}: give NAME=VALUE, NAME one of {', '.join(allowed)}")
    try:
        return name, yaml.safe_load(value)
    except yaml.YAMLError:
        example = "e.g. 1, Debug, [a, b]"
        raise BadInput(f"{what} {text!r}: {value!r} is not a value ({example})") from None


def parse_settings(texts: Sequence[str]) -> dict[str, tuple[object, str]]:
    """--set KEY=VALUE texts as {key: (value, value as typed)}; each key once."""
    out: dict[str, tuple[object, str]] = {}
    for text in texts:
        name, value = parse_assignment(text, settable(), "--set")
        if name in out:
            raise BadInput(f"--set {name} is given twice; give each key once")
        out[name] = (value, text.partition("=")[2].strip())
    return out


def settings_text(recorded: dict[str, str]) -> str:
    """The settings as the command line gave them: "duration_s=5, modes=[kestrel,nginx]"."""
    return ", ".join(f"{name}={value}" for name, value in recorded.items())


def with_settings(raw: dict, settings: dict[str, tuple[object, str]]) -> dict:
    """A params mapping with the settings applied over it, and recorded (COMMAND_LINE_KEY)."""
    if not settings:
        return raw
    recorded = {name: typed for name, (_, typed) in settings.items()}
    return {**raw, **{name: value for name, (value, _) in settings.items()},
            COMMAND_LINE_KEY: recorded}  # fmt: skip


def params_with_settings(
    path: Path, texts: Sequence[str] = (), overrides: dict | None = None
) -> StudyParams:
    """StudyParams.from_file with the --set texts applied over the file (and `overrides`).

    Params the settings make invalid are refused in one line naming the --set (every one, when
    no one alone is to blame) and what the key allows; a problem of the file itself is said
    as the file alone has it."""
    settings = parse_settings(texts)
    overrides = overrides or {}
    try:
        return StudyParams.from_file(path, with_settings(overrides, settings))
    except BadInput as e:
        if not settings:
            raise
        StudyParams.from_file(path, overrides)  # the file's own problem, said as it is
        raise BadInput(f"--set {_culprit(path, settings, overrides, e)}") from None


def _culprit(path: Path, settings: dict, overrides: dict, error: BadInput) -> str:
    """The setting without which the params are valid, and the error; else every setting."""
    for name, (_, typed) in settings.items():
        others = {n: setting for n, setting in settings.items() if n != name}
        try:
            StudyParams.from_file(path, with_settings(overrides, others))
        except BadInput:
            continue
        return f"{name}={typed}: {error}"
    return f"{' '.join(f'{n}={typed}' for n, (_, typed) in settings.items())}: {error}"
