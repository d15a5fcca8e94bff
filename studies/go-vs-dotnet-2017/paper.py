"""The article's own numbers, from reference/ (hostbench.analysis.reference): its table per
scenario in our summary's shape (published), the values test's runs, and its .NET / Iris
ratios."""

import math

import pandas as pd

from hostbench.analysis.reference import load_reference, load_setup

from .models import (
    ARTICLE,
    ARTICLE_SCENARIO,
    ARTICLE_SERVERS,
    BASELINE,
    METRICS,
    SCENARIOS,
)


def published(ref: pd.DataFrame | None = None) -> pd.DataFrame:
    """The article's figures per server and scenario, from reference/.

    One row per (scenario, our mode mapped to the article's server): server (as the article
    names it), rps, latency_mean_ms, latency_max_ms and duration_s from bombardier's own
    output where the article shows one for that run, else from its summary paragraph (the
    values AddMvc run); memory_mb from the summary paragraph (the only place it is stated:
    excluding the dotnet framework); requests (from the article's bombardier command); the
    quote of the rps and where it stands (`source`).
    """
    ref = load_reference(ARTICLE) if ref is None else ref
    setup = load_setup(ARTICLE).set_index("item")["value"]
    counts = {
        "values": _count(setup["bombardier_values"]),
        "templates": _count(setup["bombardier_templates"]),
    }
    rows = []
    for (scenario, our_mode), (mode, registration) in ARTICLE_SERVERS.items():
        mine = ref[(ref["scenario"] == ARTICLE_SCENARIO[scenario]) & (ref["mode"] == mode)]
        if registration:  # that .NET run only ("AddMvc()" is no part of "AddMvcCore()")
            mine = mine[mine["setup"].str.contains(registration, regex=False)]
        measured = mine[mine["where"].str.startswith("bombardier")]
        summary = mine[mine["where"].str.startswith("总结")]
        primary = measured if len(measured) else summary
        row = {"scenario": scenario, "mode": our_mode, "server": primary["setup"].iloc[0]}
        for metric in METRICS:
            source = summary if metric == "memory_mb" else primary
            values = source.loc[source["metric"] == metric, "value"]
            row[metric] = float(values.iloc[0]) if len(values) else math.nan
        row["requests"] = counts[scenario]
        rps = primary[primary["metric"] == "rps"].iloc[0]
        row["source"], row["quote"] = rps["where"], rps["quote"]
        rows.append(row)
    return pd.DataFrame(rows)


def values_runs(ref: pd.DataFrame | None = None) -> pd.DataFrame:
    """The article's two .NET runs of the values test, as reference/ labels them: one row per
    run, one column per metric as the article states it ('-' where it states none), and where
    each is stated, so the reader sees that the summary is not the updated output."""
    ref = load_reference(ARTICLE) if ref is None else ref
    dotnet = ref[(ref["scenario"] == "values") & (ref["mode"] == "kestrel")]
    names = {"duration_s": "time for all requests [s]", "rps": "req/s",
             "latency_mean_ms": "latency mean [ms]", "latency_max_ms": "latency max [ms]",
             "throughput_mb_s": "throughput [MB/s]", "memory_mb": "memory [MB]"}  # fmt: skip
    rows = []
    for setup, run in dotnet.groupby("setup", sort=False):
        row = {"the article's run": setup}
        for metric, name in names.items():
            values = run.loc[run["metric"] == metric, "value"]
            row[name] = f"{values.iloc[0]:,.2f}".rstrip("0").rstrip(".") if len(values) else "-"
        row["stated in"] = "; ".join(run["where"].unique())
        rows.append(row)
    return pd.DataFrame(rows)


def _count(text: str) -> int:
    """The request count of the article's bombardier setting: "-c 125 -n 5000000" or
    "125 connections, 1000000 requests"."""
    words = text.replace(",", " ").split()
    if "-n" in words:
        return int(words[words.index("-n") + 1])
    return int(words[words.index("requests") - 1])


def article_ratios(pub: pd.DataFrame | None = None) -> pd.DataFrame:
    """The article's .NET / Iris MVC per scenario and .NET run, for requests/s and memory
    (where the article gives both numbers: it states no memory for the AddMvcCore run)."""
    pub = published() if pub is None else pub
    rows = []
    for scenario in SCENARIOS:
        mine = pub[pub["scenario"] == scenario].set_index("mode")
        for dotnet in (m for m in mine.index if m != BASELINE):
            for metric in ("rps", "memory_mb"):
                ratio = mine.loc[dotnet, metric] / mine.loc[BASELINE, metric]
                if not math.isnan(ratio):
                    rows.append(
                        {"scenario": scenario, "mode": dotnet, "metric": metric,
                         "article_ratio": ratio}
                    )  # fmt: skip
    return pd.DataFrame(rows)
