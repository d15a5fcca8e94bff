"""The A/A check (docs/method.md, "Verdicts"): Kestrel against a second launch of itself, with
the JCSI 2018 load, measured by the study harness like any study (quiet gate, warm-up, blocks),
then how often a 95% interval excluded 100%; once with windows back to back (aa.yaml), once
interleaved (aa-interleaved.yaml), once in windows of alternating bombardier runs
(aa-alternating.yaml); and the claims rule, measured until decided with the twin as jcsi2018's
baseline (aa-claims.yaml, at most 8 minutes). Run alone on a quiet machine (the back-to-back
one about 20 minutes; the interleaved one's 180 blocks, 240 intervals, about 11 hours, and
the alternating one's 72 blocks, 96 intervals, about 4.3 hours, each measured in turns):

    .venv/bin/python benchmarks/aa_check.py                 # measure into data/runs/example-aa
    .venv/bin/python benchmarks/aa_check.py --design interleaved  # data/runs/example-aa-interleaved
    .venv/bin/python benchmarks/aa_check.py --design alternating  # data/runs/example-aa-alternating
    .venv/bin/python benchmarks/aa_check.py --design claims       # data/runs/example-aa-claims
    .venv/bin/python benchmarks/aa_check.py --analyse-only  # the summary of what is there

An interrupted run (Ctrl-C, SIGTERM) resumes with the same command, on the processor it began on;
a committed one once its folders are unpacked (scripts/archive-runs.sh unpack). `python -m
hostbench docs` then writes the summary into docs/method.md.
"""

import argparse
import sys
from pathlib import Path

from hostbench.analysis import aa, tables, until_decided
from hostbench.analysis.claims import CLAIM, OURS, VERDICT
from hostbench.analysis.claims import of_run as claims_of_run
from hostbench.errors import exit_code
from hostbench.harness.study import run_study
from hostbench.params import StudyParams
from hostbench.paths import BENCHMARKS, RUNS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", type=Path, default=RUNS)
    parser.add_argument("--design", choices=[*aa.RUNS, "claims"], default="back to back")
    parser.add_argument("--analyse-only", action="store_true", help="measure nothing")
    args = parser.parse_args()
    claims = args.design == "claims"
    run_id, params_file, _ = aa.CLAIMS_RUN if claims else aa.RUNS[args.design]
    run_dir = args.runs_dir / run_id

    def run() -> None:
        if not args.analyse_only:
            params = StudyParams.from_file(BENCHMARKS / params_file)
            run_study(params, run_id, args.runs_dir, study=aa.CLAIMS_STUDY if claims else None)
        if claims:
            table = claims_of_run(aa.CLAIMS_STUDY, run_dir)
            print(table[[CLAIM, OURS, VERDICT]].to_string(index=False))
            print(until_decided.summary(run_dir))
            return
        results = tables.load_results(run_dir, valid_only=False)
        print(aa.aa_intervals(results).to_string(index=False))
        print(aa.summary(results, aa.first_plan_blocks(run_dir, results)))

    # Ctrl-C or SIGTERM (the long interleaved check is measured in turns): every process the
    # harness started is stopped, the completed windows kept.
    return exit_code(run, "interrupted: every process it started is stopped; the same command "
                          "resumes the run")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
