"""The machine and software a study ran on: environment.json, `python -m hostbench env`.

Results mean little without the hardware and versions beside them (the paper's
Tables 1 and 2). Anything that can't be read is recorded as "not installed" or
"unknown" rather than failing the study.
"""

import importlib.metadata
import os
import platform
import re
import subprocess
from pathlib import Path

import psutil

from ..errors import HostbenchError
from ..paths import ROOT

PYTHON_PACKAGES = ("pandas", "seaborn", "matplotlib", "numpy", "papermill", "psutil", "k6")


def _cmd(*argv: str) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stdout or out.stderr).strip() or "unknown"


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else platform.processor() or "unknown"


def os_name() -> str:
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except (OSError, KeyError):
        return f"{platform.system()} {platform.release()}"


def tool_versions() -> dict[str, str]:
    from . import proxies
    from .loadgen import GENERATORS, get_generator

    versions = {}
    for name in sorted(GENERATORS):
        try:
            versions[name] = get_generator(name).version()
        except HostbenchError:
            versions[name] = "not installed"
    for name, read in (("nginx", proxies.nginx_version), ("caddy", proxies.caddy_version)):
        try:
            versions[name] = read()
        except HostbenchError:
            versions[name] = "not installed"
    return versions


def dotnet_versions() -> dict[str, str]:
    runtimes = _cmd("dotnet", "--list-runtimes").splitlines()
    return {
        "sdk": _cmd("dotnet", "--version"),
        "runtimes": "; ".join(r.split(" [")[0] for r in runtimes),
    }


def git_commit() -> str:
    commit = _cmd("git", "rev-parse", "--short", "HEAD")
    dirty = _cmd("git", "status", "--porcelain", "--untracked-files=no")
    return commit + ("+dirty" if dirty not in ("", "unknown") else "")


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def collect() -> dict:
    mem = psutil.virtual_memory().total
    return {
        "cpu_model": cpu_model(),
        "cpu_cores_logical": psutil.cpu_count(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "memory_gib": round(mem / 2**30, 1),
        "os": os_name(),
        "kernel": platform.release(),
        "dotnet": dotnet_versions(),
        "tools": tool_versions(),
        "python": platform.python_version(),
        "python_packages": {p: _package_version(p) for p in PYTHON_PACKAGES},
        "git_commit": git_commit(),
        "load_average": os.getloadavg(),
    }
