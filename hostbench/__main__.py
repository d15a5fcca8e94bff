"""Command line: python -m hostbench {run,env,reproduce,modes} ..."""

import argparse
import json
import signal
import sys
from pathlib import Path

from .errors import BadInput, HostbenchError
from .paths import RUNS


def _cmd_run(args) -> int:
    from .study import StudyParams, check_run_id, run_study

    check_run_id(args.run_id)
    overrides = {"url": args.url} if args.url else {}
    if args.allow_remote:
        overrides["allow_remote"] = True
    params = StudyParams.from_file(args.params, overrides)
    results = run_study(params, args.run_id, Path(args.runs_dir), progress=not args.no_progress)
    print(f"results: {results}")
    return 0


def _cmd_env(args) -> int:
    from .environment import collect

    print(json.dumps(collect(), indent=2))
    return 0


def _cmd_modes(args) -> int:
    from .modes import MODES, runnable_here

    here = set(runnable_here())
    for name, mode in MODES.items():
        print(f"{name:18} {'runs here' if name in here else 'Windows only':13} {mode.summary}")
    return 0


def _cmd_reproduce(args) -> int:
    from .reproduce import reproduce

    out = reproduce(args.profile, run_id=args.run_id, runs_dir=Path(args.runs_dir))
    print(f"report: {out / 'report.html'}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m hostbench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run (or resume) the study a params YAML file describes")
    run.add_argument("params", help="params YAML: modes, scenarios, tools, concurrency, ...")
    run.add_argument("--run-id", required=True, help="folder name under the runs dir")
    run.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    run.add_argument("--url", help="external/IIS modes: the URL of your server")
    run.add_argument("--allow-remote", action="store_true", help="permit a non-loopback URL")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)
    sub.add_parser("env", help="print this machine's environment").set_defaults(func=_cmd_env)
    sub.add_parser("modes", help="list the hosting modes").set_defaults(func=_cmd_modes)
    rep = sub.add_parser("reproduce", help="run the notebooks with papermill (make reproduce)")
    rep.add_argument("--profile", default="paper", help="params/<profile>.yaml (paper, quick)")
    rep.add_argument("--run-id", help="default: <profile>-<UTC timestamp>")
    rep.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    rep.set_defaults(func=_cmd_reproduce)
    return p


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt  # so context managers stop every child process


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        return args.func(args)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except HostbenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: completed runs are kept; the same command resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
