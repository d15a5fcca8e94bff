"""Why a proxy costs what it costs: rps per hosting mode for /text with bombardier,
with the CPU split between app, proxy and load generator. Prints a Markdown table.

    .venv/bin/python benchmarks/modes.py [--duration 10] [--repetitions 3] [--run-id ID]
"""

import argparse
from datetime import UTC, datetime

from hostbench.analysis import tables as analysis
from hostbench.catalog import MODES, linux_modes
from hostbench.harness.study import run_study
from hostbench.params import StudyParams


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--run-id", default=f"bench-modes-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    args = ap.parse_args()
    params = StudyParams.from_dict(
        {
            "modes": [m for m in linux_modes() if MODES[m].server == "TestApp"],
            "scenarios": ["text"],
            "tools": ["bombardier"],
            "concurrency": [args.concurrency],
            "duration_s": args.duration,
            "warmup_s": 2,
            "repetitions": args.repetitions,
        }
    )
    results = analysis.load_results(run_study(params, args.run_id))
    table = (
        results.groupby("mode", observed=True)
        .agg(
            rps=("rps", "mean"),
            p99_ms=("latency_p99_ms", "mean"),
            cpu_pct=("cpu_total_pct", "mean"),
            app=("cpu_server_cores", "mean"),
            proxy=("cpu_proxy_cores", "mean"),
            loadgen=("cpu_loadgen_cores", "mean"),
        )
        .sort_values("rps", ascending=False)
    )
    kestrel = table.loc["kestrel", "rps"]
    print(f"bombardier -c {args.concurrency}, /text, {args.duration:g} s x {args.repetitions}")
    print("| mode | rps | % of kestrel | p99 [ms] | CPU busy | app | proxy | bombardier |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mode, r in table.iterrows():
        proxy = "-" if r.proxy != r.proxy else f"{r.proxy:.2f}"
        print(
            f"| {mode} | {r.rps:,.0f} | {100 * r.rps / kestrel:.0f}% | {r.p99_ms:.1f} "
            f"| {r.cpu_pct:.0f}% | {r.app:.2f} | {proxy} | {r.loadgen:.2f} |"
        )


if __name__ == "__main__":
    main()
