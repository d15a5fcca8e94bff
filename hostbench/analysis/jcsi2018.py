"""The JCSI 2018 study's own prose: its method, its claims judged by our intervals, its threats.

Every number here comes from the run's files (results.csv, ratios, params.json,
environment.json) or from data/reference; the words follow the intervals.
"""

import numpy as np
import pandas as pd

from ..catalog import mode_label, scenario_label
from . import intervals, tables
from .intervals import NOT_SUPPORTED, NOT_TESTABLE, SUPPORTED, UNDECIDED
from .reference import paper_ratios, paper_setup

# The paper states its values as "about" one number: our interval counts as agreeing
# when it comes within this many percentage points of it.
ABOUT_TOLERANCE_PCT = 10.0


def method(params: dict) -> str:
    """Section 4's method, from the study's params.json (Markdown)."""
    warm = (
        f"warm up until three 1 s windows agree within {params['steady_tolerance_pct']:g}% "
        f"(at most {params['warmup_s']:g} s; discarded, the curve kept in `warmup/curve.csv`)"
        if params["warmup_s"] > 0
        else "no warm-up"
    )
    pinned = (
        f"the load generator pinned to CPU {', '.join(map(str, params['loadgen_cpus']))} and "
        "the app and proxy to the others"
        if params.get("loadgen_cpus")
        else "every process free to run on every core, as on the paper's laptop"
    )
    described = f"This run: *{params['description']}*. " if params.get("description") else ""
    return described + (
        f"Each of the {params['repetitions']} blocks runs every mode and scenario once, in a "
        f"random order drawn from seed {params['seed']} (recorded in `params.json`), so a "
        "machine that slows down over the study cannot favour one mode. Each run: launch the "
        f"mode (app, plus proxy), check one response, {warm}, then {params['duration_s']:g} s "
        f"of {', '.join(params['tools'])} load at concurrency "
        f"{', '.join(map(str, params['concurrency']))} while the CPU monitor samples the "
        f"system and each process group every {params['sample_interval_s']:g} s; {pinned}. "
        "The client's request count is cross-checked against the app's own counter; a run "
        "with errors, non-2xx responses or disagreeing counts is kept but marked invalid and "
        "left out of the analysis."
    )


def _ratio(ratios: pd.DataFrame, mode: str, scenario: str):
    mine = (ratios["mode"].astype(str) == mode) & (ratios["scenario"].astype(str) == scenario)
    rows = ratios[mine]
    return None if rows.empty else rows.iloc[0]


def _interval_text(r) -> str:
    if r is None:
        return "not run"
    if not np.isfinite(r.ci_low_pct):
        return f"{r.ratio_pct:.0f}% (one block, no interval)"
    return f"{r.ratio_pct:.0f}% (95% CI {r.ci_low_pct:.0f}-{r.ci_high_pct:.0f}%)"


def _against_paper(r, paper_row) -> str:
    """Our interval against one stated value of the paper: a verdict word."""
    if r is None or not np.isfinite(r.ci_low_pct):
        return UNDECIDED
    low, high = paper_row.ratio_low_pct, paper_row.ratio_high_pct
    if paper_row.qualifier == "up to":  # an upper bound: above the baseline, not above it
        return SUPPORTED if r.ci_low_pct > 100 and r.ci_low_pct <= high else NOT_SUPPORTED
    low, high = low - ABOUT_TOLERANCE_PCT, high + ABOUT_TOLERANCE_PCT
    if r.ci_high_pct < low or r.ci_low_pct > high:
        return NOT_SUPPORTED
    return SUPPORTED if low <= r.ci_low_pct and r.ci_high_pct <= high else UNDECIDED


def claims(
    ratios: pd.DataFrame, baseline: str, kestrel_ratios: pd.DataFrame | None
) -> pd.DataFrame:
    """The paper's conclusions, each supported, not supported, or not testable here, with evidence.

    ratios: every mode to `baseline` (paired); kestrel_ratios: every mode to kestrel.
    """
    paper = paper_ratios()
    scenarios = [s for s in tables.SCENARIO_ORDER if s in set(ratios["scenario"].astype(str))]
    rows = []

    # 1. Kestrel alone is the fastest model: every other mode below Kestrel.
    if kestrel_ratios is not None and not kestrel_ratios.empty:
        worst = kestrel_ratios.sort_values("ci_high_pct", ascending=False).iloc[0]
        if (kestrel_ratios["ci_high_pct"] < 100).all():
            verdict = SUPPORTED
        elif (kestrel_ratios["ci_low_pct"] > 100).any():
            verdict = NOT_SUPPORTED
        else:
            verdict = UNDECIDED
        evidence = (
            f"closest to Kestrel: {mode_label(worst['mode'])} on "
            f"{scenario_label(worst['scenario'])}, {_interval_text(worst)} of Kestrel"
        )
        rows.append(("Kestrel alone is the fastest hosting model", verdict, evidence))

    # 2. The standard reverse-proxy model (the baseline) is the slowest.
    others = ratios[ratios["mode"].astype(str) != baseline]
    if not others.empty:
        lowest = others.sort_values("ci_low_pct").iloc[0]
        if (others["ci_low_pct"] > 100).all():
            verdict = SUPPORTED
        elif (others["ci_high_pct"] < 100).any():
            verdict = NOT_SUPPORTED
        else:
            verdict = UNDECIDED
        evidence = (
            f"closest to {mode_label(baseline)}: {mode_label(lowest['mode'])} on "
            f"{scenario_label(lowest['scenario'])}, {_interval_text(lowest)}"
        )
        claim = f"The reverse proxy over TCP ({mode_label(baseline)}) is the slowest"
        rows.append((claim, verdict, evidence))

    # 3. Kestrel's gain per scenario, as the paper states it.
    for scenario in scenarios:
        stated = paper[(paper["mode"] == "kestrel") & (paper["scenario"] == scenario)]
        if stated.empty:
            continue
        p = stated.iloc[0]
        r = _ratio(ratios, "kestrel", scenario)
        claim = (
            f"Kestrel on {scenario_label(scenario)}: {p.qualifier} "
            f"{p.ratio_high_pct - 100:+.0f}% over the baseline"
        )
        rows.append((claim, _against_paper(r, p), f"ours: {_interval_text(r)}"))

    # 4. What needs Windows.
    loss = paper[paper["mode"] == "iis-inprocess"].iloc[0]
    rows.append(
        (
            "IIS in-process is about 10-20% slower than Kestrel (paper: "
            f"{loss.ratio_low_pct:.0f}-{loss.ratio_high_pct:.0f}% of the baseline on HTML)",
            NOT_TESTABLE,
            "no Linux server hosts .NET in its own worker process; nginx over a Unix socket is "
            "only a cheaper hop (section 3)",
        )
    )
    rows.append(
        (
            "HTTP.sys performs close to Kestrel",
            NOT_TESTABLE,
            "HTTP.sys is a Windows kernel driver (README: measuring it on Windows)",
        )
    )
    return pd.DataFrame(rows, columns=["the paper's conclusion", "here", "evidence"])


def threats(results: pd.DataFrame, env: dict, ratios: pd.DataFrame) -> pd.DataFrame:
    """Threats to validity, each with its size measured in this run (or why it can't be)."""
    sat = tables.saturation(results)
    loadgen_share = 100 * sat["loadgen_cores"] / (sat["cpu_total_pct"] / 100 * sat["machine_cores"])
    by_mode = loadgen_share.groupby(sat["mode"], observed=True).mean()
    limited = int(results["loadgen_limited"].astype(str).eq("True").sum())
    drift = intervals.drift(results) if results["block"].nunique() > 1 else None
    cells = results.groupby(["mode", "scenario"], observed=True)["rps"]
    cv = cells.std() / cells.mean()
    steal = pd.to_numeric(results["cpu_steal_pct"], errors="coerce")
    paper = paper_setup().set_index("item")["value"]
    rows = [
        (
            "the load generator shares the cores",
            f"it used {by_mode.min():.0f}% of the busy CPU under {mode_label(by_mode.idxmin())} "
            f"to {by_mode.max():.0f}% under {mode_label(by_mode.idxmax())}; "
            f"{limited} of {len(results)} runs were limited by it",
            "the same on the paper's laptop; the sensitivity run (README) pins it apart",
        ),
        (
            "noise and drift of a shared VM",
            (
                f"run-to-run CV {cv.median() * 100:.0f}% (median over cells); block means "
                f"{drift['relative'].min():.2f}-{drift['relative'].max():.2f} of the cell means; "
                f"steal time up to {steal.max():.1f}%"
                if drift is not None
                else f"one block: no drift measurable; steal time up to {steal.max():.1f}%"
            ),
            "blocks in random order and ratios paired within blocks cancel drift; the "
            "intervals carry the noise",
        ),
        (
            f".NET {env['dotnet']['sdk']} vs ASP.NET Core {paper.get('aspnetcore')}",
            "not measurable: one runtime here",
            "compare ratios, not absolute requests per second",
        ),
        (
            f"nginx and Caddy in place of IIS {paper.get('iis')}",
            "not measurable here",
            "the analogs are analogs (section 3); the hop's cost is what they share",
        ),
        (
            "closed-loop load (k6's virtual users wait for each response)",
            f"latency x throughput / concurrency = {_littles_law(results):.2f} (1.00: the "
            "users were never idle)",
            "throughput and latency are two views of one bottleneck, as in the paper",
        ),
        (
            "client and server on one machine over loopback",
            "no network in the measurement",
            "as in the paper (k6 on the same laptop); a real network adds latency",
        ),
    ]
    return pd.DataFrame(rows, columns=["threat", "size in this run", "how it is handled"])


def _littles_law(results: pd.DataFrame) -> float:
    """Mean over runs of rps x mean latency / concurrency: 1 when the clients never idle."""
    value = results["rps"] * results["latency_mean_ms"] / 1000 / results["concurrency"]
    return float(value.mean())


def sensitivity(shared: pd.DataFrame, isolated: pd.DataFrame) -> pd.DataFrame:
    """The same ratios measured two ways: every process on every core (the paper's setup)
    and the load generator pinned apart. `moved`: isolated / shared; `same words`: whether
    both intervals lead to the same verdict (faster, slower, indistinguishable)."""
    keys = ["mode", "scenario"]
    left = shared.assign(mode=shared["mode"].astype(str), scenario=shared["scenario"].astype(str))
    right = isolated.assign(
        mode=isolated["mode"].astype(str), scenario=isolated["scenario"].astype(str)
    )
    both = left.merge(right, on=keys, suffixes=("_shared", "_isolated"))
    rows = []
    for r in both.itertuples(index=False):
        shared_words = intervals.describe(r.ratio_shared, r.ci_low_shared, r.ci_high_shared)
        isolated_words = intervals.describe(r.ratio_isolated, r.ci_low_isolated, r.ci_high_isolated)
        rows.append(
            (
                mode_label(r.mode),
                scenario_label(r.scenario),
                shared_words,
                isolated_words,
                r.ratio_isolated / r.ratio_shared,
                _same_words(shared_words, isolated_words),
            )
        )
    columns = ["mode", "scenario", "shared cores (the paper's setup)", "load generator isolated",
               "moved (isolated / shared)", "same words"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _same_words(a: str, b: str) -> str:
    """Whether two interval descriptions reach the same verdict ("n/a" without intervals)."""
    verdicts = [text.split(":")[0] for text in (a, b)]
    if any(v not in ("faster", "slower", "indistinguishable at this precision") for v in verdicts):
        return "n/a"
    return "yes" if verdicts[0] == verdicts[1] else "no"
