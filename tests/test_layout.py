"""Where a figure's words land (hostbench.analysis.layout): inside its canvas, the legend
below in as many columns as fit, the note over that legend rather than under it."""

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from hostbench.analysis import figures, layout  # noqa: E402

LONG = [
    "Kestrel (ours)",
    "baseline: Kestrel + nginx (TCP, keep-alive) = 100%",
    "HTTP.sys (paper: stated, paper only: not runnable here)",
    "HTTP.sys (paper: about, paper only: not runnable here)",
    "Kestrel + IIS (in-process) (paper: range derived from its text, paper only: not runnable "
    "here)",
]


def _figure() -> tuple[Figure, list]:
    fig = Figure(figsize=(8.0, 6.4), layout="constrained")
    ax = fig.subplots()
    lines = [ax.plot([0, 1], [i, i], label=label)[0] for i, label in enumerate(LONG)]
    return fig, lines


def test_three_columns_of_long_labels_run_past_the_canvas_and_the_check_says_so():
    fig, lines = _figure()
    fig.legend(lines, LONG, loc="outside lower center", ncols=3)
    (clipped,) = layout.outside_canvas(fig)
    assert clipped.startswith("legend: Kestrel (ours)")


def test_a_legend_below_takes_the_columns_that_fit_inside_the_canvas():
    fig, lines = _figure()
    legend = layout.legend_below(fig, lines, ncols=3)
    assert layout.outside_canvas(fig) == []
    # Every label is still there, wrapped where it had to be.
    assert [" ".join(t.get_text().split()) for t in legend.get_texts()] == LONG


def test_a_short_legend_keeps_its_columns_and_labels():
    fig, lines = _figure()
    legend = layout.legend_below(fig, lines[:2], ncols=2)
    assert [t.get_text() for t in legend.get_texts()] == LONG[:2]
    fig.draw_without_rendering()
    rows = {round(t.get_window_extent().y0) for t in legend.get_texts()}
    assert len(rows) == 1  # side by side: two columns


def test_the_note_of_a_figure_with_a_legend_below_heads_that_legend_not_under_it():
    note = "bars: geometric mean of the ratios paired within blocks; whiskers: 95% interval"
    for order in ("legend first", "note first"):
        fig, lines = _figure()
        if order == "note first":
            figures.footnote(fig, note)
        legend = layout.legend_below(fig, lines, ncols=3)
        if order == "legend first":
            figures.footnote(fig, note)
        assert fig.get_supxlabel() == note  # the caption reads it there
        assert " ".join(legend.get_title().get_text().split()) == note, order
        assert layout.outside_canvas(fig) == []
        shown = [t for t in fig.texts if t.get_visible() and t.get_text() == note]
        assert shown == [], order  # drawn once, over the legend


def test_a_figure_without_a_legend_below_keeps_its_note_at_the_bottom():
    fig, _ = _figure()
    figures.footnote(fig, "k6, concurrency 8, 3 blocks")
    (note,) = [t for t in fig.texts if t.get_text() == "k6, concurrency 8, 3 blocks"]
    assert note.get_visible()
