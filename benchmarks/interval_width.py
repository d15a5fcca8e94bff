"""How precise is a ratio: Kestrel / baseline per scenario with its 95% interval, per run folder.

The goal (issue: measurements that hold up) is a half-width of at most 10% of the ratio
on /text in the paper profile. Prints a Markdown table; give it the run folders to compare,
e.g. the old fixed-order example and a new run:

    .venv/bin/python benchmarks/interval_width.py data/runs/example-paper data/runs/NEW
"""

import argparse
from pathlib import Path

from hostbench.analysis import intervals, tables


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--mode", default="kestrel")
    ap.add_argument("--baseline", default="nginx")
    args = ap.parse_args()
    print("| run | scenario | blocks | ratio | 95% CI | half-width / ratio |")
    print("|---|---|---:|---:|---|---:|")
    for run in args.runs:
        ratios = intervals.paired_ratios(tables.load_results(run, valid_only=False), args.baseline)
        for r in ratios[ratios["mode"].astype(str) == args.mode].itertuples():
            half = (r.ci_high_pct - r.ci_low_pct) / 2 / r.ratio_pct * 100
            print(f"| {run.name} | {r.scenario} | {r.n} | {r.ratio_pct:.0f}% | "
                  f"{r.ci_low_pct:.0f}-{r.ci_high_pct:.0f}% | {half:.0f}% |")  # fmt: skip


if __name__ == "__main__":
    main()
