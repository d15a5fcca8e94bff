"""report.pdf: each committed example's report.html printed by headless Chromium, read back
with poppler-utils (pdfinfo, pdftotext): more than one page, and its headline in its text."""

import re
import shutil
import subprocess

import pytest

from hostbench import printable
from hostbench.errors import HostbenchError
from hostbench.paths import RUNS, committed

REPORTS = [p.parent for p in committed(RUNS, "example-*/report.html")]


def _pages(pdf) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    return int(next(line.split()[1] for line in info.stdout.splitlines()
                    if line.startswith("Pages:")))  # fmt: skip


def _text(pdf) -> str:
    done = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True)
    return _letters(done.stdout)


def _letters(text: str) -> str:
    # pdftotext drops a hyphen where a line breaks after it ("62-" / "150%" -> "62150%"), and
    # its line breaks are not the page's: compare without spaces and hyphens
    return re.sub(r"[\s-]", "", text)


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils: make system-packages")
@pytest.mark.parametrize("run", REPORTS, ids=lambda p: p.name)
def test_the_report_prints_with_its_headline(run, tmp_path):
    for name in ("report.html", "headline.txt"):
        shutil.copy(run / name, tmp_path / name)
    pdf = printable.write_pdf(tmp_path)
    assert pdf == tmp_path / "report.pdf"
    assert _pages(pdf) > 1
    assert _letters((tmp_path / "headline.txt").read_text()) in _text(pdf)
    # nothing but the PDF is left beside the report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["headline.txt", "report.html",
                                                          "report.pdf"]  # fmt: skip


def test_a_folder_without_a_report_is_refused_in_one_line(tmp_path):
    with pytest.raises(HostbenchError, match="no report.html"):
        printable.write_pdf(tmp_path)
