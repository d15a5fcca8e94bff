"""The A/A check (docs/method.md, "Verdicts"): Kestrel against a second launch of itself, with
the JCSI 2018 load, measured by the study harness like any study (quiet gate, warm-up, blocks),
then how often a 95% interval excluded 100%. Run alone on a quiet machine (about 20 minutes):

    .venv/bin/python benchmarks/aa_check.py                 # measure into data/runs/example-aa
    .venv/bin/python benchmarks/aa_check.py --analyse-only  # the summary of what is there

An interrupted run resumes with the same command. `python -m hostbench docs` then writes the
summary into docs/method.md.
"""

import argparse
from pathlib import Path

from hostbench.analysis import aa, tables
from hostbench.errors import HostbenchError
from hostbench.harness.study import run_study
from hostbench.params import StudyParams
from hostbench.paths import RUNS

PARAMS = Path(__file__).with_name("aa.yaml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", type=Path, default=RUNS)
    parser.add_argument("--analyse-only", action="store_true", help="measure nothing")
    args = parser.parse_args()
    run_dir = args.runs_dir / aa.RUN
    if not args.analyse_only:
        run_study(StudyParams.from_file(PARAMS), aa.RUN, args.runs_dir)
    results = tables.load_results(run_dir, valid_only=False)
    print(aa.aa_intervals(results).to_string(index=False))
    print(aa.summary(results))


if __name__ == "__main__":
    try:
        main()
    except HostbenchError as e:  # one line: what was wrong
        raise SystemExit(f"aa_check: {e}") from None
