"""report.pdf beside report.html: the report printed by headless Chromium (`--print-to-pdf`),
with the same figures and each numbered section on a new page.

`make reproduce` writes it after report.html; `python -m hostbench pdf RUN_FOLDER` writes it
for a folder that has only report.html (a committed example, or a re-rendered report).
"""

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from .errors import HostbenchError
from .pagecheck import browser

REPORT = "report.html"
PDF = "report.pdf"
TIMEOUT_S = 180
# Print rules, added to the page only for printing (the page on screen stays as it is): A4
# with margins; each section (h2) starts a page; tables shrink to the page's width, long
# cells wrap; a figure or a table row is not cut across two pages.
PRINT_CSS = """<style media="print">
@page { size: A4; margin: 14mm 12mm; }
h2 { break-before: page; }
table { font-size: 7.5pt; width: 100%; max-width: 100%; table-layout: auto; }
td, th { overflow-wrap: anywhere; word-break: break-word; padding: 2px 4px; }
img, svg, tr, figure { break-inside: avoid; }
img { max-width: 100%; height: auto; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>"""


def write_pdf(run_dir: str | Path) -> Path:
    """report.pdf from the run folder's report.html; returns its path."""
    run_dir = Path(run_dir)
    page = run_dir / REPORT
    if not page.is_file():
        raise HostbenchError(f"no {REPORT} in {run_dir}: run the study first (make reproduce)")
    chromium = browser()
    if chromium is None:
        raise HostbenchError("no Chromium to print the report with: make setup installs it")
    # What the page folds away (<details>: the claims in full under the verdict card) is open
    # on paper, where nothing can be clicked.
    text = page.read_text(errors="replace").replace("<details>", "<details open>")
    if "</head>" in text:
        text = text.replace("</head>", PRINT_CSS + "</head>", 1)
    else:
        text = PRINT_CSS + text
    out = run_dir / PDF
    # The copy sits beside the report, so any file the page names relatively is found; the
    # PDF is written beside it and renamed when complete.
    copy = run_dir / f".{PDF}.html"
    partial = run_dir / f".{PDF}.tmp"
    with tempfile.TemporaryDirectory(prefix="hostbench-pdf-") as profile:
        argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--no-pdf-header-footer",
                "--virtual-time-budget=10000", f"--user-data-dir={profile}",
                f"--print-to-pdf={partial.resolve()}", copy.resolve().as_uri()]  # fmt: skip
        try:
            copy.write_text(text)
            _run(argv)
            if not partial.is_file() or partial.stat().st_size == 0:
                raise HostbenchError(f"Chromium wrote no PDF for {page}")
            os.replace(partial, out)
        finally:
            copy.unlink(missing_ok=True)
            partial.unlink(missing_ok=True)
    return out


def _run(argv: list[str]) -> None:
    """Chromium in its own process group, stopped with all its children on a timeout, an
    error or Ctrl-C."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
    except BaseException:
        _stop(proc)
        raise
    _stop(proc)  # a helper process Chromium left behind
    if proc.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise HostbenchError(f"Chromium could not print the report: {last[:160]}")


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group has ended
    proc.wait()
