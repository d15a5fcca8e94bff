"""The box a report opens with: what the article claimed, what this re-run found and the
verdict, per claim, with the machine and its quietness in one line.

Built from the very table the report's claims section shows (each study's claims table), so
the box and the section cannot differ; a smoke run gets a banner instead of verdicts.
"""

import base64
import html
import json
import math
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pandas as pd

from ..catalog import mode_label
from ..errors import BadInput
from ..studies import get_study
from . import (
    intervals,
    machines,
    prose,
    run_design,
    tables,
    until_decided,
    verdict_card,
    verdict_picture,
    wording,
)
from .claims import VERDICT
from .compare import THROUGHPUT, run_ratios

# The box's opening tag: the report page finds the box by it (reproduce.first_screen).
MARK = '<section class="findings">'
# A headline up to this long opens the box, above the card; a longer one follows the card.
HEADLINE_FIRST_CHARS = 300
# The summary that opens the claims table under the card.
DETAILS = ("Each claim in full: the article's words and how we read them, our evidence, every "
           "machine on record and condition, the rule, the precision")  # fmt: skip
SMOKE_BANNER = (
    f"{prose.SMOKE_HEADLINE[0].upper()}{prose.SMOKE_HEADLINE[1:]}: no verdict here holds."
)


class FindingsBox:
    """The findings box as the page shows it (HTML), and as text."""

    def __init__(self, claims, machine: str, smoke: bool, headline: str = "", formats=None,
                 precision: str = "", card=None,
                 picture: str | Callable[[], str] = ""):  # fmt: skip
        self.claims, self.machine, self.smoke, self.headline = claims, machine, smoke, headline
        self.formats, self.precision = formats, precision
        # verdict_card.rows: the first screen's lines, the claims table one click below them
        self.card = card
        # The run's verdict picture as a <figure>, below the card; given as what draws it, it
        # is drawn when the page is (about a second a picture): a box read as text or for its
        # card draws none.
        self._picture = picture

    @property
    def picture(self) -> str:
        if callable(self._picture):
            self._picture = self._picture()
        return self._picture

    def family(self) -> str:
        """The family its claims make (wording.family_text): how many, the chance one errs."""
        if self.claims is None or VERDICT not in self.claims.columns:
            return ""
        return wording.family_text(self.claims[VERDICT])

    def _repr_html_(self) -> str:
        parts = [f"{MARK}<h2>Findings</h2>"]
        if self.smoke:
            parts.append(f'<p class="smoke-banner">{html.escape(SMOKE_BANNER)}</p>')
        judged = self.claims is not None and not self.smoke
        carded = judged and self.card is not None and len(self.card)
        headline = (f'<p class="headline"><strong>{html.escape(self.headline)}</strong></p>'
                    if self.headline else "")  # fmt: skip
        # A headline longer than a few lines would push the verdicts off the first screen:
        # it follows the card there.
        first = not carded or len(self.headline) <= HEADLINE_FIRST_CHARS
        if first:
            parts.append(headline)
        if carded:
            parts.append(verdict_card.to_html(self.card))
            if more := verdict_card.unjudged_line(self.claims):
                parts.append(f'<p class="more">{html.escape(more)}; each in full below.</p>')
            if not first:
                parts.append(headline)
            parts.append(self.picture)
            parts.append(f"<details><summary>{html.escape(DETAILS)}</summary>")
        if judged:
            parts.append(prose.table(self.claims, self.formats).to_html())
            parts.append(f"<p>{html.escape(wording.tolerance_text())}</p>")
            if family := self.family():
                parts.append(f"<p>{html.escape(family)}</p>")
        if self.precision and not self.smoke:
            parts.append(f"<p>{html.escape(self.precision)}</p>")
        if carded:
            parts.append("</details>")
        parts.append(f'<p class="machine">{html.escape(self.machine)}</p></section>')
        return "\n".join(parts)

    def __repr__(self) -> str:
        lines = ["Findings", *([SMOKE_BANNER] if self.smoke else []), self.headline]
        if self.claims is not None and not self.smoke:
            lines += [self.claims.to_string(index=False), wording.tolerance_text(), self.family()]
        precision = [] if self.smoke else [self.precision]
        return "\n".join([line for line in [*lines, *precision] if line] + [self.machine])


def findings_box(
    claims: pd.DataFrame | None,
    results: pd.DataFrame,
    env: dict | None = None,
    *,
    smoke: bool = False,
    headline: str = "",
    formats: dict | None = None,
    run_dir: str | Path | None = None,
    ratios: pd.DataFrame | None = None,
    study: str | None = None,
) -> FindingsBox:
    """The report's first screen: `claims` (the study's claims table, one row per claim: its
    words and their reading, our evidence with its interval and n, the verdict, where it
    changes; None for a study without one) with the rule it was judged by, the
    `headline` when there is one, and the machine line from every run (`results`, invalid
    runs too) and environment.json (`env`). smoke: the banner instead of verdicts. formats:
    the claims table's cell formats, as its section passes them to prose.table.
    run_dir: the run folder, for the precision line (precision_line). ratios: for a study
    whose ratios are not modes against one baseline, the ratios it publishes, for the
    precision line (ratios_precision). study: the study's id, for the goals line after it
    (goals_line, on `ratios` or else the run's published ratios) and the claims' verdicts on
    every machine on record (machines.with_machines, one more column)."""
    precision = ""
    if not smoke and run_dir is not None:
        precision = precision_line(run_dir, results, study)
    if not smoke and ratios is not None and not precision:
        precision = ratios_precision(ratios)
    until_decided_run = run_dir is not None and run_design.stops_when_decided(
        tables.load_params(run_dir)
    )
    # A claims run aims at decisions, not half-widths: its looks say how far it got.
    if (
        not smoke
        and study is not None
        and (ratios is not None or run_dir is not None)
        and not until_decided_run
    ):
        published = ratios if ratios is not None else run_ratios(Path(run_dir), study)
        precision = " ".join(p for p in (precision, goals_line(study, published)) if p)
    card, picture = None, ""
    if not smoke and claims is not None:
        seen = machines.seen_by_claim(study, claims, run_dir) if study is not None else None
        card = verdict_card.rows(claims, seen)
        if study is not None and run_dir is not None:
            picture = partial(picture_figure, study, run_dir)
        if study is not None:
            # Each claim's verdict on every machine on record, beside this run's.
            claims = machines.with_machines(claims, study, run_dir, seen=seen)
    return FindingsBox(claims, machine_line(results, env), smoke, headline, formats, precision,
                       card, picture)  # fmt: skip


def picture_figure(study: str, run_dir: str | Path) -> str:
    """The run's verdict picture (verdict_picture.py, as the gallery draws every run's) as an
    HTML <figure>: the PNG inline, its alt text and caption; "" where no claim was judged."""
    rows = verdict_picture.verdict_rows(study, [Path(run_dir)])
    if rows.empty:
        return ""
    png = base64.b64encode(verdict_picture.png_bytes(verdict_picture.rows_csv(rows))).decode()
    alt = html.escape(verdict_picture.alt_text(rows, study), quote=True)
    return (f'<figure class="verdict-picture"><img src="data:image/png;base64,{png}" '
            f'alt="{alt}"><figcaption>{html.escape(verdict_picture.caption(rows))}'
            "</figcaption></figure>")  # fmt: skip


# The package's aim for every ratio it publishes (docs/method.md): every run's goals line
# holds its ratios to it, and a run whose profile set no target of its own is held to it in
# its precision line. A study may aim tighter for some ratios (study.yaml halfwidth_goals).
GOAL_HALFWIDTH_PCT = 5.0


def _with_interval(ratios: pd.DataFrame) -> pd.DataFrame:
    """The ratios that have an interval: two blocks or more, a finite upper end."""
    return ratios[(ratios["n"] >= 2) & ratios["ci_high"].map(math.isfinite)]


def _half_pct(rows: pd.DataFrame) -> pd.Series:
    """Each ratio's 95% half-width in % of it (intervals.halfwidth_pct)."""
    return intervals.halfwidth_pct(rows["ratio"], rows["ci_high"])


def _half_widths(rows: pd.DataFrame) -> str:
    """ "95% half-widths of 2-9% over 5 blocks": ratios' half-widths (_half_pct) and the
    blocks they rest on."""
    half = _half_pct(rows)
    blocks = prose.span(rows["n"], ".0f")
    return f"95% half-widths of {prose.span(half, '.0f')}% over {blocks} blocks"


def _within(rows: pd.DataFrame, target_pct: float) -> str:
    """ "1 of 4 within it": how many ratios reached the target half-width."""
    half = _half_pct(rows)
    return f"{int((half <= target_pct).sum())} of {len(rows)} within it"


def goal_clause(rows: pd.DataFrame) -> str:
    """What reaching GOAL_HALFWIDTH_PCT would take, by the rule a targeted profile uses
    (Stein's, hostbench/harness/design.py) applied to these blocks' spread, each ratio's
    from its own interval: "2 of 8 within ±10%; all 8 would take about 90 blocks by Stein's
    rule on this spread, against 3 here", or "all within ±10%"."""
    half = _half_pct(rows)
    if (half <= GOAL_HALFWIDTH_PCT).all():
        return f"all within ±{GOAL_HALFWIDTH_PCT:g}%"
    wanted = max(
        intervals.blocks_for_halfwidth(
            intervals.block_spread(r.ratio, r.ci_high, int(r.n)), int(r.n), GOAL_HALFWIDTH_PCT
        )
        for r in rows.itertuples()
    )
    return (f"{int((half <= GOAL_HALFWIDTH_PCT).sum())} of {len(rows)} within "
            f"±{GOAL_HALFWIDTH_PCT:g}%; all {len(rows)} would take about {wanted} blocks "
            f"by Stein's rule on this spread, against {int(rows['n'].max())} here")  # fmt: skip


def _throughput(ratios: pd.DataFrame) -> pd.DataFrame:
    """The requests/s ratios of a published ratios table (all, without a `measure` column)."""
    return ratios[ratios.get("measure", pd.Series(THROUGHPUT, ratios.index)) == THROUGHPUT]


def goals_line(study_id: str, ratios: pd.DataFrame) -> str:
    """A run's published requests/s ratios (its ratios.csv, compare.run_ratios) against the
    goals they are held to, their 95% half-widths beside each: the study's own for a mode's
    ratios to the baseline (study.yaml halfwidth_goals), then the package's for every ratio
    (GOAL_HALFWIDTH_PCT): "Goals for the 95% half-widths: Kestrel against the baseline
    ±4.1-7.9% (goal ±2%; 0 of 4 ratios within it); all ratios ±2.9-23.1% (goal ±5%; 6 of 20
    ratios within it)." Empty when no ratio has an interval."""
    rows = _with_interval(_throughput(ratios))
    if rows.empty:
        return ""
    parts = []
    for mode, goal in get_study(study_id).halfwidth_goals:
        if "mode" in rows.columns:
            mine = rows[rows["mode"].astype(str) == mode]
            if len(mine):
                parts.append(_against(f"{mode_label(mode)} against the baseline", mine, goal))
    parts.append(_against("all ratios", rows, GOAL_HALFWIDTH_PCT))
    return f"Goals for the 95% half-widths: {'; '.join(parts)}."


def _against(what: str, rows: pd.DataFrame, goal_pct: float) -> str:
    """ "Kestrel against the baseline ±4.1-7.9% (goal ±2%; 0 of 4 ratios within it)"."""
    half = _half_pct(rows)
    n = len(rows)
    return (f"{what} ±{prose.span(half, '.1f')}% (goal ±{goal_pct:g}%; "
            f"{int((half <= goal_pct).sum())} of {n} ratio{'s' * (n != 1)} within it)")  # fmt: skip


def ratios_precision(ratios: pd.DataFrame) -> str:
    """How precise a run's published ratios came out (its ratios.csv, compare.run_ratios),
    for a study whose ratios are not modes against one baseline (kestrel-transports' settings
    against the defaults): their count and their 95% half-widths over the blocks they rest
    on. Empty when none has an interval."""
    rows = _with_interval(_throughput(ratios))
    if rows.empty:
        return ""
    return f"Precision: {len(rows)} compared ratios, {_half_widths(rows)}; {goal_clause(rows)}."


def precision_line(run_dir: str | Path, results: pd.DataFrame, study: str | None = None) -> str:
    """How precise the comparison came out, in one sentence: the 95% half-widths of the
    compared modes' ratios to the baseline (the focus modes where the profile names them),
    beside the target and the number of blocks it set (design.json), where the profile set
    one. A run that stopped when decided: its looks instead (until_decided.summary; `study`
    names what the paper profile adds). Empty for a study without a baseline to compare with."""
    params = tables.load_params(run_dir)
    if run_design.stops_when_decided(params):
        return until_decided.summary(run_dir, study)
    baseline = params.baseline_mode
    compared = params.focus or [m for m in params.modes if m != baseline]
    try:
        ratios = intervals.paired_ratios(results, baseline)
    except BadInput:
        return ""
    if not ratios.empty and (ratios["n"] < 2).all():
        return "Precision: no interval to state: each cell ran in one block, and one needs two."
    focus = ratios["mode"].astype(str).isin(compared)
    rows = _with_interval(ratios[focus])
    if rows.empty:
        return ""
    # Beyond two, a list of labels (some hold commas and "and") reads worse than a count.
    names = (" and ".join(mode_label(m) for m in compared) if len(compared) <= 2
             else f"the {len(compared)} other modes")  # fmt: skip
    reached = f"{names} against {mode_label(baseline)}: {_half_widths(rows)}"
    target = params.target_halfwidth_pct
    design_path = Path(run_dir) / "design.json"
    if target is None or not design_path.is_file():
        return f"Precision: {reached}; {goal_clause(rows)}."
    design = json.loads(design_path.read_text())
    capped = (f", capped at {design['blocks']} by the profile's time or block limit"
              if design["blocks"] < design["wanted_blocks"] else "")  # fmt: skip
    # The modes outside the focus had one window a block: held to the package's aim.
    others = _with_interval(ratios[~focus])
    rest = (f" The other {len(others)} ratios: {_half_widths(others)}; {goal_clause(others)}."
            if len(others) else "")  # fmt: skip
    return (
        f"Precision: targeted ±{target:g}%; the first {design['first_blocks']} blocks' "
        f"spread asked for {design['wanted_blocks']} blocks{capped}; reached {reached}, "
        f"{_within(rows, target)}.{rest}"
    )


def measured_when(results: pd.DataFrame) -> str:
    """When the windows ran, from their started_at: "Measured 2026-11-28 08:01-08:13 UTC."
    (the end's date too when they span days); "" without the column."""
    if "started_at" not in results.columns:
        return ""
    started = pd.to_datetime(results["started_at"], utc=True).dropna()
    if started.empty:
        return ""
    first, last = started.min(), started.max()
    if first.date() == last.date():
        return f"Measured {first:%Y-%m-%d %H:%M}-{last:%H:%M} UTC."
    return f"Measured {first:%Y-%m-%d %H:%M} UTC to {last:%Y-%m-%d %H:%M} UTC."


def where_and_when(run_dir: str | Path) -> str:
    """A run's machine, how quiet it was, when it ran and the code that measured it, in a few
    sentences: for a sub-study measured apart from its study (another day, another commit)."""
    results = tables.load_results(run_dir, valid_only=False)
    env = tables.load_environment(run_dir)
    commit = env.get("git_commit")
    code = f" With hostbench at commit `{commit}`." if commit else ""
    return f"{machine_line(results, env)} {measured_when(results)}{code}"


def machine_line(results: pd.DataFrame, env: dict | None = None) -> str:
    """The machine and how quiet it was, in one sentence."""
    env = env or {}
    machine = _machine_words(env)
    if env.get("load_host"):  # over ssh (tables.where_it_ran): the server host, the load host
        machine = f"the server host {machine or 'not recorded'}; the load host " + (
            _machine_words(env["load_host"]) or "not recorded")  # fmt: skip
    steal = pd.to_numeric(results.get("cpu_steal_pct"), errors="coerce")
    load = pd.to_numeric(results.get("load_avg_1m"), errors="coerce")
    # The load average counts the measured processes too; what else ran is foreign_cores.
    others = pd.to_numeric(results.get("foreign_cores", pd.Series(dtype=float)), errors="coerce")
    valid = results["valid"].astype(bool) if "valid" in results.columns else None
    kept = ""
    if valid is not None:  # a launch's valid windows are one row (results.per_launch)
        windows = (
            results["windows"] if "windows" in results.columns else pd.Series(1, results.index)
        )
        counted = int(windows[valid].sum()) + int((~valid).sum())
        kept = f"{int(windows[valid].sum())} of {counted} windows kept"
    quiet = [
        kept,
        _others_text(others.max()) if others.notna().any() else "",
        f"load average {prose.span(load, '.1f')}" if load.notna().any() else "",
        f"steal at most {prose.share_text(steal.max())}%" if steal.notna().any() else "",
    ]
    quietness = "; ".join(q for q in quiet if q)
    return f"Machine: {machine or 'not recorded'}. Quietness: {quietness or 'not recorded'}."


def _others_text(cores: float) -> str:
    """ "other processes at most 0.02 cores" (foreign_cores: what the harness did not start);
    under 0.005 said so, not printed as 0.00."""
    if f"{cores:.2f}" == "0.00":
        return "other processes under 0.005 cores"
    return f"other processes at most {cores:.2f} cores"


def _machine_words(env: dict) -> str:
    """What is recorded of a machine, as "CPU model, N cores, OS"."""
    cores = env.get("cpu_cores_logical")
    cpu = tables.processor(env) if env.get("cpu_model") else None
    parts = (cpu, f"{cores} cores" if cores else None, env.get("os"))
    return ", ".join(str(part) for part in parts if part)
