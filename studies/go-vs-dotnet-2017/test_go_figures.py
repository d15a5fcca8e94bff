"""go-vs-dotnet-2017's ratio figure on a recorded real quick run (two blocks, wide intervals):
every whisker ends inside its axes, so nothing is drawn cut off."""

import matplotlib

matplotlib.use("Agg")

from conftest import assert_whiskers_inside  # noqa: E402
from hostbench.analysis import tables  # noqa: E402
from hostbench.analysis.figure_words import caption_text  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
go_vs_dotnet = STUDY.analysis
RESULTS = tables.load_results(STUDY.fixtures_dir / "quick-results.csv", valid_only=False)


def test_the_ratio_whiskers_end_inside_the_axes():
    rps = go_vs_dotnet.ratios(RESULTS, "rps")
    memory = go_vs_dotnet.ratios(RESULTS, "rss_server_mean_mb")
    fig = go_vs_dotnet.ratio_figure(rps, memory)
    assert_whiskers_inside(fig, 0)


def test_each_figures_caption_opens_with_the_numbers_it_draws():
    table = go_vs_dotnet.summary(RESULTS)
    values = table[table["scenario"] == "values"]
    low, high = values.loc[values["rps"].idxmin()], values.loc[values["rps"].idxmax()]
    caption = caption_text(go_vs_dotnet.throughput_figure(RESULTS))
    assert caption.startswith(
        f"Mean requests/s, values: {low['rps']:,.0f} ({low['server']}) to "
        f"{high['rps']:,.0f} ({high['server']}); templates: "
    ), caption
    caption = caption_text(go_vs_dotnet.memory_figure(RESULTS))
    assert caption.startswith("Mean memory (without mapped files), values: "), caption
    rps = go_vs_dotnet.ratios(RESULTS, "rps")
    memory = go_vs_dotnet.ratios(RESULTS, go_vs_dotnet.MEMORY)
    caption = caption_text(go_vs_dotnet.ratio_figure(rps, memory))
    assert caption.startswith(f"Requests/s: of {(rps['n'] > 0).sum()} intervals, "), caption
    assert f"; memory: of {(memory['n'] > 0).sum()} intervals, " in caption
