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
reference/claims.csv, judged by hostbench.analysis.claims (the mapping onto our modes and
metrics is in that file; the hook, `claims`, adds the aot-gc sub-study's stand-in).

Its code in rooms, as jcsi2018's: models.py (the article's servers and ours, the memory
measure, our summary), paper.py (the article's numbers), figures.py, request_counts.py (the
convergence sub-study); here the tables side by side and the words, and, for the notebook
and the tests, every name they read as this module's.
"""

import math

import pandas as pd

from hostbench.analysis import prose, runtimes, window_design
from hostbench.analysis.claims import judge as judge_claims
from hostbench.analysis.differences import bytes_per_response
from hostbench.analysis.intervals import paired_ratios
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.analysis.tables import processor, response_checks
from hostbench.analysis.wording import describe, pct_text, ratio_text, times_text
from hostbench.catalog import MODES, mode_label
from hostbench.errors import BadInput
from hostbench.results import valid_rows

from .figures import (  # noqa: F401 (the notebook and the tests read them here)
    convergence_figure,
    memory_figure,
    ratio_figure,
    throughput_figure,
)
from .models import (  # noqa: F401 (the notebook and the tests read them here)
    ARTICLE,
    ARTICLE_CPU_CORES,
    ARTICLE_CPU_THREADS,
    ARTICLE_SERVERS,
    BASELINE,
    DOTNET,
    HEADLINE_SERVER,
    MEMORY,
    MEMORY_READING,
    MEMORY_WHOLE,
    MINIMAL,
    ORDER,
    SCENARIOS,
    SUB_STUDY_STAND_INS,
    contenders,
    ordered,
    summary,
)
from .paper import (  # noqa: F401 (the notebook and the tests read them here)
    article_ratios,
    published,
    values_runs,
)
from .request_counts import (  # noqa: F401 (the notebook and the tests read them here)
    CONVERGED_PROFILE,
    CONVERGENCE_PROFILE,
    EVIDENCE,
    converged_counts,
    convergence_curves,
    convergence_table,
    convergence_text,
    counts_text,
    evidence_curves,
)


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


def claims(results: pd.DataFrame, params, variants=None) -> pd.DataFrame:
    """The article's claims (reference/claims.csv), one row each, as their rows name the modes;
    the sub-studies are the conditions of the sensitivity column, the aot-gc one per runtime
    variant with its Kestrel in the AddMvcCore app's place too (SUB_STUDY_STAND_INS). The
    study's claims hook (hostbench.analysis.claims)."""
    return judge_claims(ARTICLE, results, params, variants=variants,
                        sub_study_stand_ins=SUB_STUDY_STAND_INS)  # fmt: skip


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
    return ordered(out)


# The aot-gc sub-study's table: what each server ran and cost before any load, its memory under
# load (MEMORY, our reading of the article's, and the peak RSS) and its ratios to Iris MVC.
AOT_GC_COLUMNS = {"build": "build", "gc": "GC", "startup_ms": "startup [ms]",
                  "rss_server_rest_mb": "RSS at rest [MB]",
                  MEMORY: "memory without mapped files [MB]",
                  "rss_server_peak_mb": "RSS peak [MB]"}  # fmt: skip


def aot_gc_table(results: pd.DataFrame, params) -> pd.DataFrame:
    """The aot-gc sub-study's servers, Iris MVC then each runtime variant of Kestrel in the
    params' order (params.app_comparison): the build and GC each reported, means over its
    launches of AOT_GC_COLUMNS, and its requests/s and memory (MEMORY) as ratios to the same
    Iris MVC windows, paired within blocks, in the words their intervals allow."""
    order = list(params.app_comparison)
    ratios = {metric: runtimes.ratios(results, BASELINE, metric, order).set_index(runtimes.RUNTIME)
              for metric in ("rps", MEMORY)}  # fmt: skip
    valid = valid_rows(results)
    rows = []
    for variant in ["", *order]:
        own = valid[valid["variant"].astype(str) == variant]
        if own.empty:
            continue
        row = {"server": params.app_comparison.get(variant) or mode_label(own["mode"].iloc[0])}
        for column, shown in AOT_GC_COLUMNS.items():
            if column in ("build", "gc"):
                row[shown] = str(own[column].iloc[0]) if column in own else ""
            else:
                row[shown] = own[column].astype(float).mean() if column in own else math.nan
        for metric, words in (("rps", "req/s / Iris MVC"), (MEMORY, "memory / Iris MVC")):
            r = ratios[metric].loc[[variant]].iloc[0] if variant in ratios[metric].index else None
            row[words] = "" if r is None else (
                memory_words(r) if metric == MEMORY
                else describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
                    "the baseline", mode_label(BASELINE)))  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


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
