"""hostbench.figures: the right bars, labels and files, and nothing overlapping.

Synthetic numbers (baseline 1000 rps and simple multiples), not measurements.
"""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from conftest import BASE_RPS, FACTORS, bars, overlapping, runs, texts  # noqa: E402
from hostbench.analysis import figure_output, figure_words, figures  # noqa: E402
from hostbench.analysis import tables as analysis  # noqa: E402


def test_latency_chart_p50_bars_and_p99_lines():
    (ax,) = figures.latency_chart(runs()).axes
    assert len(bars(ax)) == len(FACTORS) * len(BASE_RPS)
    assert {round(p.get_height(), 1) for p in bars(ax)} == {1.0}
    assert "p99" in ax.get_ylabel()


@pytest.mark.live
def test_cpu_per_request_chart_splits_the_server_with_app_work():
    app_work = pd.DataFrame({"scenario": ["html", "text"], "ns_per_payload": [100_000.0, 5_000.0]})
    fig = figures.cpu_per_request_chart(runs(), app_work)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "app's own work (C# tour)" in legend and "server: hosting, HTTP, connections" in legend
    html = fig.axes[0]
    # kestrel html: 3 server cores / 2000 rps = 1500 us, of which 100 us the app's own work.
    own = [p.get_width() for p in html.patches if to_hex(p.get_facecolor()) == "#7f7f7f"]
    assert own == pytest.approx([100.0] * len(FACTORS))
    assert "CPU per request" in html.get_xlabel()
    plain = figures.cpu_per_request_chart(runs())
    assert "app's own work (C# tour)" not in [t.get_text() for t in plain.legends[0].get_texts()]


def test_cpu_chart_stacks_process_groups_per_mode():
    df = runs()
    df.loc[df["mode"] == "caddy", "cpu_total_pct"] = 70.0
    fig = figures.cpu_chart(df)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == [
        figures.mode_label(m) for m in ("kestrel", "nginx", "nginx-uds", "caddy")
    ]
    nginx = panels[1]
    # Four stacked layers (server, proxy, load generator, rest) per scenario.
    assert len(bars(nginx)) == 4 * len(BASE_RPS)
    tops = {round(p.get_y() + p.get_height(), 2) for p in bars(nginx)}
    assert max(tops) == pytest.approx(0.97 * 8)  # stack reaches the machine's busy cores
    assert any(list(line.get_ydata()) == [8, 8] for line in nginx.lines)  # all cores
    assert texts(nginx) == ["97%"] * 4
    assert texts(panels[3]) == ["70%"] * 4
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:3] == ["server (test app)", "reverse proxy", "load generator"]
    for ax in panels:
        assert not overlapping(ax.get_xticklabels() + ax.texts)


def test_save_figure_writes_png_and_svg(tmp_path):
    fig = figures.latency_chart(runs())
    paths = figure_output.save_figure(fig, tmp_path / "figs", "fig5-kestrel")
    assert [p.name for p in paths] == ["fig5-kestrel.png", "fig5-kestrel.svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert b"<svg" in svg[:2000]
    assert b"<dc:date>" not in svg
    assert b"HTML" in svg  # the axis labels are in it
    fig = figures.latency_chart(runs())  # drawn anew, as a re-render draws it
    again = figure_output.save_figure(fig, tmp_path / "again", "fig5-kestrel")[1].read_bytes()
    assert again == svg  # no random ids: an unchanged figure is an unchanged file


def test_calibration_chart_has_interval_bars_and_says_how_many_blocks():
    sweep = pd.concat(
        [runs({"kestrel": f}, concurrency=c) for c, f in ((1, 1.0), (2, 2.0), (4, 2.0))],
        ignore_index=True,
    )
    sweep = sweep[sweep["scenario"] == "text"]
    fig = figures.calibration_chart(sweep)
    rps_ax = fig.axes[0]
    assert rps_ax.containers, "no error bars"
    (bar_lines,) = [c for c in rps_ax.containers]
    low, high = bar_lines.lines[2][0].get_segments()[0][:, 1]
    table = analysis.calibration(sweep).set_index("concurrency")
    assert (low, high) == pytest.approx((table.loc[1, "rps_ci_low"], table.loc[1, "rps_ci_high"]))
    assert "3 blocks per level" in " ".join(t.get_text() for t in fig.texts)
    one = figures.calibration_chart(sweep[sweep["repetition"] == 0])
    assert "no interval" in " ".join(t.get_text() for t in one.texts)
    # One block far off at one level: its interval would flatten the curves; the axis stops
    # above the means and an arrowhead marks the cut.
    wild = sweep.copy()
    far = (wild["concurrency"] == 4) & (wild["repetition"] == 0)
    wild.loc[far, "rps"] *= 20
    table = analysis.calibration(wild)
    fig = figures.calibration_chart(wild)
    rps_ax = fig.axes[0]
    assert rps_ax.get_ylim()[1] < table["rps_ci_high"].max()
    assert [line for line in rps_ax.get_lines() if line.get_marker() == "^"]
    legend = [t.get_text() for t in rps_ax.get_legend().get_texts()]
    assert "interval runs on past the axis" in legend


def test_a_very_wide_interval_stops_at_the_axis_with_an_arrowhead_and_keeps_its_true_ends():
    """A 2-block interval of 12-1,000% would squeeze the other rows into a sliver: it is drawn
    to the axis's edge, marked there, and its label still prints its true ends."""
    rows = pd.DataFrame({
        "label": ["HTML", "XML"],
        "ratio_pct": [150.0, 110.0],
        "ci_low_pct": [140.0, 12.0],
        "ci_high_pct": [160.0, 1000.0],
    })  # fmt: skip
    fig = figures.ratio_chart(rows, "Ratios", "% of the baseline")
    (ax,) = fig.axes
    low, high = ax.get_xlim()
    assert 12.0 < low and high < 1000.0 * 3
    lines = [line for line in ax.get_lines() if line.get_marker() in ("<", ">")]
    assert sorted(line.get_marker() for line in lines) == ["<", ">"]
    assert any("(12-1,000%)" in t or "(12-1000%)" in t for t in texts(ax)), texts(ax)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "interval runs on past the axis" in legend
    narrow = figures.ratio_chart(rows.iloc[:1], "Ratios", "% of the baseline")
    assert "interval runs on past the axis" not in [
        t.get_text() for t in narrow.legends[0].get_texts()
    ]


def test_the_latency_and_cpu_per_request_captions_open_with_what_the_data_show():
    summary = analysis.summarize(runs())
    caption = figure_words.caption_text(figures.latency_chart(runs()))
    low = summary["latency_p50_ms_mean"].min()
    assert caption.startswith(f"Median latency ranged from {low:,.2f} ms ("), caption
    per = analysis.cpu_per_request(runs())
    columns = ["server_us_per_request", "proxy_us_per_request", "loadgen_us_per_request"]
    cheapest = per[columns].fillna(0.0).sum(axis=1).min()
    caption = figure_words.caption_text(figures.cpu_per_request_chart(runs()))
    assert caption.startswith(f"A request cost from {cheapest:,.0f} µs of CPU ("), caption
