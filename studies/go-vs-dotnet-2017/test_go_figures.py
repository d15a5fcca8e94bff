"""go-vs-dotnet-2017's ratio figure on a recorded real quick run (two blocks, wide intervals):
every whisker ends inside its axes, so nothing is drawn cut off."""

import matplotlib

matplotlib.use("Agg")

from conftest import whisker_ends  # noqa: E402
from hostbench.analysis import tables  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
go_vs_dotnet = STUDY.analysis
RESULTS = tables.load_results(STUDY.fixtures_dir / "quick-results.csv", valid_only=False)


def test_the_ratio_whiskers_end_inside_the_axes():
    rps = go_vs_dotnet.ratios(RESULTS, "rps")
    memory = go_vs_dotnet.ratios(RESULTS, "rss_server_mean_mb")
    fig = go_vs_dotnet.ratio_figure(rps, memory)
    for ax in fig.axes:
        ends = whisker_ends(ax, 0)
        low, high = ax.get_xlim()
        assert ends and min(ends) >= low and max(ends) <= high, (min(ends), max(ends), low, high)
