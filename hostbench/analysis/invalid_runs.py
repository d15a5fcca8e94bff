"""Why runs were left out or measured again, as a short table by kind (invalid_reasons): from
the reasons the harness wrote in results.csv (`invalid_reason`) and its re-run attempts."""

import re

import pandas as pd

from .. import results as schema

# Why runs were left out, by kind: (words the harness's reason contains, the kind's name).
REASON_KINDS = (
    ("machine busy", "machine busy (CPU used by other processes)"),
    ("not steady", "warm-up not steady"),
    ("shorter than", "shorter than min_duration_s"),
    ("transport errors", "transport errors"),
    ("non-2xx", "non-2xx responses"),
    ("client counted", "client and server counts disagree"),
)


def reason_kind(reason: str) -> str:
    """One invalid_reason part as its kind; an unknown reason with its numbers as "N"."""
    for words, kind in REASON_KINDS:
        if words in reason:
            return kind
    return re.sub(r"\d+(?:\.\d+)?", "N", reason.strip())


# The row of invalid_reasons that counts the runs measured again at once (measure/designs.py redo).
RERUN_KIND = "re-run after a busy or unsteady attempt (attempt 2 or later)"


def invalid_reasons(df: pd.DataFrame) -> pd.DataFrame:
    """Why runs were left out or re-run, as a short table: kind, runs, one example.

    df: every row (load_results(..., valid_only=False)). A row with two reasons ("; ")
    counts under both. Where the harness re-ran a run at once (`attempt` > 1: the machine
    was busy, or a warm-up never settled), the re-runs are a row of their own. Tolerates
    results without `invalid_reason` or `attempt`.
    """
    rows = []
    if "valid" in df.columns and "invalid_reason" in df.columns:
        invalid = schema.invalid_rows(df)
        parts = invalid["invalid_reason"].fillna("reason not recorded").astype(str)
        parts = parts.str.split("; ").explode().str.strip()
        parts = parts[parts != ""]
        kinds = parts.map(reason_kind)
        for kind, group in parts.groupby(kinds, sort=False):
            rows.append((kind, group.index.nunique(), group.iloc[0]))
    if "attempt" in df.columns:
        reruns = int((pd.to_numeric(df["attempt"], errors="coerce") > 1).sum())
        if reruns:
            rows.append((RERUN_KIND, reruns, ""))
    table = pd.DataFrame(rows, columns=["why", "runs", "example"])
    return table.sort_values("runs", ascending=False, kind="stable").reset_index(drop=True)
