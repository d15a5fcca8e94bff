"""The interleaved design characterised: what the slice length does to the ratio, and where
its variance lives (issue 38, item 1).

benchmarks/variance_components.py measured today's design (15 s windows back to back); this
script measures the interleaved one with the package's own parts: `--launches` times, Kestrel
and the jcsi2018 analog (nginx-keepalive), and optionally a sensitivity mode, are launched
fresh together and each warmed up on every scenario (until its JIT settles); then `--runs`
runs, each a pass over every scenario and slice length in a seeded random order, `--chunks`
interleaved chunks of `--chunk-s` seconds each (every target the same time), fired by
`--tool` at `--connections`: k6 (the default, the study's 8 VUs) in one process switching
target (hostbench/harness/measure/interleave.py), or bombardier, wrk or ab alternating short
runs, one per slice (measure/alternate.py; chunks.csv then also has each chunk's gaps between
runs). Measure each tool into a folder of its own.

It writes chunks.csv (one row per chunk and mode: requests, the seconds the mode had, its
rate, and the log ratio to the baseline; also both counts, CPU per request, the machine),
seed.json, each chunk's raw files, and prints per compared mode, scenario and slice length:
the ratio (geometric mean) with its 95% interval (the launch the unit; runs, then chunks,
when there is only one), the sd of a chunk's log ratio within a run, the between-runs and
between-launches components (nested ANOVA on the log ratios), and the bias against the
longest slice (the ratio over the longest slice's, paired by the same unit).

    .venv/bin/python benchmarks/interleave_components.py --out data/benchmarks/interleave
    .venv/bin/python benchmarks/interleave_components.py --tool bombardier --out /tmp/alt-bombardier
    .venv/bin/python benchmarks/interleave_components.py --analyse data/benchmarks/interleave
    .venv/bin/python benchmarks/interleave_components.py --quick --out /tmp/interleave-smoke

Measure alone on a quiet machine (it holds the machine-wide measuring lock, so a study
started beside it waits). Every process it starts stops on success, error and Ctrl-C.
"""

import argparse
import json
import math
import random
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from hostbench.analysis.components import (
    CHUNKS_FILE,
    QUIET_MAX_CORES,
    SEED_FILE,
    summarise,
    table,
)
from hostbench.catalog import get_mode, get_scenario
from hostbench.errors import BadInput, exit_code
from hostbench.harness.environment import cpu_model
from hostbench.harness.launch.modes import launch
from hostbench.harness.measure.checks import validate
from hostbench.harness.measure.designs import window_for
from hostbench.harness.measure.loadgen import generator_for
from hostbench.harness.measure.quiet import measuring_alone, wait_until_quiet
from hostbench.harness.measure.run import warm_up
from hostbench.harness.measure.slices import slice_schedule
from hostbench.load import TOOLS, Load, check_slice
from hostbench.params import LaunchOptions
from hostbench.params.keys import ENV_NAME

DEFAULT_SLICES = [0.1, 0.25, 0.5, 1, 2, 5, 15]
# Alternating runs: whole seconds (wrk's and ab's runs are), from the tools' shortest run.
DEFAULT_RUN_SLICES = [1, 2, 5, 15]
STEADY_TOLERANCE_PCT = 5.0
CHUNK_OVERHEAD_S = 2.0  # k6's start and the counters' reads around a chunk, for the estimate
# --quick: a seconds-long smoke of the whole pipeline; its numbers are not evidence.
QUICK = {"launches": 1, "runs": 1, "chunks": 2, "slices": [0.25, 1], "scenarios": ["text"],
         "chunk_s": 2.0, "warmup_s": 2.0}  # fmt: skip
QUICK_RUNS = {**QUICK, "slices": [1, 2], "chunk_s": 4.0}  # alternating runs: slices of runs


# ------------------------------------------------------------------ measuring


def chunk_rows(window, ids: dict, baseline: str) -> list[dict]:
    """The tidy rows of one interleaved chunk: one per mode, its log ratio to the baseline
    (empty for the baseline itself)."""
    rates = {t["mode"]: t["rps"] for t in window.targets}
    rows = []
    for t in window.targets:
        ratio = rates[t["mode"]] / rates[baseline] if rates[baseline] > 0 else math.nan
        log_ratio = math.log(ratio) if t["mode"] != baseline and ratio > 0 else math.nan
        rows.append({
            **ids, "mode": t["mode"], "requests": t["requests"], "seconds": t["seconds"],
            "rate": t["rps"], "log_ratio": log_ratio, "server_requests": t["server_requests"],
            "count_diff_pct": t["count_diff_pct"], "cpu_us_per_request": t["cpu_us_per_request"],
            "latency_p50_ms": t["latency_p50_ms"], "valid": t["valid"],
            "invalid_reason": t["invalid_reason"],
            **{k: window.window[k] for k in ("schedule_seed", "rounds", "foreign_cores",
                                             "cpu_steal_pct", "cpu_loadgen_s", "started_at")},
            "tool": t["tool"],
            # Alternating runs: the window's time outside every run's clock (k6: one run, none).
            "gap_total_s": window.window.get("gap_total_s", 0.0),
        })  # fmt: skip
    return rows


def estimate_minutes(args, modes: int) -> float:
    chunks = args.launches * args.runs * len(args.scenarios) * len(args.slices) * args.chunks
    per_chunk = args.chunk_s + CHUNK_OVERHEAD_S
    warmups = args.launches * modes * len(args.scenarios) * args.warmup_s
    return (chunks * per_chunk + warmups) / 60


def warm_targets(targets, scenarios, args, folder: Path) -> dict:
    """Each target warmed up alone on every scenario, until its rate is steady and its JIT
    has settled (run.warm_up); returns each scenario's load."""
    loads = {}
    for scenario in scenarios:
        load = Load(args.tool, args.connections, args.chunk_s, warmup_s=args.warmup_s,
                    path=scenario.path)  # fmt: skip
        loads[scenario.id] = load
        for target in targets:
            validate(scenario, target.get(scenario.path))
            aimed = load.aimed_at(target.url)
            warmup_dir = folder / target.mode / f"warmup-{scenario.id}"
            warm = warm_up(generator_for(aimed), target, aimed, STEADY_TOLERANCE_PCT, warmup_dir)
            print(f"{folder.name}: {target.mode} {scenario.id} warm-up {warm['warmup_s']:.0f} s, "
                  f"steady {warm['warmup_steady']}", flush=True)  # fmt: skip
    return loads


class Progress:
    """Chunks done out of all, and the rows so far, rewritten to chunks.csv after each."""

    def __init__(self, out: Path, total: int):
        self.out, self.total, self.rows = out, total, []

    def add(self, ids: dict, window, baseline: str) -> None:
        new = chunk_rows(window, ids, baseline)
        self.rows += new
        pd.DataFrame(self.rows).to_csv(self.out / CHUNKS_FILE, index=False)
        done = len(self.rows) // len(new)
        rates = ", ".join(f"{r['mode']} {r['rate']:,.0f}/s" for r in new)
        ratios = ", ".join(f"{math.exp(r['log_ratio']):.3f}" for r in new
                           if not math.isnan(r["log_ratio"]))  # fmt: skip
        flag = "".join(f" INVALID {r['mode']}: {r['invalid_reason']}" for r in new
                       if r["invalid_reason"])  # fmt: skip
        gaps = window.window.get("gap_total_s")
        gaps = f"; gaps {gaps:.2f} s" if gaps is not None else ""
        print(f"[{done}/{self.total}] launch {ids['launch']} run {ids['run']} {ids['scenario']} "
              f"slice {ids['slice_s']:g} s chunk {ids['chunk']}: {rates}; ratio {ratios}; "
              f"foreign {window.window['foreign_cores']:.2f} cores{gaps}{flag}",
              flush=True)  # fmt: skip


def one_run(targets, loads, scenarios, args, rng, folder: Path, ids: dict, progress) -> None:
    """One pass over every scenario and slice length, in a random order (drift favours no
    slice length), `args.chunks` interleaved chunks each, in the tool's design."""
    fire = window_for(args.tool)
    plan = [(scenario, slice_s) for scenario in scenarios for slice_s in args.slices]
    rng.shuffle(plan)
    for scenario, slice_s in plan:
        for chunk in range(1, args.chunks + 1):
            seed = rng.randrange(2**31)
            schedule = slice_schedule(len(targets), slice_s, args.chunk_s, seed)
            where = folder / f"{scenario.id}-s{slice_s:g}-c{chunk}"
            window = fire(targets, loads[scenario.id], schedule, where, scenario.stats_key)
            chunk_ids = {**ids, "slice_s": slice_s, "scenario": scenario.id, "chunk": chunk}
            progress.add(chunk_ids, window, args.modes[1])


def measure(args) -> pd.DataFrame:
    out = Path(args.out).resolve()  # the tool is started in its own folder and given paths
    out.mkdir(parents=True, exist_ok=True)
    modes = [get_mode(m) for m in [*args.modes, *([args.sensitivity] if args.sensitivity else [])]]
    scenarios = [get_scenario(s) for s in args.scenarios]
    # The processor too: a ratio moved by several percent between this VM's Xeon and EPYC hosts.
    setup = {**vars(args), "cpu_model": cpu_model()}
    (out / SEED_FILE).write_text(json.dumps(setup, indent=1) + "\n")
    rng = random.Random(args.seed)
    total = args.launches * args.runs * len(scenarios) * len(args.slices) * args.chunks
    minutes = estimate_minutes(args, len(modes))
    print(f"{total} chunks of {args.chunk_s:g} s of {args.tool} at {args.connections} "
          f"connections over {', '.join(m.id for m in modes)}; about {minutes:.1f} min; "
          f"seed {args.seed}", flush=True)  # fmt: skip
    progress = Progress(out, total)
    with measuring_alone(f"benchmarks/interleave_components.py (out {out})"):
        for launch_no in range(1, args.launches + 1):
            if not args.quick:
                wait_until_quiet(QUIET_MAX_CORES, 10, 120)
            folder = out / f"l{launch_no}"
            with ExitStack() as up:  # stops what it launched however the launch ends
                options = LaunchOptions(app_env=args.app_env)
                targets = [up.enter_context(launch(m, folder / m.id, options))
                           for m in modes]  # fmt: skip
                loads = warm_targets(targets, scenarios, args, folder)
                for run in range(1, args.runs + 1):
                    ids = {"launch": launch_no, "run": run}
                    one_run(targets, loads, scenarios, args, rng, folder / f"r{run}", ids,
                            progress)  # fmt: skip
    return pd.DataFrame(progress.rows)


# ------------------------------------------------------------------ the command line


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/benchmarks/interleave")
    ap.add_argument("--analyse", metavar="FOLDER", help="only analyse FOLDER/chunks.csv")
    ap.add_argument("--modes", nargs=2, default=["kestrel", "nginx-keepalive"],
                    metavar=("MODE", "BASELINE"))  # fmt: skip
    ap.add_argument("--sensitivity", metavar="MODE", help="a third mode, e.g. nginx or caddy")
    ap.add_argument("--scenarios", nargs="+", default=["text", "html"])
    ap.add_argument(
        "--tool",
        default="k6",
        choices=sorted(TOOLS),
        help="k6 switches target within one run; the others alternate short runs",
    )
    ap.add_argument(
        "--slices",
        nargs="+",
        type=float,
        metavar="S",
        help=f"default: {' '.join(f'{s:g}' for s in DEFAULT_SLICES)} (k6), "
        f"{' '.join(f'{s:g}' for s in DEFAULT_RUN_SLICES)} (the others)",
    )
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--chunk-s", type=float, default=30.0)
    ap.add_argument("--warmup-s", type=float, default=20.0)
    ap.add_argument(
        "--connections",
        "--vus",
        type=int,
        default=8,
        help="connections (k6: virtual users), as a study's concurrency",
    )
    ap.add_argument(
        "--app-env",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="environment of every launch of the test app, e.g. DOTNET_TieredPGO=0 "
        "(is what spreads between launches the runtime's?)",
    )
    ap.add_argument("--seed", type=int, help="the order's seed (default: drawn, recorded)")
    ap.add_argument("--quick", action="store_true",
                    help="a seconds-long smoke of the pipeline: " + ", ".join(
                        f"{k.replace('_', '-')} {v}" for k, v in QUICK.items())
                    + f" (alternating runs: slices {QUICK_RUNS['slices']}, chunk-s "
                    f"{QUICK_RUNS['chunk_s']})")  # fmt: skip
    return ap


def resolved(args) -> argparse.Namespace:
    """The options with what the tool's design sets: the smoke's values (--quick) and the
    default slice lengths (k6 slices a run finely; the others' slices are whole runs)."""
    switches = TOOLS[args.tool].switches_target
    if args.quick:
        for key, value in (QUICK if switches else QUICK_RUNS).items():
            setattr(args, key, value)
    if args.slices is None:
        args.slices = DEFAULT_SLICES if switches else DEFAULT_RUN_SLICES
    if isinstance(args.app_env, list):
        args.app_env = dict(item.partition("=")[::2] for item in args.app_env)
    return args


def check(args) -> None:
    """BadInput (one line) for a value the measurement cannot use, before anything starts."""
    for key in ("launches", "runs", "chunks", "connections"):
        if getattr(args, key) < 1:
            raise BadInput(f"--{key} must be 1 or more, got {getattr(args, key)}")
    if args.chunks < 2 and args.launches * args.runs < 2:
        raise BadInput("one chunk of one run gives no interval: use --chunks 2 or more")
    modes = [*args.modes, *([args.sensitivity] if args.sensitivity else [])]
    if len(set(modes)) < len(modes):
        raise BadInput(f"each mode once: got {', '.join(modes)}")
    for mode in modes:
        get_mode(mode)  # BadInput naming the modes there are
    for scenario in args.scenarios:
        get_scenario(scenario)
    for name in args.app_env:
        if not ENV_NAME.match(name):
            raise BadInput(f"--app-env: {name!r} is not an environment variable name (NAME=VALUE)")
    Load(args.tool, args.connections, args.chunk_s, warmup_s=args.warmup_s)
    for slice_s in args.slices:  # BadInput saying what a slice, a chunk and the tool allow
        slice_schedule(len(modes), slice_s, args.chunk_s, 0)
        check_slice(args.tool, slice_s)


def read_chunks(folder: Path) -> tuple[pd.DataFrame, bool]:
    """A measured folder's chunks, and whether it was a smoke run (--quick)."""
    try:
        chunks = pd.read_csv(folder / CHUNKS_FILE)
    except FileNotFoundError:
        raise BadInput(f"{folder / CHUNKS_FILE} not found: give a folder this script measured "
                       "into (--out)") from None  # fmt: skip
    try:
        quick = bool(json.loads((folder / SEED_FILE).read_text()).get("quick"))
    except FileNotFoundError:
        quick = False
    return chunks, quick


def main(argv=None) -> int:
    args = resolved(parser().parse_args(argv))

    def run() -> None:
        if args.analyse:
            chunks, args.quick = read_chunks(Path(args.analyse))
        else:
            check(args)
            if args.seed is None:
                args.seed = random.SystemRandom().randrange(2**31)
            t0 = time.monotonic()
            chunks = measure(args)
            print(f"measured in {(time.monotonic() - t0) / 60:.1f} min")
        print()
        print(table(summarise(chunks, quick=args.quick), args.modes[1]))

    return exit_code(run, "interrupted: every process it started is stopped; chunks.csv keeps "
                          "the chunks measured")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
