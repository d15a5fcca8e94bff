"""Go (Iris) vs ASP.NET Core, 2017: the article's tables beside ours, .NET / Iris with intervals.

The article (Gerasimos Maropoulos, August 2017, read from its Chinese translation in
reference/) ran Iris 8.3 MVC and ASP.NET Core 2.0 MVC on Windows with bombardier at 125
connections: GET /api/values/{id} (5,000,000 requests; .NET with AddMvcCore) and a templates
page (1,000,000 requests; .NET with full MVC). Its figures: requests/s, latency, the time for
all requests, and memory. Here every number of the article comes from
hostbench.analysis.reference; ours from results.csv. Our modes map onto the article's servers
per scenario (ARTICLE_SERVERS); the others are additions (plain Iris, net/http, the other .NET
registrations, a minimal API). Ratios are .NET / Iris MVC, paired within blocks.
"""

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, StrMethodFormatter

from hostbench.analysis import figures
from hostbench.analysis.intervals import (
    ci_text,
    describe,
    mean_interval,
    paired_ratios,
    pct_text,
    ratio_text,
    times_text,
)
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.analysis.tables import response_checks
from hostbench.catalog import MODES, mode_color, mode_label
from hostbench.errors import BadInput
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows
BASELINE = "iris-mvc"  # the article's Iris MVC: ratios are X / Iris MVC
MINIMAL = "kestrel-minimal"  # values-minimal under kestrel, compared on the values endpoint
SCENARIOS = ("values", "templates")
# Our scenario -> the article's name for it in reference/.
ARTICLE_SCENARIO = {"values": "values", "templates": "mvc-templates"}
# (our scenario, our mode) -> (the article's mode in reference/, the registration its
# .NET app used): the article's .NET values app used AddMvcCore (after readers' advice), its
# templates app full MVC (AddMvcCore lacked the view services).
ARTICLE_SERVERS = {
    ("values", "kestrel-mvccore"): ("kestrel", "AddMvcCore()"),
    ("values", "iris-mvc"): ("go-iris", ""),
    ("templates", "kestrel"): ("kestrel", "AddMvc()"),
    ("templates", "iris-mvc"): ("go-iris", ""),
}
DOTNET = ("kestrel", "kestrel-mvccore", MINIMAL)
ORDER = ("iris-mvc", "iris", "go-nethttp", "kestrel-mvccore", "kestrel", MINIMAL)
LABELS = {MINIMAL: "Kestrel, minimal API"}
COLORS = {MINIMAL: "#7570b3"}
METRICS = ("rps", "latency_mean_ms", "latency_max_ms", "memory_mb", "duration_s")


def label(mode: str) -> str:
    return LABELS.get(mode) or mode_label(mode)


def _color(mode: str) -> str:
    # This study's own variants first (not catalog modes), then the catalog's colours.
    return COLORS.get(mode) or mode_color(mode)


# --- the article's numbers -----------------------------------------------------------------


def published(ref: pd.DataFrame | None = None) -> pd.DataFrame:
    """The article's figures per server and scenario, from reference/.

    One row per (scenario, our mode mapped to the article's server): server (as the article
    names it), rps, latency_mean_ms, latency_max_ms and duration_s from bombardier's own
    output, memory_mb from the summary paragraph (the only place it is stated), requests
    (from the article's bombardier command), and the quote of the rps.
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
        if registration:  # the .NET app of this test, not the earlier AddMvc run of values
            mine = mine[mine["setup"].str.contains(registration, regex=False)]
            mine = mine[~mine["setup"].str.contains("before the update", regex=False)]
        measured = mine[mine["where"].str.startswith("bombardier")]
        summary = mine[mine["where"].str.startswith("总结")]
        row = {"scenario": scenario, "mode": our_mode, "server": measured["setup"].iloc[0]}
        for metric in METRICS:
            source = summary if metric == "memory_mb" else measured
            values = source.loc[source["metric"] == metric, "value"]
            row[metric] = float(values.iloc[0]) if len(values) else math.nan
        row["requests"] = counts[scenario]
        row["quote"] = measured.loc[measured["metric"] == "rps", "quote"].iloc[0]
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
    """The article's .NET / Iris MVC per scenario, for requests/s and memory."""
    pub = published() if pub is None else pub
    rows = []
    for scenario in SCENARIOS:
        mine = pub[pub["scenario"] == scenario].set_index("mode")
        dotnet = next(m for m in mine.index if m != BASELINE)
        for metric in ("rps", "memory_mb"):
            rows.append(
                {
                    "scenario": scenario,
                    "mode": dotnet,
                    "metric": metric,
                    "article_ratio": mine.loc[dotnet, metric] / mine.loc[BASELINE, metric],
                }
            )
    return pd.DataFrame(rows)


def setup_table(env: dict, params: dict) -> pd.DataFrame:
    """The article's machine, software and loads beside this study's (params as a mapping,
    e.g. StudyParams.to_dict(); env: the run's environment.json)."""
    setup = load_setup(ARTICLE).set_index("item")["value"]
    requests = params.get("requests") or {}
    if not isinstance(requests, dict):
        requests = dict.fromkeys(SCENARIOS, requests)
    go = env.get("goserver", {})
    loads = [
        (f"load: {s}", setup[f"bombardier_{s}"],
         f"-c {', '.join(map(str, params['concurrency']))} -n {requests.get(s, '-')}")
        for s in SCENARIOS
    ]  # fmt: skip
    rows = [
        ("CPU", setup["cpu"], f"{env['cpu_model']} ({env['cpu_cores_logical']} logical cores)"),
        ("RAM", setup["ram"], f"{env['memory_gib']} GiB"),
        ("operating system", setup["os"], f"{env['os']} (kernel {env['kernel']})"),
        (".NET", setup["dotnet_core"], env["dotnet"]["runtimes"]),
        ("Iris (Go)", setup["iris"], f"{go.get('iris', 'unknown')} ({go.get('go', 'unknown')})"),
        ("load tool", setup["load_tool"], env["tools"]["bombardier"]),
        *loads,
    ]
    return pd.DataFrame(rows, columns=["", "the article (2017)", "this run"])


def servers_table(modes: list[str]) -> pd.DataFrame:
    """The servers this study runs and the article's server each stands for, per scenario."""
    pub = published()
    rows = []
    for mode in [m for m in ORDER if m in modes or (m == MINIMAL and "kestrel" in modes)]:
        what = "the same endpoint as a minimal API (values-minimal), no MVC"
        summary_text = MODES[mode].summary if mode in MODES else what
        article = [
            f"{r.scenario}: {r.server}" for r in pub[pub["mode"] == mode].itertuples(index=False)
        ]
        rows.append((label(mode), summary_text, "; ".join(article) or "added here"))
    return pd.DataFrame(rows, columns=["server", "what it is", "the article's server"])


# --- ours ----------------------------------------------------------------------------------


def contenders(results: pd.DataFrame) -> pd.DataFrame:
    """The results with values-minimal folded onto the values endpoint as its own contender
    (mode "kestrel-minimal"), so it pairs with Iris MVC's values runs in the same block."""
    df = results.copy()
    df["mode"] = df["mode"].astype(str)
    df["scenario"] = df["scenario"].astype(str)
    minimal = df["scenario"] == "values-minimal"
    df.loc[minimal, "mode"] = MINIMAL
    df.loc[minimal, "scenario"] = "values"
    return df


def _valid(df: pd.DataFrame) -> pd.DataFrame:
    if "valid" not in df.columns:
        return df
    return df[~df["valid"].isin([False, "False", "false"])]


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and server: mean rps with its 95% interval over blocks, latency, memory."""
    df = _valid(contenders(results))
    rows = []
    for (scenario, mode), runs in df.groupby(["scenario", "mode"], sort=False):
        n, rps, low, high = mean_interval(runs["rps"])
        low = max(low, 0.0) if not math.isnan(low) else low  # requests/s are never negative
        rows.append(
            {
                "scenario": scenario,
                "mode": mode,
                "server": label(mode),
                "n": n,
                "rps": rps,
                "rps_ci_low": low,
                "rps_ci_high": high,
                "latency_mean_ms": runs["latency_mean_ms"].mean(),
                "latency_p99_ms": runs["latency_p99_ms"].mean(),
                "latency_max_ms": runs["latency_max_ms"].max(),
                "rss_mean_mb": runs["rss_server_mean_mb"].mean(),
                "rss_peak_mb": runs["rss_server_peak_mb"].max(),
                "cpu_server_cores": runs["cpu_server_cores"].mean(),
                "requests": int(runs["requests"].iloc[0]),
            }
        )
    out = pd.DataFrame(rows)
    return _ordered(out)


def _ordered(df: pd.DataFrame) -> pd.DataFrame:
    rank = {m: i for i, m in enumerate(ORDER)}
    key = df["scenario"].map({s: i for i, s in enumerate(SCENARIOS)}) * 100 + df["mode"].map(
        lambda m: rank.get(m, len(rank))
    )
    return df.assign(_k=key).sort_values("_k").drop(columns="_k").reset_index(drop=True)


# article_table's columns of the article's numbers: empty (a dash) for the servers it did not run.
ARTICLE_COLUMNS = ("req/s, article", "latency mean [ms], article", "latency max [ms], article",
                   "memory [MB], article", "requests per run, article")  # fmt: skip


# The columns of article_table a page shows, so the table fits the page: the article's numbers
# beside ours (our p99 latency stays in results.csv, the request counts are in the text).
PAGE_COLUMNS = ["server (ours)", "the article's server", "req/s, article", "req/s, ours",
                "latency mean [ms], article", "latency mean [ms], ours",
                "latency max [ms], article", "latency max [ms], ours", "memory [MB], article",
                "RSS mean [MB], ours", "RSS peak [MB], ours"]  # fmt: skip


def checks_table(results: pd.DataFrame) -> pd.DataFrame:
    """Whether every number is a real count of successful responses, per scenario and server
    (tables.response_checks)."""
    out = response_checks(contenders(results), ["scenario", "mode"])
    out.insert(1, "server", out.pop("mode").map(label))
    return out


def article_table(results: pd.DataFrame, scenario: str, pub: pd.DataFrame | None = None):
    """The article's table for one scenario (requests/s, latency, memory) with ours beside it.

    One row per server we ran; the article's columns are filled for the two servers it ran
    (mapped per ARTICLE_SERVERS), empty for our additions.
    """
    if scenario not in SCENARIOS:
        raise BadInput(f"scenario {scenario!r}: the article's tables are {', '.join(SCENARIOS)}")
    pub = published() if pub is None else pub
    ours = summary(results)
    ours = ours[ours["scenario"] == scenario]
    theirs = pub[pub["scenario"] == scenario].set_index("mode")
    rows = []
    for r in ours.itertuples(index=False):
        a = theirs.loc[r.mode] if r.mode in theirs.index else None
        rows.append(
            {
                "server (ours)": r.server,
                "the article's server": a["server"] if a is not None else "",
                "req/s, article": a["rps"] if a is not None else math.nan,
                "req/s, ours": r.rps,
                "latency mean [ms], article": a["latency_mean_ms"] if a is not None else math.nan,
                "latency mean [ms], ours": r.latency_mean_ms,
                "latency p99 [ms], ours": r.latency_p99_ms,
                "latency max [ms], article": a["latency_max_ms"] if a is not None else math.nan,
                "latency max [ms], ours": r.latency_max_ms,
                "memory [MB], article": a["memory_mb"] if a is not None else math.nan,
                "RSS mean [MB], ours": r.rss_mean_mb,
                "RSS peak [MB], ours": r.rss_peak_mb,
                "requests per run, article": a["requests"] if a is not None else math.nan,
                "requests per run, ours": r.requests,
            }
        )
    return pd.DataFrame(rows)


def formatted(table: pd.DataFrame) -> pd.DataFrame:
    """A table of numbers as text for the page: thousands separated, '-' where empty."""

    def cell(v):
        if isinstance(v, str):
            return v
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"

    return table.map(cell)


def ratios(results: pd.DataFrame, metric: str = "rps") -> pd.DataFrame:
    """Every server as a ratio to Iris MVC, paired within blocks, 95% CI, with the article's
    .NET / Iris beside ours where it ran that server, and the ratio in words."""
    df = contenders(results)
    out = paired_ratios(df, BASELINE, metric=metric)
    out = out[out["scenario"].isin(SCENARIOS)].copy()
    article = article_ratios()
    article = article[article["metric"] == ("memory_mb" if metric != "rps" else "rps")]
    out = out.merge(
        article[["scenario", "mode", "article_ratio"]], on=["scenario", "mode"], how="left"
    )
    out["article_ratio_pct"] = 100 * out["article_ratio"]
    out["server"] = out["mode"].map(label)
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", label(BASELINE)
        )
        if metric == "rps"
        else memory_words(r)
        for r in out.itertuples(index=False)
    ]
    out["metric"] = metric
    return _ordered(out)


def dotnet_shares(results: pd.DataFrame) -> pd.DataFrame:
    """The .NET registrations against full MVC on the values endpoint, paired within blocks:
    how much of a request MVC's services cost today (AddMvcCore, a minimal API)."""
    df = contenders(results)
    df = df[(df["scenario"] == "values") & df["mode"].isin(DOTNET)]
    if "kestrel" not in set(df["mode"]):
        return pd.DataFrame()
    out = paired_ratios(df, "kestrel")
    out["server"] = out["mode"].map(label)
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", label("kestrel")
        )
        for r in out.itertuples(index=False)
    ]
    return out


# --- words ---------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return pct_text(x)


def _times(x: float) -> str:
    return times_text(x)


def _ci(r) -> str:
    """The interval as every page prints it (intervals.ci_text)."""
    return ci_text(r.ci_low, r.ci_high, r.confidence)


def memory_words(r) -> str:
    """A memory ratio to Iris MVC as a multiple, in the words its interval allows (the
    pages' one formatter, intervals.describe)."""
    return describe(r.ratio, r.ci_low, r.ci_high, higher="more memory", lower="less memory",
                    confidence=r.confidence, unit="x", baseline="Iris MVC's")  # fmt: skip


def ratio_sentences(rps: pd.DataFrame, memory: pd.DataFrame) -> str:
    """The article's two comparisons, .NET / Iris MVC, then and here (Markdown)."""
    lines = []
    for scenario in SCENARIOS:
        for frame, what in ((rps, "requests/s"), (memory, "memory (RSS mean)")):
            row = frame[(frame["scenario"] == scenario) & frame["article_ratio"].notna()]
            if row.empty:
                continue
            r = row.iloc[0]
            then = _pct(r.article_ratio) if what == "requests/s" else _times(r.article_ratio)
            lines.append(
                f"- **{scenario}, {what}**: {r.server} / {label(BASELINE)} was {then} in the "
                f"article; here {r['in words']}."
            )
    return "\n".join(lines) or "No .NET server ran beside Iris MVC in the same blocks."


def then_and_now(rps: pd.DataFrame, memory: pd.DataFrame, shares: pd.DataFrame, env: dict) -> str:
    """Section "2017 and today": what changed, with this run's numbers (Markdown)."""
    setup = load_setup(ARTICLE).set_index("item")["value"]
    go = env.get("goserver", {})
    lines = [
        f"- **Versions.** The article ran .NET Core {setup['dotnet_core']} and Iris "
        f"{setup['iris']}; this run ran {env['dotnet']['runtimes']} and Iris "
        f"{go.get('iris', 'unknown')} built with {go.get('go', 'unknown')}.",
    ]
    gaps = []
    for scenario in SCENARIOS:
        row = rps[(rps["scenario"] == scenario) & rps["article_ratio"].notna()]
        if not row.empty and not math.isnan(row.iloc[0].ratio):
            r = row.iloc[0]
            gaps.append(f"{scenario}: {_pct(r.article_ratio)} then, {_pct(r.ratio)} now")
    if gaps:
        lines.append(
            "- **The gap in requests/s** (.NET as % of Iris MVC): " + "; ".join(gaps) + ". The "
            f"two machines differ (the article's {setup['cpu']} on {setup['os']}; here "
            f"{env['cpu_model']}, {env['cpu_cores_logical']} logical cores shared with the load "
            f"generator, on {env['os']}), so the ratios compare, the absolute numbers do not."
        )
    if not shares.empty:
        parts = [f"{r.server}: {r['in words']}" for _, r in shares.iterrows()]
        lines.append(
            "- **MVC's share of a request today** (values endpoint against full MVC, paired "
            "within blocks): " + "; ".join(parts) + ". The readers' advice of 2017 (AddMvcCore "
            "instead of AddMvc) trims what is registered; a minimal API leaves out MVC's action "
            "pipeline altogether."
        )
    go_rows = rps[(rps["scenario"] == "values") & rps["mode"].isin(["iris", "go-nethttp"])]
    if not go_rows.empty:
        parts = [f"{r.server}: {r['in words']}" for _, r in go_rows.iterrows()]
        lines.append("- **The Go side** (values, against Iris MVC): " + "; ".join(parts) + ".")
    mem = memory[memory["article_ratio"].notna()]
    if not mem.empty:
        parts = [
            f"{r.scenario}: {_times(r.article_ratio)} then, {_times(r.ratio)} now"
            for r in mem.itertuples(index=False)
        ]
        lines.append(
            "- **Memory** (.NET's RSS as a multiple of Iris MVC's): "
            + "; ".join(parts)
            + ". ASP.NET Core apps use the server garbage collector (a heap per core) by default; "
            "since .NET 9 it adapts its heap count to the load (DATAS), which keeps a small app's "
            "heaps small. RSS here includes the runtime's shared "
            "libraries; the article measured without the dotnet framework, by a tool it does not "
            "name."
        )
    return "\n".join(lines)


def headline(rps: pd.DataFrame, summary_table: pd.DataFrame) -> str:
    """One line for the batch index: .NET / Iris MVC in the article's two tests, and memory."""
    parts = []
    for scenario in SCENARIOS:
        row = rps[(rps["scenario"] == scenario) & rps["article_ratio"].notna()]
        if row.empty:
            continue
        r = row.iloc[0]
        ours = ratio_text(r.ratio, r.ci_low, r.ci_high, r.confidence)
        parts.append(f"{scenario} {r.server} {ours} (article {_pct(r.article_ratio)})")
    if not parts:
        return "no .NET / Iris MVC ratio to report"
    mem = summary_table[summary_table["scenario"] == "values"].set_index("mode")["rss_mean_mb"]
    memory = ""
    if BASELINE in mem.index and "kestrel-mvccore" in mem.index:
        memory = (
            f"; RSS {mem['kestrel-mvccore']:.0f} MB (.NET) vs {mem[BASELINE]:.0f} MB (Iris MVC)"
        )
    return ".NET as % of Iris MVC req/s: " + ", ".join(parts) + memory


# --- figures -------------------------------------------------------------------------------


def throughput_figure(results: pd.DataFrame) -> Figure:
    """Requests/s of every server per scenario: the mean over blocks (bar) and each block's
    run (dots), so the spread shows even with two blocks."""
    table = summary(results)
    runs = _valid(contenders(results))
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        x = np.arange(len(rows))
        ax.bar(x, rows["rps"], 0.7, color=[_color(m) for m in rows["mode"]], zorder=2)
        for xi, mode, v in zip(x, rows["mode"], rows["rps"], strict=True):
            mine = runs[(runs["scenario"] == scenario) & (runs["mode"] == mode)]["rps"]
            ax.scatter(np.full(len(mine), xi), mine, s=14, color="black", zorder=3)
            top = max(v, mine.max())
            ax.annotate(f"{v:,.0f}", (xi, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9)  # fmt: skip
        ax.set_xticks(x, [label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(f"{scenario}")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("requests/s")
    n = int(table["n"].max()) if len(table) else 0
    fig.suptitle(f"Throughput per server (bombardier; bars: mean of {n} block(s), dots: each run)")
    return fig


def ratio_figure(rps: pd.DataFrame, memory: pd.DataFrame) -> Figure:
    """Each server as % of Iris MVC (paired within blocks, 95% CI), requests/s and memory;
    the article's .NET / Iris as a hollow diamond beside the server it ran."""
    fig = Figure(figsize=(10, 5.2), layout="constrained")
    axes = fig.subplots(1, 2, squeeze=False)[0]
    for ax, frame, what in ((axes[0], rps, "requests/s"), (axes[1], memory, "RSS mean")):
        frame = frame[frame["n"] > 0]
        labels = [f"{r.scenario}: {r.server}" for r in frame.itertuples(index=False)]
        y = np.arange(len(frame))[::-1]
        pct = 100 * frame["ratio"]
        low = (pct - 100 * frame["ci_low"]).fillna(0).clip(lower=0)
        high = (100 * frame["ci_high"] - pct).fillna(0).clip(lower=0)
        ax.barh(y, pct, 0.6, color=[_color(m) for m in frame["mode"]], xerr=[low, high],
                capsize=3, error_kw={"elinewidth": 1.1})  # fmt: skip
        article = frame["article_ratio"].notna()
        ax.scatter(100 * frame.loc[article, "article_ratio"], y[article.to_numpy()], marker="D",
                   s=60, facecolor="white", edgecolor="black", zorder=3,
                   label="the article (2017)")  # fmt: skip
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"{what} [% of Iris MVC]")
        ax.set_xscale("log")
        # Every whisker ends inside the axes, however wide (two blocks can span decades).
        known = frame[["ratio", "ci_low", "ci_high", "article_ratio"]].stack() * 100
        known = known[known > 0]
        low, high = min(known.min(), 100) / 1.5, max(known.max(), 100) * 1.5
        ax.set_xlim(low, high)
        ax.set_xticks(figures.log_ticks(low, high))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,g}%"))
        ax.xaxis.set_minor_formatter(StrMethodFormatter(""))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.4)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", frameon=False)
    fig.suptitle("Every server relative to Iris MVC, paired within blocks (error bars: 95% CI)")
    return fig


def memory_figure(results: pd.DataFrame, pub: pd.DataFrame | None = None) -> Figure:
    """The article's memory column: each server's RSS (mean at steady state, and its peak),
    with the article's memory as hatched bars beside the servers it ran."""
    pub = published() if pub is None else pub
    table = summary(results)
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False, sharey=True)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        theirs = pub[pub["scenario"] == scenario].set_index("mode")["memory_mb"]
        x = np.arange(len(rows))
        ax.bar(x - 0.2, rows["rss_mean_mb"], 0.4, color=[_color(m) for m in rows["mode"]],
               label="ours: RSS mean")  # fmt: skip
        ax.scatter(x - 0.2, rows["rss_peak_mb"], marker="_", s=300, color="black", zorder=3,
                   label="ours: RSS peak")  # fmt: skip
        art = [theirs.get(m, math.nan) for m in rows["mode"]]
        ax.bar(x + 0.2, art, 0.4, facecolor="white", edgecolor="0.3", hatch="///",
               label="the article: memory")  # fmt: skip
        for xi, v in zip(x, rows["rss_mean_mb"], strict=True):
            ax.annotate(f"{v:.0f}", (xi - 0.2, v), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9)  # fmt: skip
        for xi, v in zip(x, art, strict=True):
            if not math.isnan(v):
                ax.annotate(f"{v:.0f}", (xi + 0.2, v), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom", fontsize=9,
                            color="0.3")  # fmt: skip
        ax.set_xticks(x, [label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(scenario)
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("memory [MB]")
    axes[0].legend(fontsize=9, loc="upper left")
    fig.suptitle("Memory per server (the article's memory column)")
    return fig
