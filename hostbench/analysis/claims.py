"""The articles' claims and their verdicts, across runs: the one hook a study's analysis.py
defines to judge its article's claims, and the table that sets runs side by side by it.

The hook (docs/adding-a-study.md): `claims(results, params) -> pd.DataFrame`, from every
run of a study run (invalid ones too) and its validated params, one row per claim, or per
claim and reading; the column VERDICT holds one of intervals.VERDICTS; the columns in the
module's CLAIM_KEY (default DEFAULT_KEY) name a row, so two runs' rows are matched by them.
A study whose article makes no claim that an interval can judge defines no hook.
"""

from pathlib import Path

import pandas as pd

from ..params import PARAMS_FILE
from ..results import RESULTS_FILE
from ..studies import get_study
from . import tables
from .kept import content_key, keep

CLAIM = "the article's claim"
VERDICT = "verdict"
DEFAULT_KEY = (CLAIM,)


def key_of(study: str) -> tuple[str, ...]:
    """The columns that name a row of the study's claims table."""
    return tuple(getattr(get_study(study).analysis, "CLAIM_KEY", DEFAULT_KEY))


def of_run(study: str, run_dir: str | Path) -> pd.DataFrame | None:
    """The study's claims table for one run folder; None for a study without the hook.

    Judged once per content of the run's results and params (kept.py); the caller gets its
    own copy."""
    if getattr(get_study(study).analysis, "claims", None) is None:
        return None
    run_dir = Path(run_dir)
    key = ("claims", study, content_key(run_dir / RESULTS_FILE, run_dir / PARAMS_FILE))
    return keep(key, lambda: _judged(study, run_dir)).copy()


def _judged(study: str, run_dir: Path) -> pd.DataFrame:
    results = tables.load_results(run_dir, valid_only=False)
    return get_study(study).analysis.claims(results, tables.load_params(run_dir))


def side_by_side(study: str, runs: dict[str, Path]) -> pd.DataFrame | None:
    """One row per claim (and reading), one verdict column per run ({name: folder}, in
    order); a run without a row for a claim gets an empty cell. None for a study without the
    hook."""
    key = list(key_of(study))
    columns = {}
    for name, folder in runs.items():
        table = of_run(study, folder)
        if table is None:
            return None
        columns[name] = table.set_index(key)[VERDICT]
    # The rows in the order the runs' tables first list them (the study's order).
    order = list(dict.fromkeys(i for c in columns.values() for i in c.index))
    wide = pd.DataFrame({name: c.reindex(order) for name, c in columns.items()})
    # A plain index for a one-column key, else a MultiIndex of the key's columns.
    if len(key) == 1:
        wide.index = pd.Index(order, name=key[0])
    else:
        wide.index = pd.MultiIndex.from_tuples(order, names=key)
    return wide.fillna("").reset_index()


def agreement(table: pd.DataFrame, study: str) -> str:
    """ "the same verdict in 30 of 35 rows": how far the runs' verdicts agree."""
    verdicts = table.drop(columns=list(key_of(study)))
    same = int((verdicts.nunique(axis=1) == 1).sum())
    return f"the same verdict in {same} of {len(table)} rows"


def _row_name(row: pd.Series, key: list[str]) -> str:
    claim, *readings = (str(row[k]) for k in key)
    readings = [r for r in readings if r]
    return f"{claim} ({'; '.join(readings)})" if readings else claim


def text(table: pd.DataFrame, study: str) -> str:
    """The side-by-side table for a terminal: a line per row, the verdicts in run order."""
    key = list(key_of(study))
    runs = [c for c in table.columns if c not in key]
    lines = [f"the article's claims, verdict in {' -> '.join(runs)}:"]
    for _, row in table.iterrows():
        lines.append(f"  {_row_name(row, key)}: {' -> '.join(row[r] or '-' for r in runs)}")
    lines.append(f"  {agreement(table, study)}")
    return "\n".join(lines)


def markdown(table: pd.DataFrame) -> str:
    """The side-by-side table as Markdown: a column per key column and per run."""

    def cell(value) -> str:
        return str(value).replace("|", "\\|")

    rows = ["| " + " | ".join(cell(c) for c in table.columns) + " |",
            "|" + "---|" * len(table.columns)]  # fmt: skip
    rows += ["| " + " | ".join(cell(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join(rows)
