"""How often a claims profile's stopping rule errs, simulated from the spread its pairs were
measured with (hostbench/analysis/error_rates.py; docs/method.md, "Measuring until decided").

For every claims profile's plan (its repetitions, the first look, and max_repetitions, the
cap) and every pair characterised in data/benchmarks/launch-spread/ (the sd of one block's log
ratio with one window, components.block_spread), --runs simulated runs per case and rule:
a size whose true ratio of ratios sits on the tolerance's edge (1.15 and 1/1.15), a direction
whose true ratio is its stated value (1.00), each with the repeated intervals a claims profile
states and, for contrast, a fixed 95% t interval looked at after every block; and two cases
with a margin, to show the blocks a decision takes: a size at 0.90x the article's (jcsi2018's
HTML claim on AMD EPYC) and a direction 10% from its value. Writes error_rates.csv beside a
seed.json; `python -m hostbench docs` renders it into docs/method.md.

    .venv/bin/python benchmarks/sequential_error_rates.py --out data/benchmarks/sequential

It measures nothing: numpy only, seconds.
"""

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from hostbench.analysis import components, error_rates
from hostbench.analysis.sequential import Plan
from hostbench.params import StudyParams
from hostbench.paths import ROOT
from hostbench.studies import STUDIES

SPREAD = ROOT / "data" / "benchmarks" / "launch-spread"
# Cases with a margin: how many blocks a decision takes at each pair's spread.
MARGINS = {
    "size at 0.90x the article's": ("size", math.log(0.90)),
    "direction 10% from its value": ("direction", math.log(1.10)),
}


def plans() -> list[Plan]:
    found = set()
    for study in STUDIES.values():
        if "claims" in study.profiles():
            p = StudyParams.from_file(study.params_path("claims"))
            found.add((p.repetitions, p.max_repetitions))
    return [Plan(first, last) for first, last in sorted(found)]


def spreads() -> dict[str, float]:
    """{"folder: mode / scenario": the sd of one block's log ratio} of every characterised pair."""
    out = {}
    for folder in sorted(d for d in SPREAD.glob("*/") if (d / components.CHUNKS_FILE).is_file()):
        chunks, _ = components.read(folder)
        for row in components.summarise(chunks).itertuples():
            out[f"{folder.name}: {row.mode} / {row.scenario}"] = components.block_spread(row, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rows = []
    for plan in plans():
        table = error_rates.table(spreads(), plan, runs=args.runs, seed=args.seed)
        rows += table.assign(first=plan.first, last=plan.last).to_dict("records")
        for pair, sd in spreads().items():
            for case, (kind, truth) in MARGINS.items():
                found = error_rates.simulate(sd, plan, kind, truth, runs=args.runs, seed=args.seed)
                decided = 1 - found["verdicts"].get("", 0.0)
                rows.append({"pair": pair, "sd": sd, "case": case, "rule": "repeated",
                             "wrong": math.nan, "decided": decided,
                             "blocks_mean": found["blocks_mean"], "blocks_p95": found["blocks_p95"],
                             "first": plan.first, "last": plan.last})  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out / "error_rates.csv", index=False)
    (args.out / "seed.json").write_text(json.dumps(vars(args) | {"out": str(args.out)}, indent=1))
    print(f"{len(rows)} rows: {args.out / 'error_rates.csv'}")


if __name__ == "__main__":
    main()
