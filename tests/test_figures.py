"""hostbench.figures: the right bars, labels and files, and nothing overlapping.

Synthetic numbers (baseline 1000 rps and simple multiples), not measurements.
"""

import itertools

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

from hostbench.analysis import figures, intervals  # noqa: E402
from hostbench.analysis import tables as analysis  # noqa: E402
from hostbench.analysis.reference import paper_ratios  # noqa: E402
from hostbench.errors import BadInput  # noqa: E402

FACTORS = {"kestrel": 2.0, "nginx": 1.0, "nginx-uds": 1.2, "caddy": 0.9}
BASE_RPS = {"html": 1000.0, "text": 4000.0, "json": 3000.0, "xml": 2000.0}


def runs(modes=FACTORS, repetitions=3, cpu_total_pct=97.0, concurrency=8) -> pd.DataFrame:
    rows = []
    for (mode, factor), (scenario, rps), rep in itertools.product(
        modes.items(), BASE_RPS.items(), range(repetitions)
    ):
        rows.append(
            {
                "run_key": f"{mode}-{scenario}-{rep}",
                "mode": mode,
                "scenario": scenario,
                "tool": "k6",
                "concurrency": concurrency,
                "repetition": rep,
                "rps": rps * factor + 10.0 * (rep - 1),  # mean rps * factor, sd 10
                "latency_p50_ms": 1.0,
                "latency_p99_ms": 5.0,
                "cpu_total_pct": cpu_total_pct,
                "cpu_server_cores": 3.0,
                "cpu_proxy_cores": np.nan if mode == "kestrel" else 2.0,
                "cpu_loadgen_cores": 2.0,
                "machine_cores": 8,
            }
        )
    return pd.DataFrame(rows)


def bars(ax) -> list:
    """Drawn bars (legend-only dummies have NaN height)."""
    return [p for c in bar_containers(ax) for p in c.patches if np.isfinite(p.get_height())]


def bars_in(container) -> list:
    return [p for p in container.patches if np.isfinite(p.get_height())]


def bar_containers(ax) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def overlapping(artists) -> list[tuple[str, str]]:
    """Pairs of visible texts whose rendered boxes intersect."""
    fig = artists[0].figure
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(a.get_text(), a.get_window_extent(renderer)) for a in artists if a.get_text()]
    return [(t1, t2) for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2) if b1.overlaps(b2)]


def test_model_chart_one_bar_per_scenario_with_sd():
    fig = figures.model_chart(runs(), "kestrel")
    (ax,) = fig.axes
    heights = [p.get_height() for p in bars(ax)]
    assert heights == pytest.approx([2000, 8000, 6000, 4000])  # paper order: html text json xml
    assert [t.get_text() for t in ax.get_xticklabels()] == ["HTML", "text", "JSON", "XML"]
    assert len(ax.lines) >= 4  # a whisker (1 sd) per bar
    assert texts(ax) == ["2,000", "8,000", "6,000", "4,000"]
    assert "Fig. 5" in ax.get_title()
    assert "requests/s" in ax.get_ylabel()
    assert not overlapping(ax.get_xticklabels() + ax.texts)


def test_model_chart_names_the_papers_figure_once_and_additions_as_such():
    def title(mode, baseline="nginx"):
        return figures.model_chart(runs(), mode, baseline).axes[0].get_title()

    assert "stands for the paper's Fig. 4" in title("nginx")
    assert "Fig. 4" not in title("caddy") and "not in its figures" in title("caddy")
    assert "Fig. 4" in title("caddy", baseline="caddy") and "Fig. 4" not in title("nginx", "caddy")
    assert "Fig. 7" not in title("nginx-uds") and "cheaper-hop analog" in title("nginx-uds")
    assert figures.paper_caption("nginx-keepalive", "nginx") == "added here, not in the paper"


def test_model_charts_share_one_scale():
    charts = figures.model_charts(runs(), ["kestrel", "nginx"])
    assert len({fig.axes[0].get_ylim() for fig in charts}) == 1


def test_model_chart_single_repetition_has_no_error_bars():
    (ax,) = figures.model_chart(runs(repetitions=1), "nginx").axes
    assert len(bars(ax)) == 4
    assert len(ax.lines) == 0  # one run: no spread, no whisker


def test_model_chart_unknown_mode():
    with pytest.raises(BadInput, match="httpsys"):
        figures.model_chart(runs(), "httpsys")


def test_figures_refuse_mixed_load_setups():
    df = pd.concat([runs(concurrency=8), runs(concurrency=64)])
    with pytest.raises(BadInput, match="select one tool and concurrency"):
        figures.all_models_chart(df)


def test_all_models_chart_groups_modes_by_scenario():
    (ax,) = figures.all_models_chart(runs()).axes
    assert len(bars(ax)) == len(FACTORS) * len(BASE_RPS)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # Modes in the package's order, whatever order the rows came in.
    assert legend == [figures.mode_label(m) for m in ("kestrel", "nginx", "nginx-uds", "caddy")]
    assert len(ax.texts) == len(FACTORS) * len(BASE_RPS)
    assert "Fig. 8" in ax.figure.get_suptitle()
    assert not overlapping(ax.get_xticklabels() + ax.texts)


def ratios(modes=FACTORS, baseline="nginx"):
    return intervals.paired_ratios(analysis.prepare(runs(modes)), baseline)


def test_relative_chart_bars_with_intervals_and_the_baseline_line():
    (ax,) = figures.relative_chart(ratios()).axes
    # The baseline itself is the line, not a bar.
    assert len(bars(ax)) == (len(FACTORS) - 1) * len(BASE_RPS)
    assert sorted({round(p.get_height()) for p in bars(ax)}) == [90, 120, 200]
    assert all(c.errorbar is not None for c in bar_containers(ax))  # 95% intervals
    assert any(list(line.get_ydata()) == [100, 100] for line in ax.lines)
    assert "Fig. 9" in ax.figure.get_suptitle()


def test_relative_chart_draws_the_papers_values_as_what_they_are():
    fig = figures.relative_chart(ratios(), paper_ratios(), "nginx")
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "Kestrel (paper: about / up to)" in legend
    assert any("HTTP.sys (paper" in t and "paper only: not runnable here" in t for t in legend)
    assert any("IIS (in-process) (paper: range derived" in t for t in legend)
    # "up to" is an upper bound: a marker at its value, on a dotted stem from 100%.
    stems = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert stems and all(list(line.get_ydata()) == [100, 300] for line in stems)
    markers = {line.get_marker() for line in ax.lines if len(line.get_xdata()) == 1}
    assert {"v", "D"} <= markers
    assert not [b for b in bars(ax) if b.get_hatch()]  # no solid bar for a paper value


def test_relative_chart_without_ratios():
    with pytest.raises(BadInput, match="no ratios to the baseline"):
        figures.relative_chart(ratios().iloc[0:0])


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
    fig = figures.model_chart(runs(), "kestrel")
    paths = figures.save_figure(fig, tmp_path / "figs", "fig5-kestrel")
    assert [p.name for p in paths] == ["fig5-kestrel.png", "fig5-kestrel.svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert b"<svg" in svg[:2000]
    assert b"<dc:date>" not in svg
    assert b"2,000" in svg  # the value labels are in it


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
