"""The machine and software a study ran on: environment.json, `python -m hostbench env`.

Results mean little without the hardware and versions beside them (the paper's
Tables 1 and 2). Anything that can't be read is recorded as "not installed" or
"unknown" rather than failing the study. What only some runs need is recorded by those runs
alone, each key declared once (hostbench/environment_keys.py, listed in docs/results.md):
openssl's version where a mode is on TLS, each runtime variant's build where it has variants.
Each load tool's version is read here, once (tool_version), for this record, `doctor` and
every run's row alike: this module reads what is installed (launch/) and never what measures
(measure/). Under topology ssh the record adds both hosts, each read there (hosts_record):
what the study ran on is those machines.
"""

import hashlib
import importlib.metadata
import os
import platform
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import psutil

from ..environment_keys import OPENSSL, RUNTIME_VARIANTS
from ..errors import HostbenchError
from ..load import TOOLS
from ..paths import BIN, ROOT
from ..runtimes import DEFAULT_RUNTIME, built_version
from .launch.processes import finished
from .launch.tools import find_tool

PYTHON_PACKAGES = ("pandas", "seaborn", "matplotlib", "numpy", "papermill", "psutil", "k6")


def _cmd(*argv: str) -> str:
    try:
        out = finished(argv, timeout=30, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stdout or out.stderr).strip() or "unknown"


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def cpu_model(cpuinfo: str | None = None) -> str:
    """The first processor's model name (from `cpuinfo`, /proc/cpuinfo's text, read if not
    given), else what Python's platform module knows."""
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else platform.processor() or "unknown"


# /proc/cpuinfo's fields that name a processor where its model name is masked (a VM's
# "Intel(R) Xeon(R) Processor"), as environment.json's keys (analysis.tables.processor).
CPU_IDENTITY = {"vendor_id": "cpu_vendor", "cpu family": "cpu_family", "model": "cpu_model_number",
                "stepping": "cpu_stepping"}  # fmt: skip


def cpu_identity(cpuinfo: str | None = None) -> dict:
    """The first processor's vendor, family, model and stepping (CPU_IDENTITY) as
    /proc/cpuinfo (or its text, `cpuinfo`) gives them; those it lacks are left out."""
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    found = {}
    for field, key in CPU_IDENTITY.items():
        match = re.search(rf"^{field}\s*:\s*(.+)$", text, re.M)
        if match:
            value = match.group(1).strip()
            found[key] = int(value) if value.isdigit() else value
    return found


def processor() -> dict:
    """This machine's processor as environment.json records it: its model name and identity,
    from one read of /proc/cpuinfo."""
    text = _cpuinfo()
    return {"cpu_model": cpu_model(text), **cpu_identity(text)}


def processor_changed(recorded: dict) -> str:
    """How this machine's processor differs from the one a run recorded (environment.json):
    "" where they agree on every key both name (the model name, vendor, family, model and
    stepping), else the keys that differ, "cpu_family 25 -> 6"."""
    now = processor()
    return "; ".join(f"{key} {recorded[key]} -> {value}" for key, value in now.items()
                     if recorded.get(key) not in (None, "", "unknown", value))  # fmt: skip


def os_name() -> str:
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except (OSError, KeyError):
        return f"{platform.system()} {platform.release()}"


def tool_version(name: str) -> str:
    """The first line load tool `name` (load.py TOOLS) prints about its version; ToolMissing
    when it is not installed. wrk -v exits 1 and bombardier prints to stderr: any output."""
    done = finished([find_tool(name), *TOOLS[name].version_args], timeout=30)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def tool_versions() -> dict[str, str]:
    from ..programs import PROGRAMS
    from .launch.places import Local

    versions = {}
    for name in TOOLS:
        try:
            versions[name] = tool_version(name)
        except HostbenchError:
            versions[name] = "not installed"
    for program in PROGRAMS.values():  # the proxies: the app's build is recorded below
        try:
            version = program.version(Local())
        except HostbenchError:
            version = "not installed"
        if version is not None:
            versions[program.name] = version
    return versions


def dotnet_versions() -> dict[str, str]:
    runtimes = _cmd("dotnet", "--list-runtimes").splitlines()
    return {
        "sdk": _cmd("dotnet", "--version"),
        "runtimes": "; ".join(r.split(" [")[0] for r in runtimes),
    }


def testapp_runtimes(runtimes: list[str]) -> dict[str, str]:
    """The runtimes a study runs the test app on (params.runtime_builds; none: make setup's
    build), each with the runtime version its build carries ("shared": the installed one,
    which dotnet.runtimes lists)."""
    if not runtimes:
        return {DEFAULT_RUNTIME: built_version(None)}
    return {runtime: built_version(runtime) for runtime in runtimes}


GO_BUILDINFO = b"\xff Go buildinf:"


def go_build(binary: Path) -> dict[str, str]:
    """The Go version and Iris module version a Go binary (goserver) was built with.

    Read from the build information Go (>= 1.18) embeds: a 32-byte header, then the Go
    version as a length-prefixed string, then the module list (`dep\tMODULE\tVERSION`).
    """
    try:
        data = Path(binary).read_bytes()
    except OSError:
        return {"go": "not built", "iris": "not built"}
    at = data.find(GO_BUILDINFO)
    go = "unknown"
    if at >= 0 and data[at + 15] & 2:  # flag 2: strings inline after the header
        n, shift, i = 0, 0, at + 32
        while data[i] & 0x80:  # unsigned varint
            n |= (data[i] & 0x7F) << shift
            shift, i = shift + 7, i + 1
        n |= data[i] << shift
        go = data[i + 1 : i + 1 + n].decode(errors="replace")
    iris = re.search(rb"\tgithub\.com/kataras/iris/v12\t(v[0-9A-Za-z.+-]+)", data)
    return {"go": go, "iris": iris.group(1).decode() if iris else "unknown"}


def git_commit() -> str:
    """The commit measured, "+dirty" where a tracked file beside the run folders differs from
    it: resuming a committed example rewrites its own folder, which is not the code."""
    commit = _cmd("git", "rev-parse", "--short", "HEAD")
    dirty = _cmd("git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                 ":(exclude)data/runs")  # fmt: skip
    return commit + ("+dirty" if dirty not in ("", "unknown") else "")


def git_diff_sha256() -> str | None:
    """The hash of the uncommitted changes to tracked files (None for a clean tree): a run
    from a changed tree names exactly which changes, though nobody else can rebuild them."""
    try:
        diff = subprocess.run(
            ["git", "diff", "HEAD", "--binary"], capture_output=True, timeout=30, cwd=ROOT
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if diff.returncode != 0 or not diff.stdout:
        return None
    return hashlib.sha256(diff.stdout).hexdigest()[:16]


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def collect() -> dict:
    mem = psutil.virtual_memory().total
    return {
        **processor(),
        "cpu_cores_logical": psutil.cpu_count(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "memory_gib": round(mem / 2**30, 1),
        "os": os_name(),
        "kernel": platform.release(),
        "dotnet": dotnet_versions(),
        "tools": tool_versions(),
        "goserver": go_build(BIN / "goserver"),
        "python": platform.python_version(),
        "python_packages": {p: _package_version(p) for p in PYTHON_PACKAGES},
        "git_commit": git_commit(),
        "git_diff_sha256": git_diff_sha256(),
        "load_average": os.getloadavg(),
    }


def openssl_version() -> str:
    """`openssl version`'s line ("OpenSSL 3.0.17 1 Jul 2025 ..."), "unknown" without one."""
    return _cmd("openssl", "version")


def file_facts(path: Path) -> dict:
    """A built file's size, modification time (UTC) and sha256 (its first 16 hex digits): the
    build a run launched, told apart from a later publish."""
    stat = path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    mtime = datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(timespec="seconds")
    return {"size_bytes": stat.st_size, "mtime": mtime, "sha256": digest.hexdigest()[:16]}


def variant_builds(names) -> dict[str, dict]:
    """{variant: its build facts} (environment_keys.RUNTIME_VARIANTS) for runtime variants
    `names`, from their declarations (runtime_variants.py) and their executables."""
    from ..runtime_variants import get_variant

    found = {}
    for name in names:
        v = get_variant(name)
        exe = v.executable
        facts = {"build": v.build.kind, "app": v.build.app, "runtime": v.runtime,
                 "gc": v.gc.reported or "the build's default", "gc_env": v.env,
                 "executable": os.path.relpath(exe, ROOT)}  # fmt: skip
        try:
            facts |= file_facts(exe)
        except OSError:
            facts["executable"] += ": not built"
        assembly = exe.with_name(f"{exe.name}.dll")  # a JIT build's code; its executable a host
        if assembly.is_file():
            facts["assembly"] = {"path": os.path.relpath(assembly, ROOT), **file_facts(assembly)}
        found[name] = facts
    return found


def run_dependent(tls: bool, variants=()) -> dict:
    """The environment_keys this run records: openssl's version where `tls` (a mode of the
    run is on TLS), each of `variants`' builds where it has runtime variants."""
    record = {OPENSSL: openssl_version()} if tls else {}
    if variants:
        record[RUNTIME_VARIANTS] = variant_builds(variants)
    return record


def _read_there(probe) -> str | None:
    """What `probe()` reads on an ssh host; "unknown" when the host cannot say."""
    try:
        return probe()
    except HostbenchError:
        return "unknown"


def hosts_record(ssh, programs, tools) -> dict:
    """Topology ssh: each host as it runs the study, read there (`ssh`: launch.remote.SshHosts,
    connected): its machine (OS, kernel, CPU model and cores, memory, python3), and the
    versions of what it runs: the server's .NET runtimes and proxies (`programs`, from
    hostbench/programs; the harness's own builds are recorded above), the load host's `tools`
    (measure.loadgen generators)."""
    server, loadgen = ssh.both

    def runtimes() -> str:
        listed = server.output("sh", "-c", "dotnet --list-runtimes 2>/dev/null").splitlines()
        return "; ".join(r.split(" [")[0] for r in listed) or "not installed"

    proxies = {p.name: _read_there(lambda p=p: p.version(server)) for p in programs}
    return {
        "server": {"name": server.host.name, **server.machine(),
                   "dotnet_runtimes": _read_there(runtimes),
                   "tools": {name: v for name, v in proxies.items() if v is not None}},
        "loadgen": {"name": loadgen.host.name, **loadgen.machine(),
                    "tools": {t.name: _read_there(lambda t=t: t.version_on(loadgen))
                              for t in tools}},
    }  # fmt: skip
