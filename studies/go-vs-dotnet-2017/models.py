"""The article's servers and ours: which of our modes stands for each of its servers per
scenario, the baseline, the memory measure we read its words as, and our rows summarised
per mode and scenario (summary), the shapes every other module of this study reads."""

import math

import pandas as pd

from hostbench.analysis.intervals import mean_interval
from hostbench.catalog import mode_label
from hostbench.results import valid_rows
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows


BASELINE = "iris-mvc"  # the article's Iris MVC: ratios are X / Iris MVC


# The minimal API on the values endpoint: a mode of its own (an app without MVC, sharing the
# values windows), or, in runs measured before it, kestrel's values-minimal scenario folded in.
MINIMAL = "kestrel-minimal"


SCENARIOS = ("values", "templates")


# Our scenario -> the article's name for it in reference/.
ARTICLE_SCENARIO = {"values": "values", "templates": "mvc-templates"}


# (our scenario, our mode) -> (the article's mode in reference/, the registration its
# .NET app used, as the `setup` of its rows names it). Values ran twice in the article: its
# bombardier output is the re-run with AddMvcCore (readers' advice), its summary paragraph,
# the only place with memory, the earlier AddMvc run (full MVC, our kestrel). The templates
# app used full MVC (AddMvcCore lacked the view services).
ARTICLE_SERVERS = {
    ("values", "kestrel-mvccore"): ("kestrel", "AddMvcCore()"),
    ("values", "kestrel"): ("kestrel", "AddMvc()"),
    ("values", "iris-mvc"): ("go-iris", ""),
    ("templates", "kestrel"): ("kestrel", "AddMvc()"),
    ("templates", "iris-mvc"): ("go-iris", ""),
}


# The aot-gc sub-study (params/paper.yaml) runs .NET as the runtime variants of Kestrel: the
# test app's endpoints on minimal APIs (testapp/aot, /api/values as `--mvc none` serves it),
# since Native AOT compiles no MVC. There its Kestrel stands in for the AddMvcCore app the
# requests/s claims name, each such verdict named "Kestrel on minimal APIs in place of Kestrel,
# AddMvcCore" in its condition (claim_words.in_place_of); the memory claims name kestrel,
# whose place it takes anyway.
SUB_STUDY_STAND_INS = {"aot-gc": {"kestrel-mvccore": ["kestrel"]}}


# The server whose requests/s the headline sets beside the article's, per scenario: its
# final values app (AddMvcCore) and its templates app.
HEADLINE_SERVER = {"values": "kestrel-mvccore", "templates": "kestrel"}


# Memory by our reading of the article's words ("不包括 dotnet 框架", excluding the dotnet
# framework; it names no tool and no measure): the server's resident memory without the pages
# mapped from files, which for .NET are the runtime and the shared framework's assemblies, for
# Go its own binary (the same rule for both). The whole RSS (MEMORY_WHOLE) counts them.
MEMORY = "rss_server_anon_mean_mb"


MEMORY_WHOLE = "rss_server_mean_mb"


# How the pages name MEMORY: what it is, and that it is our reading, not a measure the article
# names.
MEMORY_READING = 'our reading of the article\'s "excluding the dotnet framework"'


# The article's processor, the Intel Core i7-4710HQ (reference/setup.csv names the model only):
# 4 cores, 8 threads, by Intel's specification of that model (ark.intel.com).
ARTICLE_CPU_CORES, ARTICLE_CPU_THREADS = 4, 8


DOTNET = ("kestrel", "kestrel-mvccore", MINIMAL)


ORDER = ("iris-mvc", "iris", "go-nethttp", "kestrel-mvccore", "kestrel", MINIMAL)


METRICS = ("rps", "latency_mean_ms", "latency_max_ms", "memory_mb", "duration_s")


def contenders(results: pd.DataFrame) -> pd.DataFrame:
    """The results with an earlier run's values-minimal folded onto the values endpoint as its
    own contender (mode "kestrel-minimal"), so it pairs with Iris MVC's values runs in the
    same block; a run with the kestrel-minimal mode has it there already."""
    df = results.copy()
    df["mode"] = df["mode"].astype(str)
    df["scenario"] = df["scenario"].astype(str)
    minimal = df["scenario"] == "values-minimal"
    df.loc[minimal, "mode"] = MINIMAL
    df.loc[minimal, "scenario"] = "values"
    return df


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and server, each the mean over blocks: rps with its 95% interval, latency
    (mean, p99, and each run's maximum), memory, and the cores the server and bombardier used."""
    df = valid_rows(contenders(results))
    rows = []
    for (scenario, mode), runs in df.groupby(["scenario", "mode"], sort=False):
        n, rps, low, high = mean_interval(runs["rps"])
        low = max(low, 0.0) if not math.isnan(low) else low  # requests/s are never negative
        rows.append(
            {
                "scenario": scenario,
                "mode": mode,
                "server": mode_label(mode),
                "n": n,
                "rps": rps,
                "rps_ci_low": low,
                "rps_ci_high": high,
                "latency_mean_ms": runs["latency_mean_ms"].mean(),
                "latency_p99_ms": runs["latency_p99_ms"].mean(),
                # each run's slowest response, averaged over blocks as every column here is:
                # the article's maximum is one run's
                "latency_max_ms": runs["latency_max_ms"].mean(),
                "rss_mean_mb": runs[MEMORY_WHOLE].mean(),
                "rss_peak_mb": runs["rss_server_peak_mb"].max(),
                # runs from before the harness recorded it have no such column
                "rss_anon_mean_mb": runs[MEMORY].mean() if MEMORY in runs else math.nan,
                "cpu_server_cores": runs["cpu_server_cores"].mean(),
                "cpu_loadgen_cores": runs["cpu_loadgen_cores"].mean(),
                "cpu_total_pct": runs["cpu_total_pct"].mean(),
                "requests": int(runs["requests"].iloc[0]),
            }
        )
    out = pd.DataFrame(rows)
    return ordered(out)


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    rank = {m: i for i, m in enumerate(ORDER)}
    key = df["scenario"].map({s: i for i, s in enumerate(SCENARIOS)}) * 100 + df["mode"].map(
        lambda m: rank.get(m, len(rank))
    )
    return df.assign(_k=key).sort_values("_k").drop(columns="_k").reset_index(drop=True)
