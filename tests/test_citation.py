"""CITATION.cff: valid Citation File Format 1.2.0 (the keys it requires, their types), the
package's version, and every study's article as a reference."""

import re

import yaml

from hostbench import __version__
from hostbench.paths import ROOT
from hostbench.studies import STUDIES

REQUIRED = ("cff-version", "message", "title", "authors")  # CFF 1.2.0's required keys
REFERENCE_REQUIRED = ("type", "title", "authors")
# The reference types CFF 1.2.0 allows that fit an article (the schema's enum, in part).
ARTICLE_TYPES = {"article", "blog", "article-journal", "conference-paper", "report", "generic"}


def _citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def _authors_valid(authors) -> bool:
    # A person has family-names (and may have given-names); an entity has a name.
    return (
        isinstance(authors, list)
        and authors
        and all(isinstance(a, dict) and (a.get("family-names") or a.get("name")) for a in authors)
    )


def test_citation_has_the_keys_cff_1_2_0_requires():
    cff = _citation()
    missing = [k for k in REQUIRED if not cff.get(k)]
    assert missing == []
    assert str(cff["cff-version"]) == "1.2.0"
    assert cff["type"] in ("software", "dataset")
    assert _authors_valid(cff["authors"])
    assert cff["version"] == __version__


def test_citation_references_every_studys_article():
    refs = _citation()["references"]
    for ref in refs:
        assert [k for k in REFERENCE_REQUIRED if not ref.get(k)] == [], ref.get("title")
        assert ref["type"] in ARTICLE_TYPES
        assert _authors_valid(ref["authors"])
        assert isinstance(ref.get("year"), int)
    named = {}
    for ref in refs:
        match = re.search(
            r"hostbench study (\S+); .*seed file (\S+)", " ".join(ref["notes"].split())
        )
        assert match, ref["notes"]
        named[match.group(1).rstrip(";")] = match.group(2)
    assert named == {sid: study.article for sid, study in STUDIES.items()}


def test_the_license_is_one_in_citation_pyproject_and_license_file():
    """CITATION.cff's SPDX id, pyproject's and the LICENSE file's title name one license."""
    import tomllib

    spdx = _citation()["license"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == spdx
    titles = {"MIT": "MIT License"}  # the LICENSE file's first line, per SPDX id used here
    assert (ROOT / "LICENSE").read_text().splitlines()[0] == titles[spdx]
