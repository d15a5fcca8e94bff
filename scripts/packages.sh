#!/usr/bin/env bash
# Prints the Debian packages of the named groups of deploy/packages.yml, one a line:
#   scripts/packages.sh server loadgen
# The file is generated from the programs' and load tools' declarations (hostbench/packages.py,
# `python -m hostbench docs`); this reads it in plain shell, so the install script can run on a
# fresh machine before the venv exists, and the Dockerfile before Python is installed.
set -euo pipefail

list="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/deploy/packages.yml"
[ -f "$list" ] || { echo "no $list: run 'python -m hostbench docs' in the checkout" >&2; exit 2; }
known=$(sed -n 's/^\([a-z]*\)_packages: .*/\1/p' "$list" | paste -sd' ')
[ $# -gt 0 ] || { echo "usage: $0 GROUP...; the groups: $known" >&2; exit 2; }
for group in "$@"; do
  # `<group>_packages: [a, b]`, a group a line, as hostbench/packages.py writes it
  line=$(grep -E "^${group}_packages: \[[^]]*\]$" "$list") ||
    { echo "no group '$group' in $list; the groups: $known" >&2; exit 2; }
  line=${line#*[}
  line=${line%]}
  tr ', ' '\n\n' <<<"$line" | grep -v '^$' || true
done
