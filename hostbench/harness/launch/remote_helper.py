"""What the harness runs ON a remote host (topology ssh), copied there and run by python3.

Standard library only: a host needs python3 and nothing else of ours. Each command's
answer is one JSON line on stdout, whether it came as the call's arguments or, to `serve`,
as one JSON list a line on stdin:

  start DIR NAME ARGV...   run ARGV detached in its own session (cwd DIR, output to
                           DIR/NAME.out and DIR/NAME.err); a waiting wrapper, the group's
                           leader, writes DIR/NAME.rc (exit code, the program's CPU seconds
                           from its rusage) when it ends. Answers {"group", "pid"}.
  status DIR NAME          {"code": null} while it runs, else what NAME.rc says
  stop DIR GRACE NAME...   SIGTERM the groups started as NAME..., wait up to GRACE s for
                           them to empty, SIGKILL every one, and answer which are seen gone
                           {"gone": [NAME...], "ended": {NAME: what status answers}}
  pack PATH...             the files of PATH... that exist, as one tar (base64: {"tar"}),
                           each named by its place in the list
  tree PID...              CPU seconds and memory of each process tree, read from /proc,
                           and the machine's /proc/stat counters
  processes DIR            every process's name, CPU seconds and start time, the machine's
                           /proc/stat counters, and which pids are the harness's here (the
                           sessions started in DIR; this helper and the ssh session it came by)
  machine                  this host as the environment record names it: OS, kernel, CPU
                           model, cores, memory, python3's version
  request METHOD URL [SOCKET]   one HTTP request from this host: {"status", "headers", "body"}
  rtt URL N                the median ms of N empty requests (GET URL, a new connection each)
  tls URL                  the TLS version and cipher an https URL negotiates with this
                           host's Python ({"version", "cipher"}; errors: {"error"})
  port HOST                a free TCP port on HOST
  mkdir PATH...            make each folder (and its parents) that is not there yet
  which NAME               {"path"}: where NAME is on this host's PATH (null: nowhere)
  keeper DIR               wait for the end of standard input (the harness's connection
                           closed, or the harness was killed), then kill every group
                           started in DIR and remove DIR
  serve                    answer the commands above (but keeper), one a line of standard
                           input, until it ends: a study's hundreds of calls (status polls,
                           the app's counters) over one ssh session and one python3, where a
                           call of its own costs both (about 0.3 s)
"""

import base64
import http.client
import io
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tarfile
import time
from urllib.parse import urlsplit

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def start(folder, name, argv):
    read, write = os.pipe()
    first = os.fork()
    if first:  # the caller: wait for the wrapper to say the program's pid
        os.close(write)
        os.waitpid(first, 0)
        with os.fdopen(read) as pipe:
            said = pipe.read().strip()
        return json.loads(said) if said else {"error": f"{argv[0]}: its wrapper ended at once"}
    os.close(read)
    if os.fork():  # the wrapper is a grandchild: init reaps it, not a serving helper
        os._exit(0)
    os.setsid()  # its own session and group: stopping the group stops the whole tree
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    base = os.path.join(folder, name)
    with open(base + ".out", "wb") as out, open(base + ".err", "wb") as err:
        try:
            child = subprocess.Popen(argv, cwd=folder, stdin=null, stdout=out, stderr=err)
        except OSError as e:
            os.write(write, json.dumps({"error": f"{argv[0]}: {e.strerror}"}).encode())
            os._exit(1)
        with open(base + ".group", "w") as f:  # for the keeper
            f.write(str(os.getpid()))
        os.write(write, json.dumps({"group": os.getpid(), "pid": child.pid}).encode())
        os.close(write)
        code = child.wait()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    tmp = base + ".rc.tmp"
    with open(tmp, "w") as f:
        json.dump({"code": code, "cpu_s": usage.ru_utime + usage.ru_stime}, f)
    os.replace(tmp, base + ".rc")
    os._exit(0)


def status(folder, name):
    try:
        with open(os.path.join(folder, name + ".rc")) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"code": None}


KILLED_WITHIN_S = 2.0  # a SIGKILLed process's exit, as the kernel tears it down


def stop(folder, grace, names):
    groups = {}
    for name in names:
        try:
            with open(os.path.join(folder, name + ".group")) as f:
                groups[name] = int(f.read())
        except (OSError, ValueError):
            continue  # never started here (or the keeper has cleared up): nothing runs
    _signal(groups.values(), signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(groups.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    # Every group, ended or not: workers may outlive their leader (nginx's do on SIGTERM).
    _signal(groups.values(), signal.SIGKILL)
    deadline = time.monotonic() + KILLED_WITHIN_S
    while (alive := _alive(groups.values())) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {"gone": [n for n in names if groups.get(n) not in alive],
            "ended": {n: status(folder, n) for n in names}}  # fmt: skip


def _signal(groups, sig):
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(groups):
    """Which of `groups` still have a process that runs (a zombie runs no more)."""
    groups, alive = set(groups), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    state, _, group = f.read().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue
            if int(group) in groups and state != "Z":
                alive.add(int(group))
    return alive


def pack(paths):
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as tar:
        for i, path in enumerate(paths):
            if os.path.isfile(path):
                tar.add(path, arcname=str(i))
    return {"tar": base64.b64encode(packed.getvalue()).decode()}


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # after the name: state ppid ... utime (14th field of the line) stime (15th)
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _memory(pid):
    rss = rss_file = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("RssFile:"):
                rss_file = int(line.split()[1]) * 1024
    return rss, rss_file


def tree(roots):
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                procs[int(entry)] = _stat(entry)
            except (OSError, IndexError, ValueError):
                continue
    children = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    trees = {}
    for root in roots:
        todo, members = [root], []
        while todo:
            pid = todo.pop()
            if pid in procs:
                members.append(pid)
                todo.extend(children.get(pid, []))
        cpu = {str(p): procs[p][1] for p in members}
        rss = rss_file = 0
        for p in members:
            try:
                r, f = _memory(p)
            except OSError:
                continue
            rss, rss_file = rss + r, rss_file + f
        trees[str(root)] = {"cpu_s": cpu, "rss": rss, "rss_file": rss_file}
    with open("/proc/stat") as f:
        stat = [int(v) / TICK for v in f.readline().split()[1:]]
    return {"trees": trees, "stat": stat, "cores": os.cpu_count(), "t": time.monotonic()}


def _sessions(folder):
    """The sessions the harness started in `folder` (each wrapper leads its own)."""
    found = set()
    for entry in os.listdir(folder):
        if entry.endswith(".group"):
            try:
                with open(os.path.join(folder, entry)) as f:
                    found.add(int(f.read()))
            except (OSError, ValueError):
                continue
    return found


def processes(folder):
    sessions = _sessions(folder)
    procs, parents, ours = {}, {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
            # after the name: state ppid pgrp session ... utime stime ... starttime (22nd)
            fields = text.rsplit(")", 1)[1].split()
            name = text[text.index("(") + 1 : text.rindex(")")]
            pid, used = int(entry), (int(fields[11]) + int(fields[12])) / TICK
            procs[pid] = [name, used, int(fields[19]) / TICK]
            parents[pid] = int(fields[1])
            if int(fields[3]) in sessions:
                ours.add(pid)
        except (OSError, IndexError, ValueError):
            continue
    pid = os.getpid()
    while pid > 1 and pid in parents:  # this helper, the shell and sshd it came through
        ours.add(pid)
        pid = parents[pid]
    with open("/proc/stat") as f:
        stat = [int(v) / TICK for v in f.readline().split()[1:]]
    return {"procs": procs, "ours": sorted(ours), "stat": stat, "cores": os.cpu_count(),
            "t": time.monotonic()}  # fmt: skip


def _first(path, key, sep=":"):
    """The value of the first line of `path` that names `key` before `sep` ("unknown" if none)."""
    try:
        with open(path) as f:
            for line in f:
                name, found, value = line.partition(sep)
                if found and name.strip() == key:
                    return value.strip()
    except OSError:
        pass
    return "unknown"


def machine():
    memory = _first("/proc/meminfo", "MemTotal")
    return {
        "os": _first("/etc/os-release", "PRETTY_NAME", "=").strip('"'),
        "kernel": os.uname().release,
        "cpu_model": _first("/proc/cpuinfo", "model name"),
        # What names a processor whose model name is masked (environment.CPU_IDENTITY).
        "cpu_vendor": _first("/proc/cpuinfo", "vendor_id"),
        "cpu_family": _first("/proc/cpuinfo", "cpu family"),
        "cpu_model_number": _first("/proc/cpuinfo", "model"),
        "cpu_stepping": _first("/proc/cpuinfo", "stepping"),
        "cpu_cores_logical": os.cpu_count(),
        "memory_gib": round(int(memory.split()[0]) / 2**20, 1) if memory[:1].isdigit() else None,
        "python3": sys.version.split()[0],
    }


def _unverified():
    """A client TLS context that takes a launch's throwaway self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def request(method, url, unix_socket=None):
    parts = urlsplit(url)
    if unix_socket:
        conn = http.client.HTTPConnection("localhost", timeout=5)
        conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    elif parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname, parts.port or 443, timeout=5, context=_unverified()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=5)
    try:
        if unix_socket:  # not there yet while the proxy starts: an error, as no answer is
            conn.sock.connect(unix_socket)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request(method, path, headers={"Host": parts.netloc or "localhost"})
        resp = conn.getresponse()
        body = resp.read()
        headers = {k.lower(): v for k, v in resp.getheaders()}
    except (OSError, http.client.HTTPException) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        conn.close()
    return {"status": resp.status, "headers": headers, "body": base64.b64encode(body).decode()}


def rtt(url, n):
    request("GET", url)  # the first pays for lazy setup on both ends
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        answer = request("GET", url)
        times.append(time.perf_counter() - t0)
        if "error" in answer:
            return answer
    return {"ms": round(1000 * statistics.median(times), 4)}


def tls(url):
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 443), timeout=5) as raw:
            with _unverified().wrap_socket(raw, server_hostname=parts.hostname) as sock:
                return {"version": sock.version(), "cipher": sock.cipher()[0]}
    except (OSError, ssl.SSLError) as e:
        return {"error": f"{type(e).__name__}: {e}"}


def port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return {"port": s.getsockname()[1]}


def mkdir(paths):
    for path in paths:
        os.makedirs(path, exist_ok=True)
    return {"made": len(paths)}


def keeper(folder):
    sys.stdin.read()
    for entry in os.listdir(folder):
        if entry.endswith(".group"):
            with open(os.path.join(folder, entry)) as f:
                try:
                    os.killpg(int(f.read()), signal.SIGKILL)
                except (ValueError, ProcessLookupError, PermissionError):
                    pass
    shutil.rmtree(folder, ignore_errors=True)


def answer(command, rest):
    return {
        "start": lambda: start(rest[0], rest[1], rest[2:]),
        "status": lambda: status(*rest),
        "stop": lambda: stop(rest[0], float(rest[1]), rest[2:]),
        "pack": lambda: pack(rest),
        "tree": lambda: tree([int(p) for p in rest]),
        "processes": lambda: processes(rest[0]),
        "machine": machine,
        "request": lambda: request(*rest),
        "rtt": lambda: rtt(rest[0], int(rest[1])),
        "tls": lambda: tls(rest[0]),
        "port": lambda: port(rest[0]),
        "mkdir": lambda: mkdir(rest),
        "which": lambda: {"path": shutil.which(rest[0])},
    }[command]()


def serve():
    for line in sys.stdin:
        try:
            command = json.loads(line)
            said = answer(command[0], command[1:])
        except Exception as e:  # the harness raises it; the next command is answered
            said = {"failed": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(said) + "\n")
        sys.stdout.flush()


def main(args):
    command, rest = args[0], args[1:]
    if command == "keeper":
        return keeper(rest[0])
    if command == "serve":
        return serve()
    print(json.dumps(answer(command, rest)))


if __name__ == "__main__":
    main(sys.argv[1:])
