"""The .NET runtimes the test app can be published for (params key `runtimes`): their names,
their builds and how each is published. Data and paths only: the harness publishes them
(harness/notebook.py, ensure_testapp), the params check names against them.

A runtime is named by its target framework moniker (net8.0), as `dotnet publish` and the
csproj name it; the SDK picks the runtime pack's patch version, which each results row
records as the app reports it (column runtime_version). The default, net10.0 alone, is
`make setup`'s framework-dependent build/testapp/ on the installed shared runtime. A study that
names another runtime, or several, runs each from its own self-contained build,
build/testapp-<runtime>/ (net10.0 too): the runtimes it compares are published alike, and
net8.0 and net9.0 need no shared runtime installed.
"""

import json
from pathlib import Path

from .paths import BUILD, TESTAPP

RUNTIMES = ("net8.0", "net9.0", "net10.0")  # oldest first; each restores from NuGet
DEFAULT_RUNTIME = "net10.0"  # what testapp/dotnet/TestApp.csproj targets


def build_of(runtime: str | None) -> Path:
    """The TestApp executable a launch runs: `make setup`'s build for None (the default),
    else the self-contained build of `runtime`."""
    if runtime is None:
        return TESTAPP
    return BUILD / f"testapp-{runtime}" / "TestApp"


def publish_args(runtime: str | None) -> list[str]:
    """`dotnet publish` options, after the project, that make build_of(runtime). The csproj
    targets the default alone; TargetFrameworks (not -f alone) makes restore resolve the other
    runtime's packs too."""
    if runtime is None:
        return ["-c", "Release", "-o", str(TESTAPP.parent)]
    return ["-c", "Release", "-f", runtime, f"-p:TargetFrameworks={runtime}",
            "--use-current-runtime", "--self-contained",
            "-o", str(build_of(runtime).parent)]  # fmt: skip


def variant_name(runtime: str) -> str:
    """A runtime as the variant of a runtimes comparison names it (run keys, results.csv's
    variant column): net8.0 -> net8 (a variant name has no '.': run keys stay parseable)."""
    return runtime.removesuffix(".0")


def label(variant: str) -> str:
    """A runtime's variant as a reader names it: net8 -> ".NET 8"."""
    return f".NET {variant.removeprefix('net')}"


def built_version(runtime: str | None) -> str:
    """The runtime a build carries, read from its deps.json (the runtime pack's version), e.g.
    "8.0.31"; for the default build, "shared" (it runs on the installed runtime, which
    environment.json's dotnet.runtimes lists); "not built" when it is missing."""
    if runtime is None:
        return "shared"
    deps = build_of(runtime).with_name("TestApp.deps.json")
    try:
        libraries = json.loads(deps.read_text())["libraries"]
    except (OSError, ValueError, KeyError):
        return "not built"
    pack = "runtimepack.Microsoft.NETCore.App.Runtime."
    versions = [name.rpartition("/")[2] for name in libraries if name.startswith(pack)]
    return versions[0] if versions else "unknown"
