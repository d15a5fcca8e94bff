"""The analysis never reaches the harness, layers import downwards, and a package's modules
import each other one way.

The analysis reads results and starts no process (hostbench/analysis/__init__.py); the harness
starts processes. So every module of hostbench/analysis/, the params, the programs' declarations
(hostbench/programs, which both read), the docs generator beside them and every module of every
study's folder (its tests aside) must import with `hostbench.harness` made unimportable.
Within the harness, the machine's record (environment.py, which measure/ reads), the params'
preflight and launch/ (what measure/ fires load at) read what is installed or start what is
measured, never what measures.
No module of the package or of a study (its tests aside) uses another module's private name
(`from x import _name`, `module._name`): what modules share they share by a public name, in
the module it belongs to; no test reaches a private name of the project either (it asserts
through the public name that uses it). Nothing here names a study: a new folder is checked the
moment it exists.
"""

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from hostbench.paths import ROOT
from hostbench.studies import STUDIES

PACKAGE = ROOT / "hostbench"
ANALYSIS = PACKAGE / "analysis"
HARNESS = PACKAGE / "harness"

# Run in a fresh interpreter (this one has imported the harness already): a finder first on
# sys.meta_path refuses every hostbench.harness module, then everything is imported.
PROBE = """
import importlib
import importlib.abc
import pkgutil
import sys


class NoHarness(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "hostbench.harness" or name.startswith("hostbench.harness."):
            raise ImportError(f"{name} imported: the analysis must not reach the harness")
        return None


sys.meta_path.insert(0, NoHarness())
import hostbench.analysis
from hostbench.studies import STUDIES

for module in pkgutil.iter_modules(hostbench.analysis.__path__):
    importlib.import_module(f"hostbench.analysis.{module.name}")
importlib.import_module("hostbench.readmes")
for study in STUDIES.values():
    for path in sorted(study.folder.glob("*.py")):
        if not path.name.startswith("test_"):
            study.module(path.stem)
    print(study.id)
try:
    import hostbench.harness.measure.run  # the finder is in force: this must fail
except ImportError:
    print("harness refused")
"""


def _kept_apart() -> list[Path]:
    """The modules that must not import the harness: the analysis, the params, the programs'
    declarations they read, the docs generator beside them and every study's own code (its
    tests may: they start what they test)."""
    studies = [p for s in STUDIES.values() for p in sorted(s.folder.glob("*.py"))]
    return [*sorted(ANALYSIS.glob("*.py")), *sorted((PACKAGE / "params").glob("*.py")),
            *sorted((PACKAGE / "programs").glob("*.py")), PACKAGE / "readmes.py",
            *(p for p in studies if not p.name.startswith("test_"))]  # fmt: skip


def _tree(path: Path) -> ast.Module:
    """path's syntax tree: each rule below walks every module's, parsed once per text."""
    return _parsed(path.read_text(encoding="utf-8"))


@functools.cache
def _parsed(text: str) -> ast.Module:
    return ast.parse(text)


def _imported(path: Path) -> list[str]:
    """Every module an import statement of `path` names, at its top or inside a function."""
    names = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def _naming(path: Path, layer: str) -> list[str]:
    """The modules an import statement of `path` names that are in (or are) `layer`."""
    return [n for n in _imported(path) if layer in n.split(".")]


@pytest.mark.parametrize("path", _kept_apart(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_statement_names_the_harness(path):
    # A function's import runs only when it is called: read every statement, not just a load.
    assert _naming(path, "harness") == []


@pytest.mark.parametrize(
    "path",
    [HARNESS / "environment.py", HARNESS / "preflight.py"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_the_machines_record_and_the_preflight_import_nothing_that_measures(path):
    # measure/ reads environment.py (each tool's version): importing back would cross layers.
    assert _naming(path, "measure") == []


@pytest.mark.parametrize(
    "path", sorted((HARNESS / "launch").glob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_launching_imports_nothing_that_measures(path):
    # measure/ fires load at what launch/ started (its processes, places and hosts) and reads
    # their CPU: launch/ importing back would make the two layers one.
    assert _naming(path, "measure") == []


def test_a_crossing_import_is_found(tmp_path):
    (tmp_path / "environment.py").write_text("def f():\n    from .measure.loadgen import g\n")
    assert _naming(tmp_path / "environment.py", "measure") == [".measure.loadgen"]


@pytest.mark.live  # a fresh interpreter is a process
def test_the_analysis_and_every_study_import_without_the_harness():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
    printed = done.stdout.split()
    assert printed == [*STUDIES, "harness", "refused"]


def _module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module under `root` by its dotted name (a package by its folder's): package
    `package` at `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules among `modules` that `name` (at `path`) imports, at its top or inside a
    function: `from .x import y` names x (or x.y when y is a module), `from .. import x` x."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                member = f"{source}.{alias.name}"
                found.add(member if member in modules else source)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return (found & set(modules)) - {name}


def _cycles(modules: dict[str, Path]) -> list[list[str]]:
    """Every chain of imports among `modules` (tests aside) that comes back to where it
    started, across folders as within one."""
    graph = {name: _imports_of(name, path, modules) for name, path in modules.items()
             if not path.name.startswith("test_")}  # fmt: skip
    found, done = [], set()

    def walk(module: str, chain: list[str]) -> None:
        if module in chain:
            found.append(chain[chain.index(module) :] + [module])
            return
        if module in done:  # every chain through it walked already
            return
        for other in sorted(graph.get(module, ())):
            walk(other, [*chain, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
    return found


def test_the_packages_modules_import_each_other_one_way():
    # A module imports what it builds on, never what builds on it: across folders too (the
    # params read the programs' keys, so the programs import of the params only rules.Key).
    assert _cycles(_module_names(PACKAGE, "hostbench")) == []


@pytest.mark.parametrize("study", STUDIES.values(), ids=lambda s: s.id)
def test_a_studys_modules_import_each_other_one_way(study):
    # A study's folder is a package of its own (hostbench.studies loads it so, by its id).
    assert _cycles({f"study.{p.stem}": p for p in study.folder.glob("*.py")}) == []


def test_a_cycle_is_found(tmp_path):
    (tmp_path / "analysis.py").write_text("from . import figures\n")
    (tmp_path / "figures.py").write_text("def f():\n    from .analysis import is_analog\n")
    (tmp_path / "models.py").write_text("")
    assert ["study.analysis", "study.figures", "study.analysis"] in _cycles(
        _module_names(tmp_path, "study")
    )


def test_a_cycle_across_folders_is_found(tmp_path):
    for folder in ("params", "programs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "params" / "keys.py").write_text("def f():\n    from ..programs import PROGRAMS\n")
    (tmp_path / "params" / "__init__.py").write_text("from .keys import KEYS\n")
    (tmp_path / "programs" / "__init__.py").write_text("from .program import Program\n")
    (tmp_path / "programs" / "program.py").write_text("from ..params import LaunchOptions\n")
    (tmp_path / "programs" / "nginx.py").write_text("from ..params.rules import Key\n")
    (tmp_path / "params" / "rules.py").write_text("")
    assert _cycles(_module_names(tmp_path, "hb")) == [
        ["hb.params", "hb.params.keys", "hb.programs", "hb.programs.program", "hb.params"]
    ]


def _project_modules() -> list[Path]:
    """The package's modules and every study's own code (its tests may use the private names
    of what they test)."""
    studies = [p for s in STUDIES.values() for p in sorted(s.folder.glob("*.py"))]
    return [*sorted(PACKAGE.rglob("*.py")),
            *(p for p in studies if not p.name.startswith("test_"))]  # fmt: skip


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _ours(node: ast.ImportFrom | ast.Import, name: str) -> bool:
    """Whether an import names one of the project's modules: relative, or hostbench's."""
    if isinstance(node, ast.ImportFrom) and node.level:
        return True
    return name == "hostbench" or name.startswith("hostbench.")


def _private_crossings(path: Path) -> list[str]:
    """Every private name of another of the project's modules that `path` uses: imported
    (`from x import _name`) or read off a module it imported (`module._name`, `rp._name`),
    at its top or inside a function. The standard library's (os._exit) are not ours."""
    tree = _tree(path)
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if _ours(node, source):
                    modules.add(alias.asname or alias.name)
                    if _private(alias.name):
                        found.append(f"from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(node, alias.name):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


@pytest.mark.parametrize("path", _project_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_uses_another_modules_private_names(path):
    # A private name is its module's own business: shared, it is made public where it belongs.
    assert _private_crossings(path) == []


def test_a_private_name_crossing_modules_is_found(tmp_path):
    (tmp_path / "interleave.py").write_text(
        "import os\n"
        "from .run import Where, _row\n"
        "from hostbench.harness.measure import cpumonitor as cpu\n"
        "def f(self):\n"
        "    from .. import reproduce as rp\n"
        "    self._seen, cpu.CpuMonitor._sample\n"
        "    os._exit(0)\n"
        "    return rp._execute(_row), cpu._Tree, Where\n"
    )
    assert sorted(_private_crossings(tmp_path / "interleave.py")) == [
        "cpu.CpuMonitor._sample", "cpu._Tree", "from .run import _row", "rp._execute"
    ]  # fmt: skip


# --- tests reach the project through its public names ----------------------------------------


def _test_modules() -> list[Path]:
    """Every test module: tests/, each study's test files, and the conftest they share."""
    studies = [p for s in STUDIES.values() for p in sorted(s.folder.glob("test_*.py"))]
    return [*sorted((ROOT / "tests").rglob("*.py")), *studies, ROOT / "conftest.py"]


def _hidden(name: str) -> bool:
    """A private name: one leading underscore, not a protocol's name (__init__, _repr_html_,
    namedtuple's _replace... end or begin with more)."""
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


def _private_names(paths: list[Path]) -> set[str]:
    """Every private name the project's own code defines: functions, classes, variables,
    attributes it sets (self._x, fig._x) and arguments."""
    names = set()
    for path in paths:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return {n for n in names if _hidden(n)}


@functools.cache
def _project_private_names() -> frozenset[str]:
    return frozenset(_private_names(_project_modules()))


def _private_reaches(path: Path, private: set[str] | frozenset[str]) -> list[str]:
    """Every private name of the project a test uses: imported (`from x import _name`), or read
    or set on anything but the test's own object (`module._name`, `Load._check`, `proc._pid`);
    a test's own helpers (`self._stack`) are its business."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            found += [f"import {a.name}" for a in node.names if a.name in private]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


@pytest.mark.parametrize("path", _test_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_reaches_a_private_name(path):
    # A test asserts what a user or a caller sees: through a public name, or through the
    # public function that uses the private one. A private name stays free to change.
    assert _private_reaches(path, _project_private_names()) == []


def test_a_test_reaching_a_private_name_is_found(tmp_path):
    (tmp_path / "load.py").write_text(
        "class Load:\n    def _check(self): ...\ndef _changes(old, new): ...\n_SEEN = set()\n"
    )
    (tmp_path / "test_load.py").write_text(
        "from hostbench.harness.study import _changes, run_study\n"
        "from hostbench import load\n"
        "class Parser:\n"
        "    def feed(self):\n        self._check = 1\n"
        "def test_it(proc, monkeypatch):\n"
        "    check = load.Load._check\n"
        "    proc._SEEN = {1}\n"
        "    return box._repr_html_(), row._replace(a=1), os._exit\n"
    )
    private = _private_names([tmp_path / "load.py"])
    assert private == {"_check", "_changes", "_SEEN"}
    assert sorted(_private_reaches(tmp_path / "test_load.py", private)) == [
        "import _changes", "load.Load._check", "proc._SEEN"
    ]  # fmt: skip
