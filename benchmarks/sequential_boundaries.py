"""The repeated intervals' boundaries for the claims profiles' plans, fitted once with many
draws and committed (hostbench/analysis/sequential.py, t_boundaries reads them): for every
plan a claims profile uses and every Holm level a claim of m comparisons needs (0.05 / m, m up
to --most-comparisons), the boundaries from --draws sequences of standard normals with the
recorded --seed, and each boundary's Monte Carlo error, the spread of --batches equal shares'
own boundaries over sqrt(batches). Writes boundaries.csv and boundaries_seed.json;
`python -m hostbench docs` states the error in docs/method.md.

    .venv/bin/python benchmarks/sequential_boundaries.py --out data/benchmarks/sequential

It measures nothing: numpy only, about 30 s a level at the default draws.
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from hostbench.analysis import sequential
from hostbench.params import StudyParams
from hostbench.studies import STUDIES


def plans() -> list[tuple[int, int]]:
    found = set()
    for study in STUDIES.values():
        for profile in study.profiles():
            p = StudyParams.from_file(study.params_path(profile))
            if p.stop_when_decided:
                found.add((p.repetitions, p.max_repetitions))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--draws", type=int, default=40_000_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--most-comparisons", type=int, default=8)
    args = parser.parse_args()
    rows = []
    for first, last in plans():
        for m in range(1, args.most_comparisons + 1):
            alpha = sequential.ALPHA / m
            whole, parts = sequential.fitted_boundaries(first, last, alpha, args.draws,
                                                        args.seed, args.batches)  # fmt: skip
            error = np.std(np.asarray(parts), axis=0, ddof=1) / math.sqrt(args.batches)
            for i, b in enumerate(whole):
                rows.append({"first": first, "last": last, "alpha": alpha, "comparisons": m,
                             "look": i + 1, "blocks": first + i, "boundary": b,
                             "mc_error": float(error[i])})  # fmt: skip
            print(f"{first}-{last}, m = {m}: {', '.join(f'{b:.3f}' for b in whole)}")
    args.out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out / sequential.BOUNDARIES_FILE.name, index=False)
    seed = vars(args) | {"out": str(args.out), "chunk": sequential.CHUNK}
    (args.out / "boundaries_seed.json").write_text(json.dumps(seed, indent=1) + "\n")


if __name__ == "__main__":
    main()
