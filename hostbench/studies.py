"""The studies, found as folders: studies/<id>/ with a study.yaml is a study.

Everything that is one study's alone lives in its folder (docs/adding-a-study.md):
study.yaml (its definition, below), params/<profile>.yaml (at least `paper` and
`quick`), its notebook, analysis.py (loaded by `Study.analysis`), reference/
(its article's published numbers and settings, with quotes), fixtures/, README.md
and its tests. Nothing else names a study, not even the default one (its study.yaml
says `default: true`): adding one is copying a folder.
"""

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

import yaml

from .errors import BadInput
from .paths import STUDIES_DIR

if TYPE_CHECKING:  # the hooks' annotations only: discovering studies imports no pandas
    import pandas as pd

DEFINITION = "study.yaml"
# The keys of study.yaml: each one's meaning is the field's comment in Study.
_REQUIRED = ("title", "article", "citation", "notebook")
_OPTIONAL = ("url", "runs_tour", "figures", "default", "paper_run", "halfwidth_goals")
# A study's modules are imported under this name: one package per study folder.
_PACKAGE = "hostbench_studies"


@dataclass(frozen=True)
class Study:
    id: str  # the folder's name
    folder: Path
    title: str
    # The file name of the maintainers' copy of the article's text, as published: outside the
    # package (a reader's clone has none), named in the reference files' `source_file` and read
    # by the tests that quote it where that copy is present. A reader gets `citation` and `url`.
    article: str
    citation: str  # who wrote it, where, when: one line for the report and the README
    notebook: str  # the notebook's file name in the folder
    url: str = ""  # the article's public address, where its text names one ("": none known)
    runs_tour: bool = False  # run the C# tour first: its app_work.csv splits the server's CPU
    figures: tuple[str, ...] = field(default=())  # figures/<name>.png its report must show
    default: bool = False  # the study `make reproduce` runs when none is named (one study)
    # Its committed paper run's folder under data/runs (default: example-<id>-paper).
    paper_run: str = ""
    # (mode, %): the 95% half-width it aims at for that mode's ratios to the run's baseline,
    # tighter than the package's goal for every ratio (analysis/findings.py); none: that goal.
    halfwidth_goals: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        if not self.paper_run:
            object.__setattr__(self, "paper_run", f"example-{self.id}-paper")

    @property
    def claims_run(self) -> str:
        """Its committed claims run's folder under data/runs (its claims profile's example)."""
        return f"example-{self.id}-claims"

    @property
    def scope_run(self) -> str:
        """Its committed scope run's folder under data/runs (the claims profile, then the
        sub-studies that judge its claims again); until one is measured, the claims run's
        sub-studies, measured with the claims profile before it left them, stand for it."""
        return f"example-{self.id}-scope"

    @property
    def params_dir(self) -> Path:
        return self.folder / "params"

    @property
    def notebook_path(self) -> Path:
        return self.folder / self.notebook

    @property
    def reference_dir(self) -> Path:
        return self.folder / "reference"

    @property
    def fixtures_dir(self) -> Path:
        return self.folder / "fixtures"

    def profiles(self) -> list[str]:
        return sorted(p.stem for p in self.params_dir.glob("*.yaml"))

    @property
    def available(self) -> bool:
        """Its notebook and params exist (a folder being written may lack them)."""
        return self.notebook_path.is_file() and bool(self.profiles())

    def params_path(self, profile: str) -> Path:
        """A profile's params file: a name in the study's params/ folder (paper, quick, ...),
        or the path of a params file of the reader's own (`is_params_file`), such as one that
        extends quick over ssh beside a copy of that folder."""
        allowed = ", ".join(self.profiles()) or "none yet"
        path = Path(profile).expanduser() if is_params_file(profile) else (
            self.params_dir / f"{profile}.yaml")  # fmt: skip
        if not path.is_file():
            raise BadInput(f"study {self.id!r} has no profile {profile!r}; allowed: {allowed}, "
                           "or the path of a params file (.yaml)")  # fmt: skip
        return path

    @property
    def module_name(self) -> str:
        return f"{_PACKAGE}.{self.id.replace('-', '_')}"

    @property
    def analysis(self) -> ModuleType:
        """The folder's analysis.py, imported once as hostbench_studies.<id>.analysis."""
        return self.module("analysis")

    def hook(self, name: str):
        """The study's own version of one of HOOKS from its analysis.py, or None where it
        keeps the package's default."""
        if name not in HOOKS:
            raise BadInput(f"no study hook {name!r}; the hooks: {', '.join(HOOKS)}")
        return getattr(self.analysis, name, None)

    def module(self, name: str) -> ModuleType:
        """The folder's <name>.py (a study may split its code in several modules)."""
        return _import(self, name)

    @classmethod
    def from_folder(cls, folder: Path) -> "Study":
        path = folder / DEFINITION
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise BadInput(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
        if not isinstance(data, dict):
            raise BadInput(f"{path}: expected a mapping of {', '.join(_REQUIRED)}")
        unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
        missing = [k for k in _REQUIRED if not data.get(k)]
        if unknown or missing:
            what = "; ".join(
                [f"unknown key {k!r}" for k in unknown] + [f"missing {k!r}" for k in missing]
            )
            allowed = ", ".join((*_REQUIRED, *_OPTIONAL))
            raise BadInput(f"{path}: {what}; allowed: {allowed}")
        return cls(
            id=folder.name,
            folder=folder,
            title=str(data["title"]),
            article=str(data["article"]),
            citation=str(data["citation"]),
            notebook=str(data["notebook"]),
            url=str(data.get("url") or ""),
            runs_tour=bool(data.get("runs_tour", False)),
            figures=tuple(str(f) for f in data.get("figures") or ()),
            default=bool(data.get("default", False)),
            paper_run=str(data.get("paper_run") or ""),
            halfwidth_goals=_goals(path, data.get("halfwidth_goals")),
        )


class StudyHooks(Protocol):
    """What the package calls on a study's analysis.py, where the study defines it (each is
    optional: without it the package's default serves). tests/test_studies.py checks every
    study's against these signatures."""

    def claims(self, results: "pd.DataFrame", params, variants=None) -> "pd.DataFrame":
        """Its claims table (hostbench.analysis.claims): for what only the study knows, such
        as the other stand-ins for the article's comparator; default claims.judge."""

    def compared_ratios(self, results: "pd.DataFrame") -> "pd.DataFrame":
        """The ratios `compare` holds side by side (hostbench.analysis.compare) when they are
        not every mode to the run's baseline."""


HOOKS = tuple(n for n, v in vars(StudyHooks).items() if callable(v) and not n.startswith("_"))


def _goals(path: Path, raw) -> tuple[tuple[str, float], ...]:
    """study.yaml's halfwidth_goals, {mode: % > 0}, as (mode, %) pairs in its order."""
    if raw is None:
        return ()
    good = isinstance(raw, dict) and all(
        isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in raw.values()
    )
    if not good:
        raise BadInput(f"{path}: halfwidth_goals must map modes to a half-width in % above 0, "
                       f"e.g. {{kestrel: 2}}; got {raw!r}")  # fmt: skip
    return tuple((str(mode), float(pct)) for mode, pct in raw.items())


def is_params_file(profile: str) -> bool:
    """A profile given as a file's path (it ends in .yaml) rather than a profile's name."""
    return profile.endswith((".yaml", ".yml"))


def profile_name(profile: str) -> str:
    """The name a run is labelled with: the profile's, or its params file's stem."""
    return Path(profile).stem if is_params_file(profile) else profile


def discover(root: Path = STUDIES_DIR) -> dict[str, Study]:
    """Every folder under `root` with a study.yaml, ordered by notebook name (they are
    numbered), the default study first."""
    found = [Study.from_folder(d) for d in sorted(root.iterdir()) if (d / DEFINITION).is_file()]
    defaults = [s.id for s in found if s.default]
    if len(defaults) > 1:
        raise BadInput(f"{root}: only one study may say `default: true`; found {defaults}")
    found.sort(key=lambda s: (not s.default, s.notebook, s.id))
    return {s.id: s for s in found}


STUDIES: dict[str, Study] = discover()
# The study `make reproduce` and `python -m hostbench reproduce` run when none is named: the
# one whose study.yaml says `default: true` (else the first by notebook number).
DEFAULT_STUDY: str = next(iter(STUDIES), "")


def get_study(study_id: str) -> Study:
    try:
        return STUDIES[study_id]
    except KeyError:
        raise BadInput(f"unknown study {study_id!r}; allowed: {', '.join(STUDIES)}") from None


def available() -> list[Study]:
    return [s for s in STUDIES.values() if s.available]


def study_of(path: str | Path) -> Study:
    """The study whose folder holds `path`: the nearest folder above it with a study.yaml
    (a study's own modules and tests name their study this way, never by its id)."""
    path = Path(path).resolve()
    for folder in path.parents:
        if (folder / DEFINITION).is_file():
            known = STUDIES.get(folder.name)
            return known if known and known.folder == folder else Study.from_folder(folder)
    raise BadInput(f"{path} is in no study folder (none above it has a {DEFINITION})")


@cache
def _import(study: Study, module: str) -> ModuleType:
    """Import <folder>/<module>.py as <package>.<id>.<module>: the folder is a package
    (without an __init__.py), so a study's modules may import each other relatively."""
    if _PACKAGE not in sys.modules:
        top = ModuleType(_PACKAGE)
        top.__path__ = []
        sys.modules[_PACKAGE] = top
    if study.module_name not in sys.modules:
        spec = importlib.util.spec_from_loader(study.module_name, loader=None, is_package=True)
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [str(study.folder)]
        sys.modules[study.module_name] = package
    if not (study.folder / f"{module}.py").is_file():
        raise BadInput(f"study {study.id!r} has no {module}.py in {study.folder}")
    return importlib.import_module(f"{study.module_name}.{module}")
