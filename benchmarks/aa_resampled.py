"""The claims rule's own error on identical launches, by resampling the committed interleaved
A/A's blocks (Kestrel against its twin) as claims runs (hostbench/analysis/aa_resampled.py;
docs/method.md, "The machinery checked against itself"): the plan of benchmarks/aa-claims.yaml
(its first look and cap), jcsi2018's claims with the twin as the baseline, --runs runs per
scheme (blocks alone, launch triples) and centring (centred, as measured). Writes rates.csv
and, beside it, normal_band.csv: the same resampling of sets
of iid normal blocks as many as the measured (the spread the resampling shows by itself),
beside a seed.json; `python -m hostbench docs` renders it into docs/method.md.

    .venv/bin/python benchmarks/aa_resampled.py --out data/benchmarks/aa-resampled

It measures nothing: numpy over the committed results.csv, a minute or two.
"""

import argparse
import json
from pathlib import Path

from hostbench.analysis import aa, aa_resampled, tables
from hostbench.analysis.reference import load_claims
from hostbench.analysis.sequential import Plan
from hostbench.params import StudyParams
from hostbench.paths import BENCHMARKS, RUNS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=aa_resampled.RUNS)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    results = tables.load_results(RUNS / aa.RUNS["interleaved"].run_id, valid_only=False)
    plan = Plan.of(StudyParams.from_file(BENCHMARKS / aa.CLAIMS_RUN.params_file))
    blocks = aa_resampled.measured_blocks(results)
    claims = load_claims(aa.CLAIMS_STUDY)
    found = aa_resampled.rates(blocks, plan, claims, runs=args.runs, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    found.to_csv(args.out / aa_resampled.RATES_FILE, index=False)
    band = aa_resampled.normal_band(blocks, plan, runs=args.runs, seed=args.seed)
    band.to_csv(args.out / aa_resampled.BAND_FILE, index=False)
    (args.out / "seed.json").write_text(json.dumps(vars(args) | {"out": str(args.out)}, indent=1))
    print(f"{len(found)} rows: {args.out / aa_resampled.RATES_FILE}")


if __name__ == "__main__":
    main()
