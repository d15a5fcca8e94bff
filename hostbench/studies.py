"""The study registry: one entry per source article, as data.

A study is an id, a notebook, a params folder (params/<study>/<profile>.yaml,
at least `paper` and `quick`) and the article whose published numbers are in
data/reference. Adding a study is one entry here, its params folder and its
notebook.
"""

from dataclasses import dataclass
from pathlib import Path

from .errors import BadInput
from .paths import NOTEBOOKS, PARAMS


@dataclass(frozen=True)
class Study:
    id: str
    title: str
    notebook: str  # file name in notebooks/
    article: str  # the article id in data/reference (hostbench.analysis.reference.ARTICLES)
    runs_tour: bool = False  # run the C# tour first: its app_work.csv splits the server's CPU

    @property
    def params_dir(self) -> Path:
        return PARAMS / self.id

    @property
    def notebook_path(self) -> Path:
        return NOTEBOOKS / self.notebook

    def profiles(self) -> list[str]:
        return sorted(p.stem for p in self.params_dir.glob("*.yaml"))

    @property
    def available(self) -> bool:
        """Its notebook and params exist (the companion studies arrive one by one)."""
        return self.notebook_path.is_file() and bool(self.profiles())

    def params_path(self, profile: str) -> Path:
        path = self.params_dir / f"{profile}.yaml"
        if not path.is_file():
            allowed = ", ".join(self.profiles()) or "none yet"
            raise BadInput(f"study {self.id!r} has no profile {profile!r}; allowed: {allowed}")
        return path


STUDIES: dict[str, Study] = {
    s.id: s
    for s in (
        Study("jcsi2018", "Comparing ASP.NET Core hosting models (JCSI 2018)",
              "01-jcsi2018-hosting-models.ipynb", "jcsi2018", runs_tour=True),
        Study("linux-proxies-2021", "Kestrel, Nginx and Caddy on Linux (2021)",
              "02-linux-proxies-2021.ipynb", "linux-proxies-2021"),
        Study("selfhost-2012", "Web API self-host vs IIS (2012)",
              "03-selfhost-2012.ipynb", "webapi-selfhost-2012"),
        Study("go-vs-dotnet-2017", "Go (Iris) vs ASP.NET Core (2017)",
              "04-go-vs-dotnet-2017.ipynb", "go-vs-dotnet-2017"),
        Study("kestrel-transports-2018", "Kestrel's transports (2018)",
              "05-kestrel-transports-2018.ipynb", "kestrel-transports-2018"),
    )
}  # fmt: skip
DEFAULT_STUDY = "jcsi2018"


def get_study(study_id: str) -> Study:
    try:
        return STUDIES[study_id]
    except KeyError:
        raise BadInput(f"unknown study {study_id!r}; allowed: {', '.join(STUDIES)}") from None


def available() -> list[Study]:
    return [s for s in STUDIES.values() if s.available]
