"""The stopping rule's error rates on the machine's own blocks and under the departures a
machine can show (hostbench/analysis/departures.py; docs/method.md, "Measuring until decided"):
the committed runs' block log ratios resampled (pooled, and each long record alone, a block's
scenarios together), serial correlation between blocks, a slow block, and the change of a
block's cells once claims are decided. Writes departures.csv and departures_measured.json
beside a departures_seed.json; `python -m hostbench docs` renders them into docs/method.md.

    .venv/bin/python benchmarks/sequential_departures.py --out data/benchmarks/sequential

It measures nothing: numpy only, about a minute.
"""

import argparse
import json
from pathlib import Path

from hostbench.analysis import departures
from hostbench.analysis.sequential import Plan
from hostbench.params import StudyParams
from hostbench.paths import ROOT
from hostbench.studies import STUDIES

RUNS_DIR = ROOT / "data" / "runs"


def committed_runs() -> list[Path]:
    return sorted(RUNS_DIR.glob("example-*/")) + sorted((RUNS_DIR / "community").glob("*/"))


def claims_plan() -> Plan:
    """The claims profiles' plan (all share one: checked)."""
    found = set()
    for study in STUDIES.values():
        if "claims" in study.profiles():
            p = StudyParams.from_file(study.params_path("claims"))
            found.add((p.repetitions, p.max_repetitions))
    if len(found) != 1:
        raise SystemExit(f"the claims profiles have {len(found)} plans: {sorted(found)}")
    return Plan(*found.pop())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=departures.RUNS)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    blocks = departures.measured_blocks(committed_runs())
    plan = claims_plan()
    table = departures.table(blocks, plan, runs=args.runs, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / departures.DEPARTURES_FILE, index=False)
    facts = departures.measured_facts(blocks, plan.first)
    (args.out / departures.MEASURED_FILE).write_text(json.dumps(facts, indent=1) + "\n")
    seed = vars(args) | {"out": str(args.out), "plan": [plan.first, plan.last]}
    (args.out / departures.SEED_FILE).write_text(json.dumps(seed, indent=1) + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
