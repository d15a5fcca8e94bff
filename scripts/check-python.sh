#!/usr/bin/env bash
# Usage: scripts/check-python.sh PYTHON [GOAL]
# Checks that PYTHON (a command or a path) is Python >= 3.11.5, the oldest Python
# the pinned closure in requirements.txt installs on (soupsieve 4.1.2 requires
# >= 3.11.5; Debian 12's own python3 is 3.11.2). Silent when it is; otherwise
# prints ONE line saying what is needed and how to get it, and exits 1.
# The Makefile runs it when make starts, before anything else; GOAL is the make
# goal the line suggests re-running (default: setup).
set -euo pipefail

python=${1:-python3}
goal=${2:-setup}
need=3.11.5
how="install one (pyenv install 3.11, or conda env create -f environment.yml) and run 'make $goal PYTHON=/path/to/python3.11'; see README, Prerequisites"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "Python >= $need needed, but '$python' was not found: $how" >&2
  exit 1
fi
# "3.11.2 0": the version, then 1 if it is >= 3.11.5 (runs on Python 2 too)
if ! out=$("$python" -c 'import sys; v = sys.version_info; print("%d.%d.%d %d" % (v[0], v[1], v[2], tuple(v[:3]) >= (3, 11, 5)))' 2>/dev/null); then
  echo "Python >= $need needed, but '$python' did not run: $how" >&2
  exit 1
fi
if [ "${out#* }" != 1 ]; then
  where=$(command -v "$python")
  [ "$where" = "$python" ] && where="" || where=" ($where)"
  echo "Python >= $need needed, '$python'$where is ${out% *}: $how" >&2
  exit 1
fi
