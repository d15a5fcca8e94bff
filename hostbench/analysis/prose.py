"""What the paper notebook shows besides charts: tables, sample responses, computed prose.

The notebook stays thin (parameters, narrative, calls); the tables and the
sentences whose numbers come from the results are built here, where they are
tested. Prose numbers are computed, never typed.
"""

import pandas as pd

from ..catalog import MODES, PAPER_BASELINE, PAPER_MODELS, mode_label, runnable_here, scenario_label
from . import tables
from .intervals import describe
from .reference import paper_setup


def hosting_models_table() -> pd.DataFrame:
    """The paper's four models, what each is, and what stands in for it here (the catalog's)."""
    rows = []
    for paper_id in PAPER_MODELS:
        model = MODES[paper_id]
        ours = [m.id for m in MODES.values() if m.paper_model == paper_id and not m.windows_only]
        name = model.label + (" (baseline, 100%)" if paper_id == PAPER_BASELINE else "")
        rows.append((name, model.summary, model.linux_analog, ", ".join(ours) or "none"))
    return pd.DataFrame(rows, columns=["paper's model", "what it is", "Linux analog", "our mode"])


def modes_table(requested: list[str]) -> pd.DataFrame:
    """Every mode, whether this study runs it, and why not when it can't run here."""
    here = set(runnable_here())
    rows = []
    for name, mode in MODES.items():
        if name in requested and name in here:
            status = "runs in this study"
        elif name not in here:
            status = "not on this OS: HTTP.sys and IIS exist only on Windows"
        elif mode.launch == "external":
            status = "for a server you start yourself (README: Windows)"
        else:
            status = "runs here, not requested"
        rows.append((name, mode.summary, status))
    return pd.DataFrame(rows, columns=["mode", "what it is", "in this study"])


def platform_table(env: dict) -> pd.DataFrame:
    """The paper's Tables 1-2 beside the machine a study ran on (its environment.json)."""
    paper = paper_setup().set_index("item")["value"]
    tools = env["tools"]
    rows = [
        ("operating system", paper.get("os"), f"{env['os']} (kernel {env['kernel']})"),
        ("CPU", paper.get("cpu"),
         f"{env['cpu_model']} ({env['cpu_cores_logical']} logical cores)"),
        ("RAM", paper.get("ram"), f"{env['memory_gib']} GiB"),
        (".NET", f"Runtime {paper.get('dotnet_core_runtime')}",
         f"SDK {env['dotnet']['sdk']}; {env['dotnet']['runtimes']}"),
        ("ASP.NET Core / Kestrel", paper.get("aspnetcore"), "the runtime's ASP.NET Core"),
        ("reverse proxy", f"IIS {paper.get('iis')}", f"{tools['nginx']}; {tools['caddy']}"),
        ("load tool", f"k6 {paper.get('k6')}", tools["k6"]),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["", "paper (2018)", "this machine"])


def k6_table(vus: int, duration_s: float) -> pd.DataFrame:
    """The paper's Table 3 beside this run's settings."""
    paper = paper_setup().set_index("item")
    duration = paper.loc["k6_duration"]
    return pd.DataFrame(
        [
            ("vus", paper.loc["k6_vus", "value"], vus),
            ("duration", f"{duration['value']}{duration['unit']}", f"{duration_s:g}s"),
        ],
        columns=["parameter", "paper", "this run"],
    )


def _pct(comparison: pd.DataFrame, our_mode: str, scenarios: list[str]) -> str:
    rows = comparison[
        (comparison["our_mode"] == our_mode) & comparison["scenario"].astype(str).isin(scenarios)
    ]
    return tables.describe_range(rows["ours_pct"])


def discussion(comparison: pd.DataFrame, baseline: str) -> str:
    """Section 5's sentences with our numbers in them (Markdown)."""
    lines = []
    others = ["text", "json", "xml"]
    if (comparison["our_mode"] == "kestrel").any():
        lines.append(
            f"- **Kestrel alone vs {baseline}**: the paper measured about +70% for HTML and up to "
            f"+200% for JSON, XML and text against its baseline. Here: "
            f"**{_pct(comparison, 'kestrel', ['html'])}** for HTML and "
            f"**{_pct(comparison, 'kestrel', others)}** for text, JSON and XML."
        )
    if (comparison["our_mode"] == "nginx-uds").any():
        lines.append(
            "- **The cheaper hop (nginx over a Unix socket) vs the TCP hop**, our stand-in for "
            "IIS in-process (the paper: 10-20% below Kestrel, far above the baseline): "
            f"**{_pct(comparison, 'nginx-uds', ['html'])}** for HTML and "
            f"**{_pct(comparison, 'nginx-uds', others)}** for the others."
        )
    within = comparison[comparison["our_mode"] != baseline]
    if not within.empty:
        n_in = int(within["within"].sum())
        lines.append(
            f"- {n_in} of {len(within)} comparable ratios fall within the paper's range "
            "(with the tolerance above); the rest are listed in the table."
        )
    return "\n".join(lines) or "No mode of this study maps onto the paper's models."


def conclusions(results: pd.DataFrame, saturation: pd.DataFrame, baseline: str) -> str:
    """Section 6: what holds on this machine, computed (Markdown)."""
    summary = tables.summarize(results)
    lines = []
    for scenario, group in summary.groupby("scenario", observed=True):
        best = group.loc[group["rps_mean"].idxmax()]
        worst = group.loc[group["rps_mean"].idxmin()]
        lines.append(
            f"- **{scenario}**: fastest {best['mode']} ({best['rps_mean']:,.0f} rps), slowest "
            f"{worst['mode']} ({worst['rps_mean']:,.0f} rps), "
            f"{tables.pct_change(worst['rps_mean'], best['rps_mean']):+.0f}% between them."
        )
    if (summary["mode"] == "kestrel").any() and (summary["mode"] == baseline).any():
        fastest = summary.loc[summary.groupby("scenario", observed=True)["rps_mean"].idxmax()]
        holds = (fastest["mode"] == "kestrel").all()
        lines.append(
            "- The paper's main finding, *Kestrel without a reverse proxy is the fastest model*, "
            + (
                "**holds** in every scenario here."
                if holds
                else "**does not hold** everywhere here."
            )
        )
    n_sat = int(saturation["saturated"].sum())
    lines.append(
        f"- CPU saturation: {n_sat} of {len(saturation)} runs kept the machine at >= 90% busy "
        f"(mean {saturation['cpu_total_pct'].mean():.0f}%); the paper tuned its load to 100%."
    )
    return "\n".join(lines)


def left_out_note(results: pd.DataFrame) -> str:
    """One sentence on the runs the analysis left out as invalid (Markdown)."""
    n = int(results.attrs.get("left_out_invalid", 0))
    if n == 0:
        return "Every run is valid: no transport errors, no non-2xx responses, counts agree."
    return (
        f"**{n} run(s) left out** as invalid (errors, non-2xx responses or disagreeing "
        "counts); `results.csv` keeps them, with the reason in `invalid_reason`."
    )


def ratio_sentences(ratios: pd.DataFrame) -> str:
    """Each mode against the baseline, per scenario, in the words its interval allows (Markdown)."""
    lines = []
    for mode, group in ratios.groupby("mode", observed=True, sort=False):
        parts = [
            f"{scenario_label(r.scenario)}: "
            + describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence)
            for r in group.itertuples(index=False)
        ]
        lines.append(
            f"- **{mode_label(mode)}** vs {mode_label(group['baseline'].iloc[0])}: "
            + "; ".join(parts)
            + "."
        )
    return "\n".join(lines)


def headline(ratios: pd.DataFrame, mode: str = "kestrel") -> str:
    """One line for the batch index: `mode` against the baseline in every scenario."""
    rows = ratios[ratios["mode"].astype(str) == mode]
    if rows.empty:
        return "no ratio to report"
    base = mode_label(rows["baseline"].iloc[0])
    parts = [
        f"{scenario_label(r.scenario)} {r.ratio_pct:.0f}% ({r.ci_low_pct:.0f}-{r.ci_high_pct:.0f}%)"
        if r.ci_low_pct == r.ci_low_pct  # NaN: one block only
        else f"{scenario_label(r.scenario)} {r.ratio_pct:.0f}% (one block, no interval)"
        for r in rows.itertuples(index=False)
    ]
    return f"{mode_label(mode)} as % of {base}: " + ", ".join(parts)


def cpu_cost_sentence(results: pd.DataFrame) -> str:
    """Where a request's CPU goes, per mode: the app's and the proxy's CPU time per request
    (tables.cpu_per_request, mean over blocks), in one sentence (Markdown). One load setup."""
    cost = tables.cpu_per_request(results)
    parts = []
    for r in cost.itertuples(index=False):
        proxy = r.proxy_us_per_request
        extra = "" if pd.isna(proxy) else f" + the proxy {proxy:,.0f} µs"
        parts.append(f"{mode_label(r.mode)}: the app {r.server_us_per_request:,.0f} µs{extra}")
    return "CPU time per request (mean over blocks): " + "; ".join(parts) + "."
