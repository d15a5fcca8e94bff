"""What one study's params expand to: a variant sweep's variants (its `{n}` templates at each
value, the words `cores` and `cores-x2` read on this machine) and a sub-study's params (the
study's, with its overrides)."""

import os

from ..errors import BadInput
from .rules import Rule, as_list, refuse_unknown, unique

# variant_sweep's n in words: the values they stand for on a machine with `cores` CPUs.
SWEEP_WORDS = {"cores": lambda cores: cores, "cores-x2": lambda cores: 2 * cores}
SWEEP_KEYS = ("n", "variants", "cores", "values")  # cores, values: what params.json records


def machine_cores() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0))


_COUNT = Rule("int", minimum=1)  # the sweep's n and cores


def resolve_sweep(key: str, value, earlier=None) -> dict | None:
    """variant_sweep resolved on this machine: its n in words becomes `values`, with the
    `cores` they were read from; values already recorded (a params.json) stay as recorded."""
    if value is None:
        return None
    allowed = "cores, cores-x2, or a list of integers >= 1 (cores, cores-x2 among them)"
    if not isinstance(value, dict) or not {"n", "variants"} <= set(value):
        raise BadInput(f"params key 'variant_sweep' must be {{n: {allowed}, variants: {{...}}}}")
    refuse_unknown("params key 'variant_sweep'", value, SWEEP_KEYS)
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
    values = unique("variant_sweep.n", [_COUNT.check("variant_sweep.n", v)
                                        for v in as_list("variant_sweep.n", values)])  # fmt: skip
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


def overlay(raw: dict, overrides: dict) -> dict:
    """A sub-study's params: the study's, with its overrides (and no sub-studies of its own)."""
    out = {**raw, **overrides, "sub_studies": {}}
    if "baseline" not in overrides and out.get("baseline") not in as_list("modes", out["modes"]):
        out["baseline"] = None  # the study's baseline is not among the sub-study's modes
    return out
