"""What a study notebook calls to measure: its params, its run folder, the study itself.

The notebook's parameters are the study and profile (and, from papermill, the
validated params whole); everything else comes from studies/<study>/params/<profile>.yaml,
so no profile's values are written twice. The analysis then reads the results.
"""

import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from ..catalog import get_scenario
from ..errors import BadInput, HostbenchError
from ..params import StudyParams, check_run_id
from ..paths import ROOT, RUNS
from ..runtime_variants import check_buildable, get_variant, publish_argv, publish_failure
from ..runtimes import build_of, publish_args
from ..studies import DEFINITION, get_study, study_of
from .launch import netns
from .launch.modes import LaunchOptions, launch
from .measure.checks import validate
from .preflight import check_runnable
from .study import run_study

APP_SOURCES = ROOT / "testapp" / "dotnet"


def _newest_source(*folders: Path) -> float:
    """The mtime of the newest source file of the app in `folders` (bin/ and obj/ left out)."""
    kinds = (".cs", ".cshtml", ".csproj", ".json")
    return max(
        (p.stat().st_mtime for folder in folders for p in folder.rglob("*")
         if p.suffix in kinds and "bin" not in p.parts and "obj" not in p.parts),
        default=0.0,
    )  # fmt: skip


def _publish(argv: list[str], app: Path, newest: float, which: str,
             explain=lambda output: "") -> Path:  # fmt: skip
    """`app`, published by argv when it is missing or older than `newest`; a failure `explain`
    finds the reason of in the output (a package NuGet did not give) is BadInput."""
    if app.exists() and app.stat().st_mtime >= newest:
        return app
    print(f"publishing the test app{which} (dotnet publish, about a minute) ...", flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        if why := explain(done.stdout + done.stderr):
            raise BadInput(why)
        last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
        raise HostbenchError(f"dotnet publish{which} failed ({done.returncode}): {last[0]}")
    app.touch()
    return app


@cache
def ensure_testapp(runtime: str | None = None) -> Path:
    """Publish the test app when its build is missing or older than its sources: `make
    setup`'s build (runtime None), or a runtime's self-contained one (hostbench/runtimes.py).

    `make setup` does the default; this lets a notebook opened on its own in Jupyter
    build what it launches, and a study comparing runtimes build each on demand. Once per
    process and runtime: a study and its sub-studies measure the build the notebook started
    with, even when the sources are edited while it measures.
    """
    argv = ["dotnet", "publish", str(APP_SOURCES), *publish_args(runtime), "--nologo",
            "-v", "quiet"]  # fmt: skip
    which = f" for {runtime}" if runtime else ""
    return _publish(argv, build_of(runtime), _newest_source(APP_SOURCES), which)


@cache
def ensure_variant(name: str) -> Path:
    """Publish a runtime variant's build (hostbench/runtime_variants.py) when it is missing or
    older than its sources, as ensure_testapp does a runtime's; once per process and variant.
    A Native AOT build takes about a minute and a half and links with clang and lld."""
    variant = get_variant(name)
    check_buildable(variant)  # clang and lld, before a minute's restore and compile
    folders = {variant.build.sources, APP_SOURCES}  # testapp/aot compiles shared files of it
    which = f" for runtime variant {variant.name}"
    return _publish([*publish_argv(variant), "-v", "quiet"], variant.executable,
                    _newest_source(*folders), which,
                    lambda output: publish_failure(variant, output))  # fmt: skip


def ensure_builds(params: StudyParams) -> None:
    """Every build the study's runs launch, published before it measures: each runtime's
    (params key runtimes) and each runtime variant's (runtime_variants); BadInput names what
    this machine lacks to make one. (A sub-study's run publishes its own, StudyRun.measure.)"""
    for runtime in params.runtime_builds:
        ensure_testapp(runtime)
    for name in params.variant_builds:
        ensure_variant(name)


@dataclass
class StudyRun:
    """One study's run folder and params, as a notebook's parameters give them."""

    study: str
    profile: str
    run_id: str
    runs_dir: Path = RUNS
    params: StudyParams = field(default=None)
    # Why this sub-study does not run where its study runs (over ssh: one about one machine);
    # "" when it runs. A skipped one has no params and measures nothing.
    skipped: str = ""

    @classmethod
    def from_parameters(
        cls, study: str, profile: str, params: dict | None, run_id: str, runs_dir: str = ""
    ) -> "StudyRun":
        """params: the params `reproduce` validated and checked runnable (to_dict's), taken as
        they are; or None to read, validate and check the profile's file here. study "": the
        study whose folder the notebook runs in (a reader's Jupyter, papermill: its own
        folder), so a study's notebook, copied with its folder under a new id, names the new
        study with no edit; run_id "": `<study>-notebook`."""
        # The notebook names no study of its own: the folder is the study (studies.study_of).
        study = study or study_of(Path.cwd() / DEFINITION).id
        run_id = run_id or f"{study}-notebook"
        if params:
            parsed = StudyParams.from_validated(params)
        else:
            parsed = check_runnable(StudyParams.from_file(get_study(study).params_path(profile)))
        return cls(study, profile, check_run_id(run_id), Path(runs_dir or RUNS), parsed)

    @property
    def out_dir(self) -> Path:
        return self.runs_dir / self.run_id

    @property
    def analysis(self):
        """The study's own analysis module (its folder's analysis.py)."""
        return get_study(self.study).analysis

    def show(self, fig, name: str, alt: str | None = None, caption: str | None = None):
        """Save a figure as figures/<name>.png and .svg in the run folder; return it as the
        page shows it, where it is made: an image whose alt text is `alt`, by default the
        figure's own title and note (figure_words.alt_text), above its caption, `caption` (what
        the figure shows, computed from the data), by default that title and note."""
        from ..analysis.figure_output import FigureImage, save_figure

        save_figure(fig, self.out_dir / "figures", name)
        return FigureImage(fig, alt, caption)

    def sub_run(self, name: str) -> "StudyRun":
        """A sub-study of this one (params key sub_studies), in its own run folder; one that is
        skipped where this study runs (over ssh: one about one machine) measures nothing."""
        run_id = check_run_id(f"{self.run_id}-{name}")
        if skipped := self.params.sub_studies_skipped.get(name, ""):
            return StudyRun(self.study, self.profile, run_id, self.runs_dir, None, skipped)
        return StudyRun(self.study, self.profile, run_id, self.runs_dir,
                        self.params.sub_study(name))  # fmt: skip

    def sub_study_missing(self, name: str) -> str:
        """Why sub-study `name` has no results, as the report says it after "The `name`
        sub-study": not in this profile, skipped where the study ran (and why), or not run on
        this machine (its measurement cell said why)."""
        if name not in self.params.sub_studies:
            return "is not in this profile"
        if skipped := self.params.sub_studies_skipped.get(name):
            return f"was {skipped}"
        return "did not run on this machine (the measurement cell above says why)"

    def measure(self, progress: bool = False) -> Path | None:
        """Run (or resume) the study; returns results.csv. Progress goes to the log.

        None, with one printed line, for a study this machine cannot run as asked: two hosts
        (topology netns) without the right to make network namespaces, or a sub-study skipped
        where its study runs. The notebook's section on it then says it did not run."""
        if self.skipped:
            print(f"{self.run_id}: not run: {self.skipped}")
            return None
        if self.params.topology == "netns" and (reason := netns.not_allowed()):
            print(f"{self.run_id}: not run: {reason}")
            return None
        ensure_testapp()
        ensure_builds(self.params)
        return run_study(self.params, self.run_id, self.runs_dir, progress=progress,
                         study=self.study)  # fmt: skip


def sample_responses(scenarios: list[str], run_dir: Path, excerpt: int = 160) -> pd.DataFrame:
    """One real response per scenario from the test app on Kestrel, validated."""
    ensure_testapp()
    rows = []
    with launch("kestrel", run_dir, LaunchOptions()) as target:
        for name in scenarios:
            scenario = get_scenario(name)
            response = target.get(scenario.path)
            validate(scenario, response)
            body = " ".join(response.text.split())
            rows.append(
                (name, scenario.path, response.content_type, len(response.body),
                 body[:excerpt] + ("..." if len(body) > excerpt else ""))
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["scenario", "path", "content type", "bytes", "body"])
