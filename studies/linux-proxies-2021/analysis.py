"""The Linux proxies 2021 study (seed 001): our numbers beside the article's, ratios.

The article ran one ASP.NET Core 5.0 Web API method returning "Test {DateTime.UtcNow}"
(our scenario api-test) on Kestrel alone, behind Nginx and behind Caddy on Ubuntu (and on
Kestrel and IIS in-/out-of-process on Windows Server), on small Azure VMs; loaded it with
bombardier against localhost for a fixed time after a warm-up round, averaged a few rounds,
and ranked the six setups by requests/s. It closes noting that many more connections give
Kestrel much higher throughput.

Every published number and setting comes from reference/ (load_reference, load_setup),
none is written here; the input is results.csv (one row per run). Ratios are paired within
blocks (intervals.paired_ratios) and the words follow their 95% intervals (wording.describe).
The article's claims, each read once as a ratio, are reference/claims.csv, judged by
hostbench.analysis.claims (judge) through the claims hook here: the claims name their modes,
Kestrel alone, the baseline, has no other stand-in, and the article's Nginx has two
(STAND_INS), the second the sensitivity column's analog. The article's postscript (the
request's trace id returned instead of the time) is judged on the trace-id sub-study, where
each setup's app ran with either body (trace_id_table).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hostbench.analysis import figure_words, figures, prose, tables, verdicts, window_design
from hostbench.analysis.claims import judge as judge_claims
from hostbench.analysis.intervals import paired_ratios, variant_ratios
from hostbench.analysis.reference import load_reference, load_setup, stated_setting
from hostbench.analysis.sensitivity import (  # noqa: F401 (the notebook reads them here)
    TWO_HOSTS,
    changed_factors,
    localhost_cost,
    sensitivity,
)
from hostbench.analysis.wording import (
    describe,
    high_cell,
    interval_text,
    low_cell,
    pct_cell,
)
from hostbench.catalog import MODES, mode_label
from hostbench.errors import BadInput
from hostbench.params import StudyParams
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows
NOT_RUNNABLE = "not runnable here (Windows)"
ADDED = "our addition, not in the article"
# The article's Linux ratios, ours beside them: (numerator mode, baseline mode).
ARTICLE_RATIOS = (("nginx", "kestrel"), ("caddy", "nginx"))
# The other modes that stand for an article setup beside the one its row in
# reference/published.csv names (the claims' mode): the article does not state its Nginx
# configuration, so nginx with an upstream keep-alive pool is Nginx too. Each is judged in
# the claim's mode's place in the sensitivity column (claims).
STAND_INS = {"nginx": ("nginx-keepalive",)}
# The sub-study of the article's postscript (params/paper.yaml): each setup's app launched with
# either body of api/test, the time ("date", the article's first version) or the trace id.
TRACE_ID, DATE_BODY = "trace-id", "date"
ORDER = {m: i for i, m in enumerate(MODES)}  # the catalog's order: Kestrel alone first
# Further ratios shown beside them: the other proxy to Kestrel, and the additions.
MORE_RATIOS = (
    ("caddy", "kestrel"),
    ("nginx-keepalive", "kestrel"),
    ("nginx-keepalive", "nginx"),
    ("yarp", "kestrel"),
)
# Ratios and intervals by the one rule of wording.ratio_text (ends rounded outwards).
FORMATS = {
    "blocks": "{:.0f}",
    "article's rank": "{:.0f}",
    "our rank": "{:.0f}",
    "article %": "{:.0f}%",
    "ours %": pct_cell,
    "CI low %": low_cell,
    "CI high %": high_cell,
    "ours: sd": "{:,.0f}",
}


# ------------------------------------------------------------------ the article's side


def published() -> pd.DataFrame:
    """The article's six setups, fastest first (its ranking): rank, setup, mode, os, rps."""
    ref = load_reference(ARTICLE)
    rows = ref[ref["metric"] == "rps"][["setup", "mode", "os", "value"]]
    rows = rows.rename(columns={"value": "rps"}).sort_values("rps", ascending=False)
    rows.insert(0, "rank", np.arange(1, len(rows) + 1))
    rows["windows"] = rows["os"].str.startswith("Windows")
    return rows.reset_index(drop=True)


def article_setting(item: str) -> str:
    """One of the article's stated settings (reference/setup.csv), as written there."""
    return stated_setting(ARTICLE, item)


def article_connections() -> int:
    """The connections the article's measurements used (bombardier -c)."""
    return int(article_setting("connections"))


def closing_note_connections() -> int:
    """The connections of the article's closing remark (no measurement: it gives no number)."""
    return int(article_setting("connections_closing_note"))


def closing_note() -> str:
    """The article's closing remark on more connections, quoted, and what it does not give
    (Markdown)."""
    setup = load_setup(ARTICLE).set_index("item")
    row = setup.loc["connections_closing_note"]
    return (
        f'The article\'s last line: *"{row["quote"]}"* It gives no requests/s at '
        f"{closing_note_connections()} connections, so there is no number of its to set "
        "beside ours; what can be checked is *much higher*, which its claims table reads as "
        f"more than the verdict rule's tolerance ({verdicts.TOLERANCE_PCT:g}%, the most a ratio "
        "may differ and still count as the same) above Kestrel at "
        f"{article_connections()} connections."
    )


def article_rps(mode: str) -> float:
    """The article's Linux requests/s for one of our modes (NaN if it has none)."""
    pub = published()
    row = pub[(pub["mode"] == mode) & ~pub["windows"]]
    return float(row["rps"].iloc[0]) if len(row) else np.nan


def article_ratio_pct(mode: str, baseline: str) -> float:
    """The article's Linux requests/s of `mode` in % of `baseline`'s (NaN if either is absent)."""
    return 100.0 * article_rps(mode) / article_rps(baseline)


# ------------------------------------------------------------------ tables


def setup_table(run_dir: str | Path) -> pd.DataFrame:
    """The article's setup (setup.csv) beside this machine and this run (environment.json,
    params.json in the run folder)."""
    run_dir = Path(run_dir)
    env = tables.load_environment(run_dir)
    params = tables.load_params(run_dir)
    cores = f"{env['cpu_cores_logical']} logical cores"
    concurrency = ", ".join(str(c) for c in params.concurrency)
    app_args = " ".join(params.options.app_args) or "the app's default (Warning)"
    rows = [
        ("operating system", article_setting("os_linux"), f"{env['os']} (kernel {env['kernel']})"),
        ("machine", article_setting("vm_size"),
         f"{tables.processor(env)}, {cores}, {env['memory_gib']} GiB"),
        ("ASP.NET Core", article_setting("aspnetcore"), env["dotnet"]["runtimes"]),
        ("reverse proxies", f"{article_setting('proxies')} (versions and configuration not stated)",
         f"{tables.proxy_versions(env)} (configs in each run's folder)"),
        ("load tool", article_setting("load_tool"), env["tools"]["bombardier"]),
        ("target", article_setting("target"), "127.0.0.1 (loopback), a free port per run"),
        ("connections", article_setting("connections"), concurrency),
        ("duration", article_setting("duration"), f"{params.duration_s:g} s"),
        ("rounds", article_setting("rounds"),
         f"{blocks_text(tables.load_results(run_dir, valid_only=False))}, mean; each run a "
         "fresh launch of the app (and proxy) with its own warm-up until steady (at most "
         f"{params.warmup_s:g} s)"),
        ("logging", "the template's appsettings.json (Information)", app_args),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["", "the article", "this run"])


def blocks_per_mode(results: pd.DataFrame) -> pd.Series:
    """The blocks each mode ran in (every run, invalid ones too), in the catalog's order."""
    runs = tables.prepare(results, valid_only=False)
    return runs.groupby("mode", observed=True)["block"].nunique()


def _per_mode_text(per_mode: pd.Series) -> str:
    # "Kestrel, Kestrel + nginx (TCP): 6; Kestrel + YARP (TCP): 3", most blocks first
    groups = {}
    for mode, n in per_mode.items():
        groups.setdefault(int(n), []).append(mode_label(str(mode)))
    return "; ".join(f"{', '.join(m)}: {n}" for n, m in sorted(groups.items(), reverse=True))


def blocks_text(results: pd.DataFrame) -> str:
    """The blocks the run measured, from its rows (a target half-width may have added to the
    profile's repetitions, and added blocks run only some modes): "6 blocks (Kestrel, ...: 6;
    Kestrel + YARP (TCP): 3)", or "3 blocks" when every mode ran in each."""
    per_mode = blocks_per_mode(results)
    total = int(results["block"].nunique())
    text = f"{total} block{'s' if total != 1 else ''}"
    return text if per_mode.nunique() <= 1 else f"{text} ({_per_mode_text(per_mode)})"


def method_sentence(results: pd.DataFrame, params: StudyParams) -> str:
    """The blocks run (from the results, beside the profile's repetitions), the warm-up and
    run settings, and how the modes' windows shared the machine's time (Markdown)."""
    per_mode = blocks_per_mode(results)
    total, first = int(results["block"].nunique()), params.repetitions
    if total > first:
        how = f"the profile's first {first}, then {total - first} more set by the precision rule"
    elif total == first:
        how = "as the profile asked"
    else:
        how = f"of the {first} the profile asked for"
    modes = f"; by mode: {_per_mode_text(per_mode)}" if per_mode.nunique() > 1 else ""
    return (
        f"Blocks run: **{total}** ({how}{modes}); warm-up at most **{params.warmup_s:g} s**, "
        f"steady within **{params.steady_tolerance_pct:g}%**; measured runs "
        f"**{params.duration_s:g} s**; windows **{window_design.in_words(params)}**."
    )


def _at(results: pd.DataFrame, concurrency: int) -> pd.DataFrame:
    rows = results[results["concurrency"] == concurrency]
    if rows.empty:
        found = ", ".join(str(c) for c in sorted(results["concurrency"].unique()))
        raise BadInput(f"no runs at {concurrency} connections; the results have {found}")
    return rows


def ranking_table(results: pd.DataFrame, concurrency: int | None = None) -> pd.DataFrame:
    """The article's ranking (its six setups, fastest first) with our numbers beside it.

    Ours: mean requests/s over the blocks, their sd, and our rank, at the article's
    connections unless `concurrency` says otherwise. The Windows setups are shown as
    published and not runnable here; our modes the article did not run come last.
    """
    concurrency = concurrency or article_connections()
    summary = tables.summarize(_at(results, concurrency))
    summary = summary.assign(mode=summary["mode"].astype(str)).set_index("mode")
    our_rank = summary["rps_mean"].rank(ascending=False, method="min")
    rows = []
    for r in published().itertuples(index=False):
        ours = None if r.windows or r.mode not in summary.index else r.mode
        rows.append((r.rank, r.setup, r.rps, ours, NOT_RUNNABLE if r.windows else ""))
    article_modes = {r[3] for r in rows if r[3]}
    for mode in summary.index:
        if mode not in article_modes:
            rows.append((np.nan, "", np.nan, mode, ADDED))
    out = []
    for rank, setup, rps, mode, note in rows:
        s = summary.loc[mode] if mode else None
        out.append({
            "article's rank": rank,
            "the article's setup": setup,
            "article: avg rps": rps,
            "our mode": mode_label(mode) if mode else "",
            "ours: mean rps": s["rps_mean"] if mode else np.nan,
            "ours: sd": s["rps_std"] if mode else np.nan,
            "blocks": int(s["n"]) if mode else np.nan,
            "our rank": our_rank[mode] if mode else np.nan,
            "note": note,
        })  # fmt: skip
    return pd.DataFrame(out)


def _ratio_rows(results: pd.DataFrame, mode: str, baseline: str) -> pd.DataFrame:
    # paired_ratios to `baseline`, the rows of `mode` only (empty if either is missing)
    present = set(results["mode"].astype(str))
    if mode not in present or baseline not in present:
        return pd.DataFrame()
    ratios = paired_ratios(results, baseline)
    return ratios[ratios["mode"].astype(str) == mode]


def claims(results: pd.DataFrame, params: StudyParams, variants=None) -> pd.DataFrame:
    """The article's claims (reference/claims.csv), one row each, as their rows name the
    modes; the other stand-ins for a named mode (STAND_INS) and the sub-studies are the
    conditions of the sensitivity column. The study's claims hook (hostbench.analysis.claims):
    results are every run, invalid ones too (the paired ratios leave them out)."""
    return judge_claims(ARTICLE, results, params, variants=variants, stand_ins=STAND_INS)


def words(ratio: float, low: float, high: float) -> str:
    """The word the interval allows: faster, slower, indistinguishable at this precision."""
    return describe(ratio, low, high).split(":")[0]


def ratio_table(results: pd.DataFrame) -> pd.DataFrame:
    """The article's Linux ratios (Nginx/Kestrel, Caddy/Nginx) and a few more, ours paired
    within blocks with a 95% CI, at every concurrency; the article's % (computed from its
    published requests/s) beside ours at its connections."""
    article_c = article_connections()
    rows = []
    for mode, baseline in (*ARTICLE_RATIOS, *MORE_RATIOS):
        for r in _ratio_rows(results, mode, baseline).itertuples(index=False):
            article = article_ratio_pct(mode, baseline) if r.concurrency == article_c else np.nan
            rows.append({
                "ratio": f"{mode_label(mode)} / {mode_label(baseline)}",
                "mode": mode,
                "baseline": baseline,
                **_interval_cells(r),
                "article %": article,
            })  # fmt: skip
    return pd.DataFrame(rows)


def _interval_cells(r) -> dict:
    """A paired ratio's cells as the ratio tables show them (FORMATS): its connections and
    blocks, ours with its 95% CI in %, and the words the interval allows."""
    return {
        "connections": int(r.concurrency),
        "blocks": int(r.n),
        "ours %": r.ratio_pct,
        "CI low %": r.ci_low_pct,
        "CI high %": r.ci_high_pct,
        "in words": words(r.ratio, r.ci_low, r.ci_high),
    }


def ratio_sentences(ratios: pd.DataFrame) -> str:
    """Each ratio at the article's connections in the words its interval allows (Markdown)."""
    lines = []
    rows = ratios[ratios["connections"] == article_connections()]
    for r in rows.to_dict("records"):
        text = describe(r["ours %"] / 100, r["CI low %"] / 100, r["CI high %"] / 100)
        text = text.replace("the baseline", mode_label(r["baseline"]))
        article = r["article %"]
        if pd.isna(article):
            tail = "The article has no such number." if MODES[r["mode"]].added else ""
        else:
            tail = (
                f"The article: {article:.0f}% ({article_rps(r['mode']):,.0f} / "
                f"{article_rps(r['baseline']):,.0f} rps)."
            )
        lines.append(f"- **{r['ratio']}**: {text}. {tail}".rstrip())
    return "\n".join(lines)


def _concurrency_ratios(results: pd.DataFrame, low: int, high: int) -> pd.DataFrame:
    """Each mode's requests/s at `high` connections in % of its own at `low`, paired within
    blocks: paired_ratios with the concurrency in the mode's place and the mode in the
    concurrency's (a cell = one mode; the baseline = the low concurrency)."""
    runs = results[results["concurrency"].isin([low, high])]
    swapped = runs.assign(
        mode=runs["concurrency"].map(lambda c: f"c{c}"), concurrency=runs["mode"].astype(str)
    )
    ratios = paired_ratios(swapped, f"c{low}")
    ratios = ratios[ratios["mode"] == f"c{high}"].drop(columns=["mode", "baseline"])
    return ratios.rename(columns={"concurrency": "mode"})


def trace_id_table(sub: pd.DataFrame) -> pd.DataFrame:
    """Each setup's requests/s returning the trace id in % of the same setup returning the
    time (the trace-id sub-study's results), paired within blocks, where the two launches
    took turns in each window, with its 95% CI and words."""
    ratios = variant_ratios(sub, DATE_BODY).sort_values("mode", key=lambda m: m.map(ORDER))
    rows = [{"setup": mode_label(r.mode), **_interval_cells(r)} for r in ratios.itertuples()]
    return pd.DataFrame(rows)


def connections_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per mode: mean requests/s at the article's connections and at the highest we ran,
    and the ratio between them paired within blocks, with its 95% CI and words."""
    low = article_connections()
    high = int(results["concurrency"].max())
    if high == low:
        raise BadInput(f"the results have only {low} connections: nothing to compare")
    summary = tables.summarize(results[results["concurrency"].isin([low, high])])
    means = summary.pivot_table(index="mode", columns="concurrency", values="rps_mean",
                                observed=True)  # fmt: skip
    ratios = _concurrency_ratios(results, low, high).set_index("mode")
    rows = []
    for mode in [m for m in means.index if m in ratios.index]:
        r = ratios.loc[mode]
        rows.append({
            "mode": mode_label(mode),
            f"rps at {low}": means.loc[mode, low],
            f"rps at {high}": means.loc[mode, high],
            "blocks": int(r["n"]),
            "ours %": r["ratio_pct"],
            "CI low %": r["ci_low_pct"],
            "CI high %": r["ci_high_pct"],
            "in words": words(r["ratio"], r["ci_low"], r["ci_high"])
            .replace("faster", f"higher at {high}")
            .replace("slower", f"lower at {high}"),
        })  # fmt: skip
    return pd.DataFrame(rows)


def cost_sentence(results: pd.DataFrame) -> str:
    """Where a request's CPU goes at the article's connections, per mode (Markdown)."""
    c = article_connections()
    return f"At {c} connections: " + prose.cpu_cost_sentence(_at(results, c))


# ------------------------------------------------------------------ what holds


def _row(table: pd.DataFrame, mode: str, baseline: str, connections: int) -> dict | None:
    rows = table[
        (table["mode"] == mode)
        & (table["baseline"] == baseline)
        & (table["connections"] == connections)
    ]
    return rows.iloc[0].to_dict() if len(rows) else None


def headline(results: pd.DataFrame) -> str:
    """One line for the batch index: the article's two ratios, and Kestrel's throughput at
    the most connections we ran in % of its own at the article's, ours with 95% CIs."""
    ratios = ratio_table(results)
    c = article_connections()
    parts = []
    for mode, baseline in ARTICLE_RATIOS:
        r = _row(ratios, mode, baseline, c)
        if r:
            ci = interval_text(r["ours %"] / 100, r["CI low %"] / 100, r["CI high %"] / 100)
            ours = pct_cell(r["ours %"])
            parts.append(
                f"{mode_label(mode)} {ours} of {mode_label(baseline)} ({ci}; "
                f"article {r['article %']:.0f}%)"
            )
    high_c = int(results["concurrency"].max())
    if high_c != c and "kestrel" in set(results["mode"].astype(str)):
        conn = connections_table(results).set_index("mode").loc[mode_label("kestrel")]
        ci = interval_text(conn["ours %"] / 100, conn["CI low %"] / 100, conn["CI high %"] / 100)
        parts.append(f"Kestrel at {high_c} connections {pct_cell(conn['ours %'])} of {c} ({ci})")
    return f"{c} connections: " + "; ".join(parts) if parts else "no ratio to report"


# ------------------------------------------------------------------ figures


def ranking_figure(results: pd.DataFrame) -> Figure:
    """The article's six setups (Windows hatched: published only) above our modes, in rps."""
    c = article_connections()
    article_rows = [
        {
            "label": r.setup,
            "value": r.rps,
            "color": MODES[r.mode].color if r.mode in MODES else "0.6",
            "hatch": "///" if r.windows else "",
        }
        for r in published().itertuples(index=False)
    ]
    table = ranking_table(results, c)
    ours = table[table["our mode"] != ""].sort_values("ours: mean rps", ascending=False)
    label_to_mode = {mode_label(m): m for m in MODES}
    ours_rows = [
        {
            "label": r["our mode"] + (" (added)" if r["note"] == ADDED else ""),
            "value": r["ours: mean rps"],
            "err": r["ours: sd"],
            "color": MODES[label_to_mode[r["our mode"]]].color,
        }
        for r in ours.to_dict("records")
    ]
    low, high = ours["blocks"].min(), ours["blocks"].max()
    blocks = f"{low:.0f}" if low == high else f"{low:.0f}-{high:.0f}"
    article_title = (
        f"The article: {article_setting('vm_size')}\n{article_setting('rounds')}\n"
        "hatched: Windows, as published, not runnable here"
    )
    fig = figures.bar_panels(
        [
            (article_title, pd.DataFrame(article_rows)),
            (f"This machine: mean of {blocks} block(s), error bars 1 sd",
             pd.DataFrame(ours_rows)),
        ],
        xlabel="throughput [requests/s]",
        title=f"'Test {{DateTime.UtcNow}}', bombardier, {c} connections (the article's ranking)",
        note="each panel has its own scale: absolute numbers differ between machines; "
        "compare the order and the ratios",
        sharex=False,
    )  # fmt: skip
    return figure_words.set_finding(fig, _ranking_finding(ours))


def _ranking_finding(ours: pd.DataFrame) -> str:
    """Our modes by mean requests/s (ranking_table's rows of ours, fastest first), and whether
    the article's Linux setups came in the same order (means beside sds: an order of means,
    the ratios' intervals are the other figure's)."""
    listed = ", ".join(f"{r['our mode']} {r['ours: mean rps']:,.0f}" for _, r in ours.iterrows())
    compared = ours[ours["note"] != ADDED]
    theirs = compared.sort_values("article's rank")["our mode"].tolist()
    order = (
        "the order of the article's Linux setups"
        if compared["our mode"].tolist() == theirs
        else "the article's Linux order was " + ", ".join(theirs)
    )
    return f"Mean requests/s here, highest first: {listed}; {order}"


def ratio_figure(ratios: pd.DataFrame) -> Figure:
    """Our ratios at the article's connections (95% CI) beside the article's."""
    c = article_connections()
    rows = ratios[ratios["connections"] == c]
    return figures.ratio_chart(
        pd.DataFrame(
            {
                "label": [
                    f"{m} / {b}" for m, b in zip(rows["mode"], rows["baseline"], strict=True)
                ],
                "ratio_pct": rows["ours %"],
                "ci_low_pct": rows["CI low %"],
                "ci_high_pct": rows["CI high %"],
                "article_pct": rows["article %"],
                "color": [MODES[m].color for m in rows["mode"]],
            }
        ),  # fmt: skip
        title=f"Requests/s ratios at {c} connections, paired within blocks",
        xlabel="requests/s of the first mode in % of the second's (log scale)",
    )


def connections_figure(results: pd.DataFrame) -> Figure:
    """Each mode's mean rps at the article's connections and at the highest we ran."""
    low, high = article_connections(), int(results["concurrency"].max())
    summary = tables.summarize(results)
    table = connections_table(results).set_index("mode")
    panels = []
    for c in (low, high):
        rows = summary[summary["concurrency"] == c].sort_values("rps_mean", ascending=False)
        out = []
        for r in rows.itertuples(index=False):
            text = f"{r.rps_mean:,.0f}"
            label = mode_label(r.mode)
            if c == high and label in table.index:
                text += f"  ({table.loc[label, 'ours %']:.0f}% of {low})"
            out.append({"label": label, "value": r.rps_mean, "err": r.rps_std, "text": text,
                        "color": MODES[str(r.mode)].color})  # fmt: skip
        panels.append((f"{c} connections", pd.DataFrame(out)))
    fig = figures.bar_panels(
        panels,
        xlabel="throughput [requests/s], mean over blocks, error bars 1 sd",
        title=f"{low} vs {high} connections",
    )
    return figure_words.set_finding(fig, _connections_finding(table, low, high))


def _connections_finding(table: pd.DataFrame, low: int, high: int) -> str:
    """Each mode's requests/s at `high` connections as % of its own at `low` (connections_table,
    indexed by mode), with the interval and blocks its ratio rests on."""
    parts = []
    for mode, r in table.iterrows():
        ci = interval_text(r["ours %"] / 100, r["CI low %"] / 100, r["CI high %"] / 100)
        parts.append(f"{mode} {pct_cell(r['ours %'])} ({ci}, {r['blocks']} blocks)")
    return f"At {high} connections, as % of the same mode at {low}: " + "; ".join(parts)
