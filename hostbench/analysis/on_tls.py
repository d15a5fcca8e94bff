"""TLS as a condition the claims are judged again under: a run (a `tls` sub-study) whose every
mode is a TLS twin (catalog.plain_twin: kestrel-tls is kestrel on TLS, ...) is read under
its plain twins' names, its baseline too, so each claim, written about the plain modes, is
judged on them as it stands: "Kestrel alone is the fastest" asks kestrel-tls against the
baseline's twin. A run mixing plain and TLS modes is read as it is (each mode its own)."""

from dataclasses import replace

import pandas as pd

from ..catalog import plain_twin
from . import runtimes, tables

TLS_LABEL = "TLS"  # where a verdict holds or changes, in a first screen's words: "holds on TLS"


def every_mode_on_tls(modes) -> bool:
    """Whether each of `modes` is a plain mode's TLS twin (and there is one)."""
    modes = [str(m) for m in modes]
    return bool(modes) and all(plain_twin(m) != m for m in modes)


def as_plain(results: pd.DataFrame, params, name: str = ""):
    """(results, params) with every TLS twin named as its plain mode, where every mode of
    `params` is one; else both as they are. `name`: the sub-study's, naming the condition
    (attrs runtimes.CONDITION) the sensitivity column calls it by."""
    if not every_mode_on_tls(params.modes):
        return results, params
    plain = results["mode"].astype(str).map(plain_twin)
    out = results.assign(mode=tables.ordered_modes(plain))
    out.attrs = dict(results.attrs)
    if name:
        out.attrs[runtimes.CONDITION] = f"the {name} sub-study (every mode on TLS)"
        out.attrs[runtimes.CONDITION_LABEL] = TLS_LABEL  # as a first screen names it
    renamed = replace(params, modes=[plain_twin(m) for m in params.modes],
                      baseline=params.baseline_mode and plain_twin(params.baseline_mode),
                      focus=[plain_twin(m) for m in params.focus])  # fmt: skip
    return out, renamed


def sub_study_run(folder, name: str):
    """(every run, params) of sub-study `name`'s folder, TLS twins as their plain modes."""
    results = tables.load_results(folder, valid_only=False)
    return as_plain(results, tables.load_params(folder), name)
