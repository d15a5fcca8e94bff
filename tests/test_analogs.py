"""The analog each Windows-only mode gets is the one docs/hosting-modes.md names for how it
forwards, and the studies whose article measured IIS out-of-process take it as their baseline."""

import re

from conftest import profile_params
from hostbench.catalog import ANALOG_BY_MECHANISM, MODES
from hostbench.paths import ROOT
from hostbench.studies import discover

DOC = ROOT / "docs" / "hosting-modes.md"
# The page names each analog on a line of its own: analog by mechanism: `windows` = `linux`
NAMED = re.compile(r"^analog by mechanism: `([a-z-]+)` = `([a-z-]+)`$", re.MULTILINE)


def named_in_doc() -> dict[str, str]:
    return dict(NAMED.findall(DOC.read_text(encoding="utf-8")))


def test_the_catalog_names_the_analogs_the_doc_names_with_their_sources():
    named = named_in_doc()
    assert named == ANALOG_BY_MECHANISM
    for windows, linux in named.items():
        assert MODES[windows].windows_only and not MODES[linux].windows_only
    text = DOC.read_text(encoding="utf-8")
    for source in ("forwardinghandler.cpp", "forwarderconnection.cpp", "protocolconfig.cpp",
                   "learn.microsoft.com"):  # fmt: skip
        assert source in text


def test_a_study_measured_against_iis_takes_the_analog_as_its_baseline():
    # A baseline that is a proxy in front of Kestrel stands for IIS (the other studies compare
    # with Kestrel alone or a Go server). Each such profile uses the analog the doc names; the
    # other proxies stay in its modes as sensitivity rows.
    analog = named_in_doc()["iis-outofprocess"]
    checked = 0
    for study in discover().values():
        for profile in study.profiles():
            p = profile_params(study.id, profile)
            if MODES[p.baseline_mode].launch != "proxy":
                continue
            checked += 1
            assert p.baseline_mode == analog, (study.id, profile)
    assert checked >= 4  # two studies, two profiles each
