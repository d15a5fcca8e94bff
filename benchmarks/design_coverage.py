"""How often each design's 95% interval covers the true ratio, simulated for the plans the
profiles use (hostbench/analysis/coverage.py; docs/method.md, "Each design's interval").

Cases: every paper profile that targets a half-width (its first blocks, max_repetitions and
target), the same with a cap far beyond (Stein's rule nearly unbounded: where the pooled interval
misses most), and the claims profiles' plan (their repeated intervals, and a fixed design of
as many blocks); each at block sds of 0.02,
0.035 and 0.05 (the spread of the pairs measured, data/benchmarks/launch-spread/). Writes
coverage.csv beside a seed.json; `python -m hostbench docs` renders it into docs/method.md.

    .venv/bin/python benchmarks/design_coverage.py --out data/benchmarks/coverage

It measures nothing: numpy only, seconds.
"""

import argparse
import json
from pathlib import Path

from hostbench.analysis import coverage
from hostbench.params import StudyParams
from hostbench.studies import STUDIES

SDS = (0.02, 0.035, 0.05)
UNCAPPED = 200  # a cap far beyond any profile's: Stein's rule nearly unbounded


def cases() -> list[dict]:
    found = []
    for sid, study in STUDIES.items():
        profiles = study.profiles()
        if "paper" in profiles:
            p = StudyParams.from_file(study.params_path("paper"))
            if p.target_halfwidth_pct is not None:
                found.append(
                    {
                        "profile": f"{sid} paper",
                        "first": p.repetitions,
                        "cap": p.max_repetitions,
                        "target_pct": p.target_halfwidth_pct,
                    }
                )
                found.append(
                    {
                        "profile": f"{sid} paper, cap {UNCAPPED}",
                        "first": p.repetitions,
                        "cap": UNCAPPED,
                        "target_pct": p.target_halfwidth_pct,
                    }
                )
    claims = set()
    for study in STUDIES.values():
        if "claims" in study.profiles():
            p = StudyParams.from_file(study.params_path("claims"))
            claims.add((p.repetitions, p.max_repetitions))
    found += [{"profile": "claims", "first": first, "cap": cap, "target_pct": None}
              for first, cap in sorted(claims)]  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=coverage.RUNS)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    table = coverage.table(cases(), SDS, runs=args.runs, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / coverage.COVERAGE_FILE, index=False)
    (args.out / "seed.json").write_text(json.dumps(vars(args) | {"out": str(args.out)}, indent=1))
    print(f"{len(table)} rows: {args.out / coverage.COVERAGE_FILE}")


if __name__ == "__main__":
    main()
