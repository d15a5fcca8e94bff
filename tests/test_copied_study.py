"""A study copied under a new id brings test files of the same names as its original's: pytest
collects both (its import mode, pyproject.toml), where a rootdir-based import refuses the
second ("import file mismatch")."""

import subprocess
import sys

import pytest

from hostbench.paths import ROOT


@pytest.mark.live  # a pytest of its own is a process
def test_two_study_folders_with_a_test_file_of_the_same_name_both_collect(tmp_path):
    for study in ("original", "copy"):
        (tmp_path / "studies" / study).mkdir(parents=True)
        (tmp_path / "studies" / study / "test_study.py").write_text(
            f"def test_{study.replace('-', '_')}():\n    assert True\n"
        )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
         str(tmp_path), "-p", "no:cacheprovider", "-q", str(tmp_path / "studies")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 passed" in done.stdout
