"""The gallery of re-runs: every run of a study, from every machine, beside the article's
numbers and the committed example's, one page per study (docs/gallery/<study>.md, written by
`python -m hostbench docs`).

The runs are the study's committed paper run, its sub-studies (the same study measured on
other topologies) and the runs readers contributed under data/runs/community/ (its README says
how). Each run is compared with the committed run of its study or sub-study
(hostbench.analysis.compare): its verdicts are the page's answer to "did it reproduce?".
"""

from pathlib import Path

import pandas as pd

from .analysis import claims_across_runs, compare, verdict_picture, verdicts, window_design
from .analysis.machines import COMMUNITY  # the folder under the runs dir for other machines' runs
from .analysis.reference import load_reference
from .analysis.tables import is_smoke, load_environment, load_params, processor
from .errors import BadInput
from .paths import RUNS, committed
from .studies import STUDIES, get_study

GALLERY = "docs/gallery"  # the gallery of re-runs: a page per study, <study>.md
LINK_BASE = "../../data/runs"  # from a page to the runs folder


def page_path(study_id: str) -> str:
    return f"{GALLERY}/{study_id}.md"


def picture_path(study_id: str, ext: str = "png") -> str:
    """The study's verdict picture (ext "png") or its rows' sidecar (ext "csv"), from which
    the docs' freshness test checks the picture (verdict_picture.rows_csv)."""
    return f"{GALLERY}/{study_id}-verdicts.{ext}"


def picture_csv(study_id: str, runs_dir: Path = RUNS) -> str:
    """The sidecar's text: the rows of every run of the study on record."""
    return verdict_picture.rows_csv(verdict_picture.study_rows(study_id, runs_dir))


def picture_lines(study_id: str, where: str, runs_dir: Path = RUNS) -> list[str]:
    """The verdict picture as a page shows it, `where` the gallery folder relative to the
    page: the image with its alt text, then its caption; none for a study with no testable
    claim measured on a run on record."""
    rows = verdict_picture.study_rows(study_id, runs_dir)
    if rows.empty:
        return []
    image = f"{where}{Path(picture_path(study_id)).name}"
    return [f"![{verdict_picture.alt_text(rows, study_id)}]({image})", "",
            f"*{verdict_picture.caption(rows)}*", ""]  # fmt: skip


def runs_of(study_id: str, runs_dir: Path = RUNS) -> list[compare.Run]:
    """The committed paper run of the study, its sub-studies' folders, its committed claims
    run (its claims profile, measured until decided), then every finished, non-smoke run of
    the study under community/ (sorted by folder name). Under the checkout's data/runs, only
    what git tracks: a run becomes the gallery's once added."""
    study = get_study(study_id)
    main = Path(runs_dir) / study.paper_run
    runs = []
    if (main / "params.json").is_file():
        runs.append(compare.Run(main, study_id, None))
        for sub in load_params(main).sub_studies:
            if (main.parent / f"{main.name}-{sub}" / "results.csv").is_file():
                runs.append(compare.Run(main.parent / f"{main.name}-{sub}", study_id, sub))
    claims_run = Path(runs_dir) / study.claims_run
    if committed(Path(runs_dir), f"{study.claims_run}/results.csv"):
        runs.append(compare.Run(claims_run, study_id, None))
    for params in committed(Path(runs_dir) / COMMUNITY, "*/params.json"):
        try:
            run = compare.identify(params.parent)
        except BadInput:
            continue  # not a finished study run: nothing to show
        if run.study == study_id and not is_smoke(run.path):
            runs.append(run)
    return runs


def run_starts(path: Path) -> pd.Series:
    """When each of a run's measurements started (results.csv's started_at, one per row)."""
    return pd.read_csv(path / "results.csv", usecols=["started_at"])["started_at"]


def _reference_run(run: compare.Run, runs_dir: Path) -> compare.Run | None:
    """The committed run `make compare` sets this run against (compare.committed_example);
    None where its study has none."""
    try:
        return compare.Run(compare.committed_example(run, runs_dir), run.study, run.sub_study)
    except BadInput:
        return None


def machine(run: compare.Run) -> dict:
    env = load_environment(run.path)
    started = pd.to_datetime(run_starts(run.path)).min()
    params = load_params(run.path)
    return {
        "machine": f"{env.get('cpu_cores_logical', '?')}-core {processor(env)}",
        "OS": env.get("os", "(not recorded)"),
        "client and server": params.topology,
        "windows": window_design.short(params),  # a sub-study's may differ from its main run's
        "commit": env.get("git_commit") or "(not recorded)",
        "measured": f"{started:%Y-%m-%d}",
    }


def answer(run: compare.Run, runs_dir: Path) -> tuple[str, pd.DataFrame]:
    """The run's verdicts, in words, and its ratios. A contributed run is compared with the
    committed run of its study (or sub-study); a committed sub-study with the paper run,
    where they share ratios (another topology: do the ratios carry over?)."""
    own = compare.compare([run, run])  # its ratios, as the comparison names them
    reference = _reference_run(run, runs_dir)
    if reference is None:
        return "no committed run to compare with", own
    if reference.path == run.path.resolve():
        if not run.sub_study:
            return "the committed paper run: the reference", own
        reference = compare.Run(Path(runs_dir) / get_study(run.study).paper_run, run.study, None)
        prefix = f"committed {run.sub_study} sub-study; against the paper run: "
    else:
        prefix = ""
    try:
        table = compare.compare([reference, run])
    except BadInput:
        return f"{prefix}no ratio in common", own
    counts = table["verdict"].value_counts()
    words = ", ".join(
        f"{counts[v]} {v}"
        for v in (verdicts.REPRODUCED, compare.DIFFERS, verdicts.UNDECIDED)
        if counts.get(v)
    )
    return f"{prefix}{words} (of {len(table)})", own


def article_lines(study_id: str, root: str = "../..") -> list[str]:
    """The article's relative claims (its numbers in % of another setup), one line each;
    `root`: the checkout, relative to the page."""
    ref = load_reference(study_id)
    relative = ref[(ref["unit"] == "%") & ref["relative_to"].fillna("").astype(bool)]
    study = get_study(study_id)
    lines = [f"The article: {study.citation}.", ""]
    if relative.empty:
        lines.append(
            "It states absolute numbers only (its machine's); the study's report sets them "
            "beside ours. Every number, with its quote: "
            f"[reference/published.csv]({root}/studies/{study_id}/reference/published.csv)."
        )
        return lines
    lines.append("Its numbers relative to another setup, each as it says it:")
    lines.append("")
    for r in relative.itertuples(index=False):
        scenario = f", {r.scenario}" if isinstance(r.scenario, str) and r.scenario else ""
        lines.append(
            f"- {r.setup} against {r.relative_to}{scenario}: {r.metric} {_value(r)} "
            f"({r.qualifier}; {r.where})"
        )
    lines += ["", f"All of them, with their quotes: [reference/published.csv]"
                  f"({root}/studies/{study_id}/reference/published.csv)."]  # fmt: skip
    return lines


def _value(r) -> str:
    """A published number with its unit: 70%, or a range 10-20%."""
    if pd.notna(r.value):
        return f"{r.value:g}{r.unit}"
    return f"{r.value_low:g}-{r.value_high:g}{r.unit}"


def page(study_id: str, runs_dir: Path = RUNS) -> str:
    """The study's gallery page, as Markdown."""
    study = get_study(study_id)
    runs = runs_of(study_id, runs_dir)
    lines = [
        f"# Re-runs of {study_id}: {study.title}",
        "",
        "<!-- generated by `python -m hostbench docs` from the run folders; do not edit -->",
        "",
        *picture_lines(study_id, "", runs_dir),
        *article_lines(study_id),
        "",
        "## The runs, one row per machine",
        "",
    ]
    if not runs:
        lines.append(
            f"No run of this study is committed yet. Add yours: "
            f"[data/runs/{COMMUNITY}/README.md]({LINK_BASE}/{COMMUNITY}/README.md)."
        )
        return "\n".join(lines) + "\n"
    lines += [
        f"Each run against the committed run of its study (or sub-study), ratio by ratio, with "
        f"`python -m hostbench compare`: *reproduced* when the ratio of ratios' 95% interval "
        f"lies within ±{verdicts.TOLERANCE_PCT:g}%, *differs* when it excludes 100%, "
        f"*undecided* otherwise ([docs/reproducing.md](../reproducing.md)).",
        "",
        "| run | report | machine | OS | client and server | windows | commit | measured "
        "| against the committed run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = {}
    for run in runs:
        answered, table = answer(run, runs_dir)
        ratios[run.name] = table.set_index("ratio")
        m = machine(run)
        link = f"[{_shown(run, runs_dir)}]({LINK_BASE}/{_shown(run, runs_dir)}/)"
        lines.append(
            f"| {link} | {report_links(run, runs_dir)} | {m['machine']} | {m['OS']} | "
            f"{m['client and server']} | "
            f"{m['windows']} | `{m['commit']}` | {m['measured']} | {answered} |"
        )
    lines += ["", "## Their ratios", "", _ratio_table(ratios), ""]
    judged = compare.claim_verdicts([r for r in runs if r.sub_study is None])
    if judged is not None:
        lines += [
            "## The article's claims, run by run",
            "",
            f"Each run's verdict on each of the article's claims, as its report's claims section "
            f"gives it: {claims_across_runs.agreement(judged)}.",
            "",
            claims_across_runs.markdown(
                judged.rename(columns={r.name: _shown(r, runs_dir) for r in runs})
            ),
            "",
        ]
    return "\n".join(lines) + "\n"


REPORTS = ("report.html", "report.pdf")  # a run's report and its printable copy


def report_links(run: compare.Run, runs_dir: Path) -> str:
    """Links to the run's report.html and, beside it, its report.pdf, each where the run has it
    ("" for a sub-study's folder, whose report is its main run's)."""
    shown = _shown(run, runs_dir)
    return " · ".join(f"[{name.split('.')[-1]}]({LINK_BASE}/{shown}/{name})"
                      for name in REPORTS if (run.path / name).is_file())  # fmt: skip


def _shown(run: compare.Run, runs_dir: Path) -> str:
    """The run's folder relative to the runs dir."""
    return run.path.resolve().relative_to(Path(runs_dir).resolve()).as_posix()


def _ratio_table(ratios: dict[str, pd.DataFrame]) -> str:
    """One row per ratio, one column per run: % of the baseline with its 95% interval."""
    names = list(dict.fromkeys(name for t in ratios.values() for name in t.index))
    head = "| ratio | " + " | ".join(ratios) + " |"
    rows = [head, "|---|" + "---:|" * len(ratios)]
    for name in names:
        cells = []
        for table in ratios.values():
            if name in table.index:
                r = table.loc[name]
                r = r.iloc[0] if isinstance(r, pd.DataFrame) else r
                cells.append(compare.interval_cell(r.run_pct, r.run_ci_low_pct, r.run_ci_high_pct))
            else:
                cells.append("")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pages(runs_dir: Path = RUNS) -> dict[str, str]:
    """Every study's gallery page: {path relative to the checkout: Markdown}."""
    return {page_path(sid): page(sid, runs_dir) for sid in STUDIES}
