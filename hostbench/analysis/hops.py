"""What each hop costs a request: the hosting lab's tables, sentences and figures.

A request's CPU time in a process group is its cores divided by the requests per second
(CPU-seconds per request, here in microseconds): the app's (Kestrel and the test app) and
the proxy's. Each proxied mode is compared with Kestrel alone by paired differences within
blocks (intervals.paired_differences), so a block's drift cancels and every sentence says
only what its interval supports. Input: results.csv rows of one load setup (one scenario,
tool and concurrency), as the lab measures them.
"""

import math
from types import SimpleNamespace

import pandas as pd
from matplotlib.figure import Figure

from ..catalog import MODES, mode_color, mode_label
from ..errors import BadInput
from . import figures, tables
from .intervals import paired_differences, paired_ratios
from .topology import path_figure
from .wording import difference_text, difference_words, ratio_text

BASELINE = "kestrel"  # every hop is what a mode adds to Kestrel alone
# The baseline in words, as the sentences, the table and the figure name it; a run on TLS or a
# runtime variant names it so (lab.baseline_words), kept in hop_costs' attrs[ALONE_WORDS].
ALONE = "Kestrel alone"
ALONE_WORDS = "alone_words"
POOLED, NO_POOL, SOCKET = "nginx-keepalive", "nginx", "nginx-uds"
# The IIS models the in-process section draws (Windows only: drawn, not measured).
IIS_MODELS = ("iis-outofprocess", "iis-inprocess")
UNDECIDED = "indistinguishable at this precision"


def per_request(results: pd.DataFrame) -> pd.DataFrame:
    """Each run with the CPU microseconds one request cost: `app_us` (the test app with
    Kestrel), `proxy_us` (0 where no proxy runs), `hosting_us` (both) and `loadgen_us`."""
    df = results.copy()
    rps = pd.to_numeric(df["rps"], errors="coerce")
    for column, group in (("app_us", "server"), ("proxy_us", "proxy"), ("loadgen_us", "loadgen")):
        cores = pd.to_numeric(df[f"cpu_{group}_cores"], errors="coerce")
        # Without a proxy process there is no proxy CPU (a proxy whose CPU was not read makes
        # its run invalid, left out before this is read).
        df[column] = 1e6 * (cores.fillna(0.0) if group == "proxy" else cores) / rps
    df["hosting_us"] = df["app_us"] + df["proxy_us"]
    return df


def _one_setup(results: pd.DataFrame) -> pd.DataFrame:
    df = tables.prepare(results, valid_only=False)
    setups = df[["scenario", "tool", "concurrency"]].drop_duplicates()
    if len(setups) != 1:
        raise BadInput(
            f"the lab compares modes under one load; these results hold {len(setups)} "
            "(scenario, tool, concurrency) setups"
        )
    return df


def _valid(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["valid"].astype(str).str.lower().isin(["true", "1"])]


def _paired(runs: pd.DataFrame, baseline: str, metric: str) -> pd.DataFrame:
    out = paired_differences(runs, baseline, metric=metric)
    return out.assign(mode=out["mode"].astype(str)).set_index("mode")


def hop_costs(results: pd.DataFrame, baseline: str = BASELINE, alone: str = ALONE) -> pd.DataFrame:
    """Per mode (the baseline first): blocks, mean requests/s and CPU µs per request (app,
    proxy, both, load generator), the proxy's mean cores; for the others, the CPU added per
    request over the baseline (`added`, app and proxy together) and in the app alone
    (`app_added`), each with its 95% interval, and throughput as % of the baseline's.
    `alone`: the baseline in words ("Kestrel alone, on HTTPS"), which everything drawn or
    said from these costs names it by (attrs[ALONE_WORDS])."""
    runs = per_request(_one_setup(results))
    valid = _valid(runs)
    modes = figures.present(valid["mode"])
    if baseline not in modes:
        raise BadInput(
            f"no valid run of {mode_label(baseline)} to compare with: every one was left out "
            "(the reasons are above); close what `python -m hostbench doctor` names and run again"
        )
    means = valid.groupby(valid["mode"].astype(str))[
        ["rps", "app_us", "proxy_us", "hosting_us", "loadgen_us", "cpu_proxy_cores"]
    ].mean()
    blocks = valid.groupby(valid["mode"].astype(str))["block"].nunique()
    # A mode whose valid runs share no block with the baseline's has no pair: NaN, paired 0.
    added = _paired(runs, baseline, "hosting_us").reindex(modes)
    app = _paired(runs, baseline, "app_us").reindex(modes)
    ratios = paired_ratios(runs, baseline)
    ratios = ratios.assign(mode=ratios["mode"].astype(str)).set_index("mode").reindex(modes)
    rows = []
    for mode in modes:
        row = {"mode": mode, "blocks": int(blocks[mode]), **means.loc[mode].to_dict()}
        if mode != baseline:
            row.update(
                added=added.at[mode, "difference"], added_low=added.at[mode, "ci_low"],
                added_high=added.at[mode, "ci_high"], app_added=app.at[mode, "difference"],
                app_added_low=app.at[mode, "ci_low"], app_added_high=app.at[mode, "ci_high"],
                rps_ratio=ratios.at[mode, "ratio"], rps_low=ratios.at[mode, "ci_low"],
                rps_high=ratios.at[mode, "ci_high"],
                paired=0 if pd.isna(added.at[mode, "n"]) else int(added.at[mode, "n"]),
            )  # fmt: skip
        rows.append(row)
    out = pd.DataFrame(rows)
    for column in ("added", "added_low", "added_high", "app_added", "app_added_low",
                   "app_added_high", "rps_ratio", "rps_low", "rps_high", "paired"):  # fmt: skip
        if column not in out:
            out[column] = math.nan
    out.attrs[ALONE_WORDS] = alone
    return out


def alone_words(costs: pd.DataFrame) -> str:
    """The baseline in words, as hop_costs was told it: "Kestrel alone" unless said otherwise."""
    return costs.attrs.get(ALONE_WORDS, ALONE)


def _row(costs: pd.DataFrame, mode: str) -> SimpleNamespace | None:
    """A mode's hop_costs row, its columns as attributes (r.mode, r.added, ...)."""
    found = costs[costs["mode"] == mode]
    return None if found.empty else SimpleNamespace(**found.iloc[0].to_dict())


def hop_table(costs: pd.DataFrame) -> pd.DataFrame:
    """The table for the page: per mode, requests/s, CPU µs per request in the app and the
    proxy, what the hop adds over Kestrel alone (all and in the app), and throughput, each
    comparison with its 95% interval. A mode without a proxy shows a dash."""
    rows, alone = [], alone_words(costs)
    for r in costs.itertuples(index=False):
        baseline = pd.isna(r.paired)
        rows.append({
            "mode": mode_label(r.mode),
            "requests/s": r.rps,
            "app µs/request": r.app_us,
            "proxy µs/request": "-" if MODES[r.mode].launch != "proxy" else f"{r.proxy_us:,.0f}",
            "added per request, app + proxy (95% CI)": "the baseline" if baseline else
            difference_text(r.added, r.added_low, r.added_high),
            "of it in the app (95% CI)": "-" if baseline else
            difference_text(r.app_added, r.app_added_low, r.app_added_high),
            f"throughput, % of {alone} (95% CI)": "100%" if baseline else
            ratio_text(r.rps_ratio, r.rps_low, r.rps_high),
        })  # fmt: skip
    return pd.DataFrame(rows)


def path_notes(costs: pd.DataFrame, mode: str) -> list[str]:
    """Notes beside a mode's boxes on its path figure: the CPU each process spent per request
    (the client's is the load tool's), and what the mode added over Kestrel alone."""
    r = _row(costs, mode)
    if r is None:
        return []
    nodes = MODES[mode].nodes
    notes = [f"{r.loadgen_us:,.0f} µs CPU\nper request"]
    if len(nodes) == 3:  # client, proxy, app
        notes.append(f"{r.proxy_us:,.0f} µs CPU\nper request")
    app = f"{r.app_us:,.0f} µs CPU\nper request"
    if r.paired > 0:  # not the baseline, and paired with it in some block
        app += f"\n(app {r.app_added:+,.0f} µs\nvs {alone_words(costs)})"
    return [*notes, app]


def path(costs: pd.DataFrame, mode: str) -> Figure:
    """A mode's path with the measured CPU per request beside each process."""
    return path_figure(mode, path_notes(costs, mode), title=mode_label(mode))


def missing_note(mode: str) -> str:
    return (
        f"*{mode_label(mode)} (`{mode}`) has no valid run here: add it to `modes` to see this "
        "(if it is there, its runs were left out: the reasons are above).*"
    )


def baseline_sentence(costs: pd.DataFrame, baseline: str = BASELINE) -> str:
    """Kestrel alone in words: what one request cost the app and the load tool (Markdown)."""
    r = _row(costs, baseline)
    return (
        f"**{alone_words(costs)}**: {r.rps:,.0f} requests/s; each request cost the app "
        f"**{r.app_us:,.0f} µs** of CPU (mean over {r.blocks} blocks), and the load tool "
        f"another {r.loadgen_us:,.0f} µs on the same cores."
    )


def hop_sentence(costs: pd.DataFrame, mode: str) -> str:
    """What a proxied mode adds per request over Kestrel alone, and where (Markdown)."""
    r = _row(costs, mode)
    if r is None:
        return missing_note(mode)
    alone = alone_words(costs)
    words = difference_words(r.added_low, r.added_high, more=f"more than {alone}",
                             less=f"less than {alone}")  # fmt: skip
    app_words = difference_words(r.app_added_low, r.app_added_high, more="more than alone",
                                 less="less than alone")  # fmt: skip
    return (
        f"**{mode_label(mode)}**: a request cost {r.hosting_us:,.0f} µs of CPU in the app and "
        f"the proxy together; against {alone}, "
        f"{difference_text(r.added, r.added_low, r.added_high)}: {words}. "
        f"The proxy itself spent {r.proxy_us:,.0f} µs per request; the app "
        f"{difference_text(r.app_added, r.app_added_low, r.app_added_high)} ({app_words}). "
        f"Throughput: {ratio_text(r.rps_ratio, r.rps_low, r.rps_high)} of {alone}'s."
    )


def compare(results: pd.DataFrame, mode: str, other: str) -> pd.DataFrame | None:
    """`mode` against `other`, paired within blocks: the CPU per request in the app and proxy
    together (`hosting_us`), in the app (`app_us`) and in the proxy (`proxy_us`), each a
    paired_differences row; None when either mode is missing."""
    runs = per_request(_one_setup(results))
    present = set(_valid(runs)["mode"].astype(str))
    if not {mode, other} <= present:
        return None
    runs = runs[runs["mode"].astype(str).isin([mode, other])]
    pairs = {
        metric: _paired(runs, other, metric) for metric in ("hosting_us", "app_us", "proxy_us")
    }
    if mode not in pairs["hosting_us"].index:
        return None  # their valid runs share no block
    return pd.DataFrame([pairs[metric].loc[mode].rename(metric) for metric in pairs])


def _difference(row: pd.Series) -> str:
    return difference_text(row["difference"], row["ci_low"], row["ci_high"])


def _verdict(row: pd.Series, less: str, more: str) -> str:
    return difference_words(row["ci_low"], row["ci_high"], more=more, less=less)


def pool_sentence(results: pd.DataFrame) -> str:
    """What nginx's upstream keep-alive pool changes, against nginx opening a new connection
    to the app per request, with only what the intervals support (Markdown)."""
    d = compare(results, POOLED, NO_POOL)
    if d is None:
        return missing_note(POOLED if NO_POOL in set(results["mode"].astype(str)) else NO_POOL)
    total, app, proxy = d.loc["hosting_us"], d.loc["app_us"], d.loc["proxy_us"]
    verdict = _verdict(total, "the pool saves CPU", "the pool costs CPU here")
    text = (
        f"With the pool, a request's CPU in the app and nginx together changed by "
        f"{_difference(total)} against nginx opening a connection per request: **{verdict}**. "
        f"In the app: {_difference(app)} "
        f"({_verdict(app, 'less', 'more')}); in nginx: {_difference(proxy)} "
        f"({_verdict(proxy, 'less', 'more')})."
    )
    if _verdict(app, "less", "more") == "less":
        text += (
            " The app's saving is the connection it no longer accepts, sets up and closes "
            "for every request: nginx hands it requests over connections it keeps open."
        )
    return text


def socket_sentence(results: pd.DataFrame) -> str:
    """What a Unix socket between nginx and the app changes against loopback TCP (both without
    a pool), and how it compares with the pool, with only what the intervals support."""
    d = compare(results, SOCKET, NO_POOL)
    if d is None:
        return missing_note(SOCKET if NO_POOL in set(results["mode"].astype(str)) else NO_POOL)
    total, app = d.loc["hosting_us"], d.loc["app_us"]
    verdict = _verdict(total, "the socket saves CPU", "the socket costs CPU here")
    text = (
        f"Over a Unix socket, a request's CPU in the app and nginx together changed by "
        f"{_difference(total)} against loopback TCP: **{verdict}** (in the app: "
        f"{_difference(app)}, {_verdict(app, 'less', 'more')})."
    )
    pooled = compare(results, POOLED, SOCKET)
    if pooled is not None:
        versus = pooled.loc["hosting_us"]
        words = _verdict(versus, "less", "more")
        if words == UNDECIDED:
            text += (
                f" A pooled TCP hop against a Unix-socket hop that opens a connection per "
                f"request: {_difference(versus)}, {UNDECIDED}."
            )
        else:
            text += (
                f" A pooled TCP hop against a Unix-socket hop that opens a connection per "
                f"request: {_difference(versus)}, **{words}**."
            )
            if words == "less":
                text += (
                    " Here what a hop costs is mostly its connection per request, which the "
                    "pool removes and the socket keeps, not the transport."
                )
    return text


def proxies(costs: pd.DataFrame) -> pd.DataFrame:
    """The proxied modes' rows, cheapest hop first."""
    proxied = costs[[MODES[m].launch == "proxy" for m in costs["mode"]]]
    return proxied.sort_values("added").reset_index(drop=True)


def inprocess_sentence(costs: pd.DataFrame, baseline: str = BASELINE) -> str:
    """What in-process hosting could save, bounded by the proxy hops measured here (Markdown):
    it removes one hop between two processes, so it saves at most what the cheapest hop adds;
    a bound whose interval includes 0 is called loose."""
    hops = proxies(costs)
    if hops.empty:
        return "*No proxied mode in this run: add `nginx-keepalive` to `modes` to bound this.*"
    base = _row(costs, baseline)
    cheapest, dearest = hops.iloc[0], hops.iloc[-1]

    def added(r: pd.Series) -> str:
        return difference_text(r["added"], r["added_low"], r["added_high"])

    span = (
        f"from {added(cheapest)} ({mode_label(cheapest['mode'])}) to {added(dearest)} "
        f"({mode_label(dearest['mode'])})"
        if len(hops) > 1
        else f"{added(cheapest)} ({mode_label(cheapest['mode'])})"
    )
    share = 100.0 * cheapest["added"] / base.app_us
    text = (
        f"A proxy hop here added {span} of CPU per request, against {base.app_us:,.0f} µs for "
        f"the whole request on {alone_words(costs)}. The cheapest, {mode_label(cheapest['mode'])}, "
        f"added {share:.0f}% of that. That is the most in-process hosting could save per "
        "request on this machine: it removes one such hop, but IIS still receives and parses "
        "each request (http.sys) and runs its own pipeline before the app sees it."
    )
    if difference_words(cheapest["added_low"], cheapest["added_high"], more="+", less="-") != "+":
        text += (
            " At this precision the bound is loose: the cheapest hop's interval does not lie "
            "above 0 (more `blocks` narrow it)."
        )
    return text


def nginx_cores_note(costs: pd.DataFrame, workers: int) -> str:
    """How much CPU nginx used, beside its worker count (Markdown): one worker uses one core
    at most, so fewer workers limit nginx only when it needed more than that."""
    rows = costs[[MODES[m].proxy == "nginx" for m in costs["mode"]]]
    if rows.empty:
        return missing_note(NO_POOL)
    busiest = rows.loc[rows["cpu_proxy_cores"].idxmax()]
    return (
        f"nginx ran {workers} worker process{'es' if workers != 1 else ''}; its busiest mode "
        f"here, {mode_label(busiest['mode'])}, used {busiest['cpu_proxy_cores']:.2f} cores "
        "on average."
    )


def hop_figure(costs: pd.DataFrame) -> Figure:
    """What each mode adds per request over Kestrel alone (app and proxy together): a bar per
    mode in its colour, the 95% interval as a whisker (drawn whole, below 0 too), the mean
    written beside it; a line at 0 (nothing added)."""
    rows = costs[costs["paired"] > 0].reset_index(drop=True)
    if rows.empty:
        raise BadInput(f"no mode besides {alone_words(costs)} to compare with it")
    low = rows["added_low"].fillna(rows["added"])
    high = rows["added_high"].fillna(rows["added"])
    left, right = min(0.0, float(low.min())), max(0.0, float(high.max()))
    pad = 0.25 * (right - left or 1.0)  # room for the labels beyond the longest whisker
    y = list(range(len(rows)))[::-1]  # the first mode on top
    with figures.style():
        fig = Figure(figsize=(9.5, 0.55 * len(rows) + 1.6), layout="constrained")
        ax = fig.subplots()
        for yi, r, lo, hi in zip(y, rows.itertuples(index=False), low, high, strict=True):
            ax.barh(yi, r.added, 0.6, color=mode_color(r.mode), zorder=2)
            if not pd.isna(r.added_low):
                ax.errorbar(r.added, yi, xerr=[[r.added - lo], [hi - r.added]], fmt="none",
                            ecolor="0.15", elinewidth=1.3, capsize=4, zorder=3)  # fmt: skip
            ax.annotate(f"{r.added:+,.0f} µs", (max(hi, r.added, 0.0), yi), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize=10)  # fmt: skip
        ax.axvline(0, color="0.2", linewidth=1.0, zorder=1)
        ax.set_xlim(left - (0.05 * pad if left < 0 else 0.0), right + pad)
        ax.set_yticks(y, [mode_label(m) for m in rows["mode"]])
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(f"CPU added per request over {alone_words(costs)}, app + proxy [µs]")
        fig.suptitle("What each hop adds to one request's CPU")
        blocks = int(rows["paired"].min())
        whiskers = "whiskers: 95% interval" if blocks > 1 else "one block: no interval"
        figures.footnote(fig, f"mean of the differences paired within {blocks} blocks; {whiskers}")
    return fig
