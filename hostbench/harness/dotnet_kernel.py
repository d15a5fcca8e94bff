"""The .NET Interactive Jupyter kernel (`.net-csharp`) the C# tour runs on, in the venv.

`make setup` runs `python -m hostbench.harness.dotnet_kernel`: `dotnet tool restore` brings
Microsoft.dotnet-interactive at the version pinned in .config/dotnet-tools.json into NuGet's
package folder, and the kernelspec goes into the venv's Jupyter data path
(.venv/share/jupyter/kernels/.net-csharp), where papermill and Jupyter run from the venv
find it. Its argv names dotnet and the tool's own dll by absolute path, so the kernel
starts from any folder: the tool's own `jupyter install` writes `dotnet interactive ...`,
which works only under a folder whose manifest lists the tool.

A machine where that cannot happen (no dotnet, the package not in the NuGet source) gets one
line saying what is missing, and the studies still run, without the C# tour.
"""

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import HostbenchError, ToolMissing
from ..paths import ROOT

KERNEL = ".net-csharp"
PACKAGE = "microsoft.dotnet-interactive"
MANIFEST = ROOT / ".config" / "dotnet-tools.json"
TIMEOUT_S = 300
# No telemetry prompt or upload from the kernel or the dotnet host it starts.
QUIET_ENV = {"DOTNET_INTERACTIVE_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_CLI_TELEMETRY_OPTOUT": "1",
             "DOTNET_NOLOGO": "1"}  # fmt: skip
# The kernel hosts an ASP.NET Core server whose start-up lines ("Now listening on", "Content
# root path") would land in the terminal of every run; its warnings and errors still do.
KERNEL_ENV = {**QUIET_ENV, "Logging__LogLevel__Default": "Warning"}


def pinned_version(manifest: Path = MANIFEST) -> str:
    return json.loads(Path(manifest).read_text())["tools"][PACKAGE]["version"]


def kernel_dir(prefix: str = sys.prefix) -> Path:
    """Where Jupyter run from this environment looks for the kernelspec (its data path)."""
    return Path(prefix) / "share" / "jupyter" / "kernels" / KERNEL


def _dotnet() -> str:
    dotnet = shutil.which("dotnet")
    if dotnet is None:
        raise ToolMissing("dotnet (.NET 10 SDK) is not on PATH: see README, Prerequisites")
    return str(Path(dotnet).resolve())


def _run(dotnet: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **QUIET_ENV}
    return subprocess.run([dotnet, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)  # fmt: skip


def restore_tool(dotnet: str, version: str) -> Path:
    """`dotnet tool restore` from the manifest; returns the tool's entry dll."""
    done = _run(dotnet, "tool", "restore")
    if done.returncode != 0:
        lines = [ln.strip() for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
        why = next((ln for ln in lines if PACKAGE in ln.lower()), lines[-1] if lines else "")
        raise ToolMissing(f"Microsoft.dotnet-interactive {version} (dotnet tool restore: {why})")
    listed = _run(dotnet, "nuget", "locals", "global-packages", "--list").stdout
    packages = Path(listed.split(":", 1)[1].strip())  # "global-packages: /root/.nuget/packages/"
    # The tool's DotnetToolSettings.xml names its entry point (tools/<tfm>/any/).
    for settings in sorted(
        (packages / PACKAGE / version / "tools").glob("*/any/DotnetToolSettings.xml")
    ):
        command = ET.parse(settings).getroot().find("./Commands/Command")
        if command is not None:
            return settings.parent / command.get("EntryPoint")
    raise ToolMissing(
        f"Microsoft.dotnet-interactive {version}: restored, but not found in {packages}"
    )


def kernelspec(dotnet: str, entry_dll: Path) -> dict:
    """The tool's own C# kernelspec, started by path instead of as `dotnet interactive`."""
    # --http-local-only: the kernel's HTTP service (for rich output in a browser) listens on
    # loopback only, not on every interface as by default.
    argv = [dotnet, str(entry_dll), "jupyter", "--default-kernel", "csharp", "{connection_file}",
            "--http-port-range", "2048-3000", "--http-local-only"]  # fmt: skip
    return {"argv": argv, "display_name": ".NET (C#)", "language": "C#", "env": KERNEL_ENV}


def install(prefix: str = sys.prefix) -> Path:
    """Restore the pinned tool and write the kernelspec (unchanged if already right)."""
    version = pinned_version()
    dotnet = _dotnet()
    entry = restore_tool(dotnet, version)
    spec = json.dumps(kernelspec(dotnet, entry), indent=2) + "\n"
    path = kernel_dir(prefix) / "kernel.json"
    if not path.exists() or path.read_text() != spec:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(spec)
    else:
        path.touch()  # newer than the manifest: make knows it is done
    return path


def main() -> int:
    try:
        path = install()
    except (HostbenchError, subprocess.TimeoutExpired) as e:
        # One line; setup goes on: the studies run without the C# tour.
        print(f"C# notebook kernel {KERNEL} not installed, missing: {e}", file=sys.stderr)
        return 0
    print(f"{KERNEL} kernel (Microsoft.dotnet-interactive {pinned_version()}): {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
