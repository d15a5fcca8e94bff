"""Two real hosts over OpenSSH (topology ssh): the app on `server`, the load tool on `loadgen`.

The hosts come from an inventory in Ansible's format, read with `ansible-inventory --list`.
Each host gets one multiplexed OpenSSH connection (a ControlMaster in a short temp dir)
that every command, copy and reading goes through; host keys are checked against
known_hosts (StrictHostKeyChecking=yes, BatchMode=yes: never a prompt, never a key accepted
unseen). On each host the harness works in a temp folder of its own, with a stdlib-only
helper (remote_helper.py) that starts programs detached in their own process group and
reads their process trees from that host's /proc: one helper per host serves every call,
one JSON line each, over one session kept open (an ssh command and a python3 per call
cost a few tenths of a second each; a study makes hundreds). Everything started there is
stopped, and the folder and the connections removed, on success, error and Ctrl-C.

Every call to a host has a deadline. Stopping is one round trip per host, within one deadline
(Connection.stop_all): a block's launches stop together (StopTogether), and a host that stalls
holds the harness a few seconds past the grace period at most, never longer.
"""

import base64
import io
import json
import math
import os
import select
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...errors import BadInput, HostbenchError, LaunchFailed
from . import remote_helper, web
from .processes import tail, wait_for_exit, wait_until_ready

ROLES = ("server", "loadgen")
HELPER = Path(__file__).with_name("remote_helper.py")
CONNECT_TIMEOUT_S = 10
# A stop's deadline beyond the processes' grace period: its round trip, the SIGKILL's effect
# (remote_helper.KILLED_WITHIN_S) and bringing back their logs, whatever the host does.
STOP_MARGIN_S = 5.0
CLOSE_STEP_S = 10  # each step of closing a connection, after its stop


@dataclass(frozen=True)
class Host:
    """One inventory host and how to reach it."""

    role: str
    name: str
    address: str
    user: str | None = None
    port: int = 22
    key_file: str | None = None
    known_hosts: str | None = None  # a UserKnownHostsFile named in ansible_ssh_common_args

    def label(self) -> str:
        return f"{self.role} host {self.name} ({self.address}:{self.port})"


def _known_hosts(common_args: str) -> str | None:
    words = shlex.split(common_args or "")
    for i, word in enumerate(words):
        option = word.removeprefix("-o") if word.startswith("-o") and word != "-o" else None
        if word == "-o" and i + 1 < len(words):
            option = words[i + 1]
        if option and option.strip().lower().startswith("userknownhostsfile"):
            return option.split("=", 1)[1].strip() if "=" in option else option.split()[1]
    return None


def read_inventory(path: str | Path) -> dict[str, Host]:
    """The `server` and `loadgen` hosts of an Ansible inventory; BadInput (one line) if not."""
    if not shutil.which("ansible-inventory"):
        raise BadInput(
            "topology ssh reads the inventory with ansible-inventory: apt-get install ansible-core"
        )
    if not Path(path).is_file():
        raise BadInput(f"inventory {path}: no such file; name an Ansible inventory (docs/hosts.md)")
    done = subprocess.run(
        ["ansible-inventory", "-i", str(path), "--list"], capture_output=True, text=True, timeout=60
    )
    try:
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        listed = None
    if not isinstance(listed, dict):
        why = (done.stderr.strip().splitlines() or ["not JSON"])[-1]
        raise BadInput(f"inventory {path} cannot be read by ansible-inventory: {why}")
    hostvars = listed.get("_meta", {}).get("hostvars", {})
    hosts = {}
    for role in ROLES:
        members = listed.get(role, {}).get("hosts", [])
        if len(members) != 1:
            found = "none" if not members else ", ".join(members)
            raise BadInput(
                f"inventory {path}: group {role!r} needs exactly one host (has "
                f"{found}); add a [{role}] group with one host"
            )
        name = members[0]
        v = hostvars.get(name, {})
        hosts[role] = Host(
            role,
            name,
            str(v.get("ansible_host", name)),
            v.get("ansible_user"),
            int(v.get("ansible_port", 22)),
            v.get("ansible_ssh_private_key_file"),
            _known_hosts(v.get("ansible_ssh_common_args", "")),
        )
    if hosts["server"].address == hosts["loadgen"].address:
        raise BadInput(
            f"inventory {path}: server and loadgen are the same address "
            f"{hosts['server'].address}; topology ssh needs two hosts"
        )
    return hosts


class Connection:
    """One host over one multiplexed OpenSSH connection, and a work folder there."""

    def __init__(self, host: Host, control_dir: Path):
        self.host = host
        self.control_path = control_dir / host.role
        self.folder_root = ""  # the work folder on the host, made by open()
        self._folders: dict[str, str] = {}  # a local run folder's folder there
        self._started: list[RemoteProcess] = []
        self._tools: dict[str, str] = {}
        self._cores: int | None = None
        self._seq = 0
        self._keeper: subprocess.Popen | None = None
        self._master: subprocess.Popen | None = None
        # The helper serving this connection's calls (remote_helper serve), one at a time.
        self._server: subprocess.Popen | None = None
        self._one_call = threading.Lock()
        self.deferred: list[RemoteProcess] | None = None  # stops held for StopTogether

    def _control(self, command: str, timeout: float = 30) -> bool:
        """`ssh -O command` to the master: check, exit."""
        argv = ["ssh", *self.options(), "-O", command, self.host.address]
        return subprocess.run(argv, capture_output=True, timeout=timeout).returncode == 0

    def options(self) -> list[str]:
        h = self.host
        opts = [
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"ControlPath={self.control_path}",
            "-o",
            f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o",
            "ServerAliveInterval=10",
        ]
        if h.known_hosts:
            opts += ["-o", f"UserKnownHostsFile={h.known_hosts}"]
        if h.key_file:
            opts += ["-o", f"IdentityFile={h.key_file}", "-o", "IdentitiesOnly=yes"]
        if h.user:
            opts += ["-o", f"User={h.user}"]
        return [*opts, "-o", f"Port={h.port}"]

    def run(self, *argv, check: bool = True, timeout: float = 60,
            text: bool = True) -> subprocess.CompletedProcess:  # fmt: skip
        """`argv` on the host (over the master), its output as text (or bytes); TimeoutExpired
        after `timeout` s."""
        command = ["ssh", *self.options(), self.host.address, "--", shlex.join(map(str, argv))]
        done = subprocess.run(
            command, capture_output=True, text=text, timeout=timeout, stdin=subprocess.DEVNULL
        )
        if check and done.returncode != 0:
            stderr = done.stderr if text else done.stderr.decode(errors="replace")
            why = stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            raise HostbenchError(f"{self.host.label()}: {shlex.join(map(str, argv))}: {why[0]}")
        return done

    def helper(self, *args, timeout: float = 60) -> dict:
        """The helper's JSON answer to one command on the host: asked of the serving helper
        when there is one (a round trip on an open session), else in an ssh call of its own;
        TimeoutExpired after `timeout` s either way."""
        args = [str(a) for a in args]
        until = time.monotonic() + timeout
        answer = self._ask(args, until) if self.serving else None
        if answer is None:  # no serving helper, or it ended: a call of its own
            out = self.run("python3", f"{self.folder_root}/helper.py", *args,
                           timeout=_left(until)).stdout  # fmt: skip
            answer = json.loads(out.strip().splitlines()[-1])
        if "failed" in answer:
            raise HostbenchError(f"{self.host.label()}: helper.py {args[0]}: {answer['failed']}")
        return answer

    @property
    def serving(self) -> bool:
        """Whether a serving helper answers this connection's calls (serve), rather than an
        ssh call each."""
        return self._server is not None

    def serve(self) -> None:
        """Start the serving helper, its session in a group of its own (a Ctrl-C here leaves
        it to answer the stops that follow) that ends with the harness (setpriv)."""
        argv = ["ssh", *self.options(), self.host.address, "--",
                f"python3 {self.folder_root}/helper.py serve"]  # fmt: skip
        self._server = subprocess.Popen([*_dies_with_us(), *argv], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        start_new_session=True)  # fmt: skip

    def _ask(self, args: list[str], until: float) -> dict | None:
        """`args` asked of the serving helper; None when it has ended (or its pipe broke).
        Past `until` its session is given up (a late answer would answer the next question)
        and TimeoutExpired raised."""
        if not self._one_call.acquire(timeout=_left(until)):
            raise subprocess.TimeoutExpired(["helper.py", *args], _left(until))
        try:
            server = self._server
            if server is None:
                return None
            try:
                server.stdin.write(json.dumps(args).encode() + b"\n")
                server.stdin.flush()
                line = _line(server.stdout.fileno(), until)
            except subprocess.TimeoutExpired:
                self._end_serving(patience_s=0)
                raise subprocess.TimeoutExpired(["helper.py", *args], _left(until)) from None
            except OSError:
                line = b""
            if not line:
                self._end_serving()
                return None
            return json.loads(line)
        finally:
            self._one_call.release()

    def _end_serving(self, patience_s: float = 1.0) -> None:
        """Its end of input ends it and its ssh session; killed after `patience_s`."""
        server, self._server = self._server, None
        if server is not None:
            try:
                server.stdin.close()
            except OSError:
                pass  # its pipe broke: it has ended
            _wait_or_kill(server, patience_s)
            server.stdout.close()

    def open(self) -> "Connection":
        """Start the master (checking the host key) and make the work folder."""
        # In the foreground, a child of the harness (not -f): setpriv ends it with the harness.
        master = [
            *_dies_with_us(),
            "ssh",
            *self.options(),
            "-o",
            "ControlMaster=yes",
            "-o",
            "ControlPersist=no",
            "-N",
            self.host.address,
        ]
        self._master = subprocess.Popen(
            master,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + CONNECT_TIMEOUT_S + 20
        while not self._control("check"):
            if self._master.poll() is not None:
                raise BadInput(self._why_not(self._master.stderr.read()))
            if time.monotonic() > deadline:
                raise BadInput(self._why_not("no answer"))
            time.sleep(0.1)
        missing = self.run(
            "sh",
            "-c",
            "for t in python3 mktemp kill; do command -v $t >/dev/null || echo $t; done",
            check=False,
        ).stdout.split()
        if missing:
            raise BadInput(
                f"{self.host.label()} lacks {', '.join(missing)}: run "
                "ansible-playbook -i INVENTORY deploy/provision.yml"
            )
        self.folder_root = self.run("mktemp", "-d", "/tmp/hostbench.XXXXXX").stdout.strip()
        self.copy([HELPER], self.folder_root, name="helper.py")
        self.serve()
        # The keeper's input is this process's pipe: when the harness ends, however (setpriv
        # kills the ssh client with it), the host kills what was started there.
        keeper = [
            "ssh",
            *self.options(),
            self.host.address,
            "--",
            f"python3 {self.folder_root}/helper.py keeper {self.folder_root}",
        ]
        self._keeper = subprocess.Popen(
            [*_dies_with_us(), *keeper],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self

    def _why_not(self, stderr: str) -> str:
        h, text = self.host, stderr.strip()
        known = h.known_hosts or "~/.ssh/known_hosts"
        if "host key" in text.lower() and ("known" in text.lower() or "verification" in text):
            return (
                f"{h.label()}: its host key is not in {known}; check its fingerprint, then "
                f"add it (ssh-keyscan -p {h.port} {h.address} >> {known})"
            )
        if "Permission denied" in text:
            return (
                f"{h.label()}: the key was refused for user {h.user or 'you'}; set "
                "ansible_user / ansible_ssh_private_key_file in the inventory"
            )
        why = (text.splitlines() or ["no answer"])[-1]
        return (
            f"{h.label()} unreachable ({why}); check ansible_host/ansible_port and that "
            "sshd runs there"
        )

    def copy(self, paths: list[Path], folder: str, name: str | None = None) -> None:
        """Local files or folders into `folder` on the host (scp over the master)."""
        target = f"{self.host.address}:{folder}/{name or ''}"
        argv = ["scp", "-q", "-r", "-p", *self.options(), *map(str, paths), target]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise HostbenchError(f"{self.host.label()}: copying {paths[0]}: {done.stderr.strip()}")

    def fetch_all(self, files: dict[str, Path], timeout: float) -> None:
        """Files from the host (its path: the local path), in one round trip; one the host
        has not is left absent."""
        there = list(files)
        packed = base64.b64decode(self.helper("pack", *there, timeout=timeout)["tar"])
        with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
            for member in tar:
                here = Path(files[there[int(member.name)]])
                here.parent.mkdir(parents=True, exist_ok=True)
                here.write_bytes(tar.extractfile(member).read())

    def tool(self, name: str, ships: Path | None = None) -> str:
        """The path on the host of program `name`: a copy of `ships` (this machine's build of
        it: the file itself, or the published folder it is in), copied once; else the host's
        own (PATH: the playbook installs it)."""
        key = f"{name}@{ships}"  # one copy per build (the test app: one per runtime)
        if key not in self._tools:
            if ships is not None:
                if not ships.exists():
                    raise BadInput(f"{name}: {ships} is not built here, so it cannot be copied "
                                   f"to the {self.host.label()}: run `make setup`")  # fmt: skip
                self.copy([ships], self.folder_root)
                inside = f"/{name}" if ships.is_dir() else ""
                self._tools[key] = f"{self.folder_root}/{ships.name}{inside}"
            else:
                found = self.helper("which", name)["path"]
                if not found:
                    raise BadInput(
                        f"{self.host.label()} has no {name}: run ansible-playbook -i "
                        "INVENTORY deploy/provision.yml"
                    )
                self._tools[key] = found
        return self._tools[key]

    # What a place is (places.Local is the other): a launch's programs run through these.

    def folder(self, run_dir: Path) -> str:
        """The folder on the host of a local run folder: made once, its own for each."""
        key = str(Path(run_dir).resolve())
        if key not in self._folders:
            self._seq += 1
            self._folders[key] = f"{self.folder_root}/{self._seq}-{Path(run_dir).name}"
            self.helper("mkdir", self._folders[key])
        return self._folders[key]

    def put(self, run_dir: Path, folder: str, files: dict[str, str], dirs=()) -> None:
        """Write `files` (name: text) into the local run folder, where they are kept, copy
        them to `folder` on the host, and make `dirs` there."""
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (Path(run_dir) / name).write_text(text)
        if files:
            self.copy([Path(run_dir) / name for name in files], folder)
        if dirs:
            self.helper("mkdir", *dirs)

    def output(self, *argv) -> str:
        done = self.run(*argv, check=False)
        return (done.stdout + done.stderr).strip()

    def cores(self, cpus=None) -> int:
        if self._cores is None:
            self._cores = int(self.run("nproc").stdout.strip())
        return self._cores

    def root_user(self) -> str | None:
        uid, user, group = self.run("sh", "-c", "id -u; id -un; id -gn").stdout.split()
        return f"{user} {group}" if uid == "0" else None

    def process(self, name: str, argv: list[str], log_path: Path, *, env=None, cpus=None,
                cwd=None, **kw) -> "RemoteProcess":  # fmt: skip
        """A RemoteProcess on the host (not started), `env` added to its environment. It runs
        in the work folder, on any CPU (cwd and cpus are this machine's)."""
        self._seq += 1
        argv = ["env", *(f"{k}={v}" for k, v in env.items()), *argv] if env else list(argv)
        proc = RemoteProcess(self, f"{self._seq}-{name}", name, argv, log_path, **kw)
        self._started.append(proc)
        return proc

    def request(self, method: str, url: str, unix_socket: str | None = None):
        """One HTTP request made from the host (the harness's own probes: the app's counters,
        readiness); OSError when nothing answers, as web.request raises."""
        answer = self.helper("request", method, url, *([unix_socket] if unix_socket else []))
        if "error" in answer:
            raise ConnectionError(answer["error"])
        return web.Response(answer["status"], answer["headers"], base64.b64decode(answer["body"]))

    def answers_ok(self, url: str, unix_socket: str | None = None) -> bool:
        try:
            return self.request("GET", url, unix_socket).status == 200
        except OSError:
            return False

    def rtt_ms(self, url: str, probes: int) -> float:
        answer = self.helper("rtt", url, probes)
        if "error" in answer:
            raise HostbenchError(f"{self.host.label()}: {url} did not answer: {answer['error']}")
        return answer["ms"]

    def free_port(self, address: str) -> int:
        return self.helper("port", address)["port"]

    def processes(self) -> dict:
        """The host's processes now, read there: "procs" {pid: (name, CPU seconds, start
        time)}, "ours" the pids the harness owns there (what it started, and the session
        this reading came by), "stat" its /proc/stat counters, "cores", and "t" its clock."""
        answer = self.helper("processes", self.folder_root)
        answer["procs"] = {int(pid): tuple(v) for pid, v in answer["procs"].items()}
        answer["ours"] = set(answer["ours"])
        return answer

    def machine(self) -> dict:
        """The host as the environment record names it (OS, kernel, CPU, memory, python3)."""
        return self.helper("machine")

    def stop_all(self, procs: list["RemoteProcess"], say=None, until: float | None = None):
        """Stop `procs` (started here) in one round trip, then bring back their logs in one
        more: the helper SIGTERMs every group, waits up to the longest grace period for them
        to empty, SIGKILLs every group and says which it saw gone. All by `until` (a
        time.monotonic(); by default the grace period and STOP_MARGIN_S from now), whatever
        the host does: past it the stop returns anyway, `say`ing (one line; stderr by
        default) which processes it could not confirm stopped. The host's keeper kills what
        is left when the harness disconnects."""
        procs = [p for p in procs if p.group is not None]
        if not procs:
            return
        say, now, longest = say or _tell, time.monotonic(), max(p.grace_s for p in procs)
        until = now + longest + STOP_MARGIN_S if until is None else until
        # The helper's wait leaves time for the SIGKILL's effect and a second for its answer.
        grace = max(0.0, min(longest, until - now - remote_helper.KILLED_WITHIN_S - 1))
        named = {p: f"{p.name} (pid {p._pid}, group {p.group})" for p in procs}
        for p in procs:
            p.group = None  # stopped here, or left to the keeper: never stopped twice
        try:
            answer = self.helper("stop", self.folder_root, grace, *[p.key for p in procs],
                                 timeout=_left(until))  # fmt: skip
        except subprocess.TimeoutExpired:
            unconfirmed, why = procs, f"no answer in {until - now:.0f} s"
        except (HostbenchError, OSError, ValueError, IndexError) as e:  # ssh failed; no JSON
            unconfirmed, why = procs, str(e)
        else:
            for p in procs:
                if answer["ended"][p.key]["code"] is not None:
                    p._ended = answer["ended"][p.key]
            unconfirmed = [p for p in procs if p.key not in answer["gone"]]
            why = "still running after SIGKILL"
            try:
                logs = {there: here for p in procs for there, here in p.logs().items()}
                self.fetch_all(logs, timeout=_left(until))
            except (subprocess.TimeoutExpired, HostbenchError, tarfile.TarError) as e:
                say(f"{self.host.label()}: the logs of {', '.join(p.name for p in procs)} "
                    f"not brought back by the deadline ({type(e).__name__}: {e})")  # fmt: skip
        if unconfirmed:
            say(f"{self.host.label()}: not confirmed stopped ({why}): "
                f"{', '.join(named[p] for p in unconfirmed)}; its keeper kills them when "
                "the harness disconnects")  # fmt: skip

    def close(self) -> None:
        """Stop what was started here, remove the work folder, end the master: each step
        with its deadline, and taken whatever the host did at the one before."""
        self.stop_all(self._started)
        self._end_serving()  # a call still waiting on it gets its end, and goes by ssh
        if self._keeper is not None:  # its end of input: it kills what is left, removes the folder
            self._keeper.stdin.close()
            _wait_or_kill(self._keeper, CLOSE_STEP_S)
        try:
            if self.folder_root:  # if the keeper could not
                self.run("rm", "-rf", self.folder_root, check=False, timeout=CLOSE_STEP_S)
            if self._master is not None:
                self._control("exit", timeout=CLOSE_STEP_S)
        except subprocess.TimeoutExpired:
            pass  # the master is killed below
        if self._master is not None:
            _wait_or_kill(self._master, CLOSE_STEP_S)
            self._master.stderr.close()


def _tell(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _wait_or_kill(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _line(fd: int, until: float) -> bytes:
    """One line read from `fd` (b"" at its end); TimeoutExpired past `until`."""
    chunks = []
    while not chunks or not chunks[-1].endswith(b"\n"):
        if not select.select([fd], [], [], max(0.0, until - time.monotonic()))[0]:
            raise subprocess.TimeoutExpired("helper.py", 0)
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b""
        chunks.append(chunk)
    return b"".join(chunks)


def _left(until: float) -> float:
    """The seconds left until `until` (a time.monotonic()), as a call's timeout."""
    return max(0.1, until - time.monotonic())


def _dies_with_us() -> list[str]:
    """argv prefix: the parent-death signal, so an ssh client never outlives the harness."""
    return ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []


class RemoteProcess:
    """A program on a host in its own process group: what ManagedProcess is locally."""

    def __init__(
        self,
        conn: Connection,
        key: str,
        name: str,
        argv: list[str],
        log_path: Path,
        *,
        stderr_path: Path | None = None,
        ready: Callable[[], bool] | None = None,
        ready_timeout_s: float = 60.0,
        grace_s: float = 5.0,
        fetch: dict[str, Path] | None = None,
    ):
        self.conn, self.key, self.name, self.argv = conn, key, name, [str(a) for a in argv]
        self.log_path = Path(log_path)
        self.fetch = fetch or {}  # files it writes on the host: brought here with its logs
        self.stderr_path = Path(stderr_path) if stderr_path else None
        self.ready, self.ready_timeout_s, self.grace_s = ready, ready_timeout_s, grace_s
        self.group: int | None = None
        self._pid: int | None = None
        self._ended: dict | None = None

    @property
    def pid(self) -> int:
        assert self._pid is not None, f"{self.name} is not running"
        return self._pid

    def started_as(self, group: int, pid: int) -> None:
        """Record what the host answered to `start`: the process group and pid it runs as
        there, which the stops name."""
        self.group, self._pid = group, pid

    @property
    def cpu_s(self) -> float:
        """The program's CPU seconds, from its rusage on the host once it ended."""
        return (self._ended or {}).get("cpu_s", math.nan)

    def start(self) -> "RemoteProcess":
        started = self.conn.helper("start", self.conn.folder_root, self.key, *self.argv)
        if "error" in started:
            raise LaunchFailed(
                f"cannot start {self.name} on {self.conn.host.label()}: {started['error']}"
            )
        self.started_as(started["group"], started["pid"])
        wait_until_ready(self, self._not_ready, poll_s=0.05)  # a probe: a round trip, ms
        return self

    def _not_ready(self, what: str) -> str:
        try:  # the log is on the host
            self.conn.fetch_all(self.logs(), timeout=STOP_MARGIN_S)
        except (subprocess.TimeoutExpired, HostbenchError, tarfile.TarError):
            pass  # the stop that follows says what the host did not answer
        return f"{self.name} on {self.conn.host.label()} {what}: {tail(self.log_path)}"

    def exit_code(self) -> int | None:
        if self._ended is None and self.group is not None:
            self._status()
        return None if self._ended is None else self._ended["code"]

    def running(self) -> bool:
        return self.group is not None and self.exit_code() is None

    def wait(self, timeout: float) -> int:
        return wait_for_exit(self.exit_code, timeout, self.argv, poll_s=0.2)

    def stop(self):
        """SIGTERM the group on the host, SIGKILL after the grace period, bring back the logs:
        Connection.stop_all, one round trip and a deadline; held while its host's launches
        stop together (StopTogether)."""
        if self.conn.deferred is not None:
            self.conn.deferred.append(self)
        else:
            self.conn.stop_all([self])

    def _status(self) -> int | None:
        ended = self.conn.helper("status", self.conn.folder_root, self.key)
        if ended["code"] is not None:
            self._ended = ended
        return ended["code"]

    def logs(self) -> dict[str, Path]:
        """What it writes on the host (its output, and the files named in `fetch`), each with
        where it is kept here."""
        base = f"{self.conn.folder_root}/{self.key}"
        logs = {f"{base}.out": self.log_path, **self.fetch}
        if self.stderr_path:
            logs[f"{base}.err"] = self.stderr_path
        return logs

    def __enter__(self) -> "RemoteProcess":
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


class StopTogether(ExitStack):
    """An ExitStack (a block's launches) that, as it closes, stops what they started on each
    ssh host together: one round trip per host, all within one deadline (Connection.stop_all),
    rather than a process after another. Without ssh hosts: an ExitStack."""

    def __init__(self, ssh: "SshHosts | None", say=None):
        super().__init__()
        self.conns, self.say = (ssh.both if ssh else ()), say

    def __exit__(self, *exc):
        for conn in self.conns:
            conn.deferred = []  # each RemoteProcess.stop of the unwinding lands here
        try:
            return super().__exit__(*exc)
        finally:
            held = [p for conn in self.conns for p in conn.deferred]
            if held:
                until = time.monotonic() + max(p.grace_s for p in held) + STOP_MARGIN_S
            for conn in self.conns:
                stopping, conn.deferred = conn.deferred, None
                conn.stop_all(stopping, self.say, until if held else None)


@dataclass
class SshHosts:
    """The two connections of a study under topology ssh."""

    server: Connection
    loadgen: Connection

    @property
    def server_address(self) -> str:
        return self.server.host.address

    @property
    def both(self) -> tuple[Connection, Connection]:
        """The server host, then the load host."""
        return self.server, self.loadgen

    def path(self) -> str:
        """What a request crosses, for the rows."""
        return f"ssh {self.loadgen.host.name} -> {self.server.host.name}"


@contextmanager
def ssh_hosts(inventory: str | Path, server_programs=(), loadgen_programs=()) -> Iterator[SshHosts]:
    """Both hosts connected and checked, each with the programs it will run, found there or
    copied (each given as (name, ships): Connection.tool's arguments): one line naming the
    host and the fix otherwise, before anything starts. Everything closed however the block
    ends."""
    hosts = read_inventory(inventory)
    for tool in ("ssh", "scp"):
        if not shutil.which(tool):
            raise BadInput(f"topology ssh needs {tool} here: apt-get install openssh-client")
    with ExitStack() as stack:
        control_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hb-ssh")))
        conns = {}
        for role in ROLES:
            conn = Connection(hosts[role], control_dir)
            stack.callback(conn.close)
            conns[role] = conn.open()
        for role, programs in (("server", server_programs), ("loadgen", loadgen_programs)):
            for name, ships in programs:
                conns[role].tool(name, ships)
        yield SshHosts(conns["server"], conns["loadgen"])
