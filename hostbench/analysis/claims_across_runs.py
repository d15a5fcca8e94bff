"""The article's claims set side by side across runs of one study: a verdict column per run
(side_by_side, each run judged by claims.of_run), how far the runs' verdicts agree (agreement),
and that table for a terminal (text), for Markdown (markdown) or for compare's claims.csv
(with_against)."""

from pathlib import Path

import pandas as pd

from .claim_words import AGAINST, CLAIM, VERDICT
from .claims import NOT_RUN, of_run


def side_by_side(study: str, runs: dict[str, Path]) -> pd.DataFrame | None:
    """One row per claim, one verdict column per run ({name: folder}, in order); a run
    without a row for a claim gets an empty cell. attrs["against"]: {run: each claim's ours /
    the article's} (the box's AGAINST column). None for a study without claims."""
    verdicts, against, again, unmeasured = {}, {}, {}, set()
    for name, folder in runs.items():
        table = of_run(study, folder)
        if table is None:
            return None
        verdicts[name] = table.set_index(CLAIM)[VERDICT]
        against[name] = table.set_index(CLAIM)[AGAINST]
        again |= table.attrs.get("restated", {})
        unmeasured |= set(table.attrs.get(NOT_RUN, ()))
    # The rows in the order the runs' tables first list them (the study's order).
    order = list(dict.fromkeys(i for c in verdicts.values() for i in c.index))
    wide = pd.DataFrame({name: c.reindex(order) for name, c in verdicts.items()})
    wide.index = pd.Index(order, name=CLAIM)
    wide = wide.fillna("").reset_index()
    wide.attrs["against"] = {name: a.reindex(order).fillna("").tolist()
                             for name, a in against.items()}  # fmt: skip
    wide.attrs["restated"] = again
    wide.attrs[NOT_RUN] = sorted(unmeasured)  # a claim some run measured none of
    return wide


def with_against(table: pd.DataFrame) -> pd.DataFrame:
    """The side-by-side table with each run's ours / the article's beside its verdict (for
    compare's claims.csv)."""
    out = table.copy()
    for name, values in table.attrs.get("against", {}).items():
        out.insert(out.columns.get_loc(name) + 1, f"{name}: {AGAINST}", values)
    return out


def agreement(table: pd.DataFrame) -> str:
    """ "the same verdict on 6 of 8 claims": how far the runs' verdicts agree, a claim that
    rests on another's comparisons (restated) not counted again, nor one that some run
    measured none of (a run older than its comparisons: not a disagreement)."""
    again = table.attrs.get("restated", {})
    unmeasured = set(table.attrs.get(NOT_RUN, ())) - set(again)
    counted = table[~table[CLAIM].isin(again) & ~table[CLAIM].isin(unmeasured)]
    same = int((counted.drop(columns=[CLAIM]).nunique(axis=1) == 1).sum())
    text = f"the same verdict on {same} of {len(counted)} claims"
    left = []
    if shown := len(table[table[CLAIM].isin(again)]):
        left.append(f"{shown} more rest{'s' * (shown == 1)} on another's comparisons, not "
                    "counted again")  # fmt: skip
    if unmeasured:
        n = len(unmeasured)
        left.append(f"{n} more not measured by every run, not counted")
    return text + (f" ({'; '.join(left)})" if left else "")


def text(table: pd.DataFrame) -> str:
    """The side-by-side table for a terminal: a line per claim, the verdicts in run order,
    each with how far it agrees with the article's value where it is a size."""
    runs = [c for c in table.columns if c != CLAIM]
    against = table.attrs.get("against", {})
    lines = [f"the article's claims, verdict in {' -> '.join(runs)}:"]
    for i, row in table.iterrows():
        cells = []
        for r in runs:
            extra = against.get(r, [""] * len(table))[i]
            cells.append((row[r] or "-") + (f" [{extra}]" if extra else ""))
        lines.append(f"  {row[CLAIM]}: {' -> '.join(cells)}")
    lines.append(f"  {agreement(table)}")
    return "\n".join(lines)


def markdown(table: pd.DataFrame) -> str:
    """The side-by-side table as Markdown: a column per key column and per run."""

    def cell(value) -> str:
        return str(value).replace("|", "\\|")

    rows = ["| " + " | ".join(cell(c) for c in table.columns) + " |",
            "|" + "---|" * len(table.columns)]  # fmt: skip
    rows += ["| " + " | ".join(cell(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join(rows)
