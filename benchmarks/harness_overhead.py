"""What measuring costs: the same load on kestrel /text, bare and through hostbench.

Bare: the load tool's own command line against the app (launched the same way),
no CPU monitor, no response check, no counters. Through hostbench: a full run
(check, counters, CPU sampling every 0.5 s). Alternating, PAIRS pairs per tool,
so drift on a shared machine hits both sides alike. Prints a Markdown table of
the ratio (goal: >= 0.97) and the sampler's own CPU.

    .venv/bin/python benchmarks/harness_overhead.py [--duration 10] [--pairs 3]
"""

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

from hostbench.harness.launch.modes import LaunchOptions, launch
from hostbench.harness.measure.loadgen import generator_for
from hostbench.harness.measure.run import RunSpec, execute
from hostbench.load import Load
from hostbench.params import StudyParams


def bare_rps(tool: str, duration_s: float, concurrency: int, work: Path) -> float:
    load = Load(tool, concurrency, duration_s, path="/text")
    generator = generator_for(load)
    with launch("kestrel", work / "app", LaunchOptions()) as target:
        load = load.aimed_at(target.url)
        warmup = Load(tool, concurrency, 2, path=load.path, base_url=load.base_url)
        generator.run(warmup, work / "warmup")
        out = work / "load"
        out.mkdir(parents=True)
        argv = generator.command(load, out)
        proc = subprocess.run(argv, capture_output=True, text=True, env=generator.env())
        (out / "stdout.txt").write_text(proc.stdout)
        (out / "stderr.txt").write_text(proc.stderr)
        return generator.parse(load, out).rps


def harness_row(tool: str, duration_s: float, concurrency: int, work: Path) -> dict:
    params = StudyParams.from_dict(
        {"modes": ["kestrel"], "scenarios": ["text"], "tools": [tool],
         "concurrency": [concurrency], "duration_s": duration_s, "warmup_s": 2, "repetitions": 1}
    )  # fmt: skip
    spec = RunSpec.of_cell(params, "kestrel", "text", tool, concurrency, 1, 1)
    return execute(spec, work / spec.key, params)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    print("| tool | bare rps (mean) | hostbench rps (mean) | ratio | sampler CPU [cores] |")
    print("|---|---:|---:|---:|---:|")
    for tool in ("bombardier", "k6"):
        bare, ours, sampler = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.pairs):
                work = Path(tmp) / f"pair{i}"
                bare.append(bare_rps(tool, args.duration, args.concurrency, work / "bare"))
                row = harness_row(tool, args.duration, args.concurrency, work / "hostbench")
                ours.append(row["rps"])
                sampler.append(row["cpu_sampler_cores"])
        ratio = statistics.mean(o / b for o, b in zip(ours, bare, strict=True))
        print(
            f"| {tool} | {statistics.mean(bare):,.0f} | {statistics.mean(ours):,.0f} "
            f"| {ratio:.3f} | {statistics.mean(sampler):.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
