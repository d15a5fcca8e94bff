"""linux-proxies-2021's ratio chart drawn from its committed paper run: each label at our point."""

import re
from pathlib import Path

import pytest

from conftest import committed_run
from hostbench.analysis import tables
from hostbench.studies import study_of

STUDY = study_of(__file__)
lp = STUDY.analysis


@pytest.fixture
def paper_run() -> Path:
    """The committed run the tests read; they skip where it is not (a copied study)."""
    return committed_run(STUDY)


def test_each_ratio_label_sits_at_our_point_not_at_the_articles_diamond(paper_run):
    # Drawn from the committed paper run: "21% (20-22%)" was placed after whichever lay
    # further right, our interval's end or the article's diamond, so it sat by the diamond.
    from hostbench.analysis import layout

    ratios = lp.ratio_table(tables.load_results(paper_run))
    fig = lp.ratio_figure(ratios)
    assert layout.outside_canvas(fig) == []
    (ax,) = fig.axes
    fig.draw_without_rendering()
    ours = {round(line.get_ydata()[0], 6): line for line in ax.lines
            if line.get_marker() == "o" and len(line.get_xdata()) == 1}  # fmt: skip
    diamonds = {round(line.get_ydata()[0], 6): line for line in ax.lines
                if line.get_marker() == "D"}  # fmt: skip
    labels = [t for t in ax.texts if re.match(r"\d+% \(", t.get_text())]
    assert len(labels) == len(ours) and diamonds
    for label in labels:
        x, y = label.xy
        point = ours[round(y, 6)]
        assert x == pytest.approx(point.get_xdata()[0])  # anchored at our point
        # On the canvas: it starts by our dot, wherever the article's diamond lies.
        dot = ax.transData.transform((point.get_xdata()[0], y))
        box = label.get_window_extent()
        assert abs(box.x0 - dot[0]) < 12 and box.y0 >= dot[1], label.get_text()
        if round(y, 6) in diamonds:
            diamond = ax.transData.transform((diamonds[round(y, 6)].get_xdata()[0], y))
            assert abs(box.x0 - dot[0]) < abs(box.x0 - diamond[0]) or diamond[0] == dot[0]
