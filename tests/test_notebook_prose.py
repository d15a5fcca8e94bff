"""No number typed into a notebook's markdown disagrees with its source.

Every number in the paper notebook's markdown is either structure (a section,
figure, table or listing number, a year, a page range) or one of the facts
below, each checked against where it comes from: the reference data, the
catalog, the harness's constants. A number that is neither fails the test:
compute it in a code cell instead.
"""

import json
import re

import pytest

from hostbench import lab
from hostbench.analysis import intervals
from hostbench.analysis.reference import load_setup
from hostbench.paths import ROOT
from hostbench.programs import nginx
from hostbench.studies import DEFAULT_STUDY, STUDIES

# The facts prose may state are the main paper's (the test app re-creates its scenarios).
SETUP = load_setup(DEFAULT_STUDY).set_index("item")["value"]
# The test app's .NET version, from its project file.
TARGET_FRAMEWORK = re.search(
    r"<TargetFramework>net(\d+)\.0<", (ROOT / "testapp/dotnet/TestApp.csproj").read_text()
).group(1)
CONFIDENCE = intervals.paired_ratios.__kwdefaults__["confidence"]

# (pattern, what its groups must equal) for the facts prose may state.
FACTS = [
    (r"(\d+) buttons and (\d+) select lists of (\d+) options",
     (SETUP["html_buttons"], SETUP["html_selects"], SETUP["html_options_per_select"])),
    (r"ASP\.NET Core (\d+\.\d+)", (SETUP["aspnetcore"][:3],)),
    (r"new in (\d+\.\d+)", (SETUP["aspnetcore"][:3],)),
    (r"nginx (\d+\.\d+\.\d+)", (nginx.NGINX_KEEPALIVE_DEFAULT_SINCE,)),
    (r"CPU stayed at (\d+)%", (SETUP["target_cpu"],)),
    (r"status (\d+)", (SETUP["k6_check"].split()[-1],)),
    (r"(\d+)% (?:interval|CI)", (f"{CONFIDENCE * 100:g}",)),
    (r"\.NET (\d+)", (TARGET_FRAMEWORK,)),
]  # fmt: skip
# Numbers that are structure, not facts.
STRUCTURE = [
    r"^#+ [\d.]+ ",  # section headings
    r"\| [\d.]+ \|",  # the section column of a table
    r"\b(?:[Ss]ections?|Tables?|Fig\.|Listings?|[Nn]otebook)\s+[\d.]+(?:[-–][\d.]+)?(?:\s+and\s+\d+)?",
    r"\b(?:19|20)\d\d\b",  # years (and the study id)
    r"pp\. \d+-\d+",
    r"Institute \d+",  # the journal's volume
    r"\bnon-2xx\b|\bp50\b|\b99th\b|\bk6\b|\bw3wp\b|\b100%",  # names; 100%: the baseline
    r"`[A-Z_]+=\d+`",  # an environment variable setting, e.g. `DOTNET_X=1`
    r"`[^`/]*/[^`]*`",  # file paths
    r"`\w+ = [^`]*`",  # a parameters-cell setting, as a what-if names it: `blocks = 8`
]


def _markdown(notebook) -> list[str]:
    nb = json.loads(notebook.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


NOTEBOOKS = [s.notebook_path for s in STUDIES.values() if s.available] + [lab.NOTEBOOK]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_number_in_the_markdown_is_structure_or_a_checked_fact(notebook):
    for text in _markdown(notebook):
        rest = text
        for pattern, expected in FACTS:
            for match in re.finditer(pattern, rest):
                assert match.groups() == tuple(str(e) for e in expected), match.group()
            rest = re.sub(pattern, " ", rest)
        for pattern in STRUCTURE:
            rest = re.sub(pattern, " ", rest, flags=re.M)
        typed = re.findall(r"[^\s]*\d[^\s]*", rest)
        assert typed == [], f"typed number(s) {typed} in: {text[:80]!r}"


def test_the_fact_checks_catch_a_wrong_number():
    text = "a dynamic Razor view with 99 buttons and 10 select lists of 10 options"
    pattern, expected = FACTS[0]
    assert re.search(pattern, text).groups() != tuple(str(e) for e in expected)
