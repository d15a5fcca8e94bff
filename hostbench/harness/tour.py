"""The C# tour (notebooks/00-testapp-tour.ipynb) with or without .NET Interactive.

One source, two runners. Where the `.net-csharp` Jupyter kernel is installed, papermill
runs the notebook on it. Where it is not (.NET Interactive is deprecated upstream and
absent from this package's NuGet source: docs/dotnet-interactive.md), the notebook's code
cells become a .NET 10 file-based app, in order:

    #:project <abs path>/testapp/dotnet/TestApp.csproj  (for the `#r` of TestApp.dll)
    #:property PublishAot=false                         (and the app's server GC)
    using ...;                                          (all cells': C# wants them first)
    the parameters cell, minus the names papermill-style parameters override,
    papermill's own C# translation of those parameters (`var name = value;`),
    the other code cells,

and `dotnet run -c Release <file>` builds and runs it. Either way app_work.csv lands in the
run folder.

    python -m hostbench.harness.tour --out DIR [-p name=value ...] [--program FILE]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, HostbenchError, ToolMissing
from ..paths import BUILD, NOTEBOOKS, ROOT
from .processes import ManagedProcess

NOTEBOOK = NOTEBOOKS / "00-testapp-tour.ipynb"
KERNEL = ".net-csharp"
LANGUAGE = "C#"
PROJECT = ROOT / "testapp" / "dotnet" / "TestApp.csproj"
PROGRAM = BUILD / "tour" / "tour.cs"
CSV_NAME = "app_work.csv"
OUTPUT_NAME = "00-testapp-tour.txt"  # the file-based run's console output, in the run folder
TIMEOUT_S = 600

# `using System.Text;`, `using static System.Math;`, `using Json = System.Text.Json;`;
# not `using var x = ...;` or `using (...)`, which are statements.
_USING = re.compile(
    r"^\s*(global\s+)?using\s+(static\s+)?(\w+\s*=\s*)?[\w.]+(<[\w.<>, ]*>)?\s*;\s*$"
)
_DECLARATION = re.compile(r"^\s*var\s+(\w+)\s*=")
_REFERENCE = re.compile(r'^\s*#r\s+"([^"]+)"\s*$')
_NUGET = re.compile(r"^nuget:\s*([\w.-]+)\s*(?:,\s*([\w.*+-]+))?\s*$")


@dataclass
class TourRun:
    runner: str  # "papermill" or "dotnet run"
    csv: Path
    output: str  # what the program printed (file-based) or the executed notebook's path
    wall_s: float


def csharp_parameters(parameters: dict) -> str:
    """The cell papermill injects for `parameters` on the .net-csharp kernel, verbatim.

    Refuses non-ASCII strings: papermill writes them as Python's `\\xNN`, which C# reads
    with up to four hex digits ("óa" would become U+0F3A).
    """
    from papermill.translators import translate_parameters

    for name, value in parameters.items():
        if isinstance(value, str) and not value.isascii():
            raise BadInput(f"tour parameter {name}={value!r}: C# parameters must be ASCII")
    return translate_parameters(KERNEL, LANGUAGE, parameters)


def _cells(notebook: Path) -> list[dict]:
    nb = json.loads(Path(notebook).read_text())
    kernel = nb.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel != KERNEL:
        raise BadInput(f"{notebook} is for kernel {kernel!r}, not {KERNEL!r}")
    code = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = cell["source"]
        code.append(
            {
                "source": source if isinstance(source, str) else "".join(source),
                "parameters": "parameters" in cell.get("metadata", {}).get("tags", []),
            }
        )
    if sum(c["parameters"] for c in code) != 1:
        raise BadInput(f"{notebook} needs exactly one code cell tagged `parameters`")
    return code


def _translate_line(line: str) -> str | None:
    """A notebook-only line as the program's directive; None to drop it; else unchanged."""
    stripped = line.strip()
    if stripped.startswith("#!"):  # .NET Interactive magics (#!csharp, #!time, ...)
        return None
    if stripped.startswith("#i "):  # a package source for #r "nuget:"
        return None
    ref = _REFERENCE.match(line)
    if ref:
        target = ref.group(1)
        nuget = _NUGET.match(target)
        if nuget:
            name, version = nuget.groups()
            return f"#:package {name}@{version}" if version else f"#:package {name}"
        if Path(target).name == "TestApp.dll":
            return None  # the program references the project instead
        raise BadInput(f"cannot translate `{stripped}`: only TestApp.dll and nuget: references")
    return line


def generate_program(
    notebook: Path = NOTEBOOK,
    parameters: dict | None = None,
    out: Path = PROGRAM,
    project: Path = PROJECT,
) -> Path:
    """Write the notebook's code cells as a file-based app at `out`; returns its path."""
    parameters = dict(parameters or {})
    cells = _cells(notebook)
    declared = {
        m.group(1)
        for c in cells
        if c["parameters"]
        for m in map(_DECLARATION.match, c["source"].splitlines())
        if m
    }
    unknown = sorted(set(parameters) - declared)
    if unknown:
        allowed = ", ".join(sorted(declared))
        raise BadInput(f"unknown tour parameter(s) {', '.join(unknown)}; allowed: {allowed}")

    directives = [
        f"#:project {Path(project).resolve()}",
        "#:property PublishAot=false",
        # The published app's runtime settings (its runtimeconfig.json; the Web SDK's
        # default server GC), so the payloads are timed under the same garbage collector.
        "#:property ServerGarbageCollection=true",
        "#:property InvariantGlobalization=true",
    ]
    usings: list[str] = []
    body: list[str] = []
    for number, cell in enumerate(cells, 1):
        lines = []
        for line in cell["source"].splitlines():
            line = _translate_line(line)
            if line is None:
                continue
            if line.startswith("#:"):
                if line not in directives:
                    directives.append(line)
            elif _USING.match(line):
                if line.strip() not in usings:
                    usings.append(line.strip())
            elif (
                cell["parameters"] and (m := _DECLARATION.match(line)) and m.group(1) in parameters
            ):
                lines.append(f"// {line.strip()}  (overridden below)")
            else:
                lines.append(line)
        kind = " (parameters)" if cell["parameters"] else ""
        body.append(f"// ---- code cell {number}{kind} ----")
        body.extend(lines)
        if cell["parameters"] and parameters:
            body.append("// ---- injected parameters (papermill's C# form) ----")
            body.extend(csharp_parameters(parameters).splitlines())
    header = f"// Generated by hostbench/harness/tour.py from {Path(notebook).name}: do not edit."
    text = "\n".join([*directives, header, *usings, "", *body]) + "\n"
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text() != text:  # unchanged: dotnet reuses its build
        out.write_text(text)
    return out


def run_program(program: Path, cwd: Path, log: Path, timeout_s: float = TIMEOUT_S) -> str:
    """`dotnet run -c Release <program>` in `cwd`, output into `log`; returns the output.

    A ManagedProcess (hostbench/processes.py): its own process group, stopped with
    everything it started (the built program, build nodes) on return, error or timeout.
    """
    if shutil.which("dotnet") is None:
        raise ToolMissing("dotnet (.NET 10 SDK) is not on PATH: see README, Prerequisites")
    env = dict(os.environ, DOTNET_NOLOGO="1", DOTNET_CLI_TELEMETRY_OPTOUT="1")
    cmd = ["dotnet", "run", "-c", "Release", "--file", str(program)]
    with ManagedProcess("tour", cmd, log, env=env, cwd=cwd) as proc:
        try:
            code = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise HostbenchError(
                f"{program.name}: no result within {timeout_s:.0f} s; output so far in {log}"
            ) from None
    output = Path(log).read_text(errors="replace")
    if code != 0:
        tail = "\n".join(output.splitlines()[-30:])
        raise HostbenchError(f"{' '.join(cmd)} exited with {code}:\n{tail}")
    return output


def run_file_based(
    out_dir: Path,
    parameters: dict | None = None,
    program: Path = PROGRAM,
    timeout_s: float = TIMEOUT_S,
    notebook: Path = NOTEBOOK,
) -> TourRun:
    """The tour without .NET Interactive: app_work.csv and the output go into `out_dir`.

    The program runs in `out_dir`, so the notebook's default runDir ("" = the current
    directory) is `out_dir` and the program's text does not depend on it: the same
    parameters reuse the last build.
    """
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    parameters = dict(parameters or {})
    t0 = time.monotonic()
    program = generate_program(notebook, parameters, Path(program).resolve())
    output = run_program(program, out_dir, out_dir / OUTPUT_NAME, timeout_s)
    csv = out_dir / str(parameters.get("runDir", "")) / CSV_NAME  # a relative runDir: in out_dir
    if not csv.exists():
        raise HostbenchError(f"the tour ran but wrote no {csv}")
    return TourRun("dotnet run", csv, output, time.monotonic() - t0)


def run_in_batch(
    out_dir: Path,
    execute: Callable[[Path, Path, dict, str, int], None],
    kernel_available: Callable[[str], bool],
    parameters: dict | None = None,
    program: Path = PROGRAM,
) -> TourRun:
    """`make reproduce`'s tour: papermill on the kernel if installed, else the file-based app.

    `execute(src, dst, parameters, kernel, timeout_s)` and `kernel_available(name)` are
    reproduce.py's. Prints one line saying which runner ran.
    """
    out_dir = Path(out_dir).resolve()
    parameters = dict(parameters or {})
    if kernel_available(KERNEL):
        t0 = time.monotonic()
        executed = out_dir / NOTEBOOK.name
        # papermill runs the kernel in notebooks/ (for the #r path): runDir says where to write.
        run_dir = out_dir / str(parameters.get("runDir", ""))
        execute(NOTEBOOK, executed, {**parameters, "runDir": str(run_dir)}, KERNEL, TIMEOUT_S)
        run = TourRun("papermill", run_dir / CSV_NAME, str(executed), time.monotonic() - t0)
        how = f"papermill on the {KERNEL} kernel"
    else:
        run = run_file_based(out_dir, parameters, program)
        how = f"dotnet run (file-based app; no {KERNEL} kernel here), output in {OUTPUT_NAME}"
    print(f"{NOTEBOOK.name}: ran with {how}; {CSV_NAME} in {run.wall_s:.0f} s", flush=True)
    return run


def _parameter(text: str) -> tuple[str, object]:
    """`name=value`: value as JSON when it parses (2000, 0.5, true), else a string."""
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"\w+", name):
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m hostbench.harness.tour", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--out", type=Path, default=Path.cwd(), help="folder for app_work.csv")
    ap.add_argument(
        "-p",
        "--parameter",
        type=_parameter,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a notebook parameter, as papermill's -p",
    )
    ap.add_argument("--program", type=Path, default=PROGRAM, help="where to write the program")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds (build + run)")
    args = ap.parse_args(argv)
    try:
        run = run_file_based(args.out, dict(args.parameter), args.program, args.timeout)
    except HostbenchError as e:
        print(f"tour: {e}", file=sys.stderr)
        return 2 if isinstance(e, BadInput) else 1
    print(run.output, end="")
    print(f"tour: {run.csv} ({run.runner}, {run.wall_s:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
