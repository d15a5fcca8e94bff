"""The Web API self-host 2012 study (seed 002): our numbers beside the article's.

The article served an MVC4 Web API controller returning a list of three Foo objects as JSON
(our scenario testapi) self-hosted in a console app (HttpSelfHostServer) and in IIS, on
Windows 7 (IIS 7.5) and Windows 8 Consumer Preview (IIS 8), client and server on one
machine; loaded it with ApacheBench without keep-alive (ab's default: a new connection per
request) for a fixed number of requests at a fixed concurrency, ran each test a few times
and took the best; and found self-hosting ahead on both systems.

Here Kestrel serving clients itself stands for the self-host, and nginx with an upstream
keep-alive pool in front of Kestrel for IIS (IIS_ANALOG, the run's baseline; the notebook says
where the analogy ends). Every
published number and setting comes from reference/ (load_reference, load_setup), none
is written here; the input is results.csv (one row per run, ab's "Time per request" (mean)
in latency_mean_ms). Ratios are paired within blocks (intervals.paired_ratios) and the words
follow their 95% intervals (wording.describe). The article's claims, each read once as a
ratio, are reference/claims.csv, judged by hostbench.analysis.claims against the run's
baseline (the claims hook below passes the other IIS stand-ins).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hostbench.analysis import figure_words, figures, tables, window_design
from hostbench.analysis.claims import judge as judge_claims
from hostbench.analysis.intervals import paired_ratios
from hostbench.analysis.reference import load_reference, stated_setting
from hostbench.analysis.wording import describe, high_cell, low_cell, pct_cell, ratio_text
from hostbench.catalog import ANALOG_BY_MECHANISM, MODES, mode_color, mode_label
from hostbench.load import Load
from hostbench.params import StudyParams
from hostbench.studies import study_of

ARTICLE = study_of(__file__).id  # this folder's study: its reference rows
SELF_HOST = "kestrel"  # the app serving clients itself: the article's self-host
# The article's IIS hosted Web API in its worker process (no hop); no Linux mode does that. The
# cheapest full hop, forwarding as IIS's module does (docs/hosting-modes.md), bounds it from
# below; Kestrel alone (SELF_HOST) from above.
IIS_ANALOG = ANALOG_BY_MECHANISM["iis-outofprocess"]
# The article's two hosts, by their reference-data mode, and the mode of ours for each.
ANALOG = {"webapi-selfhost": SELF_HOST, "iis-webapi": IIS_ANALOG}
NOT_RUNNABLE = "as published; Windows, not runnable here"


def _gain_cell(cell):
    # A gain (% of the baseline - 100) by the ratios' rounding rule: the % cell, minus 100,
    # with the cell's decimals (it prints "100.1%" where a whole number would read as 100%).
    def gain(v):
        if pd.isna(v):
            return "n/a"
        text = cell(v + 100).rstrip("%")
        decimals = len(text.partition(".")[2])
        return f"{float(text) - 100:+.{decimals}f}%"

    return gain


# Ratios and intervals by the one rule of wording.ratio_text (ends rounded outwards).
FORMATS = {
    "blocks": "{:.0f}",
    "requests/s": "{:,.2f}",
    "time per request [ms]": "{:.3f}",
    "mean requests/s": "{:,.0f}",
    "sd": "{:,.0f}",
    "gain %": _gain_cell(pct_cell),
    "CI low %": _gain_cell(low_cell),
    "CI high %": _gain_cell(high_cell),
    "best of blocks gain %": "{:+.1f}%",
    "article's gain %": "{:+.1f}%",
}


# ------------------------------------------------------------------ the article's side


def published() -> pd.DataFrame:
    """The article's results table, in its order: setup, os, mode, rps, time per request."""
    ref = load_reference(ARTICLE)
    wide = ref[ref["metric"].isin(["rps", "time_per_request_ms"])]
    order = list(dict.fromkeys(wide["setup"]))
    table = wide.pivot_table(index=["setup", "os", "mode"], columns="metric", values="value")
    table = table.reset_index().set_index("setup").loc[order].reset_index()
    return table[["setup", "os", "mode", "rps", "time_per_request_ms"]]


def article_setting(item: str) -> str:
    """One of the article's stated settings (reference/setup.csv), as written there."""
    return stated_setting(ARTICLE, item)


def article_gains() -> pd.DataFrame:
    """The self-host advantage per Windows version: as the article states it (its prose:
    "approximately", "about") and as its table gives it (self-host rps / IIS rps - 1).

    Columns: os, self_host, iis (the setups), stated_pct, qualifier, table_pct, quote.
    """
    ref = load_reference(ARTICLE)
    pub = published().set_index("setup")
    gains = ref[ref["metric"] == "rps_gain_pct"]
    rows = []
    for g in gains.itertuples(index=False):
        table = 100.0 * (pub.loc[g.setup, "rps"] / pub.loc[g.relative_to, "rps"] - 1.0)
        rows.append((g.os, g.setup, g.relative_to, g.value, g.qualifier, table, g.quote))
    columns = ["os", "self_host", "iis", "stated_pct", "qualifier", "table_pct", "quote"]
    return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ tables


def _gain(pct_of_other: float) -> str:
    """A % of the other host as the article words it: 150 -> "+50%"."""
    return f"{pct_of_other - 100:+.0f}%"


def setup_table(run_dir: str | Path) -> pd.DataFrame:
    """The article's setup (setup.csv and its table's systems) beside this machine and run."""
    run_dir = Path(run_dir)
    env = tables.load_environment(run_dir)
    params = tables.load_params(run_dir)
    pub = published()
    systems = " / ".join(dict.fromkeys(pub["os"]))
    # "Windows 7 (IIS 7.5)" -> "IIS 7.5": the IIS versions as the article's table names them
    iis = " / ".join(pub.loc[pub["mode"] == "iis-webapi", "setup"].str.extract(r"\((.*)\)")[0])
    keepalive = "yes (-k)" if params.keepalive else "no: ab's default, a new connection per request"
    rows = [
        ("operating system", systems, f"{env['os']} (kernel {env['kernel']})"),
        ("machine", article_setting("cpu_ram"),
         f"{tables.processor(env)}, {env['cpu_cores_logical']} logical cores, "
         f"{env['memory_gib']} GiB"),
        ("hosts", f"{iis} vs a console app (HttpSelfHostServer)",
         f"{mode_label(IIS_ANALOG)} vs {mode_label(SELF_HOST)} alone; "
         f"{env['tools']['nginx']}; {env['dotnet']['runtimes']}"),
        ("load tool", article_setting("load_tool"), env["tools"]["ab"]),
        ("client", "same machine" if article_setting("same_machine") == "yes" else "other",
         {"local": "same machine, 127.0.0.1", "netns": "same machine, two network namespaces",
          "ssh": "another host, over ssh"}[params.topology]),
        ("requests per test (-n)", article_setting("ab_requests"), requests_text(params)),
        ("concurrency (-c)", article_setting("ab_concurrency"),
         ", ".join(str(c) for c in params.concurrency)),
        ("keep-alive", "no (no -k in the command)", keepalive),
        ("rounds", article_setting("rounds"),
         f"{blocks_text(tables.load_results(run_dir, valid_only=False))}, each one launch of "
         f"each of its modes (warmed up for at most {params.warmup_s:g} s) with "
         f"{_windows_per_block(params)}; best and mean"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["", "the article", "this run"])


def blocks_text(results: pd.DataFrame) -> str:
    """The blocks the study measured, from its rows (a target half-width may have added to
    repetitions, and added blocks run only the focus modes and the baseline): "5 blocks
    (Kestrel, ...: 5; Kestrel + Caddy (TCP): 3)", or "3 blocks" when every mode ran in each."""
    runs = tables.prepare(results, valid_only=False)
    per_mode = runs.groupby("mode", observed=True)["block"].nunique()
    total = int(runs["block"].nunique())
    text = f"{total} block{'s' if total != 1 else ''}"
    if per_mode.nunique() <= 1:
        return text
    groups = {}
    for mode, n in per_mode.items():
        groups.setdefault(int(n), []).append(mode_label(str(mode)))
    parts = [f"{', '.join(m)}: {n}" for n, m in sorted(groups.items(), reverse=True)]
    return f"{text} ({'; '.join(parts)})"


def requests_text(params) -> str:
    """The run's count per test, or what it timed instead: "100,000", "none: timed, 10 s per
    mode (-t)", or, interleaved, "none: timed, 10 s per mode in each window, in 1 s runs
    (-t 1) alternating between the modes"."""
    if params.requests is not None:
        return f"{params.requests:,}"
    if not window_design.interleaved(params):
        return f"none: timed, {params.duration_s:g} s per mode (-t)"
    slice_s = window_design.slice_s(params)
    each = window_design.alternating_runs(params.duration_s, slice_s, "mode", "modes",
                                          flag=f" (-t {slice_s:g})")  # fmt: skip
    return f"none: timed, {each}"


def _windows_per_block(params) -> str:
    if params.windows == 1:
        return "one window each"
    focus = " and ".join([*params.focus, params.baseline_mode]) if params.focus else "each mode"
    rest = ", one of each other mode" if params.focus else ""
    return f"{params.windows} windows of {focus}{rest}"


def best_runs(results: pd.DataFrame) -> pd.DataFrame:
    # Per mode: the run with the most requests/s (the article's "best" of its runs).
    runs = tables.prepare(results)
    best = runs.loc[runs.groupby("mode", observed=True)["rps"].idxmax()]
    return best.assign(mode=best["mode"].astype(str)).set_index("mode")


def results_table(results: pd.DataFrame) -> pd.DataFrame:
    """The article's table (requests/s and ab's time per request, the best of its runs) with
    ours below it: the best block (as the article took), and the mean and sd over blocks.
    The article's rows are Windows: shown as published, not runnable here."""
    rows = []
    for r in published().itertuples(index=False):
        rows.append({
            "": "the article", "setup": r.setup, "requests/s": r.rps,
            "time per request [ms]": r.time_per_request_ms, "mean requests/s": np.nan,
            "sd": np.nan, "blocks": np.nan, "note": NOT_RUNNABLE,
        })  # fmt: skip
    best = best_runs(results)
    summary = tables.summarize(results)
    summary = summary.assign(mode=summary["mode"].astype(str)).set_index("mode")
    for mode in summary.index:
        rows.append({
            "": "this machine", "setup": mode_label(mode), "requests/s": best.loc[mode, "rps"],
            "time per request [ms]": best.loc[mode, "latency_mean_ms"],
            "mean requests/s": summary.loc[mode, "rps_mean"], "sd": summary.loc[mode, "rps_std"],
            "blocks": summary.loc[mode, "n"], "note": role(mode),
        })  # fmt: skip
    return pd.DataFrame(rows)


def role(mode: str) -> str:
    """What a mode of ours stands for in this study."""
    if mode == SELF_HOST:
        return "stands for the self-host; best of the blocks"
    if mode == IIS_ANALOG:
        return "stands for IIS (reverse-proxy analog); best of the blocks"
    return "our addition, not in the article; best of the blocks"


def _gain_rows(results: pd.DataFrame, baseline: str, metric: str = "rps") -> pd.DataFrame:
    present = set(tables.prepare(results, valid_only=False)["mode"].astype(str))
    if SELF_HOST not in present or baseline not in present:
        return pd.DataFrame()
    ratios = paired_ratios(results, baseline, metric=metric)
    return ratios[ratios["mode"].astype(str) == SELF_HOST]


def advantage_table(results: pd.DataFrame) -> pd.DataFrame:
    """The self-host advantage: the article's (stated, and from its table) and ours against
    each other mode: requests/s gain in %, paired within blocks (geometric mean, 95% CI),
    its words, and the gain between the best blocks (as the article computed it)."""
    rows = []
    for g in article_gains().itertuples(index=False):
        rows.append({
            "comparison": f"{g.self_host} vs {g.iis}", "source": "the article", "blocks": np.nan,
            "gain %": g.table_pct, "CI low %": np.nan, "CI high %": np.nan,
            "best of blocks gain %": np.nan, "in words": f"{g.qualifier} {g.stated_pct:g}% more "
            "requests per second (its text); the gain % is from its table",
        })  # fmt: skip
    best = best_runs(results)
    for baseline in [m for m in MODES if m != SELF_HOST and m in best.index]:
        for r in _gain_rows(results, baseline).itertuples(index=False):
            text = describe(r.ratio, r.ci_low, r.ci_high).replace("the baseline", baseline)
            rows.append({
                "comparison": f"{mode_label(SELF_HOST)} vs {mode_label(baseline)}",
                "source": "this machine" + ("" if baseline == IIS_ANALOG else " (sensitivity row)"),
                "blocks": r.n, "gain %": r.ratio_pct - 100, "CI low %": r.ci_low_pct - 100,
                "CI high %": r.ci_high_pct - 100,
                "best of blocks gain %": 100.0 * (best.loc[SELF_HOST, "rps"]
                                                  / best.loc[baseline, "rps"] - 1.0),
                "in words": text,
            })  # fmt: skip
    return pd.DataFrame(rows)


def _ours(results: pd.DataFrame, baseline: str = IIS_ANALOG, metric: str = "rps") -> dict | None:
    rows = _gain_rows(results, baseline, metric)
    return rows.iloc[0].to_dict() if len(rows) else None


def advantage_sentence(results: pd.DataFrame) -> str:
    """The self-host advantage here against the article's, in the words the interval allows."""
    ours = _ours(results)
    if ours is None:
        return f"No paired runs of {SELF_HOST} and {IIS_ANALOG}: nothing to compare."
    best = best_runs(results)
    best_gain = 100.0 * (best.loc[SELF_HOST, "rps"] / best.loc[IIS_ANALOG, "rps"] - 1.0)
    words = describe(ours["ratio"], ours["ci_low"], ours["ci_high"])
    gains = article_gains()
    article = " and ".join(
        f"{g.qualifier} {g.stated_pct:g}% on {g.os} ({g.table_pct:+.1f}% from its table)"
        for g in gains.itertuples(index=False)
    )
    return (
        f"**{mode_label(SELF_HOST)} vs {mode_label(IIS_ANALOG)}**: "
        f"{words.replace('the baseline', IIS_ANALOG)}, a gain of "
        f"**{_gain(ours['ratio_pct'])}** over {ours['n']} paired blocks; "
        f"between the best blocks, as the article compared, {best_gain:+.0f}%. "
        f"The article: self-hosting served {article}."
    )


# ------------------------------------------------------------------ what holds


def analogs(results: pd.DataFrame, params: StudyParams) -> list[str]:
    """The modes in the run that stand in for IIS beside the baseline: every web server in
    front of Kestrel (nginx, caddy: the sensitivity rows), in the catalog's order."""
    present = set(results["mode"].astype(str))
    return [m for m in MODES if m in present and m not in (SELF_HOST, params.baseline_mode)]


def claims(results: pd.DataFrame, params: StudyParams, variants=None) -> pd.DataFrame:
    """The article's claims (reference/claims.csv), one row each, judged against the run's
    baseline, the IIS analog; the other web servers in front of Kestrel (analogs) are the
    conditions of its sensitivity column. Each is a full hop where the article's IIS had none
    (IIS_ANALOG), so the self-host gain over it bounds the article's from above and is judged
    one-sided (bounded_above): it can show a stated gain too large, never reproduce it. The
    study's claims hook (hostbench.analysis.claims): results are every run, invalid ones too
    (the paired ratios leave them out)."""
    others = analogs(results, params)
    return judge_claims(ARTICLE, results, params, analogs=others, variants=variants,
                        bounded_above=True)  # fmt: skip


def headline(results: pd.DataFrame) -> str:
    """One line for the batch index: the self-host gain here (paired, 95% CI, and between
    the best blocks) beside the article's stated gains."""
    ours = _ours(results)
    if ours is None:
        return "no paired self-host and IIS-analog runs"
    best = best_runs(results)
    best_gain = 100.0 * (best.loc[SELF_HOST, "rps"] / best.loc[IIS_ANALOG, "rps"] - 1.0)
    ours_text = ratio_text(ours["ratio"], ours["ci_low"], ours["ci_high"])
    article = ", ".join(
        f"{g.qualifier} +{g.stated_pct:g}% ({g.os})" for g in article_gains().itertuples()
    )
    return (
        f"Self-host ({mode_label(SELF_HOST)}) at {ours_text} of "
        f"{mode_label(IIS_ANALOG)}'s requests/s (best blocks {100 + best_gain:.0f}%); "
        f"the article: self-host {article}"
    )


# ------------------------------------------------------------------ figures


def ab_options(load: Load) -> str:
    """ab's options for a load, as the article writes them: "ab -n N -c C" (-k: keep-alive)."""
    amount = f"-n {load.requests:,}" if load.requests is not None else f"-t {load.duration_s:g}"
    return f"ab {amount} -c {load.concurrency}" + (" -k" if load.keepalive else "")


def results_figure(results: pd.DataFrame, run_dir: str | Path | None = None) -> Figure:
    """The article's table (Windows, hatched: as published) above ours (best block), rps.

    run_dir: the study's run folder; its first recorded run's load (load.json; in an
    interleaved window, one of its alternating runs) titles the figure with ab's options."""
    loads = (tables.run_load(run_dir, key) for key in results["run_key"]) if run_dir else ()
    load = next((one for one in loads if one is not None), None)
    article = [
        {"label": r.setup, "value": r.rps, "hatch": "///",
         "color": mode_color(ANALOG.get(r.mode, r.mode), "0.6"),
         "text": f"{r.rps:,.2f}  ({r.time_per_request_ms:.3f} ms)"}
        for r in published().itertuples(index=False)
    ]  # fmt: skip
    best = best_runs(results)
    summary = tables.summarize(results)
    # As the article's table: the IIS analog, then the self-host, then our additions.
    order = [IIS_ANALOG, SELF_HOST, *(m for m in MODES if m not in (IIS_ANALOG, SELF_HOST))]
    ours = []
    for mode in [m for m in order if m in best.index]:
        added = mode not in ANALOG.values()
        ours.append({
            "label": mode_label(mode) + (" (added)" if added else ""),
            "value": best.loc[mode, "rps"], "color": MODES[mode].color,
            "text": f"{best.loc[mode, 'rps']:,.0f}  ({best.loc[mode, 'latency_mean_ms']:.1f} ms)",
        })  # fmt: skip
    low, high = int(summary["n"].min()), int(summary["n"].max())
    blocks = str(low) if low == high else f"{low}-{high}"
    fig = figures.bar_panels(
        [
            (f"The article ({article_setting('cpu_ram')}; {article_setting('rounds')})\n"
             "hatched: Windows, as published, not runnable here", pd.DataFrame(article)),
            (f"This machine: best of {blocks} block(s)", pd.DataFrame(ours)),
        ],
        xlabel="requests per second (label: ab's time per request, mean)",
        title="GET /api/testapi" + (f", {ab_options(load)}" if load else ""),
        note="each panel has its own scale: absolute numbers differ between machines",
        sharex=False,
    )  # fmt: skip
    listed = ", ".join(f"{r['label']} {r['value']:,.0f}" for r in ours)
    return figure_words.set_finding(
        fig, f"Best requests/s here, as the article's table orders them: {listed}"
    )


def advantage_figure(results: pd.DataFrame) -> Figure:
    """Self-host in % of the other host: the article's two systems (diamonds), ours paired
    with a 95% CI (dots and whiskers), and ours between the best blocks."""
    rows = [
        {"label": f"{g.os}: self-host / IIS", "article_pct": 100.0 + g.table_pct}
        for g in article_gains().itertuples(index=False)
    ]
    best = best_runs(results)
    for baseline in [m for m in MODES if m != SELF_HOST and m in best.index]:
        for r in _gain_rows(results, baseline).itertuples(index=False):
            rows.append({
                "label": f"{SELF_HOST} / {baseline}" + ("" if baseline == IIS_ANALOG else
                                                         " (added)"),
                "ratio_pct": r.ratio_pct, "ci_low_pct": r.ci_low_pct,
                "ci_high_pct": r.ci_high_pct, "color": MODES[baseline].color,
            })  # fmt: skip
        if baseline == IIS_ANALOG:
            rows.append({
                "label": f"{SELF_HOST} / {baseline}, best blocks",
                "ratio_pct": 100.0 * best.loc[SELF_HOST, "rps"] / best.loc[baseline, "rps"],
                "color": MODES[baseline].color,
            })  # fmt: skip
    return figures.ratio_chart(
        pd.DataFrame(rows),
        title="The self-host advantage: requests/s of the self-host in % of the other host",
        xlabel="% of the other host's requests/s (log scale)",
    )
