"""What the paper notebook shows besides charts: tables, sample responses, computed prose.

The notebook stays thin (parameters, narrative, calls); the tables and the
sentences whose numbers come from the results are built here, where they are
tested. Prose numbers are computed, never typed.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import analysis, environment, figures
from .loadgen import K6_SCRIPT
from .modes import MODES, LaunchOptions, get_mode, runnable_here
from .paths import RUNS
from .reference import paper_setup
from .scenarios import get_scenario
from .study import StudyParams, run_study

# Which of our modes stands in for which of the paper's (shared/DESIGN.md).
PAPER_MAPPING = {
    "nginx": "iis-outofprocess",
    "kestrel": "kestrel",
    "nginx-uds": "iis-inprocess",
}

HOSTING_MODELS = [
    # paper model, what it is, Linux analog here, our mode(s)
    ("Kestrel + IIS out-of-process (baseline, 100%)",
     "reverse proxy in another process, HTTP hop over loopback",
     "nginx or caddy reverse proxy over loopback TCP", "nginx, nginx-keepalive, caddy"),
    ("Kestrel + IIS in-process",
     "app inside the proxy's worker process (w3wp.exe), no hop",
     "none; nginx over a Unix socket is the cheaper-hop analog (still two processes)",
     "nginx-uds"),
    ("Kestrel", "app server exposed directly", "the same", "kestrel"),
    ("HTTP.sys", "Windows kernel-mode HTTP driver", "Windows only", "httpsys"),
]  # fmt: skip


def hosting_models_table() -> pd.DataFrame:
    return pd.DataFrame(
        HOSTING_MODELS, columns=["paper's model", "what it is", "Linux analog", "our mode"]
    )


def modes_table(requested: list[str]) -> pd.DataFrame:
    """Every mode, whether this study runs it, and why not when it can't run here."""
    here = set(runnable_here())
    rows = []
    for name, mode in MODES.items():
        if name in requested and name in here:
            status = "runs in this study"
        elif name not in here:
            status = "not on this OS: HTTP.sys and IIS exist only on Windows"
        elif name == "external":
            status = "for a server you start yourself (README: Windows)"
        else:
            status = "runs here, not requested"
        rows.append((name, mode.summary, status))
    return pd.DataFrame(rows, columns=["mode", "what it is", "in this study"])


def platform_table(env: dict | None = None) -> pd.DataFrame:
    """The paper's Tables 1-2 beside this machine."""
    env = env or environment.collect()
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


def k6_script(url: str, vus: int, duration_s: float) -> str:
    """The k6 script this run uses: the paper's Listing 1 plus counters and a JSON summary."""
    return K6_SCRIPT.format(
        url=json.dumps(url), vus=vus, duration=f"{duration_s:g}s", summary='"summary.json"'
    )


def sample_responses(scenarios: list[str], run_dir: Path, excerpt: int = 160) -> pd.DataFrame:
    """One real response per scenario from the test app on Kestrel, validated."""
    rows = []
    with get_mode("kestrel").launch(run_dir, LaunchOptions()) as target:
        for name in scenarios:
            scenario = get_scenario(name)
            response = target.get(scenario.path)
            scenario.validate(response)
            body = " ".join(response.text.split())
            rows.append(
                (name, scenario.path, response.content_type, len(response.body),
                 body[:excerpt] + ("..." if len(body) > excerpt else ""))
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["scenario", "path", "content type", "bytes", "body"])


@dataclass
class PaperRun:
    """The paper notebook's parameters, turned into a study and an output folder."""

    modes: list[str]
    scenarios: list[str]
    tool: str
    vus: int
    duration_s: float
    warmup_s: float
    repetitions: int
    run_id: str
    runs_dir: Path = RUNS
    params: StudyParams = field(init=False)

    def __post_init__(self):
        self.runs_dir = Path(self.runs_dir or RUNS)
        self.params = StudyParams.from_dict(
            {
                "modes": self.modes,
                "scenarios": self.scenarios,
                "tools": [self.tool],
                "concurrency": [self.vus],
                "duration_s": self.duration_s,
                "warmup_s": self.warmup_s,
                "repetitions": self.repetitions,
            }
        )

    @classmethod
    def from_parameters(cls, modes: str, scenarios: str, **scalars) -> "PaperRun":
        """From the notebook's scalar parameters (lists as comma-separated strings)."""
        split = [m.strip() for m in modes.split(",") if m.strip()]
        return cls(split, [s.strip() for s in scenarios.split(",") if s.strip()], **scalars)

    @property
    def out_dir(self) -> Path:
        return self.runs_dir / self.run_id

    def run(self) -> pd.DataFrame:
        return analysis.load_results(run_study(self.params, self.run_id, self.runs_dir))

    def save(self, fig, name: str):
        """Write a figure as PNG and SVG into the run's figures/ folder; returns it for display."""
        figures.save_figure(fig, self.out_dir / "figures", name)
        return fig


def _pct(comparison: pd.DataFrame, our_mode: str, scenarios: list[str]) -> str:
    rows = comparison[
        (comparison["our_mode"] == our_mode) & comparison["scenario"].astype(str).isin(scenarios)
    ]
    return analysis.describe_range(rows["ours_pct"])


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
    summary = analysis.summarize(results)
    lines = []
    for scenario, group in summary.groupby("scenario", observed=True):
        best = group.loc[group["rps_mean"].idxmax()]
        worst = group.loc[group["rps_mean"].idxmin()]
        lines.append(
            f"- **{scenario}**: fastest {best['mode']} ({best['rps_mean']:,.0f} rps), slowest "
            f"{worst['mode']} ({worst['rps_mean']:,.0f} rps), "
            f"{analysis.pct_change(worst['rps_mean'], best['rps_mean']):+.0f}% between them."
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
