"""The verdict picture: each point where its ratio puts it on the log axis and in its verdict's
colour, the tolerance band where the verdicts read it, nothing clipped; its rows from the claims
tables' own verdicts; the docs keep it fresh by its rows, never by its PNG bytes."""

import math

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from hostbench import docs, gallery
from hostbench.analysis import claims, verdict_picture, verdicts
from hostbench.paths import ROOT

SIZE = "Kestrel is about 70% faster than the baseline"
DIRECTION = "Kestrel is faster than the baseline"
EQUAL = "Nginx and Caddy perform the same"


def _row(claim, kind, side, processor, condition, x, low, high, verdict, run="r1", value=1.0):
    return dict(claim=claim, kind=kind, side=side, processor=processor, condition=condition,
                run=run, comparison="HTML", value=value, x=x, x_low=low, x_high=high, n=5,
                verdict=verdict)  # fmt: skip


def _constructed() -> pd.DataFrame:
    """One machine flips the size claim, one runtime the direction claim, one analog the
    equivalence claim; the rest hold."""
    rows = [
        _row(SIZE, "size", "", "AMD EPYC fam 25", claims.AS_RUN, 0.95, 0.9, 1.0,
             verdicts.REPRODUCED, value=1.7),
        _row(SIZE, "size", "", "Intel Xeon", claims.AS_RUN, 0.7, 0.65, 0.75, verdicts.SMALLER,
             value=1.7),
        _row(DIRECTION, "direction", "above", "AMD EPYC fam 25", claims.AS_RUN, 1.5, 1.4, 1.6,
             verdicts.SUPPORTED),
        _row(DIRECTION, "direction", "above", "AMD EPYC fam 25", ".NET 8", 0.8, 0.7, 0.9,
             verdicts.NOT_SUPPORTED),
        _row(EQUAL, "equivalence", "", "AMD EPYC fam 26", claims.AS_RUN, 1.0, 0.95, 1.05,
             verdicts.REPRODUCED),
        _row(EQUAL, "equivalence", "", "AMD EPYC fam 26", "baseline Kestrel + YARP (TCP)", 1.1,
             0.8, 1.4, verdicts.UNDECIDED),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=verdict_picture.COLUMNS)


def _points(ax) -> list[tuple[str, float, str]]:
    """(row label, x, colour as hex) of each point a panel draws, read from its artists."""
    ticks = zip(ax.get_yticks(), ax.get_yticklabels(), strict=True)
    labels = {round(t): lab.get_text() for t, lab in ticks}
    found = []
    for collection in ax.collections:
        if not hasattr(collection, "get_offsets") or not len(collection.get_offsets()):
            continue
        colours = collection.get_facecolors()
        for (x, y), colour in zip(collection.get_offsets(), colours, strict=False):
            found.append((labels[round(y)], float(x), mcolors.to_hex(colour)))
    return found


@pytest.fixture(scope="module")
def drawn():
    rows = _constructed()
    fig = verdict_picture.draw(rows)
    FigureCanvasAgg(fig).draw()
    return rows, fig


def test_each_point_is_coloured_by_the_verdict_of_its_row(drawn):
    rows, fig = drawn
    panels = {claim: ax for claim, ax in zip(dict.fromkeys(rows["claim"]), fig.axes, strict=False)}
    expected = {
        (SIZE, "AMD EPYC fam 25 · as measured"): verdict_picture.PALETTE[verdicts.REPRODUCED],
        (SIZE, "Intel Xeon · as measured"): verdict_picture.PALETTE[verdicts.SMALLER],
        (DIRECTION, "AMD EPYC fam 25 · as measured"): verdict_picture.PALETTE[verdicts.SUPPORTED],
        (DIRECTION, "AMD EPYC fam 25 · .NET 8"): verdict_picture.PALETTE[verdicts.NOT_SUPPORTED],
        (EQUAL, "AMD EPYC fam 26 · baseline Kestrel + YARP (TCP)"):
            verdict_picture.PALETTE[verdicts.UNDECIDED],
    }  # fmt: skip
    for (claim, label), colour in expected.items():
        points = [p for p in _points(panels[claim]) if p[0].replace("\n", " ") == label]
        assert points, f"no point on {label!r} in {claim!r}"
        assert {p[2] for p in points} == {colour.lower()}, (claim, label)
    flipped = {verdicts.SMALLER, verdicts.NOT_SUPPORTED, verdicts.UNDECIDED}
    assert len({verdict_picture.PALETTE[v] for v in flipped | {verdicts.REPRODUCED}}) == 4


def test_points_sit_at_their_ratio_on_a_log_axis(drawn):
    rows, fig = drawn
    ax = fig.axes[0]  # the size claim's panel
    assert ax.get_xscale() == "log"
    xs = sorted(x for _, x, _ in _points(ax))
    assert xs == pytest.approx(sorted(rows.loc[rows["claim"] == SIZE, "x"]))
    # On screen, equal ratios are equal distances: 0.7 -> 0.95 as far as 1.0 -> 0.95/0.7.
    to_px = ax.transData.transform
    a, b = (to_px((x, 0))[0] for x in (0.7, 0.95))
    c, d = (to_px((x, 0))[0] for x in (1.0, 0.95 / 0.7))
    assert b - a == pytest.approx(d - c, rel=1e-6)


def test_the_band_spans_the_tolerance_where_a_size_is_judged_only(drawn):
    rows, fig = drawn
    low, high = verdicts.tolerance_edges()
    assert (low, high) == pytest.approx((1 / 1.15, 1.15))
    for claim, ax in zip(dict.fromkeys(rows["claim"]), fig.axes, strict=False):
        bands = [p for p in ax.patches if p.get_alpha() == verdict_picture.BAND_ALPHA]
        if claim == DIRECTION:
            assert not bands, "a direction is judged against 100%, with no band"
            assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.lines)
            continue
        (band,) = bands
        # Where it lands on screen: from the low edge to the high one, on the log scale.
        shown = band.get_window_extent()
        edges = ax.transData.transform([(low, 0), (high, 0)])[:, 0]
        assert (shown.x0, shown.x1) == pytest.approx(tuple(edges), abs=0.01)
        decade = np.diff(ax.transData.transform([(1, 0), (10, 0)])[:, 0])[0]
        assert shown.width / decade == pytest.approx(math.log10(high / low), rel=1e-4)


def test_no_label_or_legend_is_clipped(drawn):
    _, fig = drawn
    renderer = fig.canvas.get_renderer()
    inside = fig.get_tightbbox(renderer)
    assert inside.x0 >= 0 and inside.y0 >= 0
    assert inside.x1 <= fig.get_figwidth() + 1e-6 and inside.y1 <= fig.get_figheight() + 1e-6
    legend = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:  # the legend is outside every panel's data
        assert not legend.overlaps(ax.get_window_extent(renderer))


def test_the_palette_names_every_verdict_in_a_colour():
    assert set(verdict_picture.PALETTE) == set(verdicts.VERDICTS)
    assert all(mcolors.is_color_like(c) and c.startswith("#")
               for c in verdict_picture.PALETTE.values())  # fmt: skip


def test_the_sidecar_reads_back_as_the_rows_it_holds_and_keys_the_picture():
    rows = _constructed()
    text = verdict_picture.rows_csv(rows)
    back = verdict_picture.rows_from_csv(text)
    assert list(back["verdict"]) == list(rows["verdict"])
    assert back["x"].to_numpy() == pytest.approx(rows["x"].to_numpy(), rel=1e-3)
    flipped = rows.assign(verdict=[verdicts.LARGER, *rows["verdict"][1:]])
    assert verdict_picture.picture_key(text) != verdict_picture.picture_key(
        verdict_picture.rows_csv(flipped)
    )


def test_a_runs_rows_carry_the_verdicts_its_claims_table_gave():
    """For one run (a report's): every testable claim as measured, with its table's verdict;
    a claim that rests on another's comparisons left out, and named."""
    run = ROOT / "data" / "runs" / "example-jcsi2018-claims"
    rows = verdict_picture.verdict_rows("jcsi2018", [run])
    table = claims.of_run("jcsi2018", run)
    measured = rows[rows["condition"] == claims.AS_RUN].drop_duplicates("claim")
    by_claim = table.set_index(claims.CLAIM)[claims.VERDICT]
    assert dict(zip(measured["claim"], measured["verdict"], strict=True)) == {
        c: by_claim[c] for c in measured["claim"]
    }
    assert set(rows.attrs[verdict_picture.RESTATED]) == set(table.attrs["restated"])
    assert not set(rows["claim"]) & set(table.attrs["restated"])
    assert set(rows["processor"]) == {"AMD EPYC"}  # one run: its model name alone
    assert ".NET 8" in set(rows["condition"])  # its runtimes sub-study, a row per runtime


def test_the_gallery_and_the_appendix_show_each_picture_with_alt_text_and_caption(
    generated_pages,
):
    for sid in ("jcsi2018", "go-vs-dotnet-2017"):
        page = generated_pages[gallery.page_path(sid)]
        image = f"]({sid}-verdicts.png)"
        assert page.index(image) < page.index("The article:"), "the picture opens the page"
        alt = page[page.rindex("![", 0, page.index(image)) + 2 : page.index(image)]
        assert "Verdicts of" in alt and "]" not in alt
        assert "*Each of the article's" in page
        assert f"](gallery/{sid}-verdicts.png)" in generated_pages["docs/artifact.md"]


def test_the_gallery_links_a_reports_pdf_beside_its_html(generated_pages):
    page = generated_pages[gallery.page_path("jcsi2018")]
    run = "example-jcsi2018-claims"
    assert (ROOT / "data" / "runs" / run / "report.pdf").is_file()
    html = f"[html]({gallery.LINK_BASE}/{run}/report.html)"
    pdf = f"[pdf]({gallery.LINK_BASE}/{run}/report.pdf)"
    assert f"{html} · {pdf}" in page


def test_a_picture_is_fresh_by_its_rows_not_its_bytes(tmp_path, generated_pages,
                                                      committed_pictures):  # fmt: skip
    """A PNG drawn from the sidecar's rows is fresh whatever its bytes (another processor's
    matplotlib may write others); new rows make it stale, and `docs` draws it again."""
    from PIL import Image

    committed_pictures(tmp_path)  # drawn below from changed rows (a stale one is drawn here)
    docs.write(tmp_path, generated_pages)
    assert docs.stale(tmp_path, generated_pages) == []
    png = tmp_path / gallery.picture_path("jcsi2018")
    key = verdict_picture.png_key(png)
    with Image.open(png) as image:  # other bytes, the same key: as a rerender elsewhere
        image.resize((image.width // 2, image.height // 2)).save(
            png, pnginfo=_info(verdict_picture.KEY, key)
        )
    assert docs.stale(tmp_path, generated_pages) == []
    csv = gallery.picture_path("jcsi2018", "csv")
    changed = dict(generated_pages)
    changed[csv] = changed[csv].replace(verdicts.REPRODUCED, verdicts.LARGER, 1)
    assert docs.stale(tmp_path, changed) == [csv, gallery.picture_path("jcsi2018")]
    docs.write(tmp_path, changed)
    assert docs.stale(tmp_path, changed) == []


def _info(key: str, value: str):
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text(key, value)
    return info
