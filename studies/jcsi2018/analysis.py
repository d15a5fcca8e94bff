"""The JCSI 2018 study's own prose: its method, its claims judged by our intervals, its threats.

Every number here comes from the run's files (results.csv, ratios, params.json,
environment.json) or from reference/; the words follow the intervals.
"""

import pandas as pd

from hostbench.analysis import (
    intervals,
    prose,
    run_design,
    tables,
    verdicts,
    window_design,
    wording,
)
from hostbench.analysis.claims import VERDICT  # noqa: F401 (the notebook reads it here)
from hostbench.analysis.claims import judge as judge_claims
from hostbench.analysis.sensitivity import (  # noqa: F401 (the notebook reads them here)
    TWO_HOSTS,
    changed_factors,
    localhost_cost,
    sensitivity,
)
from hostbench.analysis.verdicts import SUPPORTED
from hostbench.analysis.wording import describe, ratio_text
from hostbench.catalog import MODES, mode_label, scenario_label
from hostbench.params import StudyParams
from hostbench.warmup import JIT_SETTLED_METHODS

from . import figures, models  # noqa: F401 (figures: the notebook reads jcsi2018.figures)
from .designs import (  # noqa: F401 (the notebook and generated.py read them here)
    BACK_TO_BACK,
    HEADLINE_MODE,
    designs,
    designs_missing,
    designs_sentences,
    designs_table,
)
from .models import is_analog
from .paper import PAPER, paper_ratios, paper_setup


def method(params: StudyParams, together: bool = False) -> str:
    """Section 4's method, from the study's params.json (tables.load_params; Markdown);
    `together`: its modes warmed up together, in their window's slices
    (tables.warmed_up_together of its results)."""
    warm = (
        f"warms up until three 1 s windows agree within {params.steady_tolerance_pct:g}% "
        f"and the JIT compiled at most {JIT_SETTLED_METHODS} methods in each "
        f"(at most {params.warmup_s:g} s; discarded, the curve kept in the launch's folder)"
    )
    if together:
        warm = (
            "warms the compared modes up together, in the window's slices, until the JIT "
            f"of each one's app compiled at most {JIT_SETTLED_METHODS} methods a second in "
            "three readings of 1 s of its own slices in a row, at most "
            f"{params.warmup_s:g} s of its own slices (its rate, read over so little of its "
            "time, moves too much to be held to agree: docs/method.md; discarded, the curves "
            "kept in the launch's folder)"
        )
    if params.warmup_s <= 0:
        warm = "does not warm up"
    pinned = (
        f"the load generator pinned to CPU {', '.join(map(str, params.loadgen_cpus))} and "
        "the app and proxy to the others"
        if params.loadgen_cpus
        else "every process free to run on every core, as on the paper's laptop"
    )
    described = f"This run: *{params.description}*. " if params.description else ""
    quiet = params.quiet_max_cores
    gate = (
        f"waits until processes the harness did not start use less than {quiet:g} cores "
        f"(up to {params.quiet_wait_s:g} s), "
        if quiet is not None
        else "records the CPU of processes the harness did not start (a smoke run: not held "
        "by it), "
    )
    return described + (
        f"{_blocks(params)} Each block launches every mode once (app, plus proxy) and "
        "keeps it up. Scenario by scenario (in an order drawn from seed "
        f"{params.seed}, recorded in `params.json`), it checks one response of each mode, "
        f"{warm}, then {_measures(params)}. Before each window it {gate}and a window "
        "during which other processes used "
        "more is measured again at once. CPU is read from the kernel's counters at each "
        f"window's start and end (and sampled every {params.sample_interval_s:g} s for the "
        f"curves); {pinned}. The client's request count is cross-checked against the app's "
        "own counter; a window with errors or non-2xx responses, disagreeing counts, a warm-up "
        f"that never got steady, or shorter than {params.min_duration_s:g} s is kept but "
        "marked invalid and left out. The launch is the unit of every interval: its windows "
        "of a cell count as one value (their geometric mean), and n counts launches."
    )


def _blocks(params: StudyParams) -> str:
    """How many blocks ran, and what decided it, in words."""
    if run_design.stopping_rule(params) != run_design.TWO_STAGE:
        return f"{params.repetitions} block{'s' if params.repetitions > 1 else ''}."
    return (
        f"{params.repetitions} blocks of every mode first; then the spread of their "
        f"{'focus ratios' if params.focus else 'ratios to the baseline'} set the number of "
        f"blocks once, for a 95% half-width of "
        f"{params.target_halfwidth_pct:g}% (Stein's two-stage rule, at most "
        f"{params.max_repetitions} blocks; the decision is in the run's `design.json`)."
    )


def _measures(params: StudyParams) -> str:
    """What a sub-block measures, as its params lay out the compared modes' windows
    (window_design): back to back in its schedule's order, or sharing each window in slices."""
    load = (f"{', '.join(params.tools)} load at concurrency "
            f"{', '.join(map(str, params.concurrency))}")  # fmt: skip
    if window_design.kind(params) == window_design.BACK_TO_BACK:
        return (
            f"measures {_windows(params)} of {params.duration_s:g} s of {load}, the compared "
            f"modes' windows back to back in {run_design.schedule_words(params)}"
        )
    each = "one window" if params.windows == 1 else f"{params.windows} windows"
    shared = "that the compared modes share"
    if params.focus and params.windows > 1:  # the others: the focus modes and the baseline
        focus = ", ".join(f"`{m}`" for m in [*params.focus, params.baseline_mode])
        shared = f"shared by every mode in the first, by {focus} in the others"
    return (
        f"measures {each} of {load} {shared}: one k6 process sends each "
        f"request to the mode whose slice of {window_design.slice_s(params):g} s it is (one slice "
        "per mode per round, in a seeded random order), so each mode gets "
        f"{params.duration_s:g} s of every window and a drift of the machine falls on all of "
        "them alike; a mode's rate is its requests over its own slices' time"
    )


def _windows(params: StudyParams) -> str:
    """How many windows each mode gets per launch, in words."""
    each = "one window" if params.windows == 1 else f"{params.windows} windows"
    if not params.focus:
        return f"{each} of each mode"
    focus = ", ".join(f"`{m}`" for m in [*params.focus, params.baseline_mode])
    return f"{each} of {focus} and one of each other mode"


def _ratio(ratios: pd.DataFrame, mode: str, scenario: str):
    mine = (ratios["mode"].astype(str) == mode) & (ratios["scenario"].astype(str) == scenario)
    rows = ratios[mine]
    return None if rows.empty else rows.iloc[0]


def _ours(r) -> str:
    """A paired_ratios row as every page prints it (wording.ratio_text), or "not run"."""
    return "not run" if r is None else wording.ratio_text(r.ratio, r.ci_low, r.ci_high)


def paper_words(paper_row) -> str:
    """The paper's value as it words it: "about +70%", or "nawet 200%" (even +200%)."""
    gain = paper_row.ratio_high_pct - 100
    if paper_row.qualifier == "as much as":
        return f'"nawet {gain:.0f}%" (even {gain:+.0f}%)'
    if paper_row.qualifier == "stated":
        return f"{gain:+.0f}%"
    return f"{paper_row.qualifier} {gain:+.0f}%"


def analogs(results: pd.DataFrame, baseline: str) -> list[str]:
    """The modes in the run that stand for the paper's baseline (is_analog): the study's own
    baseline first, then the others (nginx-keepalive, caddy) in catalog order."""
    present = set(results["mode"].astype(str))
    others = [m for m in tables.MODE_ORDER if m in present and m != baseline and is_analog(m)]
    return [baseline, *others] if baseline in present else others


def claims(results: pd.DataFrame, params: StudyParams, variants=None) -> pd.DataFrame:
    """The paper's claims (reference/claims.csv), one row each, judged against the run's
    baseline; the other stand-ins for IIS out-of-process (nginx, caddy, yarp: is_analog) and
    the sub-studies are the conditions of its sensitivity column. The study's claims hook
    (hostbench.analysis.claims)."""
    others = analogs(results, params.baseline_mode)
    return judge_claims(PAPER, results, params, analogs=others, variants=variants)


def threats(
    results: pd.DataFrame,
    env: dict,
    ratios: pd.DataFrame,
    two_hosts: pd.DataFrame | None = None,
    localhost: str | None = None,
) -> pd.DataFrame:
    """Threats to validity, each with its size measured in this run (or why it can't be).

    two_hosts: every run of the `two-hosts` sub-study (topology netns), which sizes the
    localhost shortcut against this study's runs; None where it did not run. localhost: that
    size already said (localhost_size, against the sub-study laid out as two-hosts is)."""
    if env.get("load_host"):  # over ssh (tables.where_it_ran): k6 had a host of its own
        loopback = (
            "none: k6 ran on a host of its own, over the network",
            "unlike the paper (k6 on the same laptop): the network's latency is in the numbers",
        )
    else:
        loopback = (
            localhost or localhost_cost(results, two_hosts, _baseline(ratios)),
            "as in the paper (k6 on the same laptop); a real network adds latency",
        )
    sat = tables.saturation(results)
    loadgen_share = 100 * sat["loadgen_cores"] / (sat["cpu_total_pct"] / 100 * sat["machine_cores"])
    by_mode = loadgen_share.groupby(sat["mode"], observed=True).mean()
    limited = int(results["loadgen_limited"].sum())  # typed: bool (hostbench.results)
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
            "the same on the paper's laptop; the sensitivity section below pins it apart",
        ),
        (
            "noise and drift of a shared VM",
            (
                f"run-to-run CV {cv.median() * 100:.0f}% (median over cells); block means "
                f"{prose.span(drift['relative'], '.2f')} of the cell means; "
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
        ("client and server on one machine over loopback", *loopback),
    ]
    return pd.DataFrame(rows, columns=["threat", "size in this run", "how it is handled"])


def _baseline(ratios: pd.DataFrame) -> str:
    return str(ratios["baseline"].iloc[0])


def _littles_law(results: pd.DataFrame) -> float:
    """Mean over runs of rps x mean latency / concurrency: 1 when the clients never idle."""
    value = results["rps"] * results["latency_mean_ms"] / 1000 / results["concurrency"]
    return float(value.mean())


# The sub-studies that each change one factor of the main study, and what that factor is.
SENSITIVITY = {
    "isolated": "where the load generator runs",
    "bombardier": "which load tool",
    TWO_HOSTS: "whether the client shares the server's loopback",
}


def reference_for(sub_params: StudyParams, main_params: StudyParams, main_runs: pd.DataFrame,
                  sub_results: dict) -> tuple[str, StudyParams, pd.DataFrame]:  # fmt: skip
    """What a one-factor sub-study's ratios are set beside, so that one factor changes, not
    two: the main study where both lay out their windows alike (window_design); else the
    back-to-back sub-study where it ran with this one's layout (bombardier
    cannot interleave); else the main study, its other layout said beside
    (window_design.change). sub_results: {sub-study name: its folder or results.csv}.
    Returns the reference's sub-study name ("" for the main study), its params, every run."""
    back = sub_results.get(BACK_TO_BACK)
    if back is not None and not window_design.alike(sub_params, main_params):
        back_params = tables.load_params(back)
        if window_design.alike(back_params, sub_params):
            return BACK_TO_BACK, back_params, tables.load_results(back, valid_only=False)
    return "", main_params, main_runs


def reference_name(name: str) -> str:
    """reference_for's reference in words: "the main study", "the back-to-back sub-study"."""
    return f"the {name} sub-study" if name else "the main study"


def localhost_size(main_params: StudyParams, main_runs: pd.DataFrame, sub_results: dict) -> str:
    """What the localhost shortcut cost the ratios (sensitivity.localhost_cost): the two-hosts
    sub-study against its reference over loopback (reference_for), named where it is not the
    main study; NOT_MEASURED without a two-hosts sub-study."""
    baseline = main_params.baseline_mode
    if TWO_HOSTS not in sub_results:
        return localhost_cost(main_runs, None, baseline)
    two_hosts = sub_results[TWO_HOSTS]
    name, _, loopback = reference_for(tables.load_params(two_hosts), main_params, main_runs,
                                      sub_results)  # fmt: skip
    cost = localhost_cost(loopback, tables.load_results(two_hosts, valid_only=False), baseline)
    return f"against {reference_name(name)}, laid out alike: {cost}" if name else cost


# --- tables and sentences beside the paper's


def hosting_models_table() -> pd.DataFrame:
    """The paper's four models, what each is, and what stands in for it here (models.py)."""
    rows = []
    for paper_id, paper_model in models.PAPER_MODELS.items():
        model = MODES[paper_id]
        ours = [m.id for m in MODES.values()
                if models.paper_model(m.id) == paper_id and not m.windows_only]  # fmt: skip
        name = model.label + (" (baseline, 100%)" if paper_id == models.PAPER_BASELINE else "")
        rows.append((name, model.summary, paper_model.linux_analog, ", ".join(ours) or "none"))
    return pd.DataFrame(rows, columns=["paper's model", "what it is", "Linux analog", "our mode"])


def paper_values_table() -> pd.DataFrame:
    """The paper's throughput values as % of its baseline (paper_ratios), in words: one row per
    model and scenario, the baseline's definition first."""
    rows = []
    for r in paper_ratios().itertuples(index=False):
        if r.qualifier == "definition":
            if not rows:
                rows.append((mode_label(r.mode), "all", "100%", "the baseline, by definition"))
            continue
        if r.derived:
            value = f"{r.ratio_low_pct:.0f}-{r.ratio_high_pct:.0f}%"
            words = r.qualifier
        else:
            value, words = f"{r.ratio_high_pct:.0f}%", paper_words(r)
        rows.append((mode_label(r.mode), scenario_label(r.scenario), value, words))
    columns = ["the paper's model", "scenario", "% of its baseline", "the paper's words"]
    return pd.DataFrame(rows, columns=columns)


def platform_table(env: dict) -> pd.DataFrame:
    """The paper's Tables 1-2 beside the machine a study ran on (its environment.json)."""
    paper = paper_setup().set_index("item")["value"]
    tools = env["tools"]
    rows = [
        ("operating system", paper.get("os"), f"{env['os']} (kernel {env['kernel']})"),
        ("CPU", paper.get("cpu"),
         f"{tables.processor(env)} ({env['cpu_cores_logical']} logical cores)"),
        ("RAM", paper.get("ram"), f"{env['memory_gib']} GiB"),
        (".NET", f"Runtime {paper.get('dotnet_core_runtime')}",
         f"SDK {env['dotnet']['sdk']}; {env['dotnet']['runtimes']}"),
        ("ASP.NET Core / Kestrel", paper.get("aspnetcore"), "the runtime's ASP.NET Core"),
        ("reverse proxy", f"IIS {paper.get('iis')}", tables.proxy_versions(env)),
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


# Section 6: what configuring the proxy's hop did, each against nginx as Microsoft's guide
# configures it (a new upstream connection per request, over loopback TCP).
HOP_BASELINE = "nginx"
HOP_CONFIGURATIONS = {
    "nginx-keepalive": "an upstream keep-alive pool",
    "nginx-uds": "a Unix socket in place of loopback TCP",
}


def conclusions(results: pd.DataFrame) -> str:
    """Section 6's findings about the hop, in the words the intervals allow (Markdown).

    results: every run (paired_ratios leaves the invalid ones out). For each configuration of
    the hop that ran beside HOP_BASELINE, the scenarios where its interval lies above 100%
    (faster), below (slower), or includes 100% or is missing (no effect shown); the closing
    sentence says the hop's configuration matters only if some configuration's interval
    supports an effect, and names which did and which did not.
    """
    present = set(results["mode"].astype(str))
    tried = [m for m in HOP_CONFIGURATIONS if m in present]
    if HOP_BASELINE not in present or not tried:
        return (
            f"This run has no configuration of the hop beside {mode_label(HOP_BASELINE)}, "
            "so it says nothing about how the hop's configuration matters."
        )
    ratios = intervals.paired_ratios(results, HOP_BASELINE)
    lines, effect, none = [], [], []
    for mode in tried:
        found = {"faster": [], "slower": [], "includes 100%": [], "no interval": []}
        for r in ratios[ratios["mode"].astype(str) == mode].itertuples(index=False):
            if wording.ci_bounds(r.ci_low, r.ci_high) is None or r.n < verdicts.MIN_UNITS:
                found["no interval"].append(r)
            elif verdicts.direction_verdict(r.ci_low, r.ci_high, "above", n=r.n) == SUPPORTED:
                found["faster"].append(r)
            elif verdicts.direction_verdict(r.ci_low, r.ci_high, "below", n=r.n) == SUPPORTED:
                found["slower"].append(r)
            else:
                found["includes 100%"].append(r)
        parts = [
            f"{word} on " + ", ".join(f"{scenario_label(r.scenario)} {_ours(r)}" for r in rows)
            for word, rows in (("faster", found["faster"]), ("slower", found["slower"]))
            if rows
        ]
        if found["includes 100%"]:
            names = ", ".join(scenario_label(r.scenario) for r in found["includes 100%"])
            parts.append(f"no effect shown on {names} (the interval includes 100%)")
        if found["no interval"]:
            names = ", ".join(scenario_label(r.scenario) for r in found["no interval"])
            parts.append(f"nothing can be said on {names} (fewer than {verdicts.MIN_UNITS} blocks)")
        what = HOP_CONFIGURATIONS[mode]
        lines.append(
            f"- **{what[0].upper()}{what[1:]}** ({mode_label(mode)}, as % of "
            f"{mode_label(HOP_BASELINE)}): " + "; ".join(parts) + "."
        )
        changed = [scenario_label(r.scenario) for r in found["faster"] + found["slower"]]
        if changed:
            effect.append(f"{what} (on {', '.join(changed)})")
        else:
            none.append(what)
    if effect:
        closing = (
            "So the reverse proxy's cost depends on how its hop is configured, not only on "
            f"having a proxy at all: here {_and(effect)} changed it"
            + (f"; for {_and(none)}, no interval shows an effect." if none else ".")
        )
    else:
        closing = (
            f"No interval here shows that {_and(none)} changed the proxy's cost, so this run "
            "does not say that configuring the hop matters."
        )
    return "\n".join(lines) + "\n\n" + closing


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def headline(ratios: pd.DataFrame, mode: str = HEADLINE_MODE) -> str:
    """One line for the batch index: `mode` against the baseline in every scenario."""
    rows = ratios[ratios["mode"].astype(str) == mode]
    if rows.empty:
        return "no ratio to report"
    base = mode_label(rows["baseline"].iloc[0])
    parts = [
        f"{scenario_label(r.scenario)} {ratio_text(r.ratio, r.ci_low, r.ci_high, r.confidence)}"
        for r in rows.itertuples(index=False)
    ]
    return f"{mode_label(mode)} as % of {base}: " + ", ".join(parts)
