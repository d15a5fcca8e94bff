"""Convergence with the request count (params/convergence.yaml): each cell once at the
article's counts with progress on, how requests/s and memory settle with the requests
served, and the counts the evidence supports (params/paper-converged.yaml)."""

from pathlib import Path

import pandas as pd

from hostbench.analysis import convergence
from hostbench.catalog import mode_label
from hostbench.params import StudyParams
from hostbench.paths import RUNS
from hostbench.studies import study_of

from .models import ARTICLE, ordered

CONVERGENCE_PROFILE = "convergence"  # each cell once at the article's counts, progress on


CONVERGED_PROFILE = "paper-converged"  # fewer requests: only counts the evidence supports


# The committed convergence run, measured alone: the evidence any shorter profile must cite.
EVIDENCE = RUNS / f"example-{ARTICLE}-{CONVERGENCE_PROFILE}"


def convergence_curves(results: pd.DataFrame, run_dir) -> dict:
    """Each cell's curve from its run's progress.csv (by (mode, scenario)), also written to the
    run folder's convergence.csv, which outlives the archived run folders; a run that
    recorded no progress (every profile but `convergence`) gives its convergence.csv's, if it
    has one, or none."""
    curves = convergence.run_curves(results, run_dir)
    if curves:
        convergence.write_curves(curves, run_dir)
    elif (Path(run_dir) / convergence.CURVES_FILE).is_file():
        curves = convergence.read_curves(run_dir)
    return curves


def evidence_curves(evidence=EVIDENCE) -> dict:
    """The committed convergence run's curves; none while no such run is committed."""
    return convergence.read_curves(evidence) if (Path(evidence) / "results.csv").is_file() else {}


def converged_counts(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT) -> dict:
    """Per scenario, the count from which every cell's mean rate and memory stayed within the
    tolerance of the whole run's; None for a scenario that never settled before its end."""
    per = convergence.per_scenario(convergence.table(curves, tolerance_pct))
    return {
        r.scenario: (r.converged_from if r.converged_from < r.requests else None)
        for r in per.itertuples(index=False)
    }


def convergence_table(curves: dict, tolerance_pct: float = convergence.TOLERANCE_PCT):
    """Per cell, in the study's server order: the run's count, its rate and memory, and the
    count from which each (and both) stayed within the tolerance of the run's own value."""
    cells = convergence.table(curves, tolerance_pct)
    cells["server"] = [mode_label(m) for m in cells["mode"]]
    cells = ordered(cells)
    names = {
        "requests": "requests in the run",
        "rate": "req/s, whole run",
        "memory_mb": "memory [MB], whole run",
        "rate_from": "req/s within from",
        "memory_from": "memory within from",
        "converged_from": "both within from",
        "converged_share": "share of the run",
    }
    return cells.rename(columns=names)[["scenario", "server", *names.values()]]


def convergence_text(
    curves: dict,
    params: StudyParams | None = None,
    own: bool = True,
    tolerance_pct: float = convergence.TOLERANCE_PCT,
) -> str:
    """What the curves say about request counts: per scenario, the count from which every
    cell's mean rate and memory stayed within the tolerance of its whole run's; whose curves
    they are (`own`: this run's, else the committed convergence run's); and, given this run's
    `params`, where its own counts stand against them. One line when there are no curves."""
    if not curves:
        return (
            "This run recorded no progress (`progress_interval_s` is off), and no "
            f"`{CONVERGENCE_PROFILE}` run is committed (`data/runs/{EVIDENCE.name}/`): the "
            f"`{CONVERGENCE_PROFILE}` profile records it."
        )
    per = convergence.per_scenario(convergence.table(curves, tolerance_pct))
    lines = []
    for r in per.itertuples(index=False):
        cells = "its one cell" if r.cells == 1 else f"every one of its {r.cells} cells"
        if r.converged_from >= r.requests:  # only the last reading is within: not settled
            lines.append(
                f"- `{r.scenario}`: not settled within {tolerance_pct:g}% before the end of "
                f"{r.requests:,} requests; its runs were too short to say."
            )
            continue
        lines.append(
            f"- `{r.scenario}`: {cells} within {tolerance_pct:g}% from {r.converged_from:,} "
            f"requests on, {r.converged_from / r.requests:.0%} of the {r.requests:,} its runs "
            "served."
        )
    whose = (
        "This run recorded them."
        if own
        else f"This run recorded no progress: these curves are the committed "
        f"`{CONVERGENCE_PROFILE}` run's, `data/runs/{EVIDENCE.name}/` (each cell once at the "
        "article's counts, measured alone)."
    )
    text = (
        f"{whose} The smallest request count from which each run's cumulative mean requests/s "
        f"and its mean memory stayed within {tolerance_pct:g}% of the whole run's, the largest "
        "over each scenario's cells:\n\n" + "\n".join(lines) + "\n\nThese are the counts a "
        f"`{CONVERGED_PROFILE}` profile may use (one run per cell: a noisy machine moves them)."
    )
    return text if params is None else f"{text}\n\n{counts_text(curves, params, tolerance_pct)}"


def counts_text(
    curves: dict, params: StudyParams, tolerance_pct: float = convergence.TOLERANCE_PCT
) -> str:
    """Where this run's request counts stand: the article's, or at or above the count the
    curves support (its means within the tolerance of the article's count's), or below it.
    A run with timed windows counted no requests: it says so, and for how long."""
    if not params.requests:
        return (
            f"This run's windows are timed, not counted: each server had {params.duration_s:g} s "
            "in each window, after its warm-up to a steady rate (`duration_s` in its params). "
            "The curves above are the evidence for how many requests a run's means need "
            "beyond the warm-up (`requests` in results.csv: how many each server served)."
        )
    article = StudyParams.from_file(study_of(__file__).params_path(CONVERGENCE_PROFILE))
    needed = converged_counts(curves, tolerance_pct)
    lines = []
    for scenario in params.scenarios:
        n, full, need = (
            params.requests_for(scenario),
            article.requests_for(scenario),
            needed.get(scenario),
        )
        if n == full:
            where = "the article's count"
        elif need is None:
            where = f"below the article's {full:,}; the curves give no shorter count to compare"
        elif n >= need:
            where = (
                f"below the article's {full:,} but at least the {need:,} from which every cell "
                f"stayed within {tolerance_pct:g}% of its value"
            )
        else:
            where = (
                f"below the {need:,} from which every cell stayed within {tolerance_pct:g}% of "
                f"the article's count's values: this run's rates and memory may differ from "
                "them by more"
            )
        lines.append(f"- `{scenario}`: {n:,} requests per run, {where}.")
    return "This run's counts (`requests` in its params):\n\n" + "\n".join(lines)
