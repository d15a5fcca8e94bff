"""Where the variance lives: between launches, between windows of one warm launch, and drift.

Kalibera and Jones ("Rigorous benchmarking in reasonable time", 2013) and pyperf's worker
processes x values: a ratio's interval narrows with the number of independent units and with
the repetitions inside each, and which one pays depends on where the variance is. This script
measures it with the package's own parts (modes.launch, the k6 wrapper, the warm-up that
waits for the JIT, the CPU monitor): `--launches` times, both modes are launched fresh and
warmed up on every scenario, then `--pairs` pairs of adjacent windows per scenario run in
alternating order (A B, then B A, ...), each the article's unit (k6, 8 VUs, 15 s).

It writes windows.csv (one row per window, with the machine's raw CPU counters, so the
foreign-CPU accounting can be checked on it too) and prints, per scenario and measure
(requests/s, and server-side CPU time per request), the two components of the log ratio's
variance and the 95% half-width they predict for other designs. Measure alone:

    .venv/bin/python benchmarks/variance_components.py --out data/benchmarks/variance
    .venv/bin/python benchmarks/variance_components.py --analyse data/benchmarks/variance
"""

import argparse
import math
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from hostbench.analysis.student_t import t_quantile
from hostbench.catalog import get_mode, get_scenario
from hostbench.harness.launch.modes import launch
from hostbench.harness.measure.checks import validate
from hostbench.harness.measure.cpumonitor import (
    CpuMonitor,
    foreign_seconds,
    harness_pids,
    process_cpu_seconds,
)
from hostbench.harness.measure.loadgen import generator_for
from hostbench.harness.measure.quiet import wait_until_quiet
from hostbench.harness.measure.run import warm_up
from hostbench.harness.measure.window import quiesce
from hostbench.load import Load
from hostbench.params import LaunchOptions

WINDOWS_FILE = "windows.csv"
MACHINE_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal", "idle", "iowait")


def _machine() -> tuple[dict, dict]:
    """The machine's CPU counters and every process's CPU seconds, now."""
    times = psutil.cpu_times()
    return {f: getattr(times, f, 0.0) for f in MACHINE_FIELDS}, process_cpu_seconds()


def window(target, load: Load, out_dir: Path) -> dict:
    """One measured window on a warm target: requests/s, CPU per group, raw machine counters."""
    generator = generator_for(load)
    quiesce(target)
    target.reset_server_stats()
    m0, procs0 = _machine()
    t0 = time.monotonic()
    monitor = CpuMonitor(out_dir / "cpu_samples.csv")
    for group, pids in target.groups.items():
        for pid in pids:
            monitor.watch(group, pid)
    with monitor:
        result = generator.run(load, out_dir, on_start=lambda pid: monitor.watch("loadgen", pid))
        monitor.exited("loadgen", result.cpu_s)
    elapsed = time.monotonic() - t0
    m1, procs1 = _machine()
    cpu = monitor.summary()
    row = {
        "rps": result.rps,
        "requests": result.requests,
        "duration_s": result.duration_s,
        "errors": result.errors,
        "cpu_server_s": cpu["cpu_server_cores"] * cpu["measured_s"],
        "cpu_proxy_s": (cpu["cpu_proxy_cores"] if math.isfinite(cpu["cpu_proxy_cores"]) else 0.0)
        * cpu["measured_s"],
        "cpu_loadgen_s": result.cpu_s,
        "cpu_sampler_cores": cpu["cpu_sampler_cores"],
        "foreign_cores": cpu["foreign_cores"],
        "steal_pct": cpu["cpu_steal_pct"],
        "measured_s": cpu["measured_s"],
        "window_s": elapsed,
        "foreign_procs_cores": foreign_seconds(procs0, procs1, harness_pids()) / elapsed,
    }
    row.update({f"machine_{f}_s": m1[f] - m0[f] for f in MACHINE_FIELDS})
    return row


def measure(args) -> pd.DataFrame:
    out = Path(args.out).resolve()  # k6 is started in its own folder and given paths
    out.mkdir(parents=True, exist_ok=True)
    modes = [get_mode(m) for m in args.modes]
    scenarios = [get_scenario(s) for s in args.scenarios]
    rows = []
    started = time.monotonic()
    for launch_no in range(1, args.launches + 1):
        wait_until_quiet(0.1, 10, 120)
        t_launch = time.monotonic()
        with ExitStack() as stack:
            targets = {}
            for mode in modes:
                run_dir = out / f"l{launch_no}" / mode.id
                run_dir.mkdir(parents=True, exist_ok=True)
                targets[mode.id] = stack.enter_context(launch(mode, run_dir, LaunchOptions()))
            loads = {}
            # Warm-up: every mode on every scenario, in an order that alternates per launch.
            order = modes if launch_no % 2 else modes[::-1]
            for scenario in scenarios:
                for mode in order:
                    target = targets[mode.id]
                    validate(scenario, target.get(scenario.path))
                    load = Load("k6", args.vus, float(args.duration_s), warmup_s=args.warmup_s,
                                path=scenario.path).aimed_at(target.url)  # fmt: skip
                    loads[mode.id, scenario.id] = load
                    warmup_dir = out / f"l{launch_no}" / mode.id / f"warmup-{scenario.id}"
                    warm = warm_up(generator_for(load), target, load, 5.0, warmup_dir)
                    print(f"launch {launch_no}: {mode.id} {scenario.id} warm-up "
                          f"{warm['warmup_s']:.0f} s, steady {warm['warmup_steady']}")  # fmt: skip
            setup_s = time.monotonic() - t_launch
            for pair in range(1, args.pairs + 1):
                for scenario in scenarios:
                    # A B, then B A: each pair's two windows adjacent, their order balanced.
                    flip = (pair + launch_no) % 2
                    for position, mode in enumerate(modes[::-1] if flip else modes, start=1):
                        run_dir = out / f"l{launch_no}" / mode.id / f"{scenario.id}-p{pair}"
                        row = {
                            "launch": launch_no,
                            "pair": pair,
                            "position": position,
                            "mode": mode.id,
                            "scenario": scenario.id,
                            "t_s": round(time.monotonic() - started, 2),
                            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                            "launch_setup_s": round(setup_s, 1),
                            **window(targets[mode.id], loads[mode.id, scenario.id], run_dir),
                        }
                        rows.append(row)
                        print(f"launch {launch_no} pair {pair} {scenario.id} {mode.id}: "
                              f"{row['rps']:,.0f} rps, foreign {row['foreign_cores']:.2f}, "
                              f"steal {row['steal_pct']:.1f}%")  # fmt: skip
                        pd.DataFrame(rows).to_csv(out / WINDOWS_FILE, index=False)
    return pd.DataFrame(rows)


def components(windows: pd.DataFrame, mode: str, baseline: str, measure: str) -> pd.DataFrame:
    """Per scenario: the variance of the log ratio mode / baseline between windows of one
    launch (s_w^2, per pair) and between launches (s_b^2, of a launch's true mean), by the
    one-way random-effects ANOVA on pairs nested in launches."""
    df = windows.copy()
    if measure == "cpu_us_per_request":
        df["value"] = (df["cpu_server_s"] + df["cpu_proxy_s"]) / df["requests"] * 1e6
    else:
        df["value"] = df[measure]
    wide = df.pivot_table(index=["scenario", "launch", "pair"], columns="mode", values="value")
    wide["d"] = np.log(wide[mode]) - np.log(wide[baseline])
    rows = []
    for scenario, d in wide["d"].groupby(level="scenario"):
        by_launch = d.groupby(level="launch")
        m = by_launch.size().mean()
        n = by_launch.ngroups
        within = float(by_launch.var(ddof=1).mean())  # pooled: equal pairs per launch
        means = by_launch.mean()
        between = max(0.0, float(means.var(ddof=1)) - within / m)
        rows.append({
            "scenario": scenario, "measure": measure, "launches": n, "pairs": m,
            "ratio": float(np.exp(d.mean())), "sd_within": math.sqrt(within),
            "sd_between": math.sqrt(between),
            "halfwidth_pct_measured": 100 * t_quantile(0.975, n - 1)
            * float(means.std(ddof=1)) / math.sqrt(n),
        })  # fmt: skip
    return pd.DataFrame(rows)


def predicted_halfwidth_pct(sd_within: float, sd_between: float, launches: int, pairs: int):
    """The 95% half-width (in % of the ratio, log scale) of launches x pairs, launch the unit."""
    var = (sd_between**2 + sd_within**2 / pairs) / launches
    return 100 * (math.exp(t_quantile(0.975, launches - 1) * math.sqrt(var)) - 1)


def drift(windows: pd.DataFrame) -> pd.DataFrame:
    """How much a mode's rate moves within one warm launch: the slope of log rps over the
    launch's windows, in % per minute, per mode and scenario (mean over launches)."""
    rows = []
    for (mode, scenario, launch_no), g in windows.groupby(["mode", "scenario", "launch"]):
        if len(g) >= 2 and g["t_s"].nunique() > 1:
            slope = np.polyfit(g["t_s"] / 60, np.log(g["rps"]), 1)[0]
            rows.append({"mode": mode, "scenario": scenario, "launch": launch_no,
                         "slope_pct_per_min": 100 * slope})  # fmt: skip
    return (
        pd.DataFrame(rows)
        .groupby(["mode", "scenario"])["slope_pct_per_min"]
        .agg(["mean", "min", "max"])
        .reset_index()
    )


def analyse(windows: pd.DataFrame, mode: str, baseline: str) -> None:
    comps = pd.concat(
        [components(windows, mode, baseline, m) for m in ("rps", "cpu_us_per_request")]
    )
    print(f"## Components of log({mode} / {baseline})\n")
    print(_markdown(comps, ".4g"))
    window_s = float(windows["window_s"].median())
    setup_s = float(windows.groupby("launch")["launch_setup_s"].first().median())
    print(f"\nOne window {window_s:.1f} s; a launch's start and warm-up {setup_s:.0f} s.\n")
    print("## Predicted 95% half-width (% of the ratio) and minutes per scenario and pair\n")
    designs = [(3, 4), (4, 3), (4, 6), (5, 2), (5, 3), (6, 2), (6, 4), (8, 2), (10, 2)]
    rows = []
    for (scenario, measure), c in comps.groupby(["scenario", "measure"]):
        c = c.iloc[0]
        rows.append({
            "scenario": scenario, "measure": measure,
            **{f"{n}x{m}": predicted_halfwidth_pct(c.sd_within, c.sd_between, n, m)
               for n, m in designs},
        })  # fmt: skip
    print(_markdown(pd.DataFrame(rows), ".1f"))
    minutes = {f"{n}x{m}": n * (2 * m * window_s) / 60 for n, m in designs}
    print("\nwindow minutes per compared pair of modes and scenario: "
          + ", ".join(f"{k} {v:.1f}" for k, v in minutes.items()))  # fmt: skip
    print("\n## Drift within a warm launch (slope of log rps, % per minute)\n")
    print(_markdown(drift(windows), ".2f"))
    print("\n## Foreign CPU on this quiet machine, by accounting (cores; should centre on 0)\n")
    print(_markdown(foreign_accounting(windows), ".3f"))


def foreign_accounting(windows: pd.DataFrame) -> pd.DataFrame:
    """The foreign CPU of each window read three ways: the monitor's clipped figure, the raw
    machine difference without and with interrupt time, and the sum of other processes."""
    w = windows
    ours = w["cpu_server_s"] + w["cpu_proxy_s"] + w["cpu_loadgen_s"]
    ours = ours + w["cpu_sampler_cores"] * w["measured_s"]
    process = w["machine_user_s"] + w["machine_nice_s"] + w["machine_system_s"]
    irq = w["machine_irq_s"] + w["machine_softirq_s"]
    readings = {
        "monitor (clipped at 0)": w["foreign_cores"],
        "processes - ours": (process - ours) / w["window_s"],
        "processes + irq - ours": (process + irq - ours) / w["window_s"],
        "other processes' own counters": w["foreign_procs_cores"],
    }
    return pd.DataFrame(
        [
            {"reading": k, "mean": v.mean(), "sd": v.std(), "min": v.min(), "max": v.max()}
            for k, v in readings.items()
        ]
    )


def _markdown(df: pd.DataFrame, fmt: str) -> str:
    """A Markdown table (pandas' to_markdown needs tabulate, which the package does not pin)."""

    def cell(v):
        return format(v, fmt) if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/benchmarks/variance")
    ap.add_argument("--analyse", metavar="FOLDER", help="only analyse FOLDER/windows.csv")
    ap.add_argument("--modes", nargs=2, default=["kestrel", "nginx-keepalive"],
                    metavar=("MODE", "BASELINE"))  # fmt: skip
    ap.add_argument("--scenarios", nargs="+", default=["text", "html"])
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--duration-s", type=float, default=15)
    ap.add_argument("--warmup-s", type=float, default=20)
    ap.add_argument("--vus", type=int, default=8)
    args = ap.parse_args()
    if args.analyse:
        windows = pd.read_csv(Path(args.analyse) / WINDOWS_FILE)
    else:
        windows = measure(args)
    analyse(windows, *args.modes)


if __name__ == "__main__":
    main()
