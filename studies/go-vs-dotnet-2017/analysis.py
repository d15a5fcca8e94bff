"""Go (Iris) vs ASP.NET Core, 2017: the article's tables beside ours, .NET / Iris with intervals.

The article (Gerasimos Maropoulos, August 2017, read from its Chinese translation in
reference/) ran Iris 8.3 MVC and ASP.NET Core 2.0 MVC on Windows with bombardier at 125
connections: GET /api/values/{id} (5,000,000 requests) and a templates page (1,000,000
requests; .NET with full MVC). For values its bombardier output is the re-run with AddMvcCore
(the 2017-08-20 update), its summary paragraph the earlier AddMvc run. Its figures:
requests/s, latency, the time for all requests, and memory "excluding the dotnet framework".
Here every number of the article comes from hostbench.analysis.reference; ours from
results.csv. Our modes map onto the article's servers per scenario (ARTICLE_SERVERS); the
others are additions (plain Iris, net/http, a minimal API). Ratios are .NET / Iris MVC,
paired within blocks. Memory compares by our reading of the article's words ("excluding the
dotnet framework"; it names no tool): without the pages mapped from files (MEMORY), the whole
RSS beside it (MEMORY_WHOLE). The article's claims, each read once as a ratio, are in
reference/claims.csv, judged by hostbench.analysis.claims (no hook: the mapping onto our modes
and metrics is in that file).
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, StrMethodFormatter

from hostbench.analysis import convergence, figures, layout, prose, window_design
from hostbench.analysis.differences import bytes_per_response
from hostbench.analysis.intervals import mean_interval, paired_ratios
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.analysis.tables import processor, response_checks
from hostbench.analysis.wording import describe, pct_text, ratio_text, times_text
from hostbench.catalog import MODES, mode_color, mode_label
from hostbench.errors import BadInput
from hostbench.params import StudyParams
from hostbench.paths import RUNS
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


# --- the article's numbers -----------------------------------------------------------------


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


def setup_table(env: dict, params: dict) -> pd.DataFrame:
    """The article's machine, software and loads beside this study's (params as a mapping,
    e.g. StudyParams.to_dict(); env: the run's environment.json)."""
    setup = load_setup(ARTICLE).set_index("item")["value"]
    go = env.get("goserver", {})
    loads = [(f"load: {s}", setup[f"bombardier_{s}"], _load_text(params, s)) for s in SCENARIOS]
    rows = [
        ("CPU", setup["cpu"], f"{processor(env)} ({env['cpu_cores_logical']} logical cores)"),
        ("RAM", setup["ram"], f"{env['memory_gib']} GiB"),
        ("operating system", setup["os"], f"{env['os']} (kernel {env['kernel']})"),
        (".NET", setup["dotnet_core"], env["dotnet"]["runtimes"]),
        ("Iris (Go)", setup["iris"], f"{go.get('iris', 'unknown')} ({go.get('go', 'unknown')})"),
        ("load tool", setup["load_tool"], env["tools"]["bombardier"]),
        *loads,
    ]
    return pd.DataFrame(rows, columns=["", "the article (2017)", "this run"])


def _load_text(params: dict, scenario: str) -> str:
    """bombardier's options for a scenario as this run set them: "-c 125 -n 5000000", or,
    timed, "-c 125 -d 10s", or, in shared windows, what each server got of them."""
    connections = f"-c {', '.join(map(str, params['concurrency']))}"
    requests = params.get("requests") or {}
    if not isinstance(requests, dict):
        requests = dict.fromkeys(SCENARIOS, requests)
    if requests:
        return f"{connections} -n {requests.get(scenario, '-')}"
    seconds, slice_s = params["duration_s"], window_design.slice_s(params)
    if slice_s is None:
        return f"{connections} -d {seconds:g}s"
    each = window_design.alternating_runs(seconds, slice_s, "server", "servers")
    return f"{connections} -d {slice_s:g}s: {each}"


def servers_table(modes: list[str]) -> pd.DataFrame:
    """The servers this study runs and the article's server each stands for, per scenario."""
    pub = published()
    rows = []
    folded = MINIMAL not in modes  # an earlier run's values-minimal, in kestrel's app
    for mode in [m for m in ORDER if m in modes or (m == MINIMAL and "kestrel" in modes)]:
        what = "the same endpoint as a minimal API (values-minimal) in kestrel's app"
        summary_text = what if mode == MINIMAL and folded else MODES[mode].summary
        article = [
            f"{r.scenario}: {r.server}" for r in pub[pub["mode"] == mode].itertuples(index=False)
        ]
        rows.append((mode_label(mode), summary_text, "; ".join(article) or "added here"))
    return pd.DataFrame(rows, columns=["server", "what it is", "the article's server"])


# --- ours ----------------------------------------------------------------------------------


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
    out.insert(1, "server", out.pop("mode").map(mode_label))
    return out


def article_table(results: pd.DataFrame, scenario: str, pub: pd.DataFrame | None = None):
    """The article's table for one scenario (requests/s, latency, memory) with ours beside it.

    One row per server we ran; the article's columns are filled for the servers it ran
    (mapped per ARTICLE_SERVERS), empty for our additions. Ours are means over blocks (the
    maximum latency: each run's, averaged). Memory: the article's figure (excluding the dotnet
    framework), ours without the pages mapped from files (our reading of its words), and our
    whole RSS (mean and peak), which counts those files.
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
                "memory without mapped files [MB], ours": r.rss_anon_mean_mb,
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
    .NET / Iris beside ours where it ran that server, and the ratio in words. The article's
    memory ratio stands beside MEMORY (memory without mapped files, our reading of its
    "excluding the dotnet framework") only, not beside the whole RSS. Empty when
    the results lack `metric` (runs from before the harness recorded it)."""
    df = contenders(results)
    if metric not in df or pd.to_numeric(df[metric], errors="coerce").isna().all():
        columns = ["scenario", "mode", "server", "n", "ratio", "ci_low", "ci_high",
                   "confidence", "article_ratio", "in words"]  # fmt: skip
        return pd.DataFrame(columns=columns)
    out = paired_ratios(df, BASELINE, metric=metric)
    out = out[out["scenario"].isin(SCENARIOS)].copy()
    article = article_ratios()
    compared = {"rps": "rps", MEMORY: "memory_mb"}.get(metric)
    article = article[article["metric"] == compared]
    out = out.merge(
        article[["scenario", "mode", "article_ratio"]], on=["scenario", "mode"], how="left"
    )
    out["article_ratio_pct"] = 100 * out["article_ratio"]
    out["server"] = out["mode"].map(mode_label)
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", mode_label(BASELINE)
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
    out["server"] = out["mode"].map(mode_label)
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", mode_label("kestrel")
        )
        for r in out.itertuples(index=False)
    ]
    return out


# --- words ---------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return pct_text(x)


def _times(x: float) -> str:
    return times_text(x)


def memory_words(r) -> str:
    """A memory ratio to Iris MVC as a multiple, in the words its interval allows (the
    pages' one formatter, wording.describe)."""
    return describe(r.ratio, r.ci_low, r.ci_high, higher="more memory", lower="less memory",
                    confidence=r.confidence, unit="x", baseline="Iris MVC's")  # fmt: skip


def ratio_sentences(rps: pd.DataFrame, memory: pd.DataFrame, whole: pd.DataFrame) -> str:
    """The article's comparisons, .NET / Iris MVC, then and here (Markdown): requests/s, and
    memory by our reading of the article's words (`memory`: ratios of MEMORY) with the whole
    RSS (`whole`: ratios of MEMORY_WHOLE) beside it, said to be the other measure."""
    lines = []
    for scenario in SCENARIOS:
        for _, r in rps[(rps["scenario"] == scenario) & rps["article_ratio"].notna()].iterrows():
            lines.append(
                f"- **{scenario}, requests/s**: {_server(scenario, r['mode'])} / "
                f"{mode_label(BASELINE)} was {_pct(r.article_ratio)} in the article; here "
                f"{r['in words']}."
            )
        article = article_ratios()
        article = article[(article["scenario"] == scenario) & (article["metric"] == "memory_mb")]
        for a in article.itertuples(index=False):
            same = _row(memory, scenario, a.mode)
            other = _row(whole, scenario, a.mode)
            ours = same["in words"] if same is not None else "not recorded in this run"
            text = (
                f"- **{scenario}, memory**: {_server(scenario, a.mode)} / "
                f"{mode_label(BASELINE)} was {_times(a.article_ratio)} in the article, "
                "excluding the dotnet framework (it "
                f"names no tool); here, without the pages mapped from files ({MEMORY_READING}), "
                f"{ours}."
            )
            if other is not None:
                text += (
                    f" The whole RSS, which counts the runtime's and the framework's files, "
                    f"the other measure: {other['in words']}."
                )
            lines.append(text)
    return "\n".join(lines) or "No .NET server ran beside Iris MVC in the same blocks."


def _server(scenario: str, mode: str) -> str:
    """Our server's name, with the article's .NET registration it stands beside."""
    registration = ARTICLE_SERVERS.get((scenario, mode), ("", ""))[1]
    return (
        f"{mode_label(mode)} (the article's {registration} run)"
        if registration
        else mode_label(mode)
    )


def _row(frame: pd.DataFrame, scenario: str, mode: str):
    """The ratio row of one server and scenario, or None."""
    rows = frame[(frame["scenario"] == scenario) & (frame["mode"] == mode)]
    return None if rows.empty else rows.iloc[0]


def then_and_now(rps: pd.DataFrame, memory: pd.DataFrame, shares: pd.DataFrame, env: dict,
                 table: pd.DataFrame | None = None) -> str:  # fmt: skip
    """Section "2017 and today": what changed, with this run's numbers (Markdown). `table`:
    summary(results), for the cores each server and bombardier used (cpu_share_text)."""
    setup = load_setup(ARTICLE).set_index("item")["value"]
    go = env.get("goserver", {})
    lines = [
        f"- **Versions.** The article ran .NET Core {setup['dotnet_core']} and Iris "
        f"{setup['iris']}; this run ran {env['dotnet']['runtimes']} and Iris "
        f"{go.get('iris', 'unknown')} built with {go.get('go', 'unknown')}.",
    ]
    gaps = []
    for scenario, mode in HEADLINE_SERVER.items():
        r = _row(rps, scenario, mode)
        if r is not None and not math.isnan(r.ratio) and not math.isnan(r.article_ratio):
            gaps.append(f"{scenario}: {_pct(r.article_ratio)} then, {_pct(r.ratio)} now")
    if gaps:
        share = cpu_share_text(table, env) if table is not None else ""
        # Over ssh (tables.where_it_ran) the load generator had a host of its own.
        load = "(the load generator on a host of its own)" if env.get("load_host") else (
            "shared with the load generator")  # fmt: skip
        lines.append(
            "- **The gap in requests/s** (.NET as % of Iris MVC): " + "; ".join(gaps) + ". The "
            f"two machines differ (the article's {setup['cpu']} on {setup['os']}; here "
            f"{processor(env)}, {env['cpu_cores_logical']} logical cores {load}, on "
            f"{env['os']}), so the absolute numbers do not compare"
            + (f"; nor are the years all that moved the ratio. {share}" if share else ".")
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
            f"{r.scenario} ({r.server}): {_times(r.article_ratio)} then, {_times(r.ratio)} now"
            for r in mem.itertuples(index=False)
        ]
        lines.append(
            "- **Memory** (.NET as a multiple of Iris MVC, without the pages mapped from files, "
            f"{MEMORY_READING}): "
            + "; ".join(parts)
            + ". ASP.NET Core apps use the server garbage collector (a heap per core) by default; "
            "since .NET 9 it adapts its heap count to the load (DATAS), which keeps a small app's "
            "heaps small. The article names neither its tool nor what exactly it left out: "
            "leaving out the pages mapped from files is our reading of its words."
        )
    return "\n".join(lines)


def cpu_share_text(table: pd.DataFrame, env: dict) -> str:
    """How much of the CPU each server had beside bombardier here, against the article's
    processor, from summary()'s columns (each run's cores, averaged over blocks): the share
    of the CPU is one difference behind a ratio that moved, besides the years."""
    rows = table[table["scenario"].isin(SCENARIOS)].dropna(subset=["cpu_server_cores"])
    if rows.empty:
        return ""
    cores = env.get("cpu_cores_logical")
    of = f" of the {cores} logical cores" if cores else ""
    busy = rows["cpu_total_pct"].dropna()
    machine = f", the machine {busy.mean():.0f}% busy on average" if len(busy) else ""
    return (
        f"Here each server used {prose.span(rows['cpu_server_cores'], '.2f')} cores{of} "
        f"(its mean over its runs), with bombardier taking "
        f"{prose.span(rows['cpu_loadgen_cores'], '.2f')} beside it{machine}; the article's "
        f"{load_setup(ARTICLE).set_index('item').loc['cpu', 'value']} has "
        f"{ARTICLE_CPU_CORES} cores and {ARTICLE_CPU_THREADS} threads, so its "
        "servers could spread over more than one core beside bombardier. A server held to "
        "about one core is measured by what a request costs it there, not by how it spreads "
        "over cores: the ratio compares the servers on this share of the CPU, not on the "
        "article's."
    )


def memory_split(table: pd.DataFrame) -> str:
    """What part of each server's RSS is mapped from files, per scenario (Markdown): for
    .NET the runtime and the shared framework's assemblies, which the article's figures
    exclude; for Go its own binary. From summary()."""
    rows = table[table["rss_anon_mean_mb"].notna()]
    if rows.empty:
        return (
            f"This run did not record memory without mapped files (`{MEMORY}`): it predates "
            "that column, so only the whole RSS is shown, which counts the framework's files "
            "the article's figures leave out."
        )
    lines = []
    for scenario in SCENARIOS:
        mine = rows[rows["scenario"] == scenario]
        parts = [
            f"{r.server} {r.rss_mean_mb:.0f} MB, of it {r.rss_mean_mb - r.rss_anon_mean_mb:.0f} MB "
            "mapped from files"
            for r in mine.itertuples(index=False)
        ]
        if parts:
            lines.append(f"- **{scenario}** (RSS mean): " + "; ".join(parts) + ".")
    return "\n".join(lines)


def article_bytes_per_response(scenario: str = "mvc-templates") -> dict[str, float]:
    """Bytes per response (headers included) the article's bombardier outputs imply: their
    throughput (MB/s, 10^6 bytes) over their requests/s, per server (reference rows)."""
    ref = load_reference(ARTICLE)
    ref = ref[ref["where"].str.startswith("bombardier output") & (ref["scenario"] == scenario)]
    out = {}
    for mode, rows in ref.groupby("mode"):
        value = rows.set_index("metric")["value"]
        out[str(mode)] = 1e6 * float(value["throughput_mb_s"]) / float(value["rps"])
    return out


def workload_differences(results: pd.DataFrame | None = None) -> str:
    """What differs from the article in the two workloads, said where the ratios are shown;
    with `results`, our page's size as received."""
    sizes = article_bytes_per_response()
    pages = " and ".join(f"{size:,.0f}" for size in sorted(sizes.values()))
    ours = "" if results is None else templates_size(results)
    return (
        "The templates page has the article's shape, not its words: its test served the "
        "ASP.NET Core MVC project template's home page at / "
        f"({pages} bytes per response with headers: its MB/s over its req/s); ours, at / "
        "too, is a layout around a four-slide carousel and four columns of links written "
        f"for this package{ours}. Iris MVC here binds its "
        "controllers by hand as Iris's mvc package does, because that package needs modules "
        "the offline module mirror lacks (testapp/go/README.md)."
    )


def templates_size(results: pd.DataFrame) -> str:
    """Our templates page as the two compared servers (HEADLINE_SERVER's and Iris MVC) served
    it, bytes per response with headers: ", 7,616 bytes per response with headers from both
    servers", or each server's where they differ; "" where no window recorded them."""
    kept = valid_rows(results)
    sizes = {}
    for mode in (HEADLINE_SERVER["templates"], BASELINE):
        measured = bytes_per_response(kept[kept["mode"].astype(str) == mode])
        if "templates" in measured:
            sizes[mode_label(mode)] = f"{measured['templates']:,.0f}"
    if not sizes:
        return ""
    if len(set(sizes.values())) == 1:
        both = "from both servers" if len(sizes) == 2 else f"from {next(iter(sizes))}"
        return f", {next(iter(sizes.values()))} bytes per response with headers {both}"
    (server, size), (other, other_size) = sizes.items()
    return (f", {size} bytes per response with headers from {server} and {other_size} from "
            f"{other}")  # fmt: skip


def headline(rps: pd.DataFrame, memory: pd.DataFrame, results: pd.DataFrame | None = None) -> str:
    """One line for the batch index: .NET / Iris MVC requests/s in the article's two tests
    (its final .NET apps, HEADLINE_SERVER), and memory by our reading of its words (`memory`:
    ratios of MEMORY, without the pages mapped from files); `results` gives our page's size."""
    parts = []
    for scenario, mode in HEADLINE_SERVER.items():
        r = _row(rps, scenario, mode)
        if r is None or math.isnan(r.article_ratio):
            continue
        ours = ratio_text(r.ratio, r.ci_low, r.ci_high, r.confidence)
        parts.append(f"{scenario} {r.server} {ours} (article {_pct(r.article_ratio)})")
    if not parts:
        return "no .NET / Iris MVC ratio to report"
    mem = [
        f"{r.scenario} {r.server} {_times(r.ratio)} (article {_times(r.article_ratio)})"
        for r in memory[memory["article_ratio"].notna()].itertuples(index=False)
    ]
    memory_text = (
        f"; memory without mapped files ({MEMORY_READING}) as a multiple of Iris MVC's: "
        + ", ".join(mem)
        if mem
        else ""
    )
    return (
        ".NET as % of Iris MVC req/s: "
        + ", ".join(parts)
        + memory_text
        + ". "
        + workload_differences(results)
    )


# --- figures -------------------------------------------------------------------------------


def throughput_figure(results: pd.DataFrame) -> Figure:
    """Requests/s of every server per scenario: the mean over blocks (bar) and each block's
    run (dots), so the spread shows even with two blocks."""
    table = summary(results)
    runs = valid_rows(contenders(results))
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        x = np.arange(len(rows))
        ax.bar(x, rows["rps"], 0.7, color=[mode_color(m) for m in rows["mode"]], zorder=2)
        for xi, mode, v in zip(x, rows["mode"], rows["rps"], strict=True):
            mine = runs[(runs["scenario"] == scenario) & (runs["mode"] == mode)]["rps"]
            ax.scatter(np.full(len(mine), xi), mine, s=14, color="black", zorder=3)
            top = max(v, mine.max())
            ax.annotate(f"{v:,.0f}", (xi, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9)  # fmt: skip
        ax.set_xticks(x, [mode_label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(f"{scenario}")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("requests/s")
    n = int(table["n"].max()) if len(table) else 0
    fig.suptitle(f"Throughput per server (bombardier; bars: mean of {n} block(s), dots: each run)")
    return figures.set_finding(fig, "Mean requests/s, " + _ranges(table, "rps", "{:,.0f}"))


def _ranges(table: pd.DataFrame, column: str, spec: str, unit: str = "") -> str:
    """Per scenario of a summary() table, the lowest and highest mean of `column` and whose
    they are: a range, not a ranking (a mean beside its dots, no interval between servers)."""
    parts = []
    for scenario in SCENARIOS:
        rows = table[table["scenario"] == scenario].dropna(subset=[column])
        if rows.empty:
            continue
        low, high = figures.extremes(rows, column)
        parts.append(f"{scenario}: {spec.format(low[column])}{unit} ({low['server']}) to "
                     f"{spec.format(high[column])}{unit} ({high['server']})")  # fmt: skip
    return "; ".join(parts)


def ratio_figure(rps: pd.DataFrame, memory: pd.DataFrame) -> Figure:
    """Each server as % of Iris MVC (paired within blocks, 95% CI), requests/s and memory
    without mapped files (our reading of the article's words: ratios of MEMORY); the
    article's .NET / Iris as a hollow diamond beside the server it ran."""
    fig = Figure(figsize=(10, 5.2), layout="constrained")
    axes = fig.subplots(1, 2, squeeze=False)[0]
    panels = ((axes[0], rps, "requests/s"), (axes[1], memory, "memory"))
    for ax, frame, what in panels:
        frame = frame[frame["n"] > 0]
        if frame.empty:
            ax.text(0.5, 0.5, "not recorded in this run", ha="center", va="center",
                    transform=ax.transAxes)  # fmt: skip
            ax.set_axis_off()
            continue
        labels = [f"{r.scenario}: {r.server}" for r in frame.itertuples(index=False)]
        y = np.arange(len(frame))[::-1]
        pct = 100 * frame["ratio"]
        low = (pct - 100 * frame["ci_low"]).fillna(0).clip(lower=0)
        high = (100 * frame["ci_high"] - pct).fillna(0).clip(lower=0)
        ax.barh(y, pct, 0.6, color=[mode_color(m) for m in frame["mode"]], xerr=[low, high],
                capsize=3, error_kw={"elinewidth": 1.1})  # fmt: skip
        article = frame["article_ratio"].notna()
        ax.scatter(100 * frame.loc[article, "article_ratio"], y[article.to_numpy()], marker="D",
                   s=60, facecolor="white", edgecolor="black", zorder=3,
                   label="the article (2017)")  # fmt: skip
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
        ax.set_yticks(y, labels)
        ax.set_xlabel(
            f"{what} [% of Iris MVC]" + ("\n(without mapped files)" if what == "memory" else "")
        )
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
    layout.legend_below(fig, handles, names, ncols=1, frameon=False)
    fig.suptitle("Every server relative to Iris MVC, paired within blocks (error bars: 95% CI)")
    found = []
    for frame, what in ((rps, "Requests/s"), (memory, "memory")):
        if len(frame[frame["n"] > 0]):
            text = figures.ratio_finding(_in_pct(frame))
            found.append(f"{what}: {text[0].lower()}{text[1:]}")
    return figures.set_finding(fig, "; ".join(found))


def _in_pct(frame: pd.DataFrame) -> pd.DataFrame:
    """ratios() rows as figures.ratio_finding reads them: its % columns, the article's too."""
    return frame[frame["n"] > 0].rename(columns={"article_ratio_pct": "article_pct"})


def memory_figure(results: pd.DataFrame, pub: pd.DataFrame | None = None) -> Figure:
    """The article's memory column: each server's RSS mean split into what is mapped from
    files (light, on top: for .NET the runtime and the framework) and the rest (solid: the
    part we set beside the article's figures, our reading of "excluding the dotnet
    framework"), its peak,
    and the article's memory as hatched bars beside the servers it ran."""
    pub = published() if pub is None else pub
    table = summary(results)
    fig = Figure(figsize=(10, 4.4), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False, sharey=True)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        theirs = pub[pub["scenario"] == scenario].set_index("mode")["memory_mb"]
        x = np.arange(len(rows))
        colors = [mode_color(m) for m in rows["mode"]]
        own = rows["rss_anon_mean_mb"]
        if own.notna().all():
            ax.bar(x - 0.2, own, 0.4, color=colors,
                   label="ours: without mapped files (our reading of the article's)")  # fmt: skip
            ax.bar(x - 0.2, rows["rss_mean_mb"] - own, 0.4, bottom=own, color=colors, alpha=0.35,
                   label="ours: mapped from files (runtime, framework, binary)")  # fmt: skip
        else:  # a run from before the split was recorded: the whole RSS only
            ax.bar(x - 0.2, rows["rss_mean_mb"], 0.4, color=colors, alpha=0.35,
                   label="ours: RSS mean (with the files the article leaves out)")  # fmt: skip
        ax.scatter(x - 0.2, rows["rss_peak_mb"], marker="_", s=300, color="black", zorder=3,
                   label="ours: RSS peak")  # fmt: skip
        art = [theirs.get(m, math.nan) for m in rows["mode"]]
        ax.bar(x + 0.2, art, 0.4, facecolor="white", edgecolor="0.3", hatch="///",
               label="the article: memory, excluding the dotnet framework")  # fmt: skip
        tops = np.fmax(rows["rss_mean_mb"], rows["rss_peak_mb"])  # above the peak's mark
        for xi, v, top in zip(x, rows["rss_mean_mb"], tops, strict=True):  # the whole RSS
            ax.annotate(f"{v:.0f}", (xi - 0.2, top), xytext=(0, 4), textcoords="offset points",
                        ha="center", va="bottom", fontsize=9, color="0.4")  # fmt: skip
        for xi, v in zip(x, own, strict=True):  # the comparable part inside its bar
            if not math.isnan(v):
                ax.annotate(f"{v:.0f}", (xi - 0.2, v / 2), ha="center", va="center",
                            fontsize=9, color="white", fontweight="bold")  # fmt: skip
        for xi, v in zip(x, art, strict=True):
            if not math.isnan(v):
                ax.annotate(f"{v:.0f}", (xi + 0.2, v), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom", fontsize=9,
                            color="0.3")  # fmt: skip
        ax.set_xticks(x, [mode_label(m) for m in rows["mode"]], rotation=30, ha="right")
        ax.set_title(scenario)
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("memory [MB]")
    # Neutral swatches: the bars take each server's colour, the legend says what a shade is.
    handles = [
        Patch(facecolor="0.3", label="ours: without mapped files (our reading of the article's)"),
        Patch(facecolor="0.3", alpha=0.35, label="ours: mapped from files (runtime, framework, "
              "binary); above: the whole RSS"),
        Line2D([], [], color="black", linewidth=2, label="ours: RSS peak"),
        Patch(facecolor="white", edgecolor="0.3", hatch="///",
              label="the article: memory, excluding the dotnet framework"),
    ]  # fmt: skip
    layout.legend_below(fig, handles, ncols=2, fontsize=9, frameon=False)
    fig.suptitle(
        "Memory per server (the article's memory column; ours: RSS mean, solid the part "
        "without mapped files)"
    )
    own = "rss_anon_mean_mb" if table["rss_anon_mean_mb"].notna().all() else "rss_mean_mb"
    what = "without mapped files" if own == "rss_anon_mean_mb" else "the whole RSS"
    finding = f"Mean memory ({what}), " + _ranges(table, own, "{:.0f}", " MB")
    return figures.set_finding(fig, finding)


# --- convergence with the request count (params/convergence.yaml) ----------------------------

CONVERGENCE_PROFILE = "convergence"  # each cell once at the article's counts, progress on
CONVERGED_PROFILE = "paper-converged"  # fewer requests: only counts the evidence supports
# The committed convergence run, measured alone: the evidence any shorter profile must cite.
EVIDENCE = RUNS / f"example-{ARTICLE}-{CONVERGENCE_PROFILE}"


def convergence_curves(results: pd.DataFrame, run_dir) -> dict:
    """Each cell's curve from its run's progress.csv (by (mode, scenario)), also written to the
    run folder's convergence.csv, which outlives the archived run folders; a run that
    recorded no progress (every profile but `convergence`) gives its convergence.csv's, if it
    has one, or none."""
    curves = convergence.run_curves(results, run_dir)
    if curves:
        convergence.write_curves(curves, run_dir)
    elif (Path(run_dir) / convergence.CURVES_FILE).is_file():
        curves = convergence.read_curves(run_dir)
    return curves


def evidence_curves(evidence=EVIDENCE) -> dict:
    """The committed convergence run's curves; none while no such run is committed."""
    return convergence.read_curves(evidence) if (Path(evidence) / "results.csv").is_file() else {}


def converged_counts(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT) -> dict:
    """Per scenario, the count from which every cell's mean rate and memory stayed within the
    tolerance of the whole run's; None for a scenario that never settled before its end."""
    per = convergence.per_scenario(convergence.table(curves, tolerance_pct))
    return {
        r.scenario: (r.converged_from if r.converged_from < r.requests else None)
        for r in per.itertuples(index=False)
    }


def convergence_table(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT):
    """Per cell, in the study's server order: the run's count, its rate and memory, and the
    count from which each (and both) stayed within the tolerance of the run's own value."""
    cells = convergence.table(curves, tolerance_pct)
    cells["server"] = [mode_label(m) for m in cells["mode"]]
    cells = _ordered(cells)
    names = {
        "requests": "requests in the run",
        "rate": "req/s, whole run",
        "memory_mb": "memory [MB], whole run",
        "rate_from": "req/s within from",
        "memory_from": "memory within from",
        "converged_from": "both within from",
        "converged_share": "share of the run",
    }
    return cells.rename(columns=names)[["scenario", "server", *names.values()]]


def convergence_text(
    curves: dict,
    params: StudyParams | None = None,
    own: bool = True,
    tolerance_pct: float = convergence.TOLERANCE_PCT,
) -> str:
    """What the curves say about request counts: per scenario, the count from which every
    cell's mean rate and memory stayed within the tolerance of its whole run's; whose curves
    they are (`own`: this run's, else the committed convergence run's); and, given this run's
    `params`, where its own counts stand against them. One line when there are no curves."""
    if not curves:
        return (
            "This run recorded no progress (`progress_interval_s` is off), and no "
            f"`{CONVERGENCE_PROFILE}` run is committed (`data/runs/{EVIDENCE.name}/`): the "
            f"`{CONVERGENCE_PROFILE}` profile records it."
        )
    per = convergence.per_scenario(convergence.table(curves, tolerance_pct))
    lines = []
    for r in per.itertuples(index=False):
        cells = "its one cell" if r.cells == 1 else f"every one of its {r.cells} cells"
        if r.converged_from >= r.requests:  # only the last reading is within: not settled
            lines.append(
                f"- `{r.scenario}`: not settled within {tolerance_pct:g}% before the end of "
                f"{r.requests:,} requests; its runs were too short to say."
            )
            continue
        lines.append(
            f"- `{r.scenario}`: {cells} within {tolerance_pct:g}% from {r.converged_from:,} "
            f"requests on, {r.converged_from / r.requests:.0%} of the {r.requests:,} its runs "
            "served."
        )
    whose = (
        "This run recorded them."
        if own
        else f"This run recorded no progress: these curves are the committed "
        f"`{CONVERGENCE_PROFILE}` run's, `data/runs/{EVIDENCE.name}/` (each cell once at the "
        "article's counts, measured alone)."
    )
    text = (
        f"{whose} The smallest request count from which each run's cumulative mean requests/s "
        f"and its mean memory stayed within {tolerance_pct:g}% of the whole run's, the largest "
        "over each scenario's cells:\n\n" + "\n".join(lines) + "\n\nThese are the counts a "
        f"`{CONVERGED_PROFILE}` profile may use (one run per cell: a noisy machine moves them)."
    )
    return text if params is None else f"{text}\n\n{counts_text(curves, params, tolerance_pct)}"


def counts_text(
    curves: dict, params: StudyParams, tolerance_pct: float = convergence.TOLERANCE_PCT
) -> str:
    """Where this run's request counts stand: the article's, or at or above the count the
    curves support (its means within the tolerance of the article's count's), or below it.
    A run with timed windows counted no requests: it says so, and for how long."""
    if not params.requests:
        return (
            f"This run's windows are timed, not counted: each server had {params.duration_s:g} s "
            "in each window, after its warm-up to a steady rate (`duration_s` in its params). "
            "The curves above are the evidence for how many requests a run's means need "
            "beyond the warm-up (`requests` in results.csv: how many each server served)."
        )
    article = StudyParams.from_file(study_of(__file__).params_path(CONVERGENCE_PROFILE))
    needed = converged_counts(curves, tolerance_pct)
    lines = []
    for scenario in params.scenarios:
        n, full, need = (
            params.requests_for(scenario),
            article.requests_for(scenario),
            needed.get(scenario),
        )
        if n == full:
            where = "the article's count"
        elif need is None:
            where = f"below the article's {full:,}; the curves give no shorter count to compare"
        elif n >= need:
            where = (
                f"below the article's {full:,} but at least the {need:,} from which every cell "
                f"stayed within {tolerance_pct:g}% of its value"
            )
        else:
            where = (
                f"below the {need:,} from which every cell stayed within {tolerance_pct:g}% of "
                f"the article's count's values: this run's rates and memory may differ from "
                "them by more"
            )
        lines.append(f"- `{scenario}`: {n:,} requests per run, {where}.")
    return "This run's counts (`requests` in its params):\n\n" + "\n".join(lines)


def convergence_figure(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT) -> Figure:
    return convergence.figure(curves, tolerance_pct)
