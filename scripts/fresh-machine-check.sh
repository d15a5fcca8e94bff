#!/usr/bin/env bash
# shellcheck disable=SC2317  # (for the whole file) step functions run through run_step, cleanup through trap
# Release check (not part of CI): do the README's two commands work on the first
# try on a fresh Debian 12 machine that has only the README's prerequisites?
#
# Usage: scripts/fresh-machine-check.sh [options] [REPO]
#
# As root, on Debian 12 (x86_64). Builds a clean Debian 12 root with debootstrap
# (from this machine's apt mirror), installs in it only the README's prerequisites
# (make, git, ca-certificates, the .NET 10 SDK copied from this machine, a Python
# >= 3.11.5 copied from this machine, and Debian's own python3 3.11.2 as a fresh
# Debian has it), clones REPO at HEAD into it with ../shared/offline beside the
# clone (sourced as .ci/run does), and runs inside the root, as root:
#   make setup                          with Debian's python3: must stop with one line
#   make test PYTHON=<the copied one>   as a newcomer following the README
#   make reproduce PROFILE=quick        reusing the .venv, without PYTHON
# Prints each step's wall time and a final PASS/FAIL line; exits 1 on FAIL.
# Nothing is left running or mounted in the root; the root is deleted unless --keep.
#
# REPO             git repository to clone (default: the one holding this script);
#                  its HEAD commit is checked, uncommitted changes are not
# --root DIR       build the root in DIR (must not exist, or be empty; no spaces)
#                  (default: /var/tmp/hostbench-fresh-<UTC time>)
# --keep           keep the root (and its .venv, build/, data/runs/) for inspection
# --cache DIR      cache of the bare debootstrap result as a tarball, reused by
#                  later runs (default: /var/tmp/hostbench-fresh-cache)
# --no-cache       always run debootstrap; write no cache
# --offline DIR    the offline mirrors (default: REPO/../shared/offline, if present)
# --python PREFIX  a Python >= 3.11.5 install prefix to copy in, at the same path
#                  (default: /root/.pyenv/versions/3.11.7)
# --dotnet DIR     the .NET 10 SDK to copy in as /usr/share/dotnet
#                  (default: the one `dotnet` on PATH runs)
# --mirror URL     Debian archive (default: this machine's, from /etc/apt)
# -h, --help       this text
#
# Needs about 3 GB where the root goes (it asks for 4 GB free) and 0.2 GB for the
# cache; about 25 minutes on 2 cores, measured on an idle AMD EPYC VM on 2026-11-28
# (debootstrap 0.5 min, or seconds from the cache; prerequisites 0.3; make test 15, its
# setup included, the tests in three lanes at once; the quick reproduce 8).
# Logs: <root>.logs/ (kept), one file per step, and a copy of the quick run folder.
# Ctrl-C (or SIGTERM) stops everything inside the root, unmounts and cleans up.
#
# Where it follows this machine rather than a bare newcomer: the root uses this
# machine's Debian mirror and its apt validity-check settings (a snapshot mirror),
# its resolv.conf and hosts, and this shell's DOTNET_* and NUGET_* variables (and
# NuGet.Config, if any); packages start no services in the root (policy-rc.d), as
# in a container, so nginx does not take this machine's port 80.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "$prog: $*" >&2; exit 2; }
usage() { sed -n '3,/^set -euo pipefail$/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

# ---- arguments -------------------------------------------------------------
root="" keep=0 cache_dir=/var/tmp/hostbench-fresh-cache offline="" mirror=""
python_prefix=/root/.pyenv/versions/3.11.7 dotnet_dir="" repo=""
need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value (see --help)"; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --keep) keep=1 ;;
    --no-cache) cache_dir="" ;;
    --root) need_value "$@"; root=$2; shift ;;
    --cache) need_value "$@"; cache_dir=$2; shift ;;
    --offline) need_value "$@"; offline=$2; shift ;;
    --python) need_value "$@"; python_prefix=$2; shift ;;
    --dotnet) need_value "$@"; dotnet_dir=$2; shift ;;
    --mirror) need_value "$@"; mirror=$2; shift ;;
    --root=*|--cache=*|--offline=*|--python=*|--dotnet=*|--mirror=*)
      set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$repo" ] || die "one REPO only, got '$repo' and '$1' (see --help)"; repo=$1 ;;
  esac
  shift
done

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot, mount)"
[ "$(uname -m)" = x86_64 ] || die "x86_64 only (the wheelhouse and the copied SDK are x86_64)"
for c in chroot mount umount mountpoint git tar apt-get perl ps; do
  command -v "$c" >/dev/null || die "'$c' not found"
done

repo=${repo:-$(git -C "$here" rev-parse --show-toplevel 2>/dev/null)} || die "no REPO given and $here is not in a git repository"
if [ ! -d "$repo" ] || ! git -C "$repo" rev-parse --verify -q HEAD >/dev/null; then
  die "REPO '$repo' is not a git repository with a commit"
fi
repo=$(cd "$repo" && git rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
[ -n "$offline" ] || { [ -d "$repo/../shared/offline" ] && offline=$(cd "$repo/../shared/offline" && pwd); } || true
[ -z "$offline" ] || [ -f "$offline/env.sh" ] || die "--offline '$offline' has no env.sh"

[ -x "$python_prefix/bin/python3" ] || die "no Python at '$python_prefix' (bin/python3); give --python PREFIX"
python_prefix=$(cd "$python_prefix" && pwd)
"$here/check-python.sh" "$python_prefix/bin/python3" 2>/dev/null || die "'$python_prefix/bin/python3' is not Python >= 3.11.5; give --python PREFIX"
if [ -z "$dotnet_dir" ]; then
  command -v dotnet >/dev/null || die "no dotnet on PATH; give --dotnet DIR"
  dotnet_dir=$(dirname "$(readlink -f "$(command -v dotnet)")")
fi
[ -x "$dotnet_dir/dotnet" ] || die "no dotnet in '$dotnet_dir'; give --dotnet DIR"
dotnet_dir=$(cd "$dotnet_dir" && pwd)
dotnet_version=$(DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 "$dotnet_dir/dotnet" --version 2>/dev/null) || die "'$dotnet_dir/dotnet --version' failed"
case $dotnet_version in 10.*) ;; *) die "'$dotnet_dir' is .NET SDK $dotnet_version, not 10.x; give --dotnet DIR" ;; esac

# This machine's Debian mirror (deb822 .sources first, then one-line .list files).
apt_uri() { # $1: suite; prints the first URI serving it
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$1" 'BEGIN{RS=""} {u="";ok=0;n=split($0,l,"\n");
      for(i=1;i<=n;i++){ if(l[i]~/^URIs:/){split(l[i],a," ");u=a[2]}
        if(l[i]~/^Suites:/){m=split(l[i],b," ");for(j=2;j<=m;j++) if(b[j]==s) ok=1} }
      if(ok&&u!=""){print u; exit}}' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$1" '$1=="deb"{i=2; if($2~/^\[/) while(i<=NF && $i!~/\]$/) i++; if($2~/^\[/) i++; if($(i+1)==s){print $i}}' "$f"
  done
}
mirror=${mirror:-$(apt_uri bookworm | sed -n 1p)}
mirror=${mirror:-http://deb.debian.org/debian}
security=$(apt_uri bookworm-security | sed -n 1p)
security=${security:-http://deb.debian.org/debian-security}
case $mirror in http://*|https://*|file:/*) ;; *) die "--mirror '$mirror' is not a URL" ;; esac

stamp=$(date -u +%Y%m%dT%H%M%SZ)
root=${root:-/var/tmp/hostbench-fresh-$stamp}
case $root in *[[:space:]]*) die "--root '$root' contains whitespace" ;; /*) ;; *) root=$PWD/$root ;; esac
root=${root%/}
[ -n "$root" ] || die "--root must not be /"
if [ -e "$root" ] && { [ ! -d "$root" ] || [ -n "$(ls -A "$root")" ]; }; then
  die "--root '$root' exists and is not an empty directory"
fi
parent=$(dirname "$root")
[ -d "$parent" ] || die "'$parent' (the root's parent) does not exist"
free_kb=$(df -Pk "$parent" | awk 'NR==2{print $4}')
[ "$free_kb" -ge $((4 * 1024 * 1024)) ] || die "need 4 GB free in '$parent' (the root takes ~3 GB), have $((free_kb / 1024)) MB"
logs=$root.logs
[ ! -e "$logs" ] || die "'$logs' (the log folder) already exists"

in_root_python=$python_prefix/bin/python3   # copied to the same path (its RUNPATH is absolute)
suite=bookworm variant=minbase
cache_file=""
if [ -n "$cache_dir" ]; then
  cache_key=$(printf '%s' "$suite $variant amd64 $mirror" | sha256sum | cut -c1-12)
  cache_file=$cache_dir/debootstrap-$suite-$variant-amd64-$cache_key.tar
fi
# .NET and NuGet settings of this machine (telemetry, certificate revocation mode...).
pass_env=()
while IFS= read -r kv; do pass_env+=("$kv"); done < <(env | grep -E '^(DOTNET|NUGET)_[A-Za-z0-9_]*=' || true)

# ---- bookkeeping, cleanup ---------------------------------------------------
mkdir -p "$root" "$logs"
created_root=1
step_names=() step_secs=() step_results=()
step_pid="" step_pidfile="" step_rc=0 step_current=""
failed="" interrupted=""
t_start=$(date +%s)

say() { printf '%s\n' "$*"; }
fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

in_root_pids() { # processes whose root directory is inside the root
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case $r in "$root"|"$root"/*) echo "${p#/proc/}" ;; esac
  done
}

kill_in_root() {
  local pids p i
  pids=$(in_root_pids)
  [ -n "$pids" ] || return 0
  say "cleanup: stopping $(echo "$pids" | wc -w) process(es) left inside the root:"
  for p in $pids; do
    say "  $p $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
  done
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(in_root_pids)
    [ -n "$pids" ] || return 0
    sleep 0.5
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  sleep 0.5
  pids=$(in_root_pids)
  [ -z "$pids" ] || say "cleanup: still running inside the root: $pids"
}

tree_pids() { # the given processes and all their descendants
  ps -e -o pid=,ppid= | awk -v want=" $* " '
    { parent[$1] = $2; pids[NR] = $1 }
    END { n = split(want, w, " "); for (i = 1; i <= n; i++) keep[w[i]] = 1
          do { changed = 0
               for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } }
          } while (changed)
          for (p in keep) if (p != "") print p }'
}

kill_tree() { # TERM, then KILL, the given processes and their descendants
  local pids i
  pids=$(tree_pids "$@")
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for i in 1 2 3 4 5 6; do
    # shellcheck disable=SC2086
    kill -0 $pids 2>/dev/null || return 0
    sleep 0.5
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

root_mounts() { # mount points inside the root, deepest first
  awk -v r="$root" '{m=$5; gsub(/\\040/," ",m); if (index(m, r "/") == 1) print m}' /proc/self/mountinfo | sort -r
}

unmount_root() {
  local m
  for m in $(root_mounts); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cleanup: could not unmount $m"
  done
}

cleanup() { # stop what runs, unmount, delete the root (unless --keep)
  local m
  if [ -n "$step_pid" ]; then   # interrupted during a step: stop it, host side and root side
    kill_tree "$(cat "$step_pidfile" 2>/dev/null)" "$step_pid"
    wait "$step_pid" 2>/dev/null
    rm -f "$step_pidfile"
  fi
  kill_in_root
  unmount_root
  m=$(root_mounts)
  if [ -n "$m" ]; then
    say "cleanup: still mounted inside the root, so the root is kept: $m"
  elif [ "$keep" = 1 ]; then
    say "root kept: $root   (look inside: chroot $root /bin/bash, after mounting /proc;"
    say "           delete: rm -rf --one-file-system $root)"
  elif [ "$created_root" = 1 ] && [ -d "$root" ]; then
    rm -rf --one-file-system "$root"
  fi
}

summary() { # each step's wall time, the tests that failed, and the verdict as the last line
  local i
  say ""
  say "==> summary: $repo at ${commit:0:12}"
  for i in "${!step_names[@]}"; do
    printf '  %-28s %8s  %s\n' "${step_names[$i]}" "$(fmt_secs "${step_secs[$i]}")" "${step_results[$i]}"
  done
  [ -z "$step_current" ] || printf '  %-28s %8s  %s\n' "$step_current" "" "interrupted"
  printf '  %-28s %8s\n' total "$(fmt_secs $(( $(date +%s) - t_start )))"
  grep -h -E '^(FAILED|ERROR) ' "$logs"/*make-test.log 2>/dev/null | sed 's/^/  /' || true
  say "logs: $logs"
  if [ -n "$interrupted" ]; then
    say "FAIL: $interrupted"
  elif [ -n "$failed" ]; then
    say "FAIL: step '$failed' failed"
  else
    say "PASS: make test and make reproduce PROFILE=quick worked on the first try on a fresh Debian 12 root"
  fi
}

on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  cleanup
  [ -n "$interrupted$failed" ] || [ "$rc" -eq 0 ] || interrupted="the check itself stopped (exit $rc)"
  summary
  if [ -n "$interrupted" ]; then exit $(( rc > 1 ? rc : 1 )); fi
  if [ -n "$failed" ]; then exit 1; fi
  exit 0
}
trap on_exit EXIT
trap 'say ""; interrupted="interrupted (SIGINT)"; exit 130' INT
trap 'say ""; interrupted="terminated (SIGTERM)"; exit 143' TERM

# run_step NAME FUNCTION [stream]: runs FUNCTION in a subshell with set -e, output
# to the step's log (and the terminal with "stream"); records its wall time and
# sets step_rc. Always returns 0: call it plainly, never in if/&&/|| (that would
# switch off set -e inside the step).
run_step() {
  local name=$1 fn=$2 stream=${3:-} n log t0 secs
  n=$(( ${#step_names[@]} + 1 ))
  log=$logs/$(printf '%02d' "$n")-$name.log
  step_pidfile=$log.pid
  say ""
  say "==> step $n: $name   (log: $log)"
  t0=$(date +%s)
  step_current=$name
  if [ "$stream" = stream ]; then
    ( echo "$BASHPID" > "$step_pidfile"; set -euo pipefail; "$fn" ) 2>&1 | tee "$log" &
  else
    ( echo "$BASHPID" > "$step_pidfile"; set -euo pipefail; "$fn" ) > "$log" 2>&1 &
  fi
  step_pid=$!
  step_rc=0
  wait "$step_pid" || step_rc=$?
  step_pid="" step_current=""
  rm -f "$step_pidfile"
  secs=$(( $(date +%s) - t0 ))
  step_names+=("$name") step_secs+=("$secs")
  if [ "$step_rc" -eq 0 ]; then
    step_results+=(ok)
    say "<== step $n: $name: ok, $(fmt_secs "$secs")"
  else
    step_results+=("FAIL (exit $step_rc)")
    failed=${failed:-$name}
    if [ "$stream" != stream ]; then
      say "--- last lines of $log:"
      tail -n 30 "$log" | sed 's/^/    /'
    fi
    say "<== step $n: $name: FAILED (exit $step_rc), $(fmt_secs "$secs")"
  fi
}

# in_root 'SHELL COMMANDS': a login-less root shell inside the root, in a clean
# environment (what a newcomer's root shell has) plus this machine's DOTNET_/NUGET_ settings.
# SIGINT and SIGQUIT back to their defaults first: the steps run in the background
# of this script, where bash ignores them, and an ignored SIGINT would be
# inherited by make, pytest and the harness (whose Ctrl-C handling is tested).
in_root() {
  perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec @ARGV or die "exec $ARGV[0]: $!\n"' \
    chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM="${TERM:-dumb}" ${pass_env[@]+"${pass_env[@]}"} \
    /bin/bash -c "$1"
}
# in the clone, with the offline mirrors' env.sh sourced as .ci/run does
in_clone() {
  in_root "cd /root/hostbench && if [ -f ../shared/offline/env.sh ]; then . ../shared/offline/env.sh; fi && $1"
}

mount_root() {
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  mountpoint -q "$root/sys" || mount -t sysfs sysfs "$root/sys"
  mountpoint -q "$root/dev" || { mount --bind /dev "$root/dev"; mount --make-private "$root/dev" 2>/dev/null || true; }
  mkdir -p "$root/dev/pts" "$root/dev/shm"
  mountpoint -q "$root/dev/pts" || mount --bind /dev/pts "$root/dev/pts"
  mountpoint -q "$root/dev/shm" || mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
}

# ---- the steps -------------------------------------------------------------
step_debootstrap() {
  if [ -n "$cache_file" ] && [ -f "$cache_file" ]; then
    echo "reusing the cached bare debootstrap result $cache_file"
    tar --numeric-owner -xpf "$cache_file" -C "$root"
    return
  fi
  if ! command -v debootstrap >/dev/null; then
    echo "installing debootstrap on this machine"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
  fi
  debootstrap --variant="$variant" --arch=amd64 "$suite" "$root" "$mirror"
  unmount_root   # debootstrap's own mounts, if any are left
  if [ -n "$cache_file" ]; then
    mkdir -p "$cache_dir"
    tar --numeric-owner -cpf "$cache_file.tmp.$$" -C "$root" . && mv "$cache_file.tmp.$$" "$cache_file"
    echo "cached as $cache_file ($(du -h "$cache_file" | cut -f1))"
  fi
}

step_prerequisites() {
  # What a fresh Debian 12 has: the archive, its updates and security suites.
  cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  # This machine's mirror settings (a snapshot mirror needs no validity checks).
  apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date) ' > "$root/etc/apt/apt.conf.d/99fresh-check-mirror" || true
  # Packages do not start services inside the root (nginx would take port 80 of this machine).
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp /etc/hosts "$root/etc/hosts"
  mount_root
  # The README's prerequisites: make, git, ca-certificates; Debian's own python3;
  # the libraries Microsoft lists for .NET on Debian 12; the runtime libraries of
  # a Python built with pyenv (what its build dependencies leave installed).
  in_root 'export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends make git ca-certificates python3 \
      libc6 libgcc-s1 libgssapi-krb5-2 libicu72 libssl3 libstdc++6 zlib1g \
      libbz2-1.0 libexpat1 libffi8 liblzma5 libncursesw6 libreadline8 libsqlite3-0 libuuid1
    apt-get clean'
  # The .NET 10 SDK (Microsoft's packages are not in Debian): this machine's, as /usr/share/dotnet.
  echo "copying the .NET SDK $dotnet_version from $dotnet_dir"
  mkdir -p "$root/usr/share/dotnet"
  cp -a "$dotnet_dir/." "$root/usr/share/dotnet/"
  ln -sfn /usr/share/dotnet/dotnet "$root/usr/bin/dotnet"
  # NuGet configuration this machine uses, if any (the yarp proxy restores Yarp.ReverseProxy from NuGet).
  local f
  for f in /root/.nuget/NuGet/NuGet.Config /root/.config/NuGet/NuGet.Config /root/.local/share/NuGet/Config /etc/opt/NuGet/Config; do
    if [ -e "$f" ]; then
      echo "copying NuGet configuration $f"
      mkdir -p "$root$(dirname "$f")"
      cp -a "$f" "$root$f"
    fi
  done
  # The certificate authorities this machine's network needs (a TLS-inspecting proxy on the way
  # to NuGet, say): every machine on that network trusts them, so the root does too. Not a
  # prerequisite of the project; without it the root could not reach NuGet here.
  local crt found=0
  for crt in /usr/local/share/ca-certificates/*.crt; do
    [ -e "$crt" ] || continue
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -a "$crt" "$root/usr/local/share/ca-certificates/"
    found=1
  done
  if [ "$found" -eq 1 ]; then
    echo "trusting this machine's local certificate authorities: $(cd /usr/local/share/ca-certificates && echo *.crt)"
    in_root 'update-ca-certificates >/dev/null'
  fi
  [ ${#pass_env[@]} -eq 0 ] || echo "passing this machine's settings into the root: $(printf '%s\n' "${pass_env[@]}" | cut -d= -f1 | tr '\n' ' ')"
  # A Python >= 3.11.5, as pyenv installs it (no site-packages, no test suite).
  echo "copying Python $("$python_prefix/bin/python3" -V 2>&1) from $python_prefix"
  mkdir -p "$root$python_prefix"
  tar -C "$python_prefix" --exclude='./lib/python3*/site-packages/*' --exclude='./lib/python3*/test' -cf - . |
    tar -C "$root$python_prefix" -xpf -
  in_root "set -e
    echo \"dotnet: \$(dotnet --version)\"
    echo \"python3 (Debian's): \$(python3 -V 2>&1)\"
    echo \"$in_root_python: \$($in_root_python -V 2>&1)\"
    $in_root_python -c 'import ssl, ctypes, sqlite3, lzma, bz2, zlib, uuid, readline, venv, ensurepip'
    make --version | head -1; git --version"
}

step_clone() {
  git clone -q "$repo" "$root/root/hostbench"
  if [ "$(git -C "$root/root/hostbench" rev-parse HEAD)" != "$commit" ]; then
    git -C "$root/root/hostbench" checkout -q --detach "$commit"
  fi
  git -C "$root/root/hostbench" log --oneline -1
  if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "note: $repo has uncommitted changes; they are not in the clone (HEAD $commit is)"
  fi
  if [ -n "$offline" ]; then
    echo "copying the offline mirrors $offline to /root/shared/offline"
    mkdir -p "$root/root/shared"
    cp -a "$offline" "$root/root/shared/offline"
  fi
}

step_refusal() {
  local out rc=0 last
  out=$(in_clone 'make setup' 2>&1) || rc=$?
  printf '%s\n' "$out"
  last=$(printf '%s\n' "$out" | tail -n 1)
  echo "--- exit code: $rc, $(printf '%s\n' "$out" | wc -l) line(s) of output"
  [ "$rc" -ne 0 ] || { echo "FAIL: make setup with Debian's python3 succeeded"; return 1; }
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "FAIL: more than one line of output"; return 1; }
  case $last in *"Python >= 3.11.5 needed"*"PYTHON="*) ;; *) echo "FAIL: the last line does not say which Python is needed and how"; return 1 ;; esac
  # shellcheck disable=SC2016  # expanded inside the root
  in_clone 'test ! -e .venv && ! dpkg-query -W -f="\${Status}" nginx 2>/dev/null | grep -q "ok installed"' ||
    { echo "FAIL: something was set up before the Python check"; return 1; }
  echo "ok: refused first, with one line, nothing set up"
}

step_test() {
  in_clone "make test PYTHON=$in_root_python"
}

step_reproduce() {
  local out
  in_clone 'make reproduce PROFILE=quick'
  # The run folder is <study>-quick-<UTC time>; its sub-studies sit beside it with a suffix.
  out=$(find "$root/root/hostbench/data/runs" -mindepth 2 -maxdepth 2 -path '*-quick-*/report.html' -printf '%h\n' | sort | tail -n 1)
  [ -n "$out" ] || { echo "FAIL: no data/runs/<study>-quick-*/report.html"; return 1; }
  for f in report.html results.csv environment.json; do
    [ -s "$out/$f" ] || { echo "FAIL: $out/$f missing or empty"; return 1; }
  done
  echo "run folder: ${out#"$root"} ($(tail -n +2 "$out/results.csv" | wc -l) result rows); copied to $logs/${out##*/}"
  cp -a "$out" "$logs/"
}

# ---- main ------------------------------------------------------------------
say "fresh-machine check of $repo at $commit"
say "root: $root   mirror: $mirror   .NET SDK: $dotnet_version ($dotnet_dir)   Python: $python_prefix   offline: ${offline:-none}"

run_step debootstrap step_debootstrap
[ "$step_rc" -ne 0 ] || run_step prerequisites step_prerequisites
[ "$step_rc" -ne 0 ] || run_step clone step_clone
if [ "$step_rc" -eq 0 ]; then
  run_step setup-refuses-debian-python step_refusal stream
  run_step make-test step_test stream
  run_step make-reproduce-quick step_reproduce stream
fi

exit 0   # on_exit cleans up and prints the summary and the verdict
