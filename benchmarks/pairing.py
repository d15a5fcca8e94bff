"""Does pairing pay: the variance of a mode's log ratio to the baseline, paired within blocks
against unpaired, and how far apart in time the two runs of each pair were.

Pairing helps when a block's two runs share the machine's state (both slow, or both fast):
then the paired variance, var(log mode_b - log baseline_b), is below the unpaired one,
var(log mode) + var(log baseline). Runs far apart in time share little. Prints a Markdown
table per run folder, e.g.

    .venv/bin/python benchmarks/pairing.py data/runs/example-paper
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from hostbench.analysis import tables
from hostbench.results import valid_rows


def pairs(results: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per cell: blocks paired, paired and unpaired variance, median gap (minutes)."""
    df = valid_rows(results).copy()
    df["log"] = np.log(df["rps"].astype(float))
    df["t"] = pd.to_datetime(df["started_at"], utc=True, format="ISO8601")
    setup = ["scenario", "tool", "concurrency"]
    base = df[df["mode"] == baseline].set_index([*setup, "block"])[["log", "t"]]
    base = base.add_suffix("_base")
    rows = []
    for (mode, *cell), runs in df[df["mode"] != baseline].groupby(["mode", *setup]):
        joined = runs.set_index([*setup, "block"])[["log", "t"]].join(base, how="inner")
        if len(joined) < 2:
            continue
        paired = float(np.var(joined["log"] - joined["log_base"], ddof=1))
        unpaired = float(np.var(joined["log"], ddof=1) + np.var(joined["log_base"], ddof=1))
        gap = (joined["t"] - joined["t_base"]).abs().dt.total_seconds() / 60
        rows.append(
            {
                "mode": mode,
                "scenario": cell[0],
                "blocks": len(joined),
                "paired / unpaired variance": paired / unpaired if unpaired > 0 else np.nan,
                "correlation": float(np.corrcoef(joined["log"], joined["log_base"])[0, 1]),
                "median gap [min]": float(gap.median()),
            }
        )
    return pd.DataFrame(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--baseline", default="nginx")
    args = ap.parse_args()
    for run in args.runs:
        print(f"\n{run.name} (baseline {args.baseline})\n")
        table = pairs(tables.load_results(run, valid_only=False), args.baseline)
        print("| " + " | ".join(table.columns) + " |")
        print("|" + "---|" * len(table.columns))
        for row in table.itertuples(index=False):
            cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
