"""data/reference: the published numbers load, are well-formed and trace to their seeds."""

import re

import pandas as pd
import pytest

from hostbench.analysis import reference
from hostbench.errors import BadInput
from hostbench.paths import ROOT

SEEDS = ROOT.parent / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"{SEEDS} not present")


def normalize(text: str) -> str:
    """Join words hyphenated across a line break ("10-\\n\\n20%"), then collapse whitespace."""
    text = re.sub(r"-[ \t]*\n\s*", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def test_published_loads_with_columns_and_dtypes():
    df = reference.load_reference()
    assert list(df.columns) == reference.PUBLISHED_COLUMNS
    for col in reference.NUMBER_COLUMNS:
        assert df[col].dtype == "float64", col
    for col in reference.TEXT_COLUMNS:
        assert pd.api.types.is_string_dtype(df[col]), col
        assert not df[col].isna().any(), col
    assert set(df["article"]) == set(reference.ARTICLES)


def test_every_row_has_a_value_or_a_range():
    df = reference.load_reference()
    point = df["value"].notna()
    ranged = df["value_low"].notna() & df["value_high"].notna()
    assert (point ^ ranged).all()
    assert (df.loc[ranged, "value_low"] <= df.loc[ranged, "value_high"]).all()


def test_filter_by_article():
    df = reference.load_reference("linux-proxies-2021")
    assert set(df["article"]) == {"linux-proxies-2021"}
    by_setup = df.set_index("setup")["value"]
    assert by_setup["Linux + Nginx"] == 3509
    assert by_setup["Windows + IIS Out of Process"] == 2820
    with pytest.raises(BadInput, match="unknown article"):
        reference.load_reference("no-such-article")


def test_jcsi_has_only_the_stated_ratios():
    df = reference.load_reference("jcsi2018")
    # the figures' bars are images: no absolute rps from the paper
    assert set(df["metric"]) == {"rps_gain_pct", "rps_loss_pct"}
    assert len(df) == 10


@needs_seeds
def test_source_files_exist():
    for name in set(reference.load_reference()["source_file"]) | set(
        reference.load_setup()["source_file"]
    ):
        assert (SEEDS / name).is_file(), name


@needs_seeds
@pytest.mark.parametrize("loader", [reference.load_reference, reference.load_setup])
def test_quotes_are_verbatim(loader):
    texts = {}
    missing = []
    for r in loader().itertuples(index=False):
        if r.source_file not in texts:
            texts[r.source_file] = normalize((SEEDS / r.source_file).read_text(encoding="utf-8"))
        if normalize(r.quote) not in texts[r.source_file]:
            missing.append((r.article, r.quote))
    assert not missing


@needs_seeds
def test_numbers_appear_in_their_quotes():
    """Every value of a rps/ratio row is written in its quote (as stated, not converted)."""
    df = reference.load_reference()
    for r in df.itertuples(index=False):
        if r.metric not in {"rps", "rps_gain_pct", "rps_loss_pct"}:
            continue
        numbers = [r.value] if pd.notna(r.value) else [r.value_low, r.value_high]
        for n in numbers:
            digits = re.findall(r"\d+(?:\.\d+)?", r.quote)
            assert any(float(d) == n for d in digits), (r.article, r.setup, n, r.quote)


def test_bad_rows_are_rejected(tmp_path, monkeypatch):
    src = reference.PUBLISHED_CSV.read_text(encoding="utf-8").splitlines()
    row = src[1].replace(",kestrel,", ",kestrl,", 1)
    bad = tmp_path / "published.csv"
    bad.write_text("\n".join([src[0], row]) + "\n", encoding="utf-8")
    monkeypatch.setattr(reference, "PUBLISHED_CSV", bad)
    with pytest.raises(BadInput, match="mode 'kestrl'"):
        reference.load_reference()


def test_paper_ratios_are_percent_of_baseline():
    r = reference.paper_ratios()
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
    modes = ["iis-outofprocess", "kestrel", "httpsys", "iis-inprocess"]  # baseline first
    order = [(m, s) for m in modes for s in reference.PAPER_SCENARIOS]
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
    got = reference.paper_ratios().set_index(["mode", "scenario"])
    for s in reference.PAPER_SCENARIOS:
        kestrel = got.loc[("kestrel", s), "ratio_low_pct"]
        httpsys = got.loc[("httpsys", s), "ratio_high_pct"]
        inproc = got.loc[("iis-inprocess", s), "ratio_high_pct"]
        assert kestrel > httpsys > 100
        assert kestrel > inproc > 100
        assert got.loc[("iis-outofprocess", s), "ratio_low_pct"] == 100


def test_paper_setup():
    s = reference.paper_setup().set_index("item")["value"]
    assert s["k6_vus"] == "8"
    assert s["k6_duration"] == "15"
    assert s["k6"] == "0.20.0"
    assert s["cpu"] == "Intel Core i3-3110M"
    assert s["dotnet_core_runtime"] == "2.1.300"
    assert s["aspnetcore"] == "2.1.0-preview1"
    assert s["iis"] == "10.0.17134.1"
    assert s["os"] == "Windows 10 x64"
