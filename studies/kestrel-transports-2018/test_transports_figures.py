"""kestrel-transports-2018's figures on a recorded real quick run (two blocks, wide
intervals): every whisker ends inside its axes, so nothing is drawn cut off."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from hostbench.analysis import tables  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
transports = STUDY.analysis
RESULTS = tables.load_results(STUDY.fixtures_dir / "quick-results.csv", valid_only=False)


def _whisker_ends(ax, axis: int) -> list[float]:
    """Both ends of every error bar drawn in `ax`, on x (axis 0) or y (axis 1)."""
    ends = []
    for container in ax.containers:
        lines = getattr(container, "lines", None) or getattr(container, "errorbar", None)
        if lines is None:
            continue
        bars = lines.lines if hasattr(lines, "lines") else lines
        for collection in bars[2]:
            for segment in collection.get_segments():
                ends += list(np.asarray(segment)[:, axis])
    return ends


def test_the_gains_whiskers_end_inside_the_axes():
    gains = transports.gains(RESULTS)
    assert (gains["ci_high"] / gains["ci_low"]).max() > 2  # wide: two blocks on a busy machine
    fig = transports.gains_figure(gains)
    for ax in fig.axes:
        ends = _whisker_ends(ax, 0)
        low, high = ax.get_xlim()
        assert ends and min(ends) >= low and max(ends) <= high, (min(ends), max(ends), low, high)
    assert "cut off" not in fig.get_suptitle()


def test_the_sweeps_whiskers_end_inside_the_axes():
    fig = transports.sweep_figure(RESULTS)
    for ax in fig.axes:
        ends = _whisker_ends(ax, 1)
        low, high = ax.get_ylim()
        assert ends and min(ends) >= low and max(ends) <= high, (min(ends), max(ends), low, high)
