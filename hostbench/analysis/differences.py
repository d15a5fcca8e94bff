"""What a re-run did differently from its article: one row per aspect a reviewer checks
(the system, the runtime, the load tool and its version, connections, keep-alive, how the
compared modes' windows were laid out in time, bytes per response, how busy the CPU was), the
article's side beside ours.

The article's side is what its text states (reference/setup.csv, quoted there), named per
aspect in the study's reference/differences.csv; an aspect the article does not state says
so. Our side is read from the run folder (environment.json, params.json, results.csv), never
typed: the CPU reached and the bytes per response are measurements.
"""

import re
from pathlib import Path

import pandas as pd

from .. import results as schema
from ..errors import BadInput
from ..studies import Study, get_study
from . import prose, window_design
from .kept import content_key, keep
from .reference import load_setup
from .tables import load_environment, load_params, processor

DIFFERENCES_CSV = "differences.csv"
NOT_STATED = "not stated"
COLUMNS = ["aspect", "the article", "this run"]
ITEM = re.compile(r"\{(\w+)\}")  # a setup.csv item in differences.csv's words


class _Run:
    """A run folder's records, read once: its environment, params and every window it kept."""

    def __init__(self, run_dir: Path):
        self.env = load_environment(run_dir)
        self.params = load_params(run_dir)
        results = Path(run_dir) / schema.RESULTS_FILE  # read once per content (kept.py)
        rows = keep(("rows", content_key(results)), lambda: schema.read_results(results))
        self.kept = schema.valid_rows(rows)
        if self.kept.empty:
            raise BadInput(f"{run_dir}: no valid window to read the differences from")


def _system(run: _Run) -> str:
    def machine(env: dict) -> str:
        return (f"{env['os']}, {processor(env)}, {env['cpu_cores_logical']} logical cores, "
                f"{env['memory_gib']:g} GiB")  # fmt: skip

    if load_host := run.env.get("load_host"):  # over ssh: two machines
        return f"server host: {machine(run.env)}; load host: {machine(load_host)}"
    return machine(run.env)


def _runtime(run: _Run) -> str:
    parts = [run.env["dotnet"]["runtimes"]]
    go = run.env.get("goserver") or {}
    if run.kept["mode"].astype(str).str.startswith("go").any() and go:
        parts.append(", ".join(f"{name} {version}" for name, version in go.items()))
    return "; ".join(parts)


def _load_tool(run: _Run) -> str:
    tools = dict.fromkeys(run.kept["tool"].astype(str))
    return "; ".join(run.env["tools"].get(tool, tool) for tool in tools)


def _connections(run: _Run) -> str:
    levels = sorted(set(pd.to_numeric(run.kept["concurrency"]).astype(int)))
    text = ", ".join(str(c) for c in levels)
    depth = pd.to_numeric(run.kept.get("pipeline"), errors="coerce")
    if depth is not None and (depth > 1).any():
        pipelined = run.kept.loc[depth > 1, "scenario"].astype(str).unique()
        text += f"; {', '.join(pipelined)} pipelined {int(depth.max())} deep"
    return text


def _keepalive(run: _Run) -> str:
    kept = run.kept["keepalive"].astype(str).str.lower().isin(["true", "1"])
    if kept.all():
        return "yes: connections kept open"
    if not kept.any():
        return "no: a new connection per request"
    return f"kept open in {kept.mean():.0%} of the windows"


def _windows(run: _Run) -> str:
    """Back to back (the articles' way) or interleaved, with the slice and each mode's time
    from params.json (window_design)."""
    return window_design.in_words(run.params)


def bytes_per_response(kept: pd.DataFrame) -> pd.Series:
    """Per scenario, the bytes the load tool received per response, headers included, over
    the windows given (empty when no window recorded them)."""
    rows = kept.assign(
        bytes_read=pd.to_numeric(kept["bytes_read"], errors="coerce"),
        requests=pd.to_numeric(kept["requests"], errors="coerce"),
    ).dropna(subset=["bytes_read", "requests"])
    rows = rows[rows["requests"] > 0]
    per = rows.groupby(rows["scenario"].astype(str), sort=False)[["bytes_read", "requests"]].sum()
    return per["bytes_read"] / per["requests"]


def _bytes_per_response(run: _Run) -> str:
    sizes = bytes_per_response(run.kept).round()
    if sizes.empty:
        return "not recorded"
    listed = ", ".join(f"{scenario} {size:,.0f}" for scenario, size in sizes.items())
    return f"{listed} (as received, headers included)"


def _cpu_reached(run: _Run) -> str:
    busy = pd.to_numeric(run.kept["cpu_total_pct"], errors="coerce").dropna()
    if busy.empty:
        return "not recorded"
    return (f"{busy.mean():.0f}% busy on average over the measured windows "
            f"({prose.span(busy, '.0f')}%)")  # fmt: skip


# Every aspect the table has, in its order, and how this run's side is read.
ASPECTS = {
    "system": _system,
    "runtime": _runtime,
    "load tool": _load_tool,
    "connections": _connections,
    "keep-alive": _keepalive,
    "compared modes' windows": _windows,
    "bytes per response": _bytes_per_response,
    "CPU reached": _cpu_reached,
}


def article_side(study: Study) -> dict[str, str]:
    """Per aspect, what the article states: differences.csv's words (columns aspect, article),
    where {item} stands for that setup.csv item's value and unit; NOT_STATED where absent."""
    path = study.reference_dir / DIFFERENCES_CSV
    if not path.is_file():
        raise BadInput(f"{path}: missing; it says what the article states of each aspect "
                       f"({', '.join(ASPECTS)})")  # fmt: skip
    named = pd.read_csv(path, dtype=str, keep_default_na=False)
    setup = load_setup(study).set_index("item")
    values = {item: f"{row['value']} {row['unit']}".strip() for item, row in setup.iterrows()}
    stated = {}
    for i, row in enumerate(named.itertuples(index=False), start=2):
        where = f"{path} row {i}"
        if row.aspect not in ASPECTS:
            raise BadInput(f"{where}: unknown aspect {row.aspect!r}; allowed: "
                           f"{', '.join(ASPECTS)}")  # fmt: skip
        missing = [item for item in ITEM.findall(row.article) if item not in values]
        if missing:
            raise BadInput(f"{where}: setup.csv has no item {missing[0]!r}; items: "
                           f"{', '.join(values)}")  # fmt: skip
        stated[row.aspect] = ITEM.sub(lambda m: values[m.group(1)], row.article)
    return stated


def table(study_id: str, run_dir: str | Path) -> pd.DataFrame:
    """The differences from the article, one row per aspect (ASPECTS), for a run folder of
    the study `study_id`."""
    run = _Run(Path(run_dir))
    stated = article_side(get_study(study_id))
    rows = [(aspect, stated.get(aspect, NOT_STATED), read(run)) for aspect, read in ASPECTS.items()]
    return pd.DataFrame(rows, columns=COLUMNS)


START = "<!-- differences:start (generated by python -m hostbench docs) -->"
END = "<!-- differences:end -->"


def readme_block(study_id: str, run_dir: str | Path | None) -> str:
    """A study README's "differences from the article" table, from its committed paper run
    (`run_dir`; None or a folder without results: the article's side alone), between the
    markers `python -m hostbench docs` keeps fresh."""
    if run_dir is not None and (Path(run_dir) / "results.csv").is_file():
        rows = table(study_id, run_dir)
        folder = f"data/runs/{Path(run_dir).name}/"
        lead = f"The article's words beside the committed paper run, `{folder}`:"
    else:
        stated = article_side(get_study(study_id))
        rows = pd.DataFrame([(a, stated.get(a, NOT_STATED), "no paper run committed yet")
                             for a in ASPECTS], columns=COLUMNS)  # fmt: skip
        lead = "The article's words (no paper run of this study is committed yet):"
    cells = [[str(v).replace("|", "\\|") for v in row] for row in rows.itertuples(index=False)]
    lines = [f"| {' | '.join(COLUMNS)} |", "|---|---|---|"]
    lines += [f"| {' | '.join(c)} |" for c in cells]
    return "\n".join([START, lead, "", *lines, END])
