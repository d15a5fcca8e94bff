"""The nginx-mode gap (issue 17, item 11): hostbench's nginx mode against nginx by hand.

Each variant starts the test app and nginx afresh (as a run does), warms up with
wrk for 2 s, then measures wrk -t2 -c8 on /text for --duration seconds. Variants
run interleaved (every round runs each once, in a shuffled order), so drift on a
shared machine hits them alike. It prints per-variant medians and ranges of rps,
the CPU per request of the app, nginx and wrk (microseconds; steadier than rps
when other work shares the machine), and the CPU other processes used (foreign
cores: the machine's busy cores minus the app's, nginx's and wrk's).

    PYTHONPATH=. .venv/bin/python benchmarks/nginx_gap.py --rounds 8 --duration 5 \
        --variants hostbench-run,hostbench,hand
    PYTHONPATH=. .venv/bin/python benchmarks/nginx_gap.py --same-app --rounds 12 \
        --duration 3 --variants hb-nginx,hand-nginx,no-user,small-conns,errlog-file,no-xff

`--list` prints the variants. `hostbench-run` is a whole run (run.execute: warm-up
to steady state, checks, CPU monitor; wrk c8) and reports its row; `hostbench` is
the nginx mode as a study launches it (modes.launch); `hand` is the app started
with the same arguments by a plain Popen and nginx from a minimal config with the
guide's directives (HTTP/1.1, Connection keep-alive, Host $http_host,
X-Forwarded-*, no upstream pool), started by a plain Popen with its output to
/dev/null. The others change one thing at a time. `--same-app` puts one app
(started as hostbench does) behind every variant's nginx, each started once, and
alternates wrk between them every few seconds: the tightest A/B for nginx-side
differences.

What it showed (2 cores, another session's load tests taking 0.5-1 core throughout):
no variant separates from hostbench's beyond the noise; nginx's own CPU per request
is the same (~80-90 us) with either config and either launcher, and the app's
(~260-400 us per request, each request a new upstream connection) moves with the
machine's other load, not with the variant. Diagnostics, not published numbers;
load goes to 127.0.0.1 only.
"""

import argparse
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from hostbench.catalog import get_mode
from hostbench.harness.launch import web
from hostbench.harness.launch.modes import LaunchOptions, launch
from hostbench.harness.launch.places import Local
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.harness.launch.tools import find_tool
from hostbench.harness.measure.run import RunSpec, execute
from hostbench.params import StudyParams
from hostbench.programs import PROGRAMS, Setup
from hostbench.programs.nginx import nginx_config

# The guide's server block (Microsoft, "Host ASP.NET Core on Linux with Nginx"), with
# $http_host for Host as hostbench has it; everything else is nginx's defaults.
HAND_CONFIG = """\
daemon off;
worker_processes auto;
pid {run_dir}/nginx.pid;
error_log {run_dir}/error.log;
events {{
    worker_connections 1024;
}}
http {{
    access_log off;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass         http://{upstream};
            proxy_http_version 1.1;
            proxy_set_header   Upgrade $http_upgrade;
            proxy_set_header   Connection keep-alive;
            proxy_set_header   Host $http_host;
            proxy_cache_bypass $http_upgrade;
            proxy_set_header   X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header   X-Forwarded-Proto $scheme;
        }}
    }}
}}
"""


def _drop(pattern: str) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, "", text, flags=re.MULTILINE)


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, repl, text, flags=re.MULTILINE)


@dataclass(frozen=True)
class Variant:
    """How the app and nginx are started, and how hostbench's config is changed."""

    summary: str
    app: str = "hostbench"  # "hostbench": modes' ManagedProcess; "plain": a bare Popen
    nginx: str = "hostbench"  # the same two choices for nginx
    config: str = "hostbench"  # "hostbench": nginx_config; "hand": HAND_CONFIG
    edit: Callable[[str], str] | None = None  # applied to the config text
    harness: bool = False  # the whole mode through modes.launch (ignores the rest)
    run: bool = False  # a whole hostbench run (run.execute: warm-up, checks, CPU monitor)
    keepalive: int | None = None  # hostbench's config with an upstream pool of this size


VARIANTS = {
    "hostbench": Variant("the nginx mode as a study launches it", harness=True),
    "hostbench-run": Variant("a whole hostbench run: wrk c8, nginx, text (its row)", run=True),
    "hand": Variant("plain app, plain nginx, the guide's minimal config", "plain", "plain", "hand"),
    "hb-config-plain": Variant(
        "hostbench's config, app and nginx started plainly", "plain", "plain"
    ),
    "hand-config-managed": Variant(
        "the minimal config, app and nginx started by ManagedProcess", config="hand"
    ),
    "hb-nginx": Variant("hostbench's config and nginx launch (the app as hostbench starts it)"),
    "hand-nginx": Variant(
        "the minimal config, nginx started plainly", nginx="plain", config="hand"
    ),
    "hb-config-plain-nginx": Variant("hostbench's config, nginx started plainly", nginx="plain"),
    "hb-pool": Variant("hostbench's nginx-keepalive config (pool of 32)", keepalive=32),
    "no-user": Variant("hostbench's, without the `user` line", edit=_drop(r"^user .*\n")),
    "small-conns": Variant(
        "hostbench's, worker_connections 1024 and no worker_rlimit_nofile",
        edit=lambda t: _drop(r"^worker_rlimit_nofile .*\n")(
            _sub(r"worker_connections \d+;", "worker_connections 1024;")(t)
        ),
    ),
    "errlog-file": Variant(
        "hostbench's, error_log to a file at level error (not stderr notice)",
        edit=_sub(r"^error_log stderr notice;", "error_log error.log error;"),
    ),
    "no-xff": Variant(
        "hostbench's, without the X-Forwarded-* headers",
        edit=_drop(r"^\s*proxy_set_header\s+X-Forwarded-\S+ .*\n"),
    ),
    "no-cache-bypass": Variant(
        "hostbench's, without proxy_cache_bypass", edit=_drop(r"^\s*proxy_cache_bypass .*\n")
    ),
    "no-temp-paths": Variant(
        "hostbench's, without the temp paths", edit=_drop(r"^\s*\w+_temp_path .*\n")
    ),
}


def _wait_ok(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not web.answers_ok(url):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} not answering")
        time.sleep(0.05)


@contextmanager
def _plain(argv: list[str], ready_url: str, cwd: Path):
    proc = subprocess.Popen(
        [str(a) for a in argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=cwd,
    )
    try:
        _wait_ok(ready_url)
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _start_app(variant: Variant, stack: ExitStack, run_dir: Path) -> tuple[str, int]:
    """The test app on a free loopback port: (upstream "127.0.0.1:port", pid)."""
    port = web.free_port()
    app_url = f"http://127.0.0.1:{port}"
    if variant.app == "plain":
        argv = [find_tool("TestApp"), "--urls", app_url]
        app = stack.enter_context(_plain(argv, app_url + "/health", run_dir))
    else:
        setup = Setup(get_mode("kestrel"), LaunchOptions(), f"127.0.0.1:{port}")
        app = stack.enter_context(PROGRAMS["TestApp"].process(Local(), run_dir, setup))
    return f"127.0.0.1:{port}", app.pid


def _start_nginx(variant: Variant, stack: ExitStack, run_dir: Path, upstream: str):
    """nginx in front of `upstream` as `variant` says: (its URL, pid)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    proxy_port = web.free_port()
    if variant.config == "hand":
        text = HAND_CONFIG.format(run_dir=run_dir, port=proxy_port, upstream=upstream)
    else:
        text = nginx_config(
            listen_port=proxy_port,
            upstream=upstream,
            keepalive=variant.keepalive,
            workers=os.cpu_count() or 1,
            run_dir=run_dir,
            user=Local().root_user(),
        )
    if variant.edit:
        text = variant.edit(text)
    (run_dir / "nginx-temp").mkdir(exist_ok=True)
    conf = run_dir / "nginx.conf"
    conf.write_text(text)
    url = f"http://127.0.0.1:{proxy_port}"
    if variant.nginx == "plain":
        argv = [find_tool("nginx"), "-p", run_dir, "-c", conf]
        nginx = stack.enter_context(_plain(argv, url + "/health", run_dir))
    else:
        # As programs.Nginx starts it (stderr to run_dir/nginx.log).
        argv = [find_tool("nginx"), "-p", run_dir, "-e", "stderr", "-c", conf]
        ready = lambda: web.answers_ok(url + "/health")  # noqa: E731
        nginx = ManagedProcess("nginx", argv, run_dir / "nginx.log", ready=ready, cwd=run_dir)
        stack.enter_context(nginx)
    return url, nginx.pid


@contextmanager
def started(variant: Variant, run_dir: Path):
    """Yield (url, (app pid, nginx pid)) with both running as `variant` says."""
    if variant.harness:
        with launch("nginx", run_dir, LaunchOptions()) as target:
            yield target.url, tuple(p.pid for p in target.processes)
        return
    with ExitStack() as stack:
        upstream, app_pid = _start_app(variant, stack, run_dir)
        url, nginx_pid = _start_nginx(variant, stack, run_dir, upstream)
        yield url, (app_pid, nginx_pid)


def _tree_cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for p in [root, *root.children(recursive=True)]:
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def wrk(url: str, duration_s: int) -> float:
    """Requests per second of wrk -t2 -c8 on url (no errors, no non-2xx)."""
    proc = subprocess.Popen(
        [find_tool("wrk"), "-t2", "-c8", f"-d{duration_s}s", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    out, _ = proc.communicate()
    match = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.MULTILINE)
    if not match or "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk: {out}")
    return float(match.group(1))


@dataclass
class Trial:
    rps: float
    app_us: float  # CPU per request, microseconds: the app's process tree
    nginx_us: float  # nginx's master and workers
    wrk_us: float  # wrk
    softirq_us: float  # the kernel's softirq time (loopback TCP), machine-wide
    foreign_cores: float  # busy cores not accounted for by the above


def trial(variant: Variant, run_dir: Path, duration_s: int) -> Trial:
    """One fresh start of `variant`: throughput, CPU per request, and the machine's other load."""
    run_dir.mkdir(parents=True)
    if variant.run:
        return _hostbench_run(run_dir, duration_s)
    with started(variant, run_dir) as (url, pids):
        wrk(url + "/text", 2)  # warm-up: JIT, connection setup
        return measure(url, pids, duration_s)


def _hostbench_run(run_dir: Path, duration_s: int) -> Trial:
    params = StudyParams.from_dict(
        {"modes": ["nginx"], "scenarios": ["text"], "tools": ["wrk"], "concurrency": [8],
         "duration_s": duration_s, "warmup_s": 2, "repetitions": 1}
    )  # fmt: skip
    spec = RunSpec.of_cell(params, "nginx", "text", "wrk", 8, 1, 1)
    row = execute(spec, run_dir / spec.key, params)
    per = 1e6 / row["rps"]  # cores x 1e6 / rps = us per request
    foreign = row["cpu_total_pct"] / 100 * row["machine_cores"] - sum(
        row[k] for k in ("cpu_server_cores", "cpu_proxy_cores", "cpu_loadgen_cores")
    )  # softirq included: the monitor does not separate it
    return Trial(
        row["rps"],
        row["cpu_server_cores"] * per,
        row["cpu_proxy_cores"] * per,
        row["cpu_loadgen_cores"] * per,
        math.nan,
        max(0.0, foreign),
    )


def measure(url: str, pids: tuple[int, int], duration_s: int) -> Trial:
    """wrk on url + /text for duration_s, with the CPU of the app and nginx (pids) per request."""
    app_pid, nginx_pid = pids
    app0, nginx0 = _tree_cpu_s([app_pid]), _tree_cpu_s([nginx_pid])
    machine0, children0 = psutil.cpu_times(), os.times()
    t0 = time.monotonic()
    rps = wrk(url + "/text", duration_s)
    dt = time.monotonic() - t0
    machine1, children1 = psutil.cpu_times(), os.times()
    app, nginx = _tree_cpu_s([app_pid]) - app0, _tree_cpu_s([nginx_pid]) - nginx0
    # wrk is a reaped child of this process: its CPU is in the children's times.
    wrk_s = (children1.children_user - children0.children_user) + (
        children1.children_system - children0.children_system
    )
    idle = (machine1.idle + machine1.iowait) - (machine0.idle + machine0.iowait)
    busy_s = sum(machine1) - sum(machine0) - idle
    softirq = machine1.softirq - machine0.softirq
    requests = rps * duration_s
    # Softirq time counts in the process it interrupted (tick accounting), so only the
    # rest (ksoftirqd, other processes) is left in `foreign`.
    foreign = (busy_s - app - nginx - wrk_s) / dt - 0.02  # less this script's polling
    per = 1e6 / requests
    return Trial(rps, app * per, nginx * per, wrk_s * per, softirq * per, max(0.0, foreign))


def _fmt(values: list[float], digits: int = 0) -> str:
    med = statistics.median(values)
    return f"{med:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--variants", default="hostbench,hand")
    ap.add_argument("--list", action="store_true", help="print the variants and exit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--same-app",
        action="store_true",
        help="one app (started as hostbench does) behind every variant's nginx, each started "
        "once; rounds alternate wrk between them (nginx-side variants only)",
    )
    args = ap.parse_args()
    if args.list:
        for name, v in VARIANTS.items():
            print(f"{name:20} {v.summary}")
        return
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variants {unknown}; --list shows them")
    rng = random.Random(args.seed)
    results: dict[str, list[Trial]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory(prefix="nginx-gap-") as tmp, ExitStack() as stack:
        shared = {}
        if args.same_app:
            bad = [n for n in names if VARIANTS[n].harness or VARIANTS[n].app != "hostbench"]
            if bad:
                sys.exit(f"--same-app takes nginx-side variants only, not {bad}")
            upstream, app_pid = _start_app(VARIANTS[names[0]], stack, Path(tmp))
            for name in names:
                url, nginx_pid = _start_nginx(VARIANTS[name], stack, Path(tmp) / name, upstream)
                wrk(url + "/text", 2)  # warm-up
                shared[name] = (url, (app_pid, nginx_pid))
        for r in range(args.rounds):
            order = names[:]
            rng.shuffle(order)
            for name in order:
                if args.same_app:
                    t = measure(*shared[name], args.duration)
                else:
                    t = trial(VARIANTS[name], Path(tmp) / f"r{r}-{name}", args.duration)
                results[name].append(t)
                print(
                    f"round {r + 1} {name:20} {t.rps:7.0f} rps; CPU per request [us]: "
                    f"app {t.app_us:4.0f} nginx {t.nginx_us:4.0f} wrk {t.wrk_us:4.0f} "
                    f"softirq {t.softirq_us:4.0f}; foreign {t.foreign_cores:.2f} cores",
                    flush=True,
                )
    print(f"\nMedians (ranges) over {args.rounds} interleaved rounds; CPU in us per request.\n")
    print("| variant | rps | vs first | app | nginx | wrk | softirq | foreign cores |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    base = statistics.median(t.rps for t in results[names[0]])
    for name in names:
        ts = results[name]
        rps = [t.rps for t in ts]
        print(
            f"| {name} | {_fmt(rps)} | {statistics.median(rps) / base:.2f}x "
            f"| {_fmt([t.app_us for t in ts])} | {_fmt([t.nginx_us for t in ts])} "
            f"| {_fmt([t.wrk_us for t in ts])} | {_fmt([t.softirq_us for t in ts])} "
            f"| {_fmt([t.foreign_cores for t in ts], 2)} |"
        )


if __name__ == "__main__":
    main()
