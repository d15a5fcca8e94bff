"""The verdict picture: every testable claim of a study, one row per machine and condition,
our ratio over the article's on a log axis, coloured by its verdict.

A panel per claim; in it a row per processor on record and condition the runs measured it
under (as measured, each runtime, each analog, each sub-study), never two processors in one
row; on a row a point per comparison the claim rests on (a scenario, a concurrency) with its
95% interval. A size or an equivalence is drawn as ours / the article's value, the band the
tolerance a reproduction lies within (verdicts.tolerance_edges); a direction as ours / its
claimed threshold, against 100% (supported on the claimed side). The verdicts are the claims
tables' (claims.POINTS, claims.of_run: the verdict each claim got under each condition),
never judged again here; their colours are PALETTE, which a report's verdict chips reuse.

    rows = verdict_rows("jcsi2018", machines.runs_on_record("jcsi2018"))  # or [one run]
    fig = draw(rows)                                 # a matplotlib Figure
    caption(rows), alt_text(rows)                    # what a page prints beside it

`python -m hostbench docs` writes each study's picture (docs/gallery/<study>-verdicts.png)
from its rows' sidecar CSV (rows_csv), which the docs' freshness test compares as text; the
PNG carries the key of what it was drawn from (picture_key), so a PNG drawn on another
processor, whose bytes may differ in a float's last digit, is never taken for stale.
"""

import hashlib
import io
import math
import re
import textwrap
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from matplotlib.transforms import blended_transform_factory

from ..paths import RUNS
from . import claims, machines, verdicts
from .claim_words import IN_PLACE_OF
from .kept import keep

# Each verdict's colour (Okabe-Ito, told apart with colour-blindness): a claim that holds in
# green, one that goes the other way in a colour of its side, no decision in greys.
PALETTE = {
    verdicts.REPRODUCED: "#009E73",
    verdicts.SUPPORTED: "#009E73",
    verdicts.SMALLER: "#0072B2",
    verdicts.LARGER: "#E69F00",
    verdicts.DIFFERS: "#CC79A7",
    verdicts.NOT_SUPPORTED: "#D55E00",
    verdicts.CONSISTENT: "#F0E442",  # not ruled out by a bound, not shown to hold: not its green
    verdicts.UNDECIDED: "#8C8C8C",
    verdicts.NOT_ENOUGH: "#C8C8C8",
    verdicts.NOT_TESTABLE: "#DDDDDD",
    verdicts.NOT_RERUN: "#DDDDDD",
}
BAND_COLOR = PALETTE[
    verdicts.REPRODUCED
]  # the tolerance band, in the colour of what lies within it
BAND_ALPHA = 0.13
SIZE_KINDS = ("size", "equivalence")  # drawn against the article's value; the rest, a direction
COLUMNS = ["claim", "kind", "side", "processor", "condition", "run", "comparison", "value", "x",
           "x_low", "x_high", "n", "verdict"]  # fmt: skip
DIGITS = 4  # significant digits of the sidecar CSV: what its text compares, whatever the CPU
WIDTH_IN = 9.0  # a GitHub page shows about 900 px: drawn for that width at 100 px per inch
DPI = 120  # 1080 px wide: sharp at the page's 900, a few hundred kB
RESTATED = "restated"  # attrs: the claims left out as resting on another's comparisons
KEY = "hostbench-rows"  # the PNG's text chunk naming what it was drawn from (picture_key)


def verdict_rows(study_id: str, runs: list[Path]) -> pd.DataFrame:
    """The study's tidy rows (COLUMNS) over `runs` (run folders: the runs on record,
    machines.runs_on_record, or a report's one run): one per comparison a testable claim rests
    on, under each condition each run judged it, with the verdict the claims table gave it
    there; x is ours / the article's value (a size) or / the claimed threshold (a direction).
    A claim that rests on another's comparisons (claims.restated) is left out, drawn once:
    attrs[RESTATED] names it ({claim: the claim it rests on}). Empty for a study without
    claims."""
    runs = [Path(r) for r in runs]
    named = machines.one_name_per_machine([(machines.environment(r), r) for r in runs])
    short = machines.short_names([name for name, _ in named])
    out, left_out = [], {}
    for name, run in named:
        table = claims.of_run(study_id, run)
        if table is None:
            return pd.DataFrame(columns=COLUMNS)
        again = table.attrs.get("restated", {})
        left_out |= again
        for p in table.attrs.get(claims.POINTS, []):
            if p[claims.CLAIM] in again:
                continue
            value = p["value"]
            out.append({"claim": p[claims.CLAIM], "kind": p["kind"],
                        "side": p["side"] if isinstance(p["side"], str) else "",
                        "processor": short[name], "condition": short_condition(p["condition"]),
                        "run": run.name, "comparison": p["comparison"], "value": value,
                        "x": p["ratio"] / value, "x_low": p["ci_low"] / value,
                        "x_high": p["ci_high"] / value, "n": p["n"],
                        "verdict": p[claims.VERDICT]})  # fmt: skip
    rows = pd.DataFrame(out, columns=COLUMNS)
    rows.attrs[RESTATED] = left_out
    return rows


def study_rows(study_id: str, runs_dir: Path = RUNS) -> pd.DataFrame:
    """verdict_rows over every run of the study on record (machines.runs_on_record)."""
    return verdict_rows(study_id, machines.runs_on_record(study_id, runs_dir))


def short_condition(condition: str) -> str:
    """A condition as a row names it: "the runtimes sub-study on .NET 8 (8.0.31)" -> ".NET 8",
    "the isolated sub-study" -> "isolated sub-study", "Kestrel + YARP (TCP) as the baseline"
    -> "baseline Kestrel + YARP (TCP)", "X in place of Y" -> "X instead"; an analog in a
    sub-study, both: "baseline X, .NET 8", the stand-in's app said once where the sub-study's
    name says it ("Kestrel on minimal APIs in place of ..., in the aot-gc sub-study on minimal
    APIs, JIT, ..." -> "Kestrel instead, minimal APIs, JIT, ...")."""
    if ", in " in condition:
        analog, where = (short_condition(c) for c in condition.split(", in ", 1))
        if (m := re.fullmatch(r"(.+) on (.+) instead", analog)) and m.group(2) in where:
            analog = f"{m.group(1)} instead"
        return f"{analog}, {where}"
    if m := re.fullmatch(r"the \S+ sub-study on (.+?)(?: \([^)]*\))?", condition):
        return m.group(1)
    if m := re.fullmatch(r"the (\S+ sub-study)", condition):
        return m.group(1)
    if condition.endswith(" as the baseline"):
        return "baseline " + condition.removesuffix(" as the baseline")
    if IN_PLACE_OF in condition:  # the mode it replaces is the claim's own: named there
        return condition.split(IN_PLACE_OF, 1)[0] + " instead"
    return condition


# --- the sidecar: the rows as text ---------------------------------------------------------


def rows_csv(rows: pd.DataFrame) -> str:
    """The rows as CSV text, each number to DIGITS significant digits: the picture's data,
    compared as text by the docs' freshness test (a float's last digits may differ between
    processors; these do not)."""
    shown = rows[COLUMNS].copy()
    for column in ("value", "x", "x_low", "x_high"):
        shown[column] = [f"{v:.{DIGITS}g}" if pd.notna(v) else "" for v in shown[column]]
    return shown.to_csv(index=False, lineterminator="\n")


def rows_from_csv(text: str) -> pd.DataFrame:
    """rows_csv's text read back as rows."""
    rows = pd.read_csv(io.StringIO(text), keep_default_na=False,
                       dtype={"side": str, "condition": str})  # fmt: skip
    for column in ("value", "x", "x_low", "x_high"):
        rows[column] = pd.to_numeric(rows[column].replace("", np.nan))
    return rows


def picture_key(csv_text: str) -> str:
    """What a picture is drawn from: its rows' text, the tolerance and the palette."""
    what = f"{csv_text}\0{verdicts.TOLERANCE_PCT}\0{sorted(PALETTE.items())}"
    return hashlib.sha256(what.encode()).hexdigest()


def png_bytes(csv_text: str) -> bytes:
    """The picture of rows_csv's text as PNG bytes, its key (picture_key) in the PNG's text;
    drawn once per key."""

    def make() -> bytes:
        buffer = io.BytesIO()
        draw(rows_from_csv(csv_text)).savefig(buffer, format="png", dpi=DPI,
                                               metadata={KEY: picture_key(csv_text)})  # fmt: skip
        return buffer.getvalue()

    return keep(("verdict picture", picture_key(csv_text)), make)


def png_key(path: Path) -> str | None:
    """The key a PNG written by png_bytes was drawn from; None where it has none (or no file)."""
    from PIL import Image

    if not Path(path).is_file():
        return None
    with Image.open(path) as image:
        return image.text.get(KEY) if hasattr(image, "text") else None


# --- the figure ----------------------------------------------------------------------------


def _style():
    rc = {**sns.axes_style("whitegrid"), "font.size": 9, "axes.titlesize": 9.5,
          "axes.labelsize": 9, "xtick.labelsize": 8.5, "ytick.labelsize": 8.5,
          "legend.fontsize": 8.5}  # fmt: skip
    return mpl.rc_context(rc)


def _pct(x: float, _pos=None) -> str:
    return f"{100 * x:.0f}%" if x >= 0.1 else f"{100 * x:.1f}%"


def _limits(rows: pd.DataFrame) -> tuple[float, float]:
    """The x range: every interval and the tolerance band, with a margin."""
    low, high = verdicts.tolerance_edges()
    values = pd.concat([rows["x"], rows["x_low"], rows["x_high"]]).dropna()
    values = values[values > 0]
    lo, hi = min(low, values.min()) if len(values) else low, max(high, values.max()) if len(
        values) else high  # fmt: skip
    span = math.log(hi / lo)
    return lo / math.exp(0.08 * span + 0.05), hi * math.exp(0.08 * span + 0.05)


LABEL_CHARS = 46  # a row's label wraps beyond this, so the data keep most of the width
TITLE_CHARS = 128  # a claim's title spans the figure's width


def _title(claim: str, kind: str, side: str) -> str:
    if kind in SIZE_KINDS:
        how = "ours / the article's; band: reproduced"
    else:
        how = (
            f"ours / its claimed value; supported {'right' if side == 'above' else 'left'} of 100%"
        )
    return textwrap.fill(f"{claim}  [{how}]", TITLE_CHARS)


def _labels(g: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(g["processor"], g["condition"], strict=True)))


def _label(processor: str, condition: str) -> str:
    return textwrap.fill(f"{processor} · {condition}", LABEL_CHARS, break_on_hyphens=False)


def _lines(g: pd.DataFrame) -> int:
    """The most lines a row label of the panel takes: its rows are spaced for it."""
    return max(_label(p, c).count("\n") + 1 for p, c in _labels(g))


def draw(rows: pd.DataFrame) -> Figure:
    """The picture of verdict_rows' rows: a panel per claim, a row per processor and
    condition (labelled "processor · condition"), a point per comparison at x with its
    interval, coloured by its verdict (PALETTE); two runs of one processor on one row set a
    little apart. A figure that says so where there are no rows."""
    with _style():
        if rows.empty:
            fig = Figure(figsize=(WIDTH_IN, 1.0), layout="constrained")
            fig.text(0.5, 0.5, "no testable claim measured on any run", ha="center")
            return fig
        groups = [(c, g) for c, g in rows.groupby("claim", sort=False)]
        heights = [len(_labels(g)) * (0.6 + 0.4 * _lines(g)) + 1.6 for _, g in groups]
        fig = Figure(figsize=(WIDTH_IN, 0.9 + 0.2 * sum(heights)), layout="constrained")
        axes = fig.subplots(len(groups), 1, sharex=True, height_ratios=heights, squeeze=False)
        lo, hi = _limits(rows)
        for ax, (claim, g) in zip(axes[:, 0], groups, strict=True):
            _panel(ax, claim, g)
            ax.set_xscale("log")
            ax.set_xlim(lo, hi)
        bottom = axes[-1, 0]
        bottom.xaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        bottom.xaxis.set_major_formatter(FuncFormatter(_pct))
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.set_xlabel("our ratio / the article's value (size) or its claimed value "
                          "(direction), log scale; lines: 95% intervals")  # fmt: skip
        _legend(fig, rows)
    return fig


def _panel(ax, claim: str, g: pd.DataFrame) -> None:
    kind, side = g["kind"].iloc[0], g["side"].iloc[0]
    labels = _labels(g)
    if kind in SIZE_KINDS:
        ax.axvspan(*verdicts.tolerance_edges(), color=BAND_COLOR, alpha=BAND_ALPHA, lw=0, zorder=0)
    ax.axvline(1.0, color="0.25", lw=0.9, zorder=1)
    for y, (processor, condition) in enumerate(labels):
        here = g[(g["processor"] == processor) & (g["condition"] == condition)]
        runs = list(dict.fromkeys(here["run"]))
        offsets = np.linspace(-0.18, 0.18, len(runs)) if len(runs) > 1 else [0.0]
        for run, dy in zip(runs, offsets, strict=True):
            points = here[here["run"] == run]
            color = PALETTE.get(points["verdict"].iloc[0], PALETTE[verdicts.UNDECIDED])
            shown = points.dropna(subset=["x_low", "x_high"])
            ax.hlines([y + dy] * len(shown), shown["x_low"], shown["x_high"], color=color,
                      lw=1.6, zorder=2)  # fmt: skip
            ax.scatter(points["x"], [y + dy] * len(points), s=16, color=color,
                       edgecolors="white", linewidths=0.4, zorder=3)  # fmt: skip
    ax.set_yticks(range(len(labels)), [_label(p, c) for p, c in labels])
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.yaxis.grid(False)
    for y in range(1, len(labels)):
        ax.axhline(y - 0.5, color="0.9", lw=0.6, zorder=0)
    # The title from the figure's left edge, over the row labels too: the claim gets the width.
    at = blended_transform_factory(ax.figure.transFigure, ax.transAxes)
    ax.annotate(_title(claim, kind, side), xy=(0.01, 1.0), xycoords=at, xytext=(0, 4),
                textcoords="offset points", va="bottom", ha="left",
                fontsize=mpl.rcParams["axes.titlesize"], annotation_clip=False)  # fmt: skip


def _legend(fig: Figure, rows: pd.DataFrame) -> None:
    shown = [v for v in PALETTE if v in set(rows["verdict"])]
    # One entry per colour: reproduced and supported share theirs.
    entries = {}
    for verdict in shown:
        entries.setdefault(PALETTE[verdict], []).append(verdict)
    handles = [Line2D([], [], marker="o", color=color, lw=1.6, ms=5, label=" / ".join(words))
               for color, words in entries.items()]  # fmt: skip
    if rows["kind"].isin(SIZE_KINDS).any():
        low, high = verdicts.tolerance_edges()
        handles.append(Patch(color=BAND_COLOR, alpha=BAND_ALPHA * 2,
                             label=f"reproduced band ({low:.3f}-{high:.2f}x)"))  # fmt: skip
    fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 3),
               frameon=False)  # fmt: skip


# --- the words beside it -------------------------------------------------------------------


def caption(rows: pd.DataFrame) -> str:
    """What the picture shows, in a paragraph computed from its rows: the claims, the
    processors and conditions, how each mark is placed and coloured, and which claim was left
    out as resting on another's comparisons (verdict_rows' attrs[RESTATED])."""
    if rows.empty:
        return "No testable claim of this study was measured on a run on record."
    low, high = verdicts.tolerance_edges()
    processors = ", ".join(dict.fromkeys(rows["processor"]))
    conditions = [c for c in dict.fromkeys(rows["condition"]) if c != claims.AS_RUN]
    under = f" as measured and under the other conditions its runs measured " \
        f"({', '.join(conditions)})" if conditions else ""  # fmt: skip
    counts = rows.drop_duplicates(["claim", "processor", "condition", "run"])["verdict"]
    tally = ", ".join(f"{n} {v}" for v, n in counts.value_counts().items())
    text = (
        f"Each of the article's {rows['claim'].nunique()} testable claims drawn (a panel each) "
        f"on every processor on record ({processors}){under}, a row each. A point is one "
        f"comparison the claim rests on, its line the 95% interval, on a log scale: for a size, "
        f"our ratio over the article's (reproduced when the whole interval lies in the band, "
        f"±{verdicts.TOLERANCE_PCT:g}%: {low:.3f}-{high:.2f}x); for a direction, our ratio "
        f"over its claimed value, supported on the claimed side of 100%. Colour: the claim's "
        f"verdict under that condition on that run ({tally}); two sets of points on one row "
        f"are two runs on that processor."
    )
    left = [
        f'"{c}" (it rests on the comparisons of "{o}")'
        for c, o in rows.attrs.get(RESTATED, {}).items()
    ]
    if left:
        text += f" Not drawn again: {'; '.join(left)}."
    return text


def alt_text(rows: pd.DataFrame, study_id: str) -> str:
    """The picture in a sentence per claim, for a reader who cannot see it: each claim's
    verdicts and on how many rows."""
    if rows.empty:
        return f"{study_id}: no testable claim measured"
    parts = []
    for claim, g in rows.groupby("claim", sort=False):
        judged = g.drop_duplicates(["processor", "condition", "run"])["verdict"]
        words = ", ".join(f"{v} on {n}" for v, n in judged.value_counts().items())
        parts.append(f"{claim}: {words} of {len(judged)} rows and runs")
    text = f"Verdicts of {study_id}'s claims by machine and condition. " + "; ".join(parts)
    return text.replace("[", "(").replace("]", ")")
