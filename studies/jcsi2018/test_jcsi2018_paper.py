"""The paper's own numbers (paper.py): its claims as % of its baseline, and its settings."""

import pytest

from hostbench.studies import study_of

STUDY = study_of(__file__)
paper, models = STUDY.module("paper"), STUDY.module("models")


def test_paper_ratios_are_percent_of_baseline():
    r = paper.paper_ratios()
    assert list(r.columns) == [
        "mode",
        "scenario",
        "ratio_low_pct",
        "ratio_high_pct",
        "qualifier",
        "derived",
        "quote",
    ]
    assert len(r) == 16
    # The baseline, then the stated gains, then the derived range (its rows need Kestrel's).
    modes = ["iis-outofprocess", "kestrel", "httpsys", "iis-inprocess"]
    order = [(m, s) for m in modes for s in models.PAPER_SCENARIOS]
    assert list(zip(r["mode"], r["scenario"], strict=True)) == order
    assert r["derived"].dtype == bool
    assert (r["ratio_low_pct"] <= r["ratio_high_pct"]).all()
    got = r.set_index(["mode", "scenario"])[["ratio_low_pct", "ratio_high_pct"]]
    expected = {
        ("iis-outofprocess", "html"): (100, 100),
        ("kestrel", "html"): (170, 170),
        ("httpsys", "html"): (150, 150),
        ("iis-inprocess", "html"): (136, 153),
    }
    for s in ("text", "json", "xml"):
        expected |= {
            ("iis-outofprocess", s): (100, 100),
            ("kestrel", s): (300, 300),
            ("httpsys", s): (280, 280),
            ("iis-inprocess", s): (240, 270),
        }
    for key, (low, high) in expected.items():
        assert tuple(got.loc[key]) == pytest.approx((low, high)), key
    assert r.loc[r["derived"], "mode"].unique().tolist() == ["iis-inprocess"]


def test_paper_ratios_order_kestrel_httpsys_baseline():
    got = paper.paper_ratios().set_index(["mode", "scenario"])
    for s in models.PAPER_SCENARIOS:
        kestrel = got.loc[("kestrel", s), "ratio_low_pct"]
        httpsys = got.loc[("httpsys", s), "ratio_high_pct"]
        inproc = got.loc[("iis-inprocess", s), "ratio_high_pct"]
        assert kestrel > httpsys > 100
        assert kestrel > inproc > 100
        assert got.loc[("iis-outofprocess", s), "ratio_low_pct"] == 100


def test_paper_setup():
    s = paper.paper_setup().set_index("item")["value"]
    assert s["k6_vus"] == "8"
    assert s["k6_duration"] == "15"
    assert s["k6"] == "0.20.0"
    assert s["cpu"] == "Intel Core i3-3110M"
    assert s["dotnet_core_runtime"] == "2.1.300"
    assert s["aspnetcore"] == "2.1.0-preview1"
    assert s["iis"] == "10.0.17134.1"
    assert s["os"] == "Windows 10 x64"


def test_the_reference_has_only_the_stated_ratios():
    from hostbench.analysis.reference import load_reference

    df = load_reference(STUDY.id)
    # the figures' bars are images: no absolute rps from the paper
    assert set(df["metric"]) == {"rps_gain_pct", "rps_loss_pct"}
    assert len(df) == 10


def test_the_paper_profile_is_the_papers_k6_run():
    from conftest import profile_params

    paper = profile_params(STUDY.id, "paper")
    assert (paper.tools, paper.concurrency, paper.duration_s) == (["k6"], [8], 15.0)
    assert paper.scenarios == ["html", "text", "json", "xml"]
