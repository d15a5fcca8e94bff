#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the benchmark needs, as deploy/packages.yml lists them
# (generated from the programs' and load tools' declarations, hostbench/packages.py): the
# reverse proxies, wrk and ab, what the harness runs here (Chromium renders each report
# headless and prints report.pdf, read with poppler-utils; fonts-noto-cjk for a Chinese
# article's title), and a Go toolchain new enough (>= 1.22) to build bombardier and the Go
# servers. Idempotent. As root it installs; otherwise it prints what to install.
#   --list: print the packages it would install, one a line, and change nothing.
set -euo pipefail

here=$(dirname "${BASH_SOURCE[0]}")
# Every group: this machine is the server and the load host of topology local.
listed=$("$here/packages.sh" server loadgen host harness build)
mapfile -t pkgs <<<"$listed"
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done

go_ok() {
  local go
  for go in go /usr/lib/go-1.23/bin/go; do
    command -v "$go" >/dev/null 2>&1 || continue
    # go1.22 or newer
    "$go" env GOVERSION 2>/dev/null | grep -Eq '^go1\.(2[2-9]|[3-9][0-9])' && return 0
  done
  return 1
}
go_missing=0
go_ok || go_missing=1

if [ ${#need[@]} -eq 0 ] && [ $go_missing -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "system packages missing; as root run:" >&2
  [ ${#need[@]} -gt 0 ] && echo "  apt-get install -y ${need[*]}" >&2
  if [ $go_missing -eq 1 ]; then
    echo "  # Go >= 1.22 (Debian 12: from bookworm-backports)" >&2
    echo "  echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list" >&2
    echo "  apt-get update && apt-get install -y -t bookworm-backports golang-1.23-go" >&2
  fi
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ $go_missing -eq 1 ] && grep -q bookworm /etc/os-release 2>/dev/null; then
  grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ ||
    echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list
fi
apt-get update -qq
[ ${#need[@]} -gt 0 ] && apt-get install -y -qq --no-install-recommends "${need[@]}"
if [ $go_missing -eq 1 ]; then
  if grep -q bookworm /etc/os-release 2>/dev/null; then
    apt-get install -y -qq --no-install-recommends -t bookworm-backports golang-1.23-go
  else
    apt-get install -y -qq --no-install-recommends golang-go
  fi
fi
# The programs' Debian packages start system-wide services (nginx, caddy) named as the
# packages; the benchmark runs its own instances from generated configs, so stop the system
# ones when possible.
mapfile -t services <<<"$("$here/packages.sh" server)"
for svc in "${services[@]}"; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done
echo "system packages: installed"
