"""Did a re-run reproduce a committed run? Ratios of two or more runs of one study side by side.

`python -m hostbench compare RUN_A RUN_B [RUN_C ...]` (or `make compare RUN=<folder>`, which
compares a run with the committed paper run of its study). RUN_A is the reference; every
other run is compared with it, ratio by ratio.

How two runs' ratios are combined. Each run's ratio (ratios.csv: a mode's requests/s over the
baseline's, paired within blocks) comes with a Student t interval on the log scale, from n
blocks: log ratio m, half-width h = (log ci_high - log ci_low) / 2, so its standard error is
se = h / t(1 - alpha/2, n - 1). Two runs are independent measurements, so the log of the ratio
of ratios, m_B - m_A, has the standard error sqrt(se_A^2 + se_B^2), and its interval takes the
t quantile at the Welch-Satterthwaite degrees of freedom
(se_A^2 + se_B^2)^2 / (se_A^4 / (n_A - 1) + se_B^4 / (n_B - 1)); back on the ratio scale with
exp. A run compared with itself is not two measurements: its ratio of ratios is exactly 1.

The verdict on each ratio of ratios, with the tolerance declared once (verdicts.TOLERANCE_PCT):
  reproduced                  its interval lies inside 1 +- the tolerance;
  differs                     its interval excludes 1 (and is not inside the band);
  undecided at this precision otherwise, or without an interval (a run with n < 2).
"""

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..catalog import mode_label, scenario_label
from ..errors import BadInput
from ..params import PARAMS_FILE
from ..paths import RUNS
from ..studies import get_study
from . import claims_across_runs, runtimes, tables, verdicts
from .digits import write_csv
from .intervals import paired_ratios, variant_ratios
from .kept import content_key, keep
from .student_t import t_quantile
from .wording import ci_bounds, pct_text, verdict_edges

# A ratio of ratios within the package's one tolerance (verdicts.TOLERANCE_PCT, relative and
# log-symmetric) counts as reproduced (verdicts.REPRODUCED); wholly outside it on either side,
# as differing; else undecided (verdicts.UNDECIDED).
DIFFERS = "differs"
DONE_FILE = "reproduce.json"  # hostbench.reproduce.DONE_FILE: which study and profile made a run
RATIOS_FILE = "ratios.csv"
# What names one ratio: the columns of these a ratios table has (a study's own table may
# compare variants instead of modes; ratios.csv may hold several measures).
KEYS = ("measure", "baseline", "mode", "variant", "scenario", "tool", "concurrency")
THROUGHPUT = "rps"  # the measure of a ratios table without a `measure` column
# A measure other than throughput is named before its ratio.
MEASURE_NAMES = {"cpu_us_per_request": "CPU time per request"}
# environment.json entries a reader wants to see when they differ; params.json's all are
# compared but for these, which differ between any two runs by design. (hosts: over ssh, each
# host's machine, OS and tools, read there.)
ENVIRONMENT = ("cpu_model", *tables.CPU_IDENTITY, "cpu_cores_logical", "cpu_cores_physical",
               "memory_gib", "os", "kernel", "dotnet", "tools", "goserver", "python",
               "python_packages", "git_commit", "git_diff_sha256", "hosts")  # fmt: skip
# (sub_studies_skipped follows sub_studies and topology, which says the difference; the keys
# set_on_command_line names differ themselves.)
PARAMS_IGNORED = ("seed", "description", "sub_studies", "fingerprint", "sub_studies_skipped",
                  "set_on_command_line")  # fmt: skip


@dataclass(frozen=True)
class Run:
    """A run folder and what it is a run of."""

    path: Path
    study: str
    sub_study: str | None  # e.g. "two-hosts": a sub-study's folder beside its main run

    @property
    def name(self) -> str:
        return self.path.name


def find_run(text: str | Path, runs_dir: Path = RUNS) -> Path:
    """A run folder from a path, or a folder name under the runs dir."""
    path = Path(text)
    for candidate in (path, Path(runs_dir) / path):
        if (candidate / PARAMS_FILE).is_file():
            return candidate.resolve()
    raise BadInput(f"{text}: no run folder (a folder with {PARAMS_FILE}) there or in {runs_dir}")


def identify(path: Path) -> Run:
    """Which study a run folder belongs to: its reproduce.json, or, for a sub-study's folder
    (<main run>-<sub-study>), its main run's."""
    done = path / DONE_FILE
    if done.is_file():
        return Run(path, json.loads(done.read_text())["study"], None)
    for main in path.parent.glob("*"):
        sub = path.name.removeprefix(f"{main.name}-")
        if main == path or sub == path.name or not (main / DONE_FILE).is_file():
            continue
        if sub in tables.load_params(main).sub_studies:
            return Run(path, json.loads((main / DONE_FILE).read_text())["study"], sub)
    raise BadInput(
        f"{path}: not a finished study run (no {DONE_FILE}, and no main run beside it names "
        f"it as a sub-study); compare runs written by `make reproduce`"
    )


def committed_example(run: Run, runs_dir: Path = RUNS) -> Path:
    """The committed run a run is compared with: its study's paper run, or for a sub-study's
    run the paper run's sub-study, else the scope run's, else the claims run's (a sub-study the
    committed paper run predates: jcsi2018's runtimes, measured with its claims run before the
    claims profile left it to the scope profile)."""
    study = get_study(run.study)
    names = [study.paper_run]
    if run.sub_study:
        names = [f"{name}-{run.sub_study}"
                 for name in (study.paper_run, study.scope_run, study.claims_run)]  # fmt: skip
    for name in names:
        if (Path(runs_dir) / name / PARAMS_FILE).is_file():
            return (Path(runs_dir) / name).resolve()
    raise BadInput(
        f"study {run.study!r} has no committed run at {' or '.join(names)} under {runs_dir} "
        f"to compare with"
    )


def run_ratios(path: Path, study: str | None = None) -> pd.DataFrame:
    """A run's published ratios: its ratios.csv where it has one, else the study's own
    `compared_ratios(results)` where its analysis.py defines one, else every mode to the
    run's baseline (as `python -m hostbench summary` writes ratios.csv). A cell the baseline
    never ran beside (n = 0, no ratio) is left out."""
    key = ("ratios", study, _content(Path(path)))
    return keep(key, lambda: _published_ratios(Path(path), study)).copy()


def _content(path: Path) -> str:
    """What a run's comparison reads of its folder, hashed (kept.content_key)."""
    return content_key(path / "results.csv", path / RATIOS_FILE, path / PARAMS_FILE)


def write_ratios_file(path: Path, study: str, replace: bool = False) -> Path:
    """ratios.csv in a run folder whose notebook wrote none: its published ratios (run_ratios),
    so every run carries them in one file (mode, baseline, scenario, ..., n, ratio_pct,
    ci_low_pct, ci_high_pct) and a later comparison reads them as written. replace: write
    them anew over an older file (a re-render, whose analysis may have changed)."""
    target = Path(path) / RATIOS_FILE
    if replace or not target.is_file():
        write_csv(_published(_computed_ratios(Path(path), study)), target)
    return target


def _published_ratios(path: Path, study: str | None) -> pd.DataFrame:
    if (path / RATIOS_FILE).is_file():
        return _published(pd.read_csv(path / RATIOS_FILE))
    return _published(_computed_ratios(path, study))


def _published(ratios: pd.DataFrame) -> pd.DataFrame:
    if "measure" not in ratios.columns:
        ratios = ratios.assign(measure=THROUGHPUT)
    return ratios.dropna(subset=["ratio"]).reset_index(drop=True)


def _computed_ratios(path: Path, study: str | None) -> pd.DataFrame:
    results = tables.load_results(path, valid_only=False)
    own = get_study(study).hook("compared_ratios") if study else None
    if own is not None:
        return own(results)
    params = tables.load_params(path)
    baseline = params.baseline_mode
    if baseline is None:
        raise BadInput(f"{path}: no ratios.csv and no baseline mode to compute ratios with")
    if params.app_comparison:  # a mode on each runtime (variant) in one block: each its part
        by_runtime = runtimes.ratios(results, baseline, order=list(params.app_comparison))
        return by_runtime.rename(columns={runtimes.RUNTIME: "variant"})  # a KEYS column
    if params.variants:  # each mode launched with each variant in one block: against its first
        return variant_ratios(results, next(iter(params.variants)))
    return paired_ratios(results, baseline)


def ratio_name(row) -> str:
    """A ratio in words: "Kestrel / Kestrel + nginx (TCP), HTML, k6 at 8"."""
    parts = []
    measure = row.get("measure", THROUGHPUT)
    if measure != THROUGHPUT:
        parts.append(f"{MEASURE_NAMES.get(measure, measure)}:")
    if "variant" in row and isinstance(row["variant"], str):
        parts.append(row["variant"])
    if "mode" in row and "baseline" in row and isinstance(row["baseline"], str):
        parts.append(f"{mode_label(str(row['mode']))} / {mode_label(row['baseline'])}")
    if "scenario" in row:
        parts.append(scenario_label(str(row["scenario"])))
    if "tool" in row and "concurrency" in row:
        parts.append(f"{row['tool']} at {row['concurrency']}")
    return ", ".join(parts).replace(":,", ":")


def _log_se(ratio: pd.Series) -> tuple[float, float]:
    """(log ratio, its standard error) from a ratios row's t interval and n."""
    m = math.log(ratio["ratio"])
    n = int(ratio["n"])
    if n < 2 or pd.isna(ratio["ci_low"]) or pd.isna(ratio["ci_high"]):
        return m, math.nan
    half = (math.log(ratio["ci_high"]) - math.log(ratio["ci_low"])) / 2
    confidence = float(ratio.get("confidence", 0.95))
    return m, half / t_quantile(0.5 + confidence / 2, n - 1)


def ratio_of_ratios(a: pd.Series, b: pd.Series, confidence: float = 0.95) -> tuple:
    """b's ratio over a's, with its interval (module docstring): (value, low, high)."""
    m_a, se_a = _log_se(a)
    m_b, se_b = _log_se(b)
    d = m_b - m_a
    if math.isnan(se_a) or math.isnan(se_b):
        return math.exp(d), math.nan, math.nan
    var = se_a**2 + se_b**2
    if var == 0:
        return math.exp(d), math.exp(d), math.exp(d)
    df = var**2 / (se_a**4 / (int(a["n"]) - 1) + se_b**4 / (int(b["n"]) - 1))
    half = t_quantile(0.5 + confidence / 2, df) * math.sqrt(var)
    return math.exp(d), math.exp(d - half), math.exp(d + half)


def verdict(low: float, high: float, tolerance_pct: float = verdicts.TOLERANCE_PCT) -> str:
    """Whether a ratio of ratios' interval reproduces 1, by the one rule (verdicts.size_verdict
    against 1; each run's own blocks were counted when its interval was made)."""
    judged = verdicts.size_verdict(low, high, 1.0, n=verdicts.MIN_UNITS,
                                   tolerance_pct=tolerance_pct)  # fmt: skip
    return DIFFERS if judged in (verdicts.SMALLER, verdicts.LARGER) else judged


def _same_data(a: Path, b: Path) -> bool:
    """The same run: the same folder, or byte-identical results and ratios."""
    if a.resolve() == b.resolve():
        return True
    return all(_digest(a / name) == _digest(b / name) for name in ("results.csv", RATIOS_FILE))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "(none)"


def _on_baselines(ratios: pd.DataFrame, path: Path, ref: pd.DataFrame) -> pd.DataFrame:
    """A run's ratios, plus its requests/s ratios against the reference's baselines where it
    published them against another baseline but measured the reference's beside the other
    modes (a study whose baseline changed between the runs), paired from its results.csv."""
    if "baseline" not in ratios.columns or "baseline" not in ref.columns:
        return ratios
    missing = set(ref["baseline"].astype(str)) - set(ratios["baseline"].astype(str))
    if not missing:  # the usual case: results.csv is not read
        return ratios
    results = tables.load_results(path, valid_only=False)
    measured = set(results["mode"].astype(str))
    extra = [paired_ratios(results, b).assign(measure=THROUGHPUT) for b in sorted(missing)
             if b in measured]  # fmt: skip
    if not extra:
        return ratios
    return pd.concat([ratios, *extra], ignore_index=True).dropna(subset=["ratio"])


def check_comparable(runs: list[Run]) -> None:
    """One line, and no comparison, for runs of different studies or smoke runs."""
    if len(runs) < 2:
        raise BadInput("compare needs two runs or more (or one, to compare with its example)")
    studies = sorted({r.study for r in runs})
    if len(studies) > 1:
        raise BadInput(
            f"runs of different studies ({', '.join(f'{r.name}: {r.study}' for r in runs)}); "
            "compare runs of one study"
        )
    smoke = [r.name for r in runs if tables.is_smoke(r.path)]
    if smoke:
        raise BadInput(
            f"{', '.join(smoke)}: a smoke run (quick profile), its numbers are not evidence; "
            "compare paper-profile runs"
        )


def compare(runs: list[Run], tolerance_pct: float = verdicts.TOLERANCE_PCT) -> pd.DataFrame:
    """Every ratio the reference run (runs[0]) and another run share: both ratios with their
    intervals, the ratio of ratios (other / reference) with its interval and the verdict;
    one row per ratio and compared run. Made once per content of the runs' folders (kept.py)."""
    each = tuple((r.name, r.study, r.sub_study, _content(r.path)) for r in runs)
    return keep(("compare", tolerance_pct, each), lambda: _compared(runs, tolerance_pct)).copy()


def _compared(runs: list[Run], tolerance_pct: float) -> pd.DataFrame:
    check_comparable(runs)
    reference = runs[0]
    ref = run_ratios(reference.path, reference.study)
    rows = []
    for other in runs[1:]:
        theirs = _on_baselines(run_ratios(other.path, other.study), other.path, ref)
        keys = [k for k in KEYS if k in ref.columns and k in theirs.columns]
        both = ref.merge(theirs, on=keys, suffixes=("_a", "_b"))
        same = _same_data(reference.path, other.path)
        for _, row in both.iterrows():
            a = _side(row, "_a")
            b = _side(row, "_b")
            value, low, high = (1.0, 1.0, 1.0) if same else ratio_of_ratios(a, b)
            rows.append(
                {
                    "run": other.name,
                    "reference": reference.name,
                    **{k: row[k] for k in keys},
                    "ratio": ratio_name(row),
                    "ref_pct": 100 * a["ratio"],
                    "ref_ci_low_pct": 100 * a["ci_low"],
                    "ref_ci_high_pct": 100 * a["ci_high"],
                    "ref_n": int(a["n"]),
                    "run_pct": 100 * b["ratio"],
                    "run_ci_low_pct": 100 * b["ci_low"],
                    "run_ci_high_pct": 100 * b["ci_high"],
                    "run_n": int(b["n"]),
                    "ratio_of_ratios": value,
                    "rr_ci_low": low,
                    "rr_ci_high": high,
                    "tolerance_pct": tolerance_pct,
                    "verdict": verdict(low, high, tolerance_pct),
                }
            )
        if both.empty:
            raise BadInput(f"{other.name} and {reference.name} share no ratio to compare")
    return pd.DataFrame(rows)


def _side(row: pd.Series, suffix: str) -> pd.Series:
    names = ("ratio", "ci_low", "ci_high", "n", "confidence")
    return pd.Series({n: row[f"{n}{suffix}"] for n in names if f"{n}{suffix}" in row})


def differences(runs: list[Run]) -> pd.DataFrame:
    """What differed between the runs: machine, OS, tool versions, commit, params; one row per
    entry that is not the same in every run, a column per run."""
    records = {}
    for run in runs:
        env = tables.load_environment(run.path, as_recorded=True)  # hosts: their own rows
        params = json.loads((run.path / PARAMS_FILE).read_text())
        flat = {}
        for key in ENVIRONMENT:
            _flatten(flat, key, env.get(key))
        for key, value in params.items():
            if key not in PARAMS_IGNORED:
                _flatten(flat, f"params.{key}", value)
        records[run.name] = flat
    names = list(records)
    table = pd.DataFrame(records).reindex(columns=names)
    table = table.astype(object).where(table.notna(), "(not recorded)").astype(str)
    differs = table.nunique(axis=1) > 1
    return table[differs].rename_axis("what").reset_index()


def _flatten(out: dict, key: str, value) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(out, f"{key}.{k}", v)
    elif value is None:
        out[key] = "none"
    else:
        out[key] = json.dumps(value) if isinstance(value, list | dict) else value


def interval_cell(
    value_pct: float, low_pct: float, high_pct: float, edges: tuple[float, ...] = ()
) -> str:
    """264% (205-340%), or 264% (no interval); `edges` as ci_bounds' (a ratio of ratios
    beside its verdict keeps its side of the tolerance's edges: 86.97%, not 86%)."""
    bounds = ci_bounds(low_pct / 100, high_pct / 100, edges)
    ci = f" ({bounds[0]}-{bounds[1]}%)" if bounds else " (no interval)"
    return f"{pct_text(value_pct / 100)}{ci}"


def text_table(table: pd.DataFrame) -> str:
    """The comparison as the terminal shows it."""
    lines = []
    for run, group in table.groupby("run", sort=False):
        ref = group["reference"].iloc[0]
        lines.append(f"{run} against {ref} (tolerance +-{group['tolerance_pct'].iloc[0]:g}%):")
        for r in group.itertuples(index=False):
            edges = verdict_edges(r.tolerance_pct)
            rr = interval_cell(100 * r.ratio_of_ratios, 100 * r.rr_ci_low, 100 * r.rr_ci_high,
                               edges)  # fmt: skip
            lines.append(
                f"  {r.ratio}: {interval_cell(r.ref_pct, r.ref_ci_low_pct, r.ref_ci_high_pct)}"
                f" -> {interval_cell(r.run_pct, r.run_ci_low_pct, r.run_ci_high_pct)}; "
                f"ratio of ratios {rr}: {r.verdict}"
            )
        counts = group["verdict"].value_counts()
        summary = ", ".join(
            f"{counts.get(v, 0)} {v}" for v in (verdicts.REPRODUCED, DIFFERS, verdicts.UNDECIDED)
        )
        lines.append(f"  {len(group)} ratios: {summary}")
    return "\n".join(lines)


def figure(table: pd.DataFrame, tolerance_pct: float = verdicts.TOLERANCE_PCT):
    """Each ratio of ratios with its interval, on a log axis, the tolerance band shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(dict.fromkeys(table["ratio"]))
    runs = list(dict.fromkeys(table["run"]))
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(labels) * len(runs) + 1.6))
    ax.axvspan(*verdicts.tolerance_edges(tolerance_pct), color="#dfd", zorder=0,
               label=f"reproduced: within ±{tolerance_pct:g}%")  # fmt: skip
    ax.axvline(1.0, color="#555", linewidth=1)
    step = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        rows = table[table["run"] == run]
        y = [labels.index(r) + i * step for r in rows["ratio"]]
        x = rows["ratio_of_ratios"].to_numpy()
        low = (x - rows["rr_ci_low"].fillna(pd.Series(x, index=rows.index))).to_numpy()
        high = (rows["rr_ci_high"].fillna(pd.Series(x, index=rows.index)) - x).to_numpy()
        ax.errorbar(x, y, xerr=[low, high], fmt="o", capsize=3, label=run)
    ax.set_yticks([i + step * (len(runs) - 1) / 2 for i in range(len(labels))], labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_xlabel(f"ratio of ratios: run / {table['reference'].iloc[0]} (95% interval)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / len(labels)), ncol=2,
              fontsize="small", frameon=False)  # fmt: skip
    fig.tight_layout()
    return fig


def claim_verdicts(runs: list[Run]) -> pd.DataFrame | None:
    """The article's claims with a verdict column per run (claims_across_runs.side_by_side):
    did each run reach the same verdicts? None for a sub-study's runs (the claims are the main
    study's) or a study without a claims hook."""
    if not runs or any(r.sub_study for r in runs):
        return None
    return claims_across_runs.side_by_side(runs[0].study, {r.name: r.path for r in runs})


def write(
    runs: list[Run], out: Path, tolerance_pct: float = verdicts.TOLERANCE_PCT
) -> pd.DataFrame:
    """compare.csv, claims.csv (where the study judges claims), differences.csv and
    figures/compare.{png,svg} in `out`; returns the table."""
    table = compare(runs, tolerance_pct)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(table, out / "compare.csv")  # each at the declared precision (digits.py)
    verdicts = claim_verdicts(runs)
    if verdicts is not None:
        write_csv(claims_across_runs.with_against(verdicts), out / "claims.csv")
    write_csv(differences(runs), out / "differences.csv")
    (out / "figures").mkdir(exist_ok=True)
    fig = figure(table, tolerance_pct)
    for ext in ("png", "svg"):
        fig.savefig(out / "figures" / f"compare.{ext}", dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return table
