"""What a reader must never meet on a report page, found in the page itself.

`python -m hostbench check-report PAGE...` prints each defect of each page (report.html, a
batch's index.html) and exits 1 if there is any. The classes, one line each:

- markup in a table cell: a response body or a header inserted into a cell unescaped, so the
  browser parses it (a stray heading in the table, an XML body reduced to its text);
- a machine's path: an absolute folder (/tmp, /home, /work, ...), a pytest temp folder, or
  a path the caller names (the runs folder);
- a missing value shown raw ("NaN", "nan", "None", "<NA>") instead of a dash;
- a pandas index column (row numbers or labels in header cells down the left);
- a raw column name in a table header (snake_case such as rps_mean);
- a figure without alt text, or with a placeholder;
- an interval printed with decimals ("CI 63.83-375%") except at an end beside 100% or 1.00x
  (wording.ci_text keeps such an end on its side), or a retired verdict word, where every
  page prints wording.ci_text and the verdicts of verdicts.VERDICTS;
- a verdict its printed interval contradicts: a direction ("faster", "less memory") beside an
  interval whose printed ends include 100% (1.00x), or "indistinguishable" beside one that
  excludes it;
- a figure without a caption: every image sits in a <figure> with a <figcaption> saying what
  it shows (StudyRun.show);
- a raw identifier in prose: a snake_case name in a paragraph, list, heading or caption outside
  <code> (a column or params key where the reader needs words);
- a range of one value ("2,596-2,596 MHz", "0.44x to 0.44x"), which says nothing a single
  number would not;
- raw text: a Figure's repr, a version control keyword ($Revision$), "1 blocks";
- with a browser (Chromium, headless): a table wider than the space it is given, or a page
  that scrolls sideways, at 1280 px.
"""

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from bs4 import BeautifulSoup

from .errors import BadInput, HostbenchError

# Inline elements a cell may hold: what Markdown tables and the tables' formats produce.
CELL_MARKUP = {"a", "abbr", "b", "br", "code", "em", "i", "kbd", "small", "span", "strong",
               "sub", "sup"}  # fmt: skip
# Absolute folders of a machine (POSIX roots and a Windows drive), and pytest's temp folders.
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~:/-])/(?:tmp|home|root|work|var|usr|opt|srv|mnt|media|private|Users|run)/\S*"
    r"|pytest-of-\S+|(?<![\w])[A-Z]:\\\S+"
)
RAW_MISSING = {"nan", "NaN", "None", "<NA>", "NaT", "null"}
RAW_MISSING_IN_TEXT = re.compile(r"\bNaN\b|<NA>")
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
PLACEHOLDER_ALT = re.compile(r"no description|^image$|^figure$|^png$|^<Figure", re.I)
# Verdicts are printed in the phrases of verdicts.VERDICTS.
RETIRED_WORDS = re.compile(
    r"not settled at this precision|cannot be tested here|\bundecided\b(?! at this precision)"
    r"|\bnot testable\b(?! here)",
    re.I,
)
# An interval as pages print it: "CI 141-171%", "(95% CI 0.95-0.999x)", "(100-149%)".
CI_NUMBERS = re.compile(r"\bCI (\d[\d,]*(?:\.\d+)?)\s*[-–]\s*(\d[\d,]*(?:\.\d+)?)\s*(%|x)")
BRACKETED_INTERVAL = re.compile(
    r"\((?:\d+(?:\.\d+)?% )?(?:CI )?(\d[\d,]*(?:\.\d+)?)\s*[-–]\s*(\d[\d,]*(?:\.\d+)?)\s*(%|x)\)"
)
# The words a page compares with, in the clause before an interval.
DIRECTION_WORDS = re.compile(
    r"\b(faster|slower|more|less|higher|lower|fewer|larger|smaller|indistinguishable)\b", re.I
)
CLAUSE_END = re.compile(r"[.;|\n]\s|\)")
SNAKE_CASE_IN_TEXT = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# "2,596-2,596 MHz", "0.44x to 0.44x": one number, its unit (x or %) on both ends or neither.
ONE_VALUE_RANGE = re.compile(
    r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)((?:x|%)?)\s*(?:[-–]|\bto\b)\s*\1\2(?![\w.,]*\d)"
)
PROSE_TAGS = ["p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "figcaption", "caption"]
RAW_TEXT = re.compile(r"<Figure size|<matplotlib\.|\$Revision|Styler object|\b1 (?:blocks|runs)\b")
PAGE_WIDTH_PX = 1280


def check_report(path: str | Path, forbidden: list[str] = (), browser: bool = True) -> list[str]:
    """Every defect of the page at `path`, one line each ([] for a clean page).

    forbidden: more text the page must not contain (e.g. the runs folder). browser: also lay
    the page out in headless Chromium at 1280 px to find tables wider than their space
    (HostbenchError where Chromium is not installed: pass browser=False).
    """
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"no page at {path}")
    text = path.read_text(errors="replace")
    found = page_defects(text, forbidden)
    if browser:
        found += overflowing_tables(path)
    return found


def page_defects(html_text: str, forbidden: list[str] = ()) -> list[str]:
    """The defects that show in the page's HTML itself (no layout needed)."""
    soup = BeautifulSoup(html_text, "html.parser")
    for hidden in soup(["style", "script"]):
        hidden.decompose()
    found = []
    for table in soup.find_all("table"):
        found += _table_defects(table)
    for img in soup.find_all("img"):
        alt = (img.get("alt") or "").strip()
        if not alt or PLACEHOLDER_ALT.search(alt):
            found.append(f"figure without alt text: alt={alt!r} ({_where(img)})")
    visible = soup.get_text(" ")
    attributes = " ".join(
        str(value)
        for tag in soup.find_all(True)
        for name, value in tag.attrs.items()
        if name in ("href", "src", "title", "alt") and not str(value).startswith("data:")
    )
    for match in ABSOLUTE_PATH.finditer(visible + " " + attributes):
        found.append(f"a machine's path: {match.group()[:100]!r}")
    for text in forbidden:
        if text and text in html_text:
            found.append(f"forbidden text on the page: {text!r}")
    for pattern, what in ((RAW_MISSING_IN_TEXT, "a missing value shown raw"),
                          (RETIRED_WORDS, "a verdict not in the pages' words"),
                          (RAW_TEXT, "raw text")):  # fmt: skip
        for match in pattern.finditer(visible):
            found.append(f"{what}: {_context(visible, match)!r}")
    # A range is printed within one piece of text: a table's "2" beside its "-2%" is not one.
    for text in soup.find_all(string=True):
        for match in ONE_VALUE_RANGE.finditer(str(text)):
            found.append(f"a range of one value: {_context(str(text), match)!r}")
    found += _interval_defects(visible)
    found += _figures_without_caption(soup)
    found += _raw_identifiers(soup)
    return found


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _interval_defects(visible: str) -> list[str]:
    """Decimals where whole percents belong, and words an interval's printed ends contradict."""
    found = []
    for match in CI_NUMBERS.finditer(visible):
        one, digits = (100.0, 0) if match.group(3) == "%" else (1.0, 2)
        for end in match.group(1, 2):
            decimals = len(end.partition(".")[2])
            if decimals > digits and not abs(_number(end) - one) < one / 100:
                found.append(f"an interval not in whole percents: {_context(visible, match)!r}")
                break
    for match in BRACKETED_INTERVAL.finditer(visible):
        low, high = _number(match.group(1)), _number(match.group(2))
        one = 100.0 if match.group(3) == "%" else 1.0
        before = visible[max(0, match.start() - 120) : match.start()]
        clause = CLAUSE_END.split(before)[-1]
        words = DIRECTION_WORDS.findall(clause)
        if not words:
            continue
        includes_one = low <= one <= high
        if words[-1].lower() == "indistinguishable":
            if not includes_one:
                found.append(
                    f"a verdict its interval contradicts (it excludes {one:g}{match.group(3)}): "
                    f"{_context(visible, match, 60)!r}"
                )
        elif includes_one:
            found.append(
                f"a verdict its interval contradicts (it includes {one:g}{match.group(3)}): "
                f"{_context(visible, match, 60)!r}"
            )
    return found


def _figures_without_caption(soup) -> list[str]:
    found = []
    for img in soup.find_all("img"):
        figure = img.find_parent("figure")
        caption = figure.find("figcaption") if figure else None
        if caption is None or not caption.get_text(strip=True):
            found.append(f"a figure without a caption ({_where(img)})")
    return found


def _raw_identifiers(soup) -> list[str]:
    found = []
    for tag in soup.find_all(PROSE_TAGS):
        if tag.find_parent(PROSE_TAGS):
            continue  # counted with the outer one
        words = " ".join(
            str(piece)
            for piece in tag.find_all(string=True)
            if not piece.find_parent(["code", "pre", "kbd"])
        )
        for name in sorted(set(SNAKE_CASE_IN_TEXT.findall(words))):
            found.append(f"a raw identifier in prose: {name!r} ({_where(tag)})")
    return found


def _table_defects(table) -> list[str]:
    found = []
    where = _where(table)
    for cell in table.find_all(["td", "th"]):
        tags = {t.name for t in cell.find_all(True)} - CELL_MARKUP
        if tags:
            markup = ", ".join(f"<{t}>" for t in sorted(tags))
            found.append(f"markup in a table cell ({markup}): {_short(cell)!r} ({where})")
        if cell.get_text(strip=True) in RAW_MISSING:
            found.append(f"a missing value shown raw: {cell.get_text(strip=True)!r} ({where})")
    # A row that starts with header cells and goes on with data cells carries an index (a
    # header row holds header cells only); pandas also marks its index cells by class.
    rows = table.find_all("tr")
    labelled_rows = [
        r for r in rows if r.find("th", recursive=False) and r.find("td", recursive=False)
    ]
    index_headers = table.find_all("th", class_=["blank", "index_name", "row_heading"])
    if labelled_rows or index_headers:
        found.append(f"an index column ({where})")
    for th in table.find_all("th"):
        name = th.get_text(strip=True)
        if SNAKE_CASE.match(name):
            found.append(f"a raw column name: {name!r} ({where})")
    return found


def _where(tag) -> str:
    """Which table or figure: the section heading above it."""
    heading = tag.find_previous(["h1", "h2", "h3", "h4"])
    return f"under {heading.get_text(' ', strip=True).rstrip('¶').strip()!r}" if heading else "top"


def _short(tag, n: int = 60) -> str:
    text = " ".join(tag.get_text(" ").split())
    return text[:n] + ("..." if len(text) > n else "")


def _context(text: str, match: re.Match, n: int = 40) -> str:
    start, end = max(0, match.start() - n), min(len(text), match.end() + n)
    return " ".join(text[start:end].split())


# --- layout, in a real browser -------------------------------------------------------------

# Runs after the page has loaded: each table's width against the box it must fit in (its
# nearest ancestor that clips or scrolls, else the page), and the page against the window.
_MEASURE = """<script>
addEventListener("load", () => {
  const found = [], window_px = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > window_px + 1)
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide`);
  document.querySelectorAll("table").forEach((table) => {
    let box = table.parentElement;
    while (box !== document.body && getComputedStyle(box).overflowX === "visible")
      box = box.parentElement;
    const room = Math.min(box.clientWidth, window_px), rect = table.getBoundingClientRect();
    if (rect.width > room + 1 || rect.right > window_px + 1) {
      const head = [...table.querySelectorAll("th, td")].slice(0, 3)
        .map((c) => c.textContent.trim()).join(" | ");
      found.push(`a table ${Math.round(rect.width)} px wide in ${room} px: ${head}`);
    }
  });
  document.body.setAttribute("data-hostbench-layout", JSON.stringify(found));
});
</script>"""
_RESULT = re.compile(r'data-hostbench-layout="([^"]*)"')


def browser() -> str | None:
    """The headless browser the layout check runs (Debian's chromium), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def overflowing_tables(path: str | Path, width_px: int = PAGE_WIDTH_PX) -> list[str]:
    """Tables wider than their space, and sideways scrolling, with the window `width_px` wide."""
    found = _in_browser(path, _MEASURE, width_px, 900)
    if found is None:
        return [f"layout not measured: the browser gave no result (at {width_px} px)"]
    return [f"{line} (at {width_px} px)" for line in found]


# Runs after the page has loaded: the verdict chips (analysis/verdict_card.py) that lie wholly
# within the first HEIGHT px, the first screen a reader sees without scrolling (headless
# Chromium's window is shorter than --window-size says: the height is the page's, not its).
_FIRST_SCREEN = """<script>
addEventListener("load", () => {
  const h = HEIGHT, w = window.innerWidth;
  const seen = [...document.querySelectorAll(".verdict-card .chip")].filter((chip) => {
    const r = chip.getBoundingClientRect();
    return r.width > 0 && r.bottom <= h && r.right <= w;
  }).map((chip) => chip.textContent.trim());
  document.body.setAttribute("data-hostbench-layout", JSON.stringify(seen));
});
</script>"""
FIRST_SCREEN_PX = (1280, 800)  # the first screen the report is held to: a laptop's window


def first_screen_verdicts(
    path: str | Path, size_px: tuple[int, int] = FIRST_SCREEN_PX
) -> list[str]:
    """The verdicts a report shows on its first screen (`size_px`, width and height), without
    scrolling: its verdict card's chips that lie wholly within the window, in order."""
    width, height = size_px
    found = _in_browser(path, _FIRST_SCREEN.replace("HEIGHT", str(height)), width, height)
    if found is None:
        raise HostbenchError(f"{path}: the browser gave no result for the first screen")
    return found


def _in_browser(path: str | Path, script: str, width_px: int, height_px: int) -> list | None:
    """What `script` left in the body's data-hostbench-layout attribute (a JSON list) once the
    page at `path` loaded in headless Chromium with a `width_px` by `height_px` window; None
    where it left nothing."""
    chromium = browser()
    if chromium is None:
        raise HostbenchError("no Chromium for the layout check: make setup installs it")
    text = Path(path).read_text(errors="replace")
    page = text.replace("</body>", script + "</body>") if "</body>" in text else text + script
    with tempfile.TemporaryDirectory(prefix="hostbench-page-") as tmp:
        copy = Path(tmp) / "page.html"
        copy.write_text(page)
        argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--disable-background-networking", f"--window-size={width_px},{height_px}",
                "--virtual-time-budget=10000", f"--user-data-dir={tmp}/profile", "--dump-dom",
                copy.as_uri()]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    match = _RESULT.search(done.stdout)
    if match is None:
        return None
    import html

    return json.loads(html.unescape(match.group(1)))
