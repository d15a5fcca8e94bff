"""kestrel-transports-2018's figures on a recorded real quick run (two blocks, wide
intervals): every whisker ends inside its axes, so nothing is drawn cut off."""

import matplotlib

matplotlib.use("Agg")

from conftest import assert_whiskers_inside, committed_run  # noqa: E402
from hostbench.analysis import tables  # noqa: E402
from hostbench.analysis.figure_words import caption_text  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
transports = STUDY.analysis
RESULTS = tables.load_results(STUDY.fixtures_dir / "quick-results.csv", valid_only=False)


def test_the_gains_whiskers_end_inside_the_axes():
    gains = transports.gains(RESULTS)
    assert (gains["ci_high"] / gains["ci_low"]).max() > 2  # wide: two blocks on a busy machine
    fig = transports.gains_figure(gains)
    assert_whiskers_inside(fig, 0)
    assert "cut off" not in fig.get_suptitle()


def test_the_sweeps_whiskers_end_inside_the_axes():
    fig = transports.sweep_figure(RESULTS)
    assert_whiskers_inside(fig, 1)


def test_the_captions_open_with_what_the_figures_show():
    gains = transports.gains(RESULTS)
    above = int((gains["ci_low"] > 1).sum())
    caption = caption_text(transports.gains_figure(gains))
    assert caption.startswith(f"Of {len(gains)} intervals, {above} "), caption
    sweep = transports.sweep(RESULTS)
    default = sweep[(sweep["scenario"] == "hello-json") & (sweep["variant"] == transports.DEFAULT)]
    caption = caption_text(transports.sweep_figure(RESULTS))
    assert caption.startswith("Mean requests/s, "), caption
    assert f"the defaults {default['rps'].iloc[0]:,.0f} requests/s" in caption


def test_the_gains_figure_of_the_committed_paper_run_keeps_its_words_on_the_canvas():
    # Its settings' long names, repeated beside each panel, squeezed the right panel until its
    # axis label ran off the saved PNG.
    from hostbench.analysis import layout
    from hostbench.analysis.tables import load_results

    run = committed_run(STUDY)
    fig = STUDY.analysis.gains_figure(STUDY.analysis.gains(load_results(run, valid_only=False)))
    assert layout.outside_canvas(fig) == []
