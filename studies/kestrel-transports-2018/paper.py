"""Kestrel's transports, 2018: the article's own words: its stated settings, its published
gains (two tables: the transport CPU-constrained, the app CPU-constrained) and what became of
its three transports since (facts with their dates, not measurements)."""

import pandas as pd

from hostbench.analysis.reference import load_reference, load_setup
from hostbench.catalog import scenario_label
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows

# What became of the article's three transports (facts with their dates, not measurements).
TRANSPORTS = pd.DataFrame(
    [
        (
            "libuv",
            "Kestrel's first transport (ASP.NET Core 1.x default; libuv is Node.js's I/O library)",
            "obsolete in .NET 5, shipped last with .NET 6 (Transport.Libuv 6.0), removed in .NET 7",
            "no: no build of the libuv transport exists for .NET 7 or later, so none for .NET 10",
        ),
        (
            "Linux transport",
            "Red Hat's RedHat.AspNetCore.Server.Kestrel.Transport.Linux (epoll, SO_REUSEPORT, "
            "Linux AIO), an experimental package",
            "repository archived in 2021; last built for .NET Core 3.1",
            "no: built against Kestrel's transport abstractions of 3.1, which changed after it "
            "(as the article warned); no build for .NET 5 or later",
        ),
        (
            "Sockets",
            "System.Net.Sockets on the thread pool; Kestrel's default since ASP.NET Core 2.1",
            "the only transport Kestrel ships in .NET 10",
            "yes: swept here (IOQueueCount, inline scheduling, wait for data)",
        ),
    ],
    columns=["transport", "what it is", "since the article", "runs here?"],
)


def _short(setup: str) -> str:
    for key, name in (("Linux transport", "Linux"), ("libuv", "libuv"), ("Sockets", "Sockets")):
        if key in setup:
            return name
    return setup


def published_gains(ref: pd.DataFrame | None = None) -> pd.DataFrame:
    """The article's gains as published: comparison, scenario, what limited it, gain in %."""
    ref = load_reference(ARTICLE) if ref is None else ref
    gains = ref[ref["metric"] == "rps_gain_pct"]
    rows = []
    for r in gains.itertuples(index=False):
        constraint = "transport" if "Transport is CPU-constrained" in r.where else "app"
        rows.append(
            {
                "comparison": f"{_short(r.setup)} vs {_short(r.relative_to)}",
                "scenario": scenario_label(r.scenario),
                "CPU-constrained": constraint,
                "gain [%]": r.value,
                "quote": r.quote,
            }
        )
    return pd.DataFrame(rows)


def article_setup() -> pd.DataFrame:
    """The article's stated settings (benchmarks, pipelining, packages)."""
    return load_setup(ARTICLE)[["item", "value", "quote"]]
