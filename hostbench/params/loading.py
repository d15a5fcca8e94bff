"""A params file read from YAML: `extends: NAME` first loads NAME.yaml beside it, so a profile
states only what differs from the one it extends."""

from pathlib import Path

import yaml

from ..errors import BadInput

# libyaml's loader where PyYAML was built with it (the pinned wheel is): the same safe subset,
# about ten times faster, and profiles are read for every run and many tests.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path, _seen: tuple[Path, ...] = ()) -> dict:
    """A params file as a mapping; `extends: NAME` first loads NAME.yaml beside it."""
    if not path.is_file():
        raise BadInput(f"params file {path} not found")
    try:
        raw = yaml.load(path.read_text(), Loader=SafeLoader)
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
