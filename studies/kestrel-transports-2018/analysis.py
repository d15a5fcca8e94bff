"""Kestrel's transports, 2018: the article's published gains, and the Sockets settings swept here.

The article (Tom Deseyn, Red Hat Developer blog, 2018) swapped Kestrel's transport (libuv,
Sockets, Red Hat's Linux transport) and swept ThreadCount/IOQueueCount under TechEmpower's
plaintext (16 pipelined requests) and JSON tests, and published the gains in two tables (the
transport CPU-constrained, and the app CPU-constrained). Only the Sockets transport exists in
.NET 10, so here its settings are the variants of one study: IOQueueCount, the article's
setting, and two of ours the article never varied, inline scheduling
(UnsafePreferInlineScheduling with inline socket completions) and
WaitForDataBeforeAllocatingBuffer (`origin` says which is which). Each row of results.csv
carries the settings the app reported it runs with (transport_* columns); variants.py reads
them from there.

This module holds the study's load, its claims hook and its words (the gains' and the limits'
sentences, the headline, the first screen); the article's own numbers are paper.py's, the
settings' tables variants.py's, the figures figures.py's, each read here by the notebook and
the tests.
"""

import math

import pandas as pd

from hostbench.analysis import prose
from hostbench.analysis.claims import judge
from hostbench.analysis.wording import ratio_text, with_ratio_text
from hostbench.catalog import scenario_label
from hostbench.params import expand_sweep

from .figures import (  # noqa: F401 (the notebook and the tests read them here)
    gains_figure,
    sweep_figure,
)
from .paper import (  # noqa: F401 (the notebook and the tests read them here)
    ARTICLE,
    TRANSPORTS,
    article_setup,
    published_gains,
)
from .variants import (  # noqa: F401 (the notebook and the tests read them here)
    ARTICLES,
    DEFAULT,
    OURS,
    SAME_AS_DEFAULTS,
    SCENARIOS,
    SETTINGS,
    gains,
    origin,
    prepared,
    settings,
    sweep,
)


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


# The article's claims (reference/claims.csv) that can be judged here compare settings of the
# one transport left: a claim's `mode` names a variant. The top of the IOQueueCount sweep,
# twice the cores, takes one name whatever the machine's cores, so that claim reads the same
# on every machine: the variant that reported IOQueueCount twice its cores and the defaults'
# other settings (inline scheduling off, wait for data on).
SWEEP_TOP = "ioq-twice-cores"


def by_variant(results: pd.DataFrame) -> pd.DataFrame:
    """The results with each variant in the mode's place, as the claims compare them, the
    sweep's top named SWEEP_TOP."""
    df = prepared(results)
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
