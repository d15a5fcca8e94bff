"""How long the README's commands take on a fresh clone: `make setup`, `make check` and
`make test`, one after another, timed whole, on this machine, written to
data/benchmarks/commands/times.csv (one row per command and measurement, with the processor and
the commit), which the README's command block reads (hostbench/readmes.py, commands_section).

Run it alone on a quiet machine, from a committed clean tree (it clones HEAD):

    .venv/bin/python benchmarks/command_times.py [--commands setup,check,test]

It sources ../shared/offline/env.sh where that exists, as .ci/run does.
"""

import argparse
import csv
import datetime as dt
import os
import subprocess
import tempfile
import time
from pathlib import Path

from hostbench.analysis import tables
from hostbench.harness import environment
from hostbench.paths import ROOT

TIMES = ROOT / "data" / "benchmarks" / "commands" / "times.csv"
FIELDS = ["command", "seconds", "ok", "processor", "cores", "commit", "measured_at"]
COMMANDS = ("setup", "check", "test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", default=",".join(COMMANDS))
    args = parser.parse_args()
    commit = subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                     text=True).strip()  # fmt: skip
    offline = ROOT.parent / "shared" / "offline" / "env.sh"
    source = f". {offline} && " if offline.is_file() else ""
    cpu = tables.processor(environment.processor())
    with tempfile.TemporaryDirectory(prefix="hostbench-times-") as tmp:
        clone = Path(tmp) / "hostbench"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        # The clone's ../shared is the checkout's, as CI's is.
        os.symlink(ROOT.parent / "shared", Path(tmp) / "shared")
        for command in args.commands.split(","):
            started = time.monotonic()
            done = subprocess.run(["bash", "-c", f"{source}make {command}"], cwd=clone)
            seconds = time.monotonic() - started
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            row = {"command": f"make {command}", "seconds": f"{seconds:.0f}",
                   "ok": done.returncode == 0, "processor": cpu, "cores": os.cpu_count(),
                   "commit": commit, "measured_at": now}  # fmt: skip
            _append(row)
            print(f"make {command}: {seconds:.0f} s, exit {done.returncode}")
            if done.returncode != 0:
                raise SystemExit(done.returncode)


def _append(row: dict) -> None:
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    new = not TIMES.is_file()
    with TIMES.open("a", newline="") as out:
        writer = csv.DictWriter(out, FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


if __name__ == "__main__":
    main()
