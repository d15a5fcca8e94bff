"""The paper's Fig. 4-9 re-made (this folder's figures.py), on tidy runs with known answers."""

import matplotlib
import matplotlib.colors
import matplotlib.lines
import matplotlib.patches

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from conftest import BASE_RPS, FACTORS, bar_containers, bars, overlapping, runs, texts  # noqa: E402
from hostbench.analysis import intervals  # noqa: E402
from hostbench.analysis import tables as analysis  # noqa: E402
from hostbench.analysis.figure_words import caption_text  # noqa: E402
from hostbench.catalog import mode_color  # noqa: E402
from hostbench.errors import BadInput  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
figures = STUDY.analysis.figures
paper_ratios = STUDY.analysis.paper_ratios


def _panels_figure(df=None, modes=("kestrel", "nginx", "nginx-keepalive", "nginx-uds", "caddy")):
    return figures.paper_models_chart(runs() if df is None else df, list(modes), "nginx")


def _panels(df, modes=("kestrel", "nginx", "nginx-keepalive", "nginx-uds", "caddy")):
    fig = _panels_figure(df, modes)
    return dict(zip(("out-of-process", "kestrel", "httpsys", "in-process"), fig.axes, strict=True))


def test_the_paper_models_chart_has_one_bar_per_scenario_with_sd():
    ax = _panels(runs())["kestrel"]
    heights = [p.get_height() for p in bars(ax)]
    assert heights == pytest.approx([2000, 8000, 6000, 4000])  # paper order: html text json xml
    assert [t.get_text() for t in ax.get_xticklabels()] == ["HTML", "text", "JSON", "XML"]
    assert len(ax.lines) >= 4  # a whisker (1 sd) per bar
    assert texts(ax) == ["2,000", "8,000", "6,000", "4,000"]
    assert ax.get_title(loc="left") == "Fig. 5: Kestrel"
    assert "requests/s" in ax.get_ylabel()
    assert not overlapping(ax.get_xticklabels() + ax.texts)


def test_the_paper_models_chart_puts_each_mode_under_the_model_it_stands_for():
    assert figures.stand_ins(
        ["kestrel", "nginx", "nginx-keepalive", "nginx-uds", "caddy"], "caddy"
    ) == {  # fmt: skip
        "iis-outofprocess": ["caddy", "nginx", "nginx-keepalive"],  # the baseline first
        "iis-inprocess": ["nginx-uds"],
        "kestrel": ["kestrel"],
        "httpsys": [],
    }
    panels = _panels(runs())
    legend = [t.get_text() for t in panels["in-process"].get_legend().get_texts()]
    assert legend == [f"{figures.mode_label('nginx-uds')}: cheaper-hop analog"]
    assert len(bars(panels["out-of-process"])) == 2 * len(BASE_RPS)  # nginx, caddy ran


def test_the_paper_models_chart_with_one_block_has_no_error_bars():
    ax = _panels(runs(repetitions=1))["kestrel"]
    assert len(bars(ax)) == 4
    assert len(ax.lines) == 0  # one run: no spread, no whisker


def test_a_paper_model_with_no_run_here_says_so_in_its_panel():
    panels = _panels(runs(), modes=("kestrel", "nginx", "httpsys"))  # httpsys never runs here
    assert texts(panels["httpsys"]) == ["Windows only: not measured here\n(docs/windows.md)"]
    assert not bars(panels["httpsys"]) and not bars(panels["in-process"])


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
    (ax,) = figures.relative_chart(ratios(), None, "nginx").axes
    # The baseline itself is the line, not a bar.
    assert len(bars(ax)) == (len(FACTORS) - 1) * len(BASE_RPS)
    assert sorted({round(p.get_height()) for p in bars(ax)}) == [90, 120, 200]
    assert all(c.errorbar is not None for c in bar_containers(ax))  # 95% intervals
    assert any(list(line.get_ydata()) == [100, 100] for line in ax.lines)
    assert "Fig. 9" in ax.figure.get_suptitle()


def test_relative_charts_caption_says_where_each_mode_is_faster_than_the_baseline():
    caption = caption_text(figures.relative_chart(ratios(), None, "nginx"))
    first = caption.split(". ")[0]
    expected = {  # from the synthetic factors: above 100% with the whole interval or not
        m: sum(r.ci_low > 1 for r in ratios().itertuples() if r.mode == m) for m in FACTORS
    }
    for mode, above in expected.items():
        if mode != "nginx":
            assert f"{figures.mode_label(mode)} in {above} of {len(BASE_RPS)}" in first, first
    assert first.startswith("Scenarios where the whole 95% interval lies above Kestrel + nginx")


def test_relative_chart_draws_the_papers_values_as_what_they_are():
    fig = figures.relative_chart(ratios(), paper_ratios(), "nginx")
    (ax,) = fig.axes
    # A label wrapped to fit the figure's width reads as one line.
    legend = [" ".join(t.get_text().split()) for t in ax.figure.legends[0].get_texts()]
    assert "Kestrel (paper: about)" in legend and "Kestrel (paper: as much as)" in legend
    assert any("HTTP.sys (paper" in t and "paper only: not runnable here" in t for t in legend)
    assert any("IIS (in-process) (paper: range derived" in t for t in legend)
    # "nawet 200%" is a value, read as the words say (300%): a point of its own kind, no stem.
    assert not [line for line in ax.lines if line.get_linestyle() == ":"]
    nawet = [line for line in ax.lines if line.get_marker() == "^"]
    assert nawet and all(list(line.get_ydata()) == [300] for line in nawet)
    markers = {line.get_marker() for line in ax.lines if len(line.get_xdata()) == 1}
    assert {"^", "D"} <= markers
    # The derived range is an outlined box from its low end to its high end, not a solid bar.
    boxes = [b for b in bars(ax) if b.get_hatch()]
    paper = paper_ratios()
    derived = paper[paper["derived"]]
    assert len(boxes) == len(derived)
    assert sorted((round(b.get_y()), round(b.get_y() + b.get_height())) for b in boxes) == sorted(
        (round(r.ratio_low_pct), round(r.ratio_high_pct)) for r in derived.itertuples()
    )


def test_relative_chart_puts_the_papers_kestrel_on_our_kestrel_bar():
    """The paper's value for a model that runs here sits on our bar of it, not in a slot of
    its own beside the group; the models that cannot run here keep slots after ours."""
    (ax,) = figures.relative_chart(ratios(), paper_ratios(), "nginx").axes
    ours = next(c for c in ax.containers if c.get_label() == "Kestrel (ours)")
    centres = {round(p.get_x() + p.get_width() / 2, 6) for p in ours.patches}
    kestrel = matplotlib.colors.to_hex(mode_color("kestrel"))
    marks = [line for line in ax.lines if len(line.get_xdata()) == 1
             and matplotlib.colors.to_hex(line.get_color()) == kestrel]  # fmt: skip
    assert marks and {round(float(line.get_xdata()[0]), 6) for line in marks} <= centres
    others = [line for line in ax.lines if len(line.get_xdata()) == 1 and line not in marks]
    assert others and not {round(float(line.get_xdata()[0]), 6) for line in others} & centres


def test_relative_chart_legend_shows_the_marks_the_chart_draws():
    (ax,) = figures.relative_chart(ratios(), paper_ratios(), "nginx").axes

    def look(line):
        return line.get_marker(), matplotlib.colors.to_hex(line.get_color())

    drawn = {look(line) for line in ax.lines if len(line.get_xdata()) == 1}
    handles = ax.figure.legends[0].legend_handles
    shown = {look(h) for h in handles if isinstance(h, matplotlib.lines.Line2D)
             if h.get_marker() not in ("None", "", None)}  # fmt: skip
    assert drawn and shown == drawn  # no legend marker the chart lacks, and none left out
    hatched = [h for h in handles if isinstance(h, matplotlib.patches.Rectangle) and h.get_hatch()]
    assert len(hatched) == 1  # the derived range's box, as drawn


def test_relative_chart_without_ratios():
    with pytest.raises(BadInput, match="no ratios to the baseline"):
        figures.relative_chart(ratios().iloc[0:0], None, "nginx")


def test_fig_4_to_8_captions_open_with_the_range_of_the_means():
    summary = analysis.summarize(runs())
    low, high = summary["rps_mean"].min(), summary["rps_mean"].max()
    for fig in (_panels_figure(), figures.all_models_chart(runs())):
        caption = caption_text(fig)
        assert caption.startswith(f"Mean throughput ranged from {low:,.0f} requests/s ("), caption
        assert f"to {high:,.0f} (" in caption


def test_the_relative_chart_of_the_committed_claims_run_keeps_its_words_on_the_canvas():
    # Drawn from example-jcsi2018-claims' own results: its legend's three columns of long
    # labels ran past both sides of the saved PNG.
    from hostbench.analysis import layout
    from hostbench.paths import RUNS

    run = RUNS / STUDY.claims_run
    if not (run / "results.csv").is_file():
        pytest.skip(f"{run} not committed")
    params = analysis.load_params(run)
    ratios = intervals.paired_ratios(analysis.load_results(run), params.baseline_mode)
    fig = figures.relative_chart(ratios, paper_ratios(), params.baseline_mode)
    assert layout.outside_canvas(fig) == []
    legend = fig.legends[0]
    # The note heads the legend, and no two of the figure's shown words overlap.
    assert legend.get_title().get_text().startswith("bars: geometric mean")
    words = [t for t in [*fig.texts, fig.axes[0].xaxis.label, *legend.get_texts()]
             if t.get_visible()]  # fmt: skip
    assert overlapping(words) == []
