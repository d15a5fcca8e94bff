"""Which committed verdicts the repeated intervals' boundaries decide, read-only: every claim
of every committed run measured until decided (and of its sub-studies), judged with the
boundaries of this checkout, each multiplied by --scale (docs/method.md, "Measuring until
decided": how far the boundaries' Monte Carlo error is from moving a verdict). Writes one row
per run and claim (run, claim, verdict, sensitivity) to --out.

    .venv/bin/python benchmarks/boundary_verdicts.py --scale 1.0 --out /tmp/verdicts.csv

Compare two files (--compare a.csv b.csv) to list the verdicts that differ. --margins FILE
finds, by bisection, how much wider and how much narrower every boundary must be before any
committed verdict (or sensitivity column) changes, and writes it as JSON beside the claim that
moves first: docs/method.md sets the boundaries' Monte Carlo error beside it. Nothing is
measured or written under data/runs/.

    .venv/bin/python benchmarks/boundary_verdicts.py --margins FILE
    (FILE: data/benchmarks/sequential/verdict_margins.json)
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from hostbench.analysis import claims, sequential, tables
from hostbench.paths import ROOT

RUNS_DIR = ROOT / "data" / "runs"


def decided_runs() -> list[tuple[str, Path]]:
    """(study, folder) of every committed run whose params stop when decided."""
    out = []
    for run_dir in sorted(RUNS_DIR.glob("example-*/")) + sorted(RUNS_DIR.glob("community/*/")):
        record = run_dir / "reproduce.json"
        if not record.is_file() or not (run_dir / "params.json").is_file():
            continue
        if tables.load_params(run_dir).stop_when_decided:
            out.append((json.loads(record.read_text())["study"], run_dir))
    return out


def verdicts(scale: float) -> pd.DataFrame:
    unscaled = sequential.Plan.t_critical
    sequential.Plan.t_critical = lambda plan, n: scale * unscaled(plan, n)
    rows = []
    for study, run_dir in decided_runs():
        table = claims.of_run(study, run_dir)
        if table is None:
            continue
        for r in table.to_dict("records"):
            rows.append({"run": str(run_dir.relative_to(RUNS_DIR)), "claim": r[claims.CLAIM],
                         "verdict": r[claims.VERDICT],
                         "sensitivity": r.get(claims.SENSITIVITY, "")})  # fmt: skip
    return pd.DataFrame(rows)


def compare(before: Path, after: Path) -> pd.DataFrame:
    a, b = pd.read_csv(before), pd.read_csv(after)
    both = a.merge(b, on=["run", "claim"], suffixes=("_before", "_after"))
    changed = (both["verdict_before"] != both["verdict_after"]) | (
        both["sensitivity_before"].fillna("") != both["sensitivity_after"].fillna("")
    )
    return both[changed]


def _at(scale: float, folder: Path) -> Path:
    """The verdicts at `scale`, judged in a process of their own (kept.py keeps a judged
    table by the files' content, which a scale does not change)."""
    out = folder / f"{scale:.6f}.csv"
    if not out.is_file():
        subprocess.run([sys.executable, __file__, "--scale", str(scale), "--out", str(out)],
                       check=True, capture_output=True)  # fmt: skip
    return out


def margin(direction: float, folder: Path, start: float = 0.05, precision: float = 0.0005):
    """The smallest relative change of every boundary, wider (direction +1) or narrower (-1),
    that changes a committed verdict (to `precision`, searched up to `start`), and the rows
    that change there; (None, []) where none changes within `start`."""
    base = _at(1.0, folder)
    changed = compare(base, _at(1 + direction * start, folder))
    if changed.empty:
        return None, []
    low, high = 0.0, start
    while high - low > precision:
        mid = (low + high) / 2
        found = compare(base, _at(1 + direction * mid, folder))
        low, high, changed = (low, mid, found) if not found.empty else (mid, high, changed)
    return high, [_change(r) for r in changed.to_dict("records")]


def _change(r: dict) -> str:
    """ "run: claim: reproduced -> undecided at this precision", or where only a condition
    changed, "run: claim: its column under the other analogs and sub-studies" """
    if r["verdict_before"] != r["verdict_after"]:
        return f"{r['run']}: {r['claim']}: {r['verdict_before']} -> {r['verdict_after']}"
    return f"{r['run']}: {r['claim']}: its column {claims.SENSITIVITY!r}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    parser.add_argument("--margins", type=Path)
    args = parser.parse_args()
    if args.margins:
        with tempfile.TemporaryDirectory() as folder:
            found = {}
            for name, direction in (("wider", 1), ("narrower", -1)):
                change, moved = margin(direction, Path(folder))
                found[name] = {"change": change, "moves": moved}
        args.margins.write_text(json.dumps(found, indent=1) + "\n")
        print(json.dumps(found, indent=1))
        return
    if args.compare:
        found = compare(*args.compare)
        for r in found.to_dict("records"):
            print(f"{r['run']}: {r['claim']}: {r['verdict_before']} -> {r['verdict_after']}")
            if r["sensitivity_before"] != r["sensitivity_after"]:
                print(
                    f"    sensitivity: {r['sensitivity_before']}\n    -> {r['sensitivity_after']}"
                )
        print(f"{len(found)} of the claims differ")
        return
    if args.out is None:
        sys.exit("--out or --compare is needed")
    table = verdicts(args.scale)
    table.to_csv(args.out, index=False)
    print(f"{len(table)} claims of {table['run'].nunique()} runs: {args.out}")


if __name__ == "__main__":
    main()
