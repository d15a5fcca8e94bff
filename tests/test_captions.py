"""Every caption true to what is drawn, and every figure's alt text from its caption.

Synthetic runs (conftest.runs: known rps, 3 blocks), not measurements.
"""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from conftest import runs, texts  # noqa: E402
from hostbench.analysis import figure_output, figure_words, figures  # noqa: E402
from hostbench.analysis import tables as analysis  # noqa: E402


def test_the_latency_note_names_the_whiskers_it_draws():
    fig = figures.latency_chart(runs())
    note = fig.get_supxlabel()
    assert "p99" in note and "sd" not in note, note
    assert "3 blocks" in note and "block(s)" not in note


def test_the_bar_charts_note_names_their_sd_whiskers():
    summary = analysis.summarize(runs())
    assert figure_words.setup_note(summary).endswith("error bars: 1 sd over blocks")
    one = analysis.summarize(runs(repetitions=1))
    assert figure_words.setup_note(one) == "k6, concurrency 8, 1 block; one run each, no error bars"


def test_a_cpu_label_is_coloured_by_the_value_it_prints():
    df = runs()
    df.loc[df["mode"] == "nginx", "cpu_total_pct"] = 89.57  # prints "90%": saturated
    df.loc[df["mode"] == "caddy", "cpu_total_pct"] = 89.4  # prints "89%": below 90%
    panels = {ax.get_title(): ax for ax in figures.cpu_chart(df).axes if ax.get_visible()}
    nginx, caddy = panels[figures.mode_label("nginx")], panels[figures.mode_label("caddy")]
    assert texts(nginx) == ["90%"] * 4 and texts(caddy) == ["89%"] * 4
    red = to_hex("tab:red")
    assert all(to_hex(t.get_color()) != red for t in nginx.texts)
    assert all(to_hex(t.get_color()) == red for t in caddy.texts)


def _sweep(levels: dict[str, dict[int, list[float]]]) -> pd.DataFrame:
    frames = []
    for mode, by_level in levels.items():
        for level, values in by_level.items():
            rows = runs({mode: 1.0}, repetitions=len(values), concurrency=level)
            rows = rows[rows["scenario"] == "text"].copy()
            rows["rps"] = values
            frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def test_the_sweep_circles_each_modes_own_knee_and_names_it():
    df = _sweep({
        "kestrel": {2: [1000, 1010, 990], 4: [2000, 2010, 1990], 8: [3000, 3010, 2990],
                    16: [3005, 2995, 3000]},
        "nginx": {2: [1000, 1010, 990], 4: [1005, 995, 1000], 8: [1000, 1002, 998],
                  16: [1001, 999, 1000]},
    })  # fmt: skip
    knees = analysis.calibration(df)
    knees = knees[knees["knee"]].set_index("mode", drop=False)
    assert {str(m): int(c) for m, c in zip(knees["mode"], knees["concurrency"], strict=True)} == {
        "kestrel": 8,
        "nginx": 2,
    }
    rps_ax = figures.calibration_chart(df).axes[0]
    circles = [
        line for line in rps_ax.lines if line.get_markersize() == 12 and len(line.get_xdata())
    ]
    drawn = sorted((float(c.get_xdata()[0]), round(float(c.get_ydata()[0]))) for c in circles)
    assert drawn == [(2.0, 1000), (8.0, 3000)]
    assert sorted(texts(rps_ax)) == ["knee: 2", "knee: 8"]
    # The caption says where each sweep stopped growing, as the circles do.
    caption = figure_words.caption_text(figures.calibration_chart(df))
    assert (
        f"{figures.mode_label('kestrel')}, text: throughput stopped growing from 8 on, the "
        "machine at most " in caption.split(". ")[0]
    ), caption
    assert f"{figures.mode_label('nginx')}, text: throughput stopped growing from 2 on" in caption


def test_the_sweep_note_says_its_blocks_and_what_its_error_bars_are():
    interval = "error bars: 95% interval of the mean"
    assert figure_words.sweep_note(pd.Series([3, 3])) == f"3 blocks per level; {interval}"
    assert figure_words.sweep_note(pd.Series([1, 4])) == (
        f"1-4 blocks per level; {interval}; a level with one block has none"
    )
    assert figure_words.sweep_note(pd.Series([1, 1])).startswith("one block per level: no interval")


def test_alt_text_is_the_figures_title_and_note():
    fig = figures.latency_chart(runs())
    alt = figure_words.alt_text(fig)
    assert alt.startswith("Latency under the load (mean over blocks). k6, concurrency 8")
    panels = Figure()
    for title in ("Kestrel", "Kestrel + nginx (TCP)"):
        panels.add_subplot().set_title(title)
    assert figure_words.alt_text(panels) == "Kestrel; Kestrel + nginx (TCP)"
    image = figure_output.FigureImage(fig)
    data, metadata = image._repr_mimebundle_()
    # The caption: what the data show (the chart's finding), then its title and note.
    drawn = alt.replace(". ", ": ", 1) + "."
    assert metadata["image/png"]["alt"] == alt
    caption = metadata["image/png"]["caption"]
    assert caption.startswith("Median latency ranged from ") and caption.endswith(" " + drawn)
    assert data["text/plain"] == alt
    assert len(data["image/png"]) > 1000
    assert figure_output.FigureImage(fig, "my words").alt == "my words"
    figure_words.set_finding(fig, "Kestrel is fastest in every scenario")
    assert figure_words.caption_text(fig) == "Kestrel is fastest in every scenario. " + drawn
    shown = figure_output.FigureImage(fig, caption="Kestrel is fastest in every scenario.")
    assert shown._repr_mimebundle_()[1]["image/png"]["caption"].startswith("Kestrel is fastest")


def test_a_caption_opens_with_what_the_figure_shows_computed_from_the_data():
    df = runs()
    df.loc[df["mode"] == "caddy", "cpu_total_pct"] = 89.4  # prints "89%": below 90%
    caption = figure_words.caption_text(figures.cpu_chart(df))
    assert caption.startswith("The machine was ") and "below 90% in " in caption, caption
    assert "interleaved window" not in caption  # each mode its own window here
    df["started_at"] = df["scenario"].astype(str) + df["repetition"].astype(str)  # modes share
    caption = figure_words.caption_text(figures.cpu_chart(df))
    assert "shared an interleaved window, its busy % and the load generator's" in caption
    rows = pd.DataFrame({"label": ["a", "b", "c"], "ratio_pct": [150.0, 60.0, 101.0],
                         "ci_low_pct": [120.0, 50.0, 90.0], "ci_high_pct": [180.0, 70.0, 110.0],
                         "article_pct": [170.0, 200.0, float("nan")]})  # fmt: skip
    caption = figure_words.caption_text(figures.ratio_chart(rows, "Ratios", "% of the baseline"))
    assert caption.startswith(
        "Of 3 intervals, 1 lies above 100%, 1 below, and 1 includes it; the article's value lies "
        "inside ours in 1 of 2. Ratios."
    ), caption
