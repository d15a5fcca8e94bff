"""Kestrel's transports, 2018: the article's published gains, and the Sockets settings swept here.

The article (Tom Deseyn, Red Hat Developer blog, 2018) swapped Kestrel's transport (libuv,
Sockets, Red Hat's Linux transport) and swept ThreadCount/IOQueueCount under TechEmpower's
plaintext (16 pipelined requests) and JSON tests, and published the gains in two tables (the
transport CPU-constrained, and the app CPU-constrained). Only the Sockets transport exists in
.NET 10, so here its settings are the variants of one study: IOQueueCount, the article's
setting, and two of ours the article never varied, inline scheduling
(UnsafePreferInlineScheduling with inline socket completions) and
WaitForDataBeforeAllocatingBuffer (`origin` says which is which). Each row of results.csv
carries the settings the app reported it runs with (transport_* columns); this module reads
them from there.
"""

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, StrMethodFormatter

from hostbench.analysis import figure_words, figures, layout, prose
from hostbench.analysis.claims import judge
from hostbench.analysis.intervals import mean_interval, paired_ratios
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.analysis.wording import describe, ratio_text, with_ratio_text
from hostbench.catalog import scenario_label
from hostbench.errors import BadInput
from hostbench.params import expand_sweep
from hostbench.results import typed, valid_rows
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows
DEFAULT = "default"  # the variant without options: the runtime's defaults, the baseline of gains
# Whose setting a variant varies: the article swept only ThreadCount / IOQueueCount; inline
# scheduling and wait-for-data are ours (origin()).
ARTICLES = "the article's setting (IOQueueCount)"
OURS = "ours: not varied in the article"
SCENARIOS = ("plaintext", "hello-json")
SETTINGS = {
    "transport_io_queue_count": "IOQueueCount",
    "transport_inline_scheduling": "inline scheduling",
    "transport_wait_for_data": "wait for data",
    "transport_inline_completions": "inline completions",
}

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


def load_table(params: dict) -> pd.DataFrame:
    """The load of this study per scenario (params as a mapping, e.g. StudyParams.to_dict())."""
    pipeline = params.get("pipeline", 1)
    rows = []
    for scenario in params["scenarios"]:
        depth = pipeline.get(scenario, 1) if isinstance(pipeline, dict) else pipeline
        rows.append(
            {
                "scenario": scenario_label(scenario),
                "tool": ", ".join(params["tools"]),
                "connections": ", ".join(map(str, params["concurrency"])),
                "requests per write (pipeline)": depth,
                "run [s]": params["duration_s"],
                "warm-up, at most [s]": params["warmup_s"],
                "blocks": params["repetitions"],
                "variants": len(params.get("variants") or {})
                + len(expand_sweep(params.get("variant_sweep"))),
            }
        )
    return pd.DataFrame(rows)


def sweep_note(params) -> str:
    """The IOQueueCount values swept and the cores they came from, as params.json records them
    (params key variant_sweep; Markdown)."""
    sweep = params.variant_sweep
    if not sweep:
        return "This profile states its variants one by one: no sweep over the core count."
    cores = (
        f", from this run's {sweep['cores']} core{'s' * (sweep['cores'] > 1)} "
        f"(params key `variant_sweep`, n: {_words(sweep['n'])})"
        if sweep["cores"]
        else ""
    )
    return (
        f"IOQueueCount swept over {', '.join(map(str, sweep['values']))}{cores}; "
        f"{len(params.variants)} variants in all."
    )


def _words(n) -> str:
    return ", ".join(map(str, n)) if isinstance(n, list) else str(n)


# --- ours ----------------------------------------------------------------------------------


def _prepared(results: pd.DataFrame) -> pd.DataFrame:
    df = typed(results)  # the transport_* flags as bool, an empty variant as ""
    if "variant" not in df.columns or (df["variant"] == "").all():
        raise BadInput("results have no variants: this analysis needs the transport sweep's runs")
    df["scenario"] = df["scenario"].astype(str)
    return df


def _flag(value) -> bool | None:
    return None if pd.isna(value) else bool(value)


def origin(inline_scheduling, wait_for_data) -> str:
    """Whose setting a variant varies, from what Kestrel reported it ran with: the article's
    IOQueueCount sweep (inline scheduling off and wait-for-data on, the runtime's defaults),
    or ours (either changed: settings the article never varied)."""
    if _flag(inline_scheduling) is True or _flag(wait_for_data) is False:
        return OURS
    return ARTICLES


def setting_name(variant: str, io_queues: int, inline: bool | None, wait: bool | None) -> str:
    """A variant as a reader names it, from what Kestrel reported it ran with (the params'
    variant ids, such as ioq2-inline-nowait, stay in params and results.csv)."""
    if variant == DEFAULT:
        return f"the runtime's defaults (IOQueueCount {io_queues})"
    words = [f"IOQueueCount {io_queues}"]
    if inline:
        words.append("inline scheduling")
    if wait is False:
        words.append("no wait for data")
    return ", ".join(words)


def settings(results: pd.DataFrame) -> pd.DataFrame:
    """Each variant's settings as Kestrel reported them (GET /__transport, in every row).

    `runs` counts the variant's runs, `consistent` whether all of them reported the same.
    """
    df = _prepared(results)
    rows = []
    for variant, runs in df.groupby("variant", sort=False):
        seen = runs[list(SETTINGS)].drop_duplicates()
        first = seen.iloc[0]
        rows.append(
            {
                "variant": variant,
                "setting": setting_name(
                    variant,
                    int(first["transport_io_queue_count"]),
                    _flag(first["transport_inline_scheduling"]),
                    _flag(first["transport_wait_for_data"]),
                ),  # fmt: skip
                "IOQueueCount": int(first["transport_io_queue_count"]),
                "inline scheduling": _flag(first["transport_inline_scheduling"]),
                "inline completions": _flag(first["transport_inline_completions"]),
                "wait for data": _flag(first["transport_wait_for_data"]),
                "origin": "the runtime's defaults"
                if variant == DEFAULT
                else origin(first["transport_inline_scheduling"], first["transport_wait_for_data"]),
                "runs": len(runs),
                "consistent": len(seen) == 1,
            }
        )
    out = pd.DataFrame(rows)
    out["_default"] = out["variant"] != DEFAULT
    out = out.sort_values(["_default", "IOQueueCount", "inline scheduling", "wait for data"],
                          ascending=[True, True, True, False])  # fmt: skip
    return out.drop(columns="_default").reset_index(drop=True)


def sweep(results: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and variant: mean requests/s with its 95% interval over blocks, the
    machine's busy %, and the cores the app and wrk used."""
    df = valid_rows(_prepared(results))
    known = settings(results).set_index("variant")
    rows = []
    for (scenario, variant), runs in df.groupby(["scenario", "variant"], sort=False):
        n, rps, low, high = mean_interval(runs["rps"])
        low = max(low, 0.0) if not math.isnan(low) else low  # requests/s are never negative
        s = known.loc[variant]
        rows.append(
            {
                "scenario": scenario,
                "variant": variant,
                "setting": s["setting"],
                "IOQueueCount": s["IOQueueCount"],
                "inline": s["inline scheduling"],
                "wait for data": s["wait for data"],
                "n": n,
                "rps": rps,
                "rps_ci_low": low,
                "rps_ci_high": high,
                "pipeline": int(runs["pipeline"].iloc[0]),
                "cpu_total_pct": runs["cpu_total_pct"].mean(),
                "app_cores": runs["cpu_server_cores"].mean(),
                "wrk_cores": runs["cpu_loadgen_cores"].mean(),
                "other_cores": max(
                    0.0,
                    (
                        runs["cpu_total_pct"] / 100 * runs["machine_cores"]
                        - runs["cpu_server_cores"]
                        - runs["cpu_loadgen_cores"]
                    ).mean(),
                ),  # fmt: skip
                "latency_p99_ms": runs["latency_p99_ms"].mean(),
            }
        )
    out = pd.DataFrame(rows)
    out["_s"] = out["scenario"].map({s: i for i, s in enumerate(SCENARIOS)})
    out["_d"] = out["variant"] != DEFAULT
    out = out.sort_values(["_s", "_d", "IOQueueCount", "inline", "wait for data"],
                          ascending=[True, True, True, True, False])  # fmt: skip
    return out.drop(columns=["_s", "_d"]).reset_index(drop=True)


# A variant that reported every setting as the defaults did (IOQueueCount = the cores, as
# the sweep's ioq<cores> is): its ratio is the design's A/A check, not a finding.
SAME_AS_DEFAULTS = "the defaults, set explicitly"


def _changes(variant: pd.Series, default: pd.Series) -> str:
    """What a variant sets differently from the runtime's defaults, in words."""
    parts = []
    if variant["IOQueueCount"] != default["IOQueueCount"]:
        parts.append(f"IOQueueCount {variant['IOQueueCount']} (default {default['IOQueueCount']})")
    if variant["inline scheduling"] != default["inline scheduling"]:
        parts.append("inline scheduling " + ("on" if variant["inline scheduling"] else "off"))
    if variant["wait for data"] != default["wait for data"]:
        parts.append("wait for data " + ("on" if variant["wait for data"] else "off"))
    return ", ".join(parts) or SAME_AS_DEFAULTS


def gains(results: pd.DataFrame, baseline: str = DEFAULT) -> pd.DataFrame:
    """Every variant's requests/s as a ratio to `baseline` (the runtime's defaults), paired
    within blocks, with a 95% CI, what the variant changes, and the ratio in words."""
    df = _prepared(results)
    if baseline not in set(df["variant"]):
        raise BadInput(f"variant {baseline!r} is not in the results: gains need it as baseline")
    # The variant is what is compared: it takes the mode's place in the pairing.
    pairs = df.assign(mode=df["variant"])
    out = paired_ratios(pairs, baseline)
    known = settings(results).set_index("variant")
    out["variant"] = out["mode"]
    out["setting"] = [known.loc[v, "setting"] for v in out["variant"]]
    out["changes"] = [_changes(known.loc[v], known.loc[baseline]) for v in out["variant"]]
    out["origin"] = [known.loc[v, "origin"] for v in out["variant"]]
    out["gain_pct"] = 100 * (out["ratio"] - 1)
    for column in ("ratio", "ci_low", "ci_high"):
        out[f"{column}_pct"] = 100 * out[column]
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", "the defaults"
        )
        for r in out.itertuples(index=False)
    ]
    order = {v: i for i, v in enumerate(settings(results)["variant"])}
    out["_s"] = out["scenario"].map({s: i for i, s in enumerate(SCENARIOS)})
    out["_v"] = out["variant"].map(order)
    out = out.sort_values(["_s", "_v"]).drop(columns=["_s", "_v"])
    columns = ["scenario", "variant", "setting", "changes", "origin", "n", "ratio", "ci_low",
               "ci_high", "ratio_pct", "ci_low_pct", "ci_high_pct", "gain_pct", "in words",
               "confidence", "method", "left_out_invalid"]  # fmt: skip
    return out[columns].reset_index(drop=True)


# The article's claims (reference/claims.csv) that can be judged here compare settings of the
# one transport left: a claim's `mode` names a variant. The top of the IOQueueCount sweep,
# twice the cores, takes one name whatever the machine's cores, so that claim reads the same
# on every machine: the variant that reported IOQueueCount twice its cores and the defaults'
# other settings (inline scheduling off, wait for data on).
SWEEP_TOP = "ioq-twice-cores"


def by_variant(results: pd.DataFrame) -> pd.DataFrame:
    """The results with each variant in the mode's place, as the claims compare them, the
    sweep's top named SWEEP_TOP."""
    df = _prepared(results)
    queues = pd.to_numeric(df["transport_io_queue_count"], errors="coerce")
    cores = pd.to_numeric(df["machine_cores"], errors="coerce")
    flags = zip(df["transport_inline_scheduling"], df["transport_wait_for_data"], strict=True)
    plain = pd.Series([origin(inline, wait) == ARTICLES for inline, wait in flags], df.index)
    top = (df["variant"] != DEFAULT) & plain & (queues == 2 * cores)
    return df.assign(mode=df["variant"].where(~top, SWEEP_TOP))


def claims(results: pd.DataFrame, params, variants=None) -> pd.DataFrame:
    """The article's claims (reference/claims.csv), one row each: those about libuv and the
    Linux transport not re-run on .NET 10 with their reason, those about the thread setting
    judged on the Sockets transport's IOQueueCount against the runtime's defaults. The
    study's claims hook (hostbench.analysis.claims)."""
    others = {name: by_variant(v) for name, v in (variants or {}).items()}
    return judge(ARTICLE, by_variant(results), params, variants=others)


def compared_ratios(results: pd.DataFrame) -> pd.DataFrame:
    """The ratios `python -m hostbench compare` holds side by side for this study: each
    variant's gain over the runtime's defaults (the modes alone are one, kestrel)."""
    return gains(results)


def gain_sentences(g: pd.DataFrame) -> str:
    """Each scenario's gains over the defaults in the words their intervals allow (Markdown)."""
    lines = []
    for scenario in SCENARIOS:
        rows = g[g["scenario"] == scenario]
        if rows.empty:
            continue
        parts = [
            f"{r.setting}{' (ours)' if r.origin == OURS else ''}: {r['in words']}"
            for _, r in rows.iterrows()
        ]
        lines.append(f"- **{scenario_label(scenario)}**: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def _one(g: pd.DataFrame, table: pd.DataFrame, scenario: str, queues: int):
    """The gains row of the variant with `queues` I/O queues and otherwise default settings."""
    rows = table[(table["scenario"] == scenario) & (table["variant"] != DEFAULT)]
    plain = rows[(rows["IOQueueCount"] == queues) & ~rows["inline"].astype(bool)
                 & rows["wait for data"].astype(bool)]  # fmt: skip
    found = g[(g["scenario"] == scenario) & g["variant"].isin(plain["variant"])]
    return None if found.empty else found.iloc[0]


def constraint_sentences(results: pd.DataFrame, g: pd.DataFrame) -> str:
    """What limits throughput on this machine: the I/O queues (transport-constrained, in the
    article's words) or the cores as a whole (app-constrained) (Markdown)."""
    table = sweep(results)
    cores = int(pd.to_numeric(results["machine_cores"]).max())
    lines = []
    for scenario in SCENARIOS:
        rows = table[table["scenario"] == scenario]
        if rows.empty:
            continue
        busy = rows["cpu_total_pct"]
        text = (
            f"- **{scenario_label(scenario)}**: across the variants the machine was "
            f"{prose.span(busy, '.0f')}% busy; of its {cores} cores the app used "
            f"{rows['app_cores'].mean():.2f}, wrk {rows['wrk_cores'].mean():.2f} and the rest "
            f"(other processes, the kernel) {rows['other_cores'].mean():.2f} on average."
        )
        for queues, what in ((1, "one I/O queue"), (int(rows["IOQueueCount"].max()), "")):
            r = _one(g, table, scenario, queues)
            if r is None or (not what and queues <= 1):
                continue
            what = what or f"{queues} I/O queues"
            verdict = ""
            if not math.isnan(r.ci_high) and r.ci_high < 1 and queues == 1:
                verdict = ": one queue limited it, a *transport-constrained* case"
            elif not math.isnan(r.ci_low) and r.ci_low > 1:
                verdict = ": the defaults' queues were a limit"
            text += f" With {what} ({r.setting}): {r['in words']}{verdict}."
        lines.append(text)
    saturated = (table["cpu_total_pct"] >= 90).mean()
    other = table["other_cores"].mean()
    text = (
        f"- {100 * saturated:.0f}% of the cells kept the machine at >= 90% busy: there the cores, "
        "shared by the app and wrk, were the limit, the article's *CPU-constrained app*."
    )
    if other >= 0.1 * cores:
        text += (
            f" On this machine the rest (other processes, kernel work outside the app and wrk) "
            f"took {other:.2f} of the "
            f"{cores} cores during the runs, so the app had less than the whole machine; the "
            "paired ratios cancel what is common to a block, the spread within blocks they cannot."
        )
    lines.append(text)
    return "\n".join(lines)


def _distinguishable(g: pd.DataFrame) -> pd.DataFrame:
    """The gains whose interval excludes the defaults' 100%."""
    return g[(g["ci_low"] > 1) | (g["ci_high"] < 1)]


def _changing(g: pd.DataFrame) -> pd.DataFrame:
    """The gains of the variants that change a setting: those the headline counts."""
    return g[g["changes"] != SAME_AS_DEFAULTS]


def aa_check(g: pd.DataFrame) -> str:
    """The variants that ran exactly the defaults, as what they are: "IOQueueCount 2 runs
    exactly the runtime's defaults, the design's A/A check, not a finding: plaintext 102% (95%
    CI 100.1-105%), JSON (TE) 100% (95% CI 98-102%)"; "" where none did."""
    same = g[g["changes"] == SAME_AS_DEFAULTS]
    if same.empty:
        return ""
    names = " and ".join(dict.fromkeys(same["setting"]))
    each = ", ".join(f"{scenario_label(r.scenario)} {ratio_text(r.ratio, r.ci_low, r.ci_high)}"
                     for r in same.itertuples(index=False))  # fmt: skip
    verb = "runs" if same["setting"].nunique() == 1 else "run"
    return (f"{names} {verb} exactly the runtime's defaults, the design's A/A check, not a "
            f"finding: {each}")  # fmt: skip


def _comparisons(g: pd.DataFrame) -> str:
    """What the gains compare, how many were made and how many would exclude 100% by chance
    alone: many settings are compared with the defaults, each at its own 95%, so a single one
    that clears 100% is read for what it is."""
    blocks = int(g["n"].max()) if len(g) else 0
    level = float(g["confidence"].iloc[0]) if "confidence" in g.columns and len(g) else 0.95
    chance = (1 - level) * len(g)
    return (
        f"Sockets settings as % of the runtime defaults ({blocks} blocks; {len(g)} comparisons, "
        f"each at its own 95%, so about {chance:.1f} would exclude 100% by chance alone)"
    )


def headline(g: pd.DataFrame) -> str:
    """One line for the batch index: the settings whose interval excludes the defaults, and
    how many comparisons they were picked from (those that change a setting); a variant that
    ran the defaults as its A/A check after them."""
    aa = aa_check(g)
    g = _changing(g)
    parts = []
    for scenario in SCENARIOS:
        rows = _distinguishable(g[g["scenario"] == scenario])
        found = [
            f"{r.setting} {ratio_text(r.ratio, r.ci_low, r.ci_high)}"
            for r in rows.itertuples(index=False)
        ]
        parts.append(
            f"{scenario_label(scenario)}: "
            + ("; ".join(found) if found else "no setting distinguishable from the defaults")
        )
    found = len(_distinguishable(g))
    picked = f"the {found} of them that exclude 100%" if found else "none of them excludes 100%"
    return f"{_comparisons(g)}, {picked}: " + ", ".join(parts) + (f". {aa}" if aa else "")


def first_screen(g: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The findings box's headline, which says how many comparisons the settings it names were
    picked from, and the table of those settings, one row each, with n (a list of 30
    intervals reads better as a table than as a line), shown with the conclusions (section
    7): the box's table is the article's claims. A variant that ran the defaults is no
    comparison: the sentence gives it as the A/A check."""
    aa = aa_check(g)
    g = _changing(g)
    found = _distinguishable(g)
    others = len(g) - len(found)
    sentence = (
        f"{_comparisons(g)}: "
        + (
            f"{len(found)} exclude it, listed in section 7; the other {others} are not "
            "distinguishable from the defaults."
            if len(found)
            else "none is distinguishable from the defaults."
        )
        + (f" {aa}." if aa else "")
    )
    table = with_ratio_text(found)[["scenario", "setting", "n", "ours (95% CI)", "in words"]]
    return sentence, table


# --- figures -------------------------------------------------------------------------------

_LINES = {  # (inline scheduling, wait for data) -> colour, style, label
    (False, True): ("#0173b2", "-", "IOQueueCount alone (the article's sweep)"),
    (False, False): ("#56b4e9", "--", "no wait for data (ours)"),
    (True, True): ("#d55e00", "-", "inline scheduling (ours)"),
    (True, False): ("#e69f00", "--", "inline, no wait (ours)"),
}


def sweep_figure(results: pd.DataFrame) -> Figure:
    """Requests/s against IOQueueCount, as the article's graphs plot it against ThreadCount /
    IOQueueCount: one panel per scenario; the IOQueueCount line is the article's sweep, the
    inline-scheduling and wait-for-data lines are ours; error bars: 95% interval over blocks;
    the star: the runtime's defaults."""
    table = sweep(results)
    runs = valid_rows(_prepared(results))
    cores = int(pd.to_numeric(results["machine_cores"]).max())
    fig = Figure(figsize=(11, 4.6), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False)[0]
    for ax, scenario in zip(axes, SCENARIOS, strict=True):
        rows = table[table["scenario"] == scenario]
        for (inline, wait), (color, style, _) in _LINES.items():
            line = rows[(rows["variant"] != DEFAULT) & (rows["inline"] == inline)
                        & (rows["wait for data"] == wait)].sort_values("IOQueueCount")  # fmt: skip
            if line.empty:
                continue
            low = (line["rps"] - line["rps_ci_low"]).fillna(0).clip(lower=0)
            high = (line["rps_ci_high"] - line["rps"]).fillna(0).clip(lower=0)
            ax.errorbar(line["IOQueueCount"], line["rps"], yerr=[low, high], color=color,
                        linestyle=style, marker="o", capsize=3)  # fmt: skip
            mine = runs[(runs["scenario"] == scenario) & runs["variant"].isin(line["variant"])]
            x = mine["variant"].map(line.set_index("variant")["IOQueueCount"])
            ax.scatter(x, mine["rps"], s=10, color=color, alpha=0.6, zorder=3)
        default = rows[rows["variant"] == DEFAULT]
        if not default.empty:
            ax.scatter(default["IOQueueCount"], default["rps"], marker="*", s=220,
                       color="black", zorder=4)  # fmt: skip
        ax.axvline(2 * cores, color="0.6", linestyle=":", linewidth=1)
        ax.set_xticks(sorted(set(rows["IOQueueCount"]) | {2 * cores}))
        ax.set_xlabel("IOQueueCount")
        pipeline = int(rows["pipeline"].max()) if len(rows) else 1
        ax.set_title(
            scenario_label(scenario) + (f" (pipelined {pipeline})" if pipeline > 1 else "")
        )
        # The runs and the intervals' tops set the scale: every whisker ends inside the axes.
        tops = pd.concat([runs.loc[runs["scenario"] == scenario, "rps"], rows["rps_ci_high"]])
        top = tops.max()
        ax.set_ylim(0, 1.1 * top if top == top else 1.0)
        ax.grid(alpha=0.4)
    axes[0].set_ylabel("requests/s")
    handles = [Line2D([], [], color=c, linestyle=s, marker="o", label=lab)
               for c, s, lab in _LINES.values()]  # fmt: skip
    handles.append(Line2D([], [], color="black", marker="*", linestyle="", markersize=12,
                          label="runtime defaults"))  # fmt: skip
    handles.append(Line2D([], [], color="0.6", linestyle=":", label=f"twice the {cores} cores"))
    layout.legend_below(fig, handles, ncols=3, frameon=False)
    n = int(table["n"].max()) if len(table) else 0
    fig.suptitle(
        f"Requests/s against IOQueueCount (wrk; mean of {n} block(s) with its 95% interval; "
        "dots: each run)"
    )
    return figure_words.set_finding(fig, _sweep_finding(table))


def _sweep_finding(table: pd.DataFrame) -> str:
    """Per scenario of a sweep() table: the runtime defaults' mean and the highest and lowest
    means among the settings (means with their own intervals: a range; the gains figure
    pairs each setting with the defaults)."""
    parts = []
    for scenario in SCENARIOS:
        rows = table[table["scenario"] == scenario]
        others = rows[rows["variant"] != DEFAULT]
        if others.empty:
            continue
        low, high = figure_words.extremes(others, "rps")
        default = rows[rows["variant"] == DEFAULT]
        text = f"{scenario_label(scenario)}: " + (
            f"the defaults {default['rps'].iloc[0]:,.0f} requests/s, " if len(default) else ""
        )
        parts.append(text + f"the settings from {low['rps']:,.0f} ({low['setting']}) to "
                     f"{high['rps']:,.0f} ({high['setting']})")  # fmt: skip
    return "Mean requests/s, " + "; ".join(parts)


def gains_figure(g: pd.DataFrame) -> Figure:
    """Each variant as % of the runtime defaults, paired within blocks, with its 95% CI."""
    fig = Figure(figsize=(11, 0.9 + 0.32 * max(len(g) // 2, 4)), layout="constrained")
    axes = fig.subplots(1, len(SCENARIOS), squeeze=False, sharex=True)[0]
    # The settings named once, at the left, where every panel lists the same in the same
    # order: repeated, their long names squeezed the right panel until its axis label ran
    # off the canvas.
    settings = [list(g.loc[g["scenario"] == s, "setting"]) for s in SCENARIOS]
    named_once = all(s == settings[0] for s in settings)
    for i, (ax, scenario) in enumerate(zip(axes, SCENARIOS, strict=True)):
        rows = g[g["scenario"] == scenario]
        y = np.arange(len(rows))[::-1]
        pct = 100 * rows["ratio"]
        low = (pct - 100 * rows["ci_low"]).fillna(0).clip(lower=0)
        high = (100 * rows["ci_high"] - pct).fillna(0).clip(lower=0)
        colors = ["#0173b2" if o == ARTICLES else "#d55e00" if "inline" in c else "#949494"
                  for o, c in zip(rows["origin"], rows["changes"], strict=True)]  # fmt: skip
        ax.barh(y, pct, 0.6, color=colors, xerr=[low, high], capsize=3)
        ax.axvline(100, color="0.2", linestyle="--", linewidth=1)
        ax.set_yticks(y, rows["setting"], fontsize=9)
        if named_once and i > 0:
            ax.tick_params(axis="y", labelleft=False)
        ax.set_xscale("log")
        low, high = _ratio_range(pd.concat([g["ratio"], g["ci_low"], g["ci_high"]]))
        ax.set_xlim(low, high)
        ax.set_xticks(figures.log_ticks(low, high))  # decades when the intervals are wide
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,g}%"))
        ax.tick_params(axis="x", labelsize=8)
        ax.xaxis.set_minor_formatter(StrMethodFormatter(""))
        ax.set_xlabel("requests/s [% of the runtime defaults]")
        ax.set_title(scenario_label(scenario))
        ax.grid(axis="x", alpha=0.4)
    fig.suptitle(
        "Each setting against the runtime defaults, paired within blocks (95% CI)\nblue: "
        "IOQueueCount, the article's setting; orange (inline scheduling) and grey (wait for "
        "data): ours"
    )
    return figure_words.set_finding(fig, figure_words.ratio_finding(g))


def _ratio_range(ratios: pd.Series) -> tuple[float, float]:
    """An x range in % that holds the ratios, their intervals' ends and 100%, with a margin:
    every whisker ends inside the axes, however wide (two blocks can span decades)."""
    pct = 100 * pd.to_numeric(ratios, errors="coerce").dropna()
    pct = pct[pct > 0]
    low, high = min(pct.min(), 100) if len(pct) else 100, max(pct.max(), 100) if len(pct) else 100
    return low / 1.5, high * 1.5
