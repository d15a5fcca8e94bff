#!/usr/bin/env bash
# A committed example keeps what a reader opens (report.html, the executed notebook,
# results.csv, ratios.csv, params.json, environment.json, headline.txt, figures/) as files,
# and its per-run raw folders (<mode>__<scenario>__...: the load tool's output and command,
# CPU samples, logs, configs) in one archive, runs.tar.gz, beside them.
#
#   scripts/archive-runs.sh pack   data/runs/example-paper   # folders -> runs.tar.gz
#   scripts/archive-runs.sh unpack data/runs/example-paper   # runs.tar.gz -> folders, for re-analysis
set -euo pipefail
usage() { echo "usage: $0 pack|unpack RUN_FOLDER" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1 dir=$2
[ -d "$dir" ] || { echo "$0: $dir is not a folder" >&2; exit 2; }
cd "$dir"
case $action in
  pack)
    mapfile -t runs < <(find . -mindepth 1 -maxdepth 1 -type d -name '*__*' -printf '%f\n' | sort)
    [ ${#runs[@]} -gt 0 ] || { echo "$0: no run folders (*__*) in $dir" >&2; exit 1; }
    tar -czf runs.tar.gz.tmp --sort=name --owner=0 --group=0 --mtime='2000-01-01' "${runs[@]}"
    mv runs.tar.gz.tmp runs.tar.gz
    rm -rf -- "${runs[@]}"
    echo "$dir: ${#runs[@]} run folders -> runs.tar.gz ($(du -h runs.tar.gz | cut -f1))" ;;
  unpack)
    [ -f runs.tar.gz ] || { echo "$0: no runs.tar.gz in $dir" >&2; exit 1; }
    tar -xzf runs.tar.gz
    echo "$dir: run folders unpacked from runs.tar.gz" ;;
  *) usage ;;
esac
