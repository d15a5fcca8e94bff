"""Two real hosts over OpenSSH (topology ssh): the app on `server`, the load tool on `loadgen`.

The hosts come from an inventory (inventory.py). Each host gets one multiplexed OpenSSH
connection (a ControlMaster in a short temp dir) that every command, copy and reading goes
through; host keys are checked against known_hosts (StrictHostKeyChecking=yes,
BatchMode=yes: never a prompt, never a key accepted unseen). On each host the harness works
in a temp folder of its own, with a stdlib-only helper (remote_helper.py) that starts
programs detached in their own process group (remote_process.py) and reads their process
trees from that host's /proc: one helper per host serves every call, one JSON line each,
over one session kept open (helper_session.py). A Connection is a place (places.py) as
this machine is: the programs set up on it alike. Everything started there is stopped, and
the folder and the connections removed, on success, error and Ctrl-C.

Every call to a host has a deadline. Stopping is one round trip per host, within one deadline
(Connection.stop_all): a block's launches stop together (StopTogether), and a host that stalls
holds the harness a few seconds past the grace period at most, never longer.
"""

import base64
import io
import json
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...errors import BadInput, HostbenchError
from . import remote_helper, web
from .helper_session import HelperSession, dies_with_us, seconds_left, wait_or_kill
from .inventory import ROLES, Host, read_inventory
from .remote_process import STOP_MARGIN_S, RemoteProcess

HELPER = Path(__file__).with_name("remote_helper.py")
CONNECT_TIMEOUT_S = 10
CLOSE_STEP_S = 10  # each step of closing a connection, after its stop


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
        self._session = HelperSession()  # the helper serving this connection's calls
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
        answer = self._session.ask(args, until) if self.serving else None
        if answer is None:  # no serving helper, or it ended: a call of its own
            out = self.run("python3", f"{self.folder_root}/helper.py", *args,
                           timeout=seconds_left(until)).stdout  # fmt: skip
            answer = json.loads(out.strip().splitlines()[-1])
        if "failed" in answer:
            raise HostbenchError(f"{self.host.label()}: helper.py {args[0]}: {answer['failed']}")
        return answer

    @property
    def serving(self) -> bool:
        """Whether a serving helper answers this connection's calls (serve), rather than an
        ssh call each."""
        return self._session.running

    def serve(self) -> None:
        """Start the serving helper (helper_session.py)."""
        self._session.start(["ssh", *self.options(), self.host.address, "--",
                             f"python3 {self.folder_root}/helper.py serve"])  # fmt: skip

    def open(self) -> "Connection":
        """Start the master (checking the host key) and make the work folder."""
        # In the foreground, a child of the harness (not -f): setpriv ends it with the harness.
        master = [
            *dies_with_us(),
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
            [*dies_with_us(), *keeper],
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

    @contextmanager
    def secrets(self, paths: list[Path]) -> Iterator[list[str]]:
        """Copies of the files in a folder of their own on the host (never in the local run
        folder, which keeps what `put` writes), removed from there when the block ends."""
        self._seq += 1
        folder = f"{self.folder_root}/{self._seq}-secrets"
        self.helper("mkdir", folder)
        try:
            self.copy([Path(p) for p in paths], folder)
            yield [f"{folder}/{Path(p).name}" for p in paths]
        finally:
            self.run("rm", "-rf", folder, check=False, timeout=CLOSE_STEP_S)

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
        named = {p: f"{p.name} (pid {p.pid}, group {p.group})" for p in procs}
        for p in procs:
            p.group = None  # stopped here, or left to the keeper: never stopped twice
        try:
            answer = self.helper("stop", self.folder_root, grace, *[p.key for p in procs],
                                 timeout=seconds_left(until))  # fmt: skip
        except subprocess.TimeoutExpired:
            unconfirmed, why = procs, f"no answer in {until - now:.0f} s"
        except (HostbenchError, OSError, ValueError, IndexError) as e:  # ssh failed; no JSON
            unconfirmed, why = procs, str(e)
        else:
            for p in procs:
                if answer["ended"][p.key]["code"] is not None:
                    p.ended_as(answer["ended"][p.key])
            unconfirmed = [p for p in procs if p.key not in answer["gone"]]
            why = "still running after SIGKILL"
            try:
                logs = {there: here for p in procs for there, here in p.logs().items()}
                self.fetch_all(logs, timeout=seconds_left(until))
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
        self._session.end()  # a call still waiting on it gets its end, and goes by ssh
        if self._keeper is not None:  # its end of input: it kills what is left, removes the folder
            self._keeper.stdin.close()
            wait_or_kill(self._keeper, CLOSE_STEP_S)
        try:
            if self.folder_root:  # if the keeper could not
                self.run("rm", "-rf", self.folder_root, check=False, timeout=CLOSE_STEP_S)
            if self._master is not None:
                self._control("exit", timeout=CLOSE_STEP_S)
        except subprocess.TimeoutExpired:
            pass  # the master is killed below
        if self._master is not None:
            wait_or_kill(self._master, CLOSE_STEP_S)
            self._master.stderr.close()


def _tell(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
