"""The runtime variants beside the runtimes axis (runtimes.py): how the test app is compiled
(JIT, or Native AOT) and which garbage collector it runs with, each declared once as data.

A variant is three parts, each declared below once: a build (BUILDS: which app, compiled how),
a GC setting (GC_SETTINGS: the environment that asks the runtime for it) and a runtime (a
target framework of runtimes.RUNTIMES). Its name joins the parts that are not the default
("aot", "aot-datas", "jit-workstationgc-net8", "servergc"), so a run key stays parseable (no
'.'), and its label says them in words. What it records is what the running app reports (GET
/__transport's build and gc), not what it was asked for.

Native AOT cannot compile MVC controllers or Razor views: the AOT build is testapp/aot, the
endpoints AOT can serve on minimal APIs (text, json, plaintext, hello-json, values), answering
as the test app does. Its `jit` build is the same source JIT-compiled, so AOT is compared with
like. A scenario a variant's app does not serve is refused by name (check_serves) before
anything starts. What a build needs that this machine may lack (clang and lld, a NuGet
package) is named in one line too (check_buildable, publish_failure).
"""

import itertools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .catalog import TLS_IN_SERVER
from .errors import BadInput
from .paths import BUILD, ROOT
from .runtimes import DEFAULT_RUNTIME, RUNTIMES, variant_name

AOT_SOURCES = ROOT / "testapp" / "aot"  # TestAppAot.csproj
TESTAPP_SOURCES = ROOT / "testapp" / "dotnet"
# The scenarios testapp/aot serves: the test app's endpoints that need no MVC and no reflection.
AOT_SCENARIOS = ("text", "json", "plaintext", "hello-json", "values")


@dataclass(frozen=True)
class Build:
    """One app compiled one way: its sources, its executable, how it is published."""

    name: str  # its part of a variant name; "" for the test app as the runtimes axis builds it
    kind: str  # "jit" or "aot", as the app reports it (GET /__transport's build)
    app: str  # the app it builds, in words: "minimal APIs" (testapp/aot), "TestApp"
    sources: Path
    executable: str
    serves: tuple[str, ...]  # the scenarios its app has; () the test app: every one
    # What cannot be served, in the words a refusal gives.
    why_not: str = ""
    # The runtimes it builds for ("where it builds"): Native AOT needs the ILCompiler package
    # of that runtime from NuGet, and clang and lld to link.
    runtimes: tuple[str, ...] = RUNTIMES

    @property
    def label(self) -> str:
        """As a reader names it: "minimal APIs, Native AOT"; the test app by its name alone."""
        return f"{self.app}, {COMPILED[self.kind]}" if self.name else self.app


COMPILED = {"jit": "JIT", "aot": "Native AOT"}  # a build's kind, in words

BUILDS: dict[str, Build] = {
    b.name: b
    for b in (
        Build("", "jit", "TestApp", TESTAPP_SOURCES, "TestApp", ()),
        Build("jit", "jit", "minimal APIs", AOT_SOURCES, "TestAppAot", AOT_SCENARIOS,
              why_not="its app (testapp/aot) has the endpoints Native AOT can serve, no MVC"),
        Build("aot", "aot", "minimal APIs", AOT_SOURCES, "TestAppAot",
              AOT_SCENARIOS,
              why_not="Native AOT compiles no MVC controllers or Razor views (testapp/aot has "
                      "the endpoints it can serve)"),
    )
}  # fmt: skip


@dataclass(frozen=True)
class GcSetting:
    """A garbage-collector setting, as the app's environment asks the runtime for it."""

    name: str  # its part of a variant name; "" the build's own default
    reported: str  # what GET /__transport's gc then says: workstation, server or datas
    label: str
    env: dict[str, str]


# ASP.NET Core apps run server GC by default (the Web SDK's ServerGarbageCollector), and from
# .NET 9 server GC adapts its heap count to the load (DATAS: dynamic adaptation to application
# sizes; opt-in on .NET 8): so plain server GC turns DATAS off, and DATAS is asked for on every
# runtime alike.
GC_SETTINGS: dict[str, GcSetting] = {
    g.name: g
    for g in (
        GcSetting("", "", "", {}),
        GcSetting("servergc", "server", "server GC",
                  {"DOTNET_gcServer": "1", "DOTNET_GCDynamicAdaptationMode": "0"}),
        GcSetting("workstationgc", "workstation", "workstation GC", {"DOTNET_gcServer": "0"}),
        GcSetting("datas", "datas", "DATAS",
                  {"DOTNET_gcServer": "1", "DOTNET_GCDynamicAdaptationMode": "1"}),
    )
}  # fmt: skip


@dataclass(frozen=True)
class RuntimeVariant:
    """The test app of one build, on one runtime, with one GC setting."""

    build: Build
    gc: GcSetting
    runtime: str  # a target framework of runtimes.RUNTIMES

    @property
    def name(self) -> str:
        """As run keys and results.csv's variant column name it: "aot-datas-net8"."""
        suffix = "" if self.runtime == DEFAULT_RUNTIME else variant_name(self.runtime)
        return "-".join(p for p in (self.build.name, self.gc.name, suffix) if p)

    @property
    def label(self) -> str:
        """As a reader names it: "minimal APIs, Native AOT, DATAS, .NET 8"."""
        net = f".NET {variant_name(self.runtime).removeprefix('net')}"
        return ", ".join(p for p in (self.build.label, self.gc.label, net) if p)

    @property
    def env(self) -> dict[str, str]:
        """What its launch adds to the app's environment."""
        return dict(self.gc.env)

    @property
    def serves(self) -> tuple[str, ...]:
        return self.build.serves

    @property
    def executable(self) -> Path:
        """The build a launch runs (published by publish_argv)."""
        return build_dir(self) / self.build.executable


def _declared() -> dict[str, RuntimeVariant]:
    """Every combination of the parts but the plain test app on a runtime (the runtimes axis)."""
    made = (
        RuntimeVariant(b, g, r)
        for b, g, r in itertools.product(BUILDS.values(), GC_SETTINGS.values(), RUNTIMES)
        if (b.name or g.name) and r in b.runtimes
    )
    return {v.name: v for v in made}


VARIANTS: dict[str, RuntimeVariant] = _declared()


def get_variant(name: str) -> RuntimeVariant:
    """The variant of that name; BadInput lists the allowed ones."""
    try:
        return VARIANTS[name]
    except KeyError:
        allowed = ", ".join(VARIANTS)
        raise BadInput(f"unknown runtime variant {name!r}; allowed: {allowed}") from None


def check_serves(variant: RuntimeVariant, scenario: str) -> None:
    """BadInput, naming the scenario and why, when the variant's app does not serve it."""
    if variant.serves and scenario not in variant.serves:
        serves = ", ".join(variant.serves)
        raise BadInput(f"runtime variant {variant.name!r} cannot serve scenario {scenario!r}: "
                       f"{variant.build.why_not}; it serves {serves}")  # fmt: skip


def check_mode(variant: RuntimeVariant, mode) -> None:
    """BadInput when `mode` (a catalog Mode) cannot run the variant: it launches no test app,
    or asks the app for options only the MVC app has (--mvc, --server)."""
    if mode.server != "TestApp" or mode.launch == "external":
        runs = mode.server if mode.launch != "external" else "a server you started"
        raise BadInput(f"runtime variant {variant.name!r} is the test app's; mode {mode.id!r} "
                       f"runs {runs}")  # fmt: skip
    if variant.build.serves and mode.server_args:
        raise BadInput(f"runtime variant {variant.name!r}: mode {mode.id!r} asks the app for "
                       f"{' '.join(mode.server_args)}, which {variant.build.executable} does not "
                       "have (no MVC); run it under kestrel or a proxy mode")  # fmt: skip
    if variant.build.serves and mode.tls == TLS_IN_SERVER:  # testapp/aot: a slim host
        raise BadInput(f"runtime variant {variant.name!r}: mode {mode.id!r} has the app serve "
                       f"HTTPS, which {variant.build.executable}'s slim host does not set up; "
                       "run it behind a proxy that terminates TLS (nginx-tls, ...)")  # fmt: skip


def check_env(variant: RuntimeVariant, app_env: dict[str, str]) -> None:
    """BadInput when the study's app_env sets what the variant's GC setting sets."""
    both = sorted(set(variant.env) & set(app_env))
    if both:
        raise BadInput(f"runtime variant {variant.name!r} sets {', '.join(both)}; params key "
                       "app_env sets it too: leave it to the variant")  # fmt: skip


def build_dir(variant: RuntimeVariant, root: Path | None = None) -> Path:
    """The folder its build is published to, under `root` (default build/): the runtimes
    axis's self-contained build for the test app (build/testapp-<runtime>/, runtimes.build_of),
    else build/testappaot-<build>-<runtime>/ (one for every GC setting: they differ in env)."""
    root = BUILD if root is None else root
    if not variant.build.name:
        return root / f"testapp-{variant.runtime}"
    return root / f"testappaot-{variant.build.name}-{variant.runtime}"


def publish_argv(variant: RuntimeVariant, out: Path | None = None) -> list[str]:
    """The `dotnet publish` command line that makes its build, into `out` (default build_dir).
    Self-contained for the runtime's own pack, JIT or AOT alike; TargetFrameworks (not -f
    alone) makes restore resolve another runtime's packs (runtimes.publish_args)."""
    out = out or build_dir(variant)
    compile_as = ["-p:PublishAot=true"] if variant.build.kind == "aot" else ["--self-contained"]
    return ["dotnet", "publish", str(variant.build.sources), "-c", "Release",
            "-f", variant.runtime, f"-p:TargetFrameworks={variant.runtime}",
            "--use-current-runtime", *compile_as, "-o", str(out), "--nologo"]  # fmt: skip


# What a Native AOT publish links the native code with on Linux (the ILCompiler package calls
# clang, which links with lld); Debian names the packages that have them.
AOT_LINKERS = ("clang", "ld.lld")
# The Debian packages a Native AOT publish links with (the install script and the Dockerfile
# install them: hostbench/packages.py's group `build`).
AOT_LINK_PACKAGES = ("clang", "lld", "zlib1g-dev")
AOT_PACKAGES = f"apt-get install {' '.join(AOT_LINK_PACKAGES)}"
# How NuGet's restore says a package is missing (NU1101: none of that id in the sources,
# NU1102: none of that version), naming the package.
MISSING_PACKAGE = re.compile(r"error (NU1101|NU1102): .*?package ([A-Za-z0-9_.-]+?)\.? ")


def check_buildable(variant: RuntimeVariant) -> None:
    """BadInput, naming what is missing, when this machine cannot link the variant's build
    (a Native AOT one without clang or lld); before anything is published or measured."""
    if variant.build.kind != "aot":
        return
    lacking = [tool for tool in AOT_LINKERS if shutil.which(tool) is None]
    if lacking:
        raise BadInput(f"runtime variant {variant.name!r} cannot be built here: Native AOT "
                       f"links with clang and lld, and {', '.join(lacking)} is not on PATH "
                       f"({AOT_PACKAGES})")  # fmt: skip


def publish_failure(variant: RuntimeVariant, output: str) -> str:
    """Why `dotnet publish` (its output) could not make the variant's build, in one line, when
    its restore named a package NuGet did not give (for Native AOT the ILCompiler package of
    the runtime first); "" when it names none."""
    missing = [(m[1], m[2]) for m in MISSING_PACKAGE.finditer(output)]
    if not missing:
        return ""
    code, package = next((m for m in missing if "ILCompiler" in m[1]), missing[0])
    return (f"runtime variant {variant.name!r} cannot be built here: NuGet gave no {package} "
            f"for {variant.runtime} (dotnet restore: {code}); its build needs that package from "
            "nuget.org or a feed that has it")  # fmt: skip


def reported_matches(variant: RuntimeVariant, transport: dict) -> str:
    """ "" when the app's GET /__transport says it runs the build and GC the variant asked
    for; else what differs, in one line."""
    wrong = []
    if transport.get("build") != variant.build.kind:
        wrong.append(f"build {transport.get('build')!r}, not {variant.build.kind!r}")
    if variant.gc.reported and transport.get("gc") != variant.gc.reported:
        wrong.append(f"GC {transport.get('gc')!r}, not {variant.gc.reported!r}")
    return f"runtime variant {variant.name!r} runs {'; '.join(wrong)}" if wrong else ""


def markdown() -> str:
    """The variants as a table (name, build, GC, runtime, scenarios), from the declarations."""
    lines = ["| variant | build | GC | runtime | scenarios |", "|---|---|---|---|---|"]
    for v in VARIANTS.values():
        gc = v.gc.label or "the build's default"
        serves = ", ".join(v.serves) or "all"
        lines.append(f"| `{v.name}` | {v.build.label} | {gc} | {v.runtime} | {serves} |")
    return "\n".join(lines) + "\n"
