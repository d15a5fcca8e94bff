"""No module over MAX_LINES: a module holds one purpose, and a longer one holds several (the
package's, the studies', the tests', the scripts')."""

from pathlib import Path

from hostbench.paths import ROOT

MAX_LINES = 600


def modules(root: Path) -> list[Path]:
    """Every Python module of the project under `root`, its virtual environment aside."""
    found = [root / "conftest.py"] if (root / "conftest.py").is_file() else []
    for folder in ("hostbench", "studies", "tests", "scripts", "benchmarks"):
        found += sorted((root / folder).rglob("*.py"))
    return [p for p in found if ".venv" not in p.parts]


def over(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """{module: its lines} of every module over `limit` lines."""
    lines = {p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in modules(root)}  # fmt: skip
    return {path: n for path, n in lines.items() if n > limit}


def test_no_module_is_over_the_limit():
    assert over(ROOT) == {}


def test_a_module_over_the_limit_is_found(tmp_path):
    (tmp_path / "studies" / "copy").mkdir(parents=True)
    (tmp_path / "studies" / "copy" / "analysis.py").write_text("x = 1\n" * 601)
    (tmp_path / "hostbench").mkdir()
    (tmp_path / "hostbench" / "small.py").write_text("x = 1\n" * 600)
    assert over(tmp_path) == {"studies/copy/analysis.py": 601}


# The study executor holds no design of its own (issue 68): the schedule, the window design
# and the stopping rule are each behind an interface of its own (harness/order.py,
# harness/measure/designs.py, harness/stopping.py); what is left is the loop over them.
EXECUTOR = "hostbench/harness/study.py"
EXECUTOR_MAX_LINES = 300


def test_the_study_executor_stays_a_loop_over_the_design():
    assert over(ROOT, EXECUTOR_MAX_LINES).get(EXECUTOR) is None
