#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the benchmark needs: the reverse proxies,
# wrk and ab, a Go toolchain new enough (>= 1.22) to build bombardier and the Go
# servers, Chromium (the tests render each report headless, as a reader sees it; it
# prints report.pdf, whose text and pages the tests read with poppler-utils) and
# fonts-noto-cjk (a source article is Chinese: its title on a report page needs the glyphs).
# Idempotent. As root it installs; otherwise it prints what to install.
set -euo pipefail

pkgs=(nginx caddy wrk apache2-utils openssl procps util-linux chromium poppler-utils fonts-noto-cjk
      openssh-client openssh-server ansible-core)
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
# The Debian packages start system-wide nginx/caddy services; the benchmark runs
# its own instances from generated configs, so stop the system ones when possible.
for svc in nginx caddy; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done
echo "system packages: installed"
