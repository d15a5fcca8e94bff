"""The verdict card: a report's first screen, one short line per claim of the article.

Each line: the claim in the article's few words, ours beside the article's, the verdict as a
coloured chip (the colours of the verdict picture, VERDICT_COLOURS) and where it holds in a few
words (the machines on record, machines.in_short; the runtimes, analogs and sub-studies it was
judged again under, claim_words.conditions_in_short). The claims table it is built from, with every
word of the reading and every machine, stays one click away (the findings box's <details>).
"""

import html

import pandas as pd

from . import claim_words, claims, machines, verdict_picture, verdicts, wording

# One colour per verdict, the verdict picture's, for the card's chips.
VERDICT_COLOURS = verdict_picture.PALETTE
NOT_RUN = "not measured in this run"  # a testable claim none of whose comparisons ran
UNJUDGED = (verdicts.NOT_TESTABLE, verdicts.NOT_RERUN)  # left out of the card, counted below it
CLAIM, OURS, ARTICLE, VERDICT, WHERE = "claim", "ours", "the article's", "verdict", "where it holds"


def rows(table: pd.DataFrame, seen: dict | None = None) -> pd.DataFrame:
    """The card's lines from a claims table (claims.judge_table, its attrs kept): one per
    testable claim. seen: machines.seen_by_claim's counts, for the machines' words; None where
    the page names no machines."""
    measured = _as_measured(table)
    not_run = set(table.attrs.get(claims.NOT_RUN, ()))
    again = table.attrs.get(claims.CONDITIONS, {})
    out = []
    for r in table.to_dict("records"):
        if r[claims.VERDICT] in UNJUDGED:
            continue
        claim = r[claims.CLAIM]
        where = _where(seen[claim][0] if seen and claim in seen else None, again.get(claim))
        if claim in not_run:  # its comparisons are named in the claims table below
            ours, article = NOT_RUN, ""
        else:
            ours, article = _ours_and_article(measured.get(claim), r.get(claims.OURS, ""))
        out.append({CLAIM: claim, OURS: ours, ARTICLE: article, VERDICT: r[claims.VERDICT],
                    WHERE: where})  # fmt: skip
    return pd.DataFrame(out, columns=[CLAIM, OURS, ARTICLE, VERDICT, WHERE])


def _where(seen: dict | None, judged_again: claim_words.Conditions | None) -> str:
    """The machines' words and the conditions', within machines.SHORT_WORDS: the conditions
    briefer, then the machines counted rather than named, where more would run over."""
    for counted, brief in ((False, False), (False, True), (True, False), (True, True)):
        machines_ = machines.in_short(seen, counted) if seen else ""
        conditions = claim_words.conditions_in_short(judged_again, brief)
        words = "; ".join(w for w in (machines_, conditions) if w)
        if len(words.split()) <= machines.SHORT_WORDS:
            break
    return words


def unjudged_line(table: pd.DataFrame) -> str:
    """ "3 more claims not testable here": the claims the card leaves out, counted by verdict
    (the claims table below names each and why)."""
    parts = []
    for verdict in UNJUDGED:
        n = int((table[claims.VERDICT] == verdict).sum())
        if n:
            parts.append(f"{n} more claim{'s' * (n != 1)} {verdict}")
    return "; ".join(parts)


def _as_measured(table: pd.DataFrame) -> dict[str, list[dict]]:
    """{claim: its comparisons under the run as measured}: the verdict picture's points
    (claims.POINTS) of condition claims.AS_RUN, which the claim's verdict rests on."""
    measured = {}
    for p in table.attrs.get(claims.POINTS, []):
        if p["condition"] == claims.AS_RUN:
            measured.setdefault(p[claims.CLAIM], []).append(p)
    return measured


def _ours_and_article(points: list[dict] | None, ours_text: str) -> tuple[str, str]:
    """Our ratio(s) with the 95% interval, and the article's value or direction, as percents of
    the claim's comparator: "154% (147-161%)" and "170%"; several comparisons as the span of
    their ratios ("141-154%, 4 scenarios"). Without points (a study's own rows), our words."""
    if not points:
        return ours_text, ""
    if len(points) == 1:
        c = points[0]
        bounds = wording.ci_bounds(c["ci_low"], c["ci_high"])
        ours = wording.pct_text(c["ratio"]) + (f" ({bounds[0]}-{bounds[1]}%)" if bounds else "")
    else:
        low, high = (wording.pct_text(f(c["ratio"] for c in points)) for f in (min, max))
        span = low if low == high else f"{low[:-1]}-{high}"
        ours = f"{span}, {len(points)} comparisons"
    values = sorted({c["value"] for c in points})
    kind, side = points[0]["kind"], points[0]["side"]  # the claim's, on each of its points
    if kind in ("size", "equivalence"):
        article = " to ".join(wording.pct_text(v) for v in values)
    else:
        article = f"{side} {' to '.join(wording.pct_text(v) for v in values)}"
    return ours, article


def chip(verdict: str) -> str:
    """A verdict as a coloured chip: its words on its colour."""
    colour = VERDICT_COLOURS.get(verdict, VERDICT_COLOURS[verdicts.UNDECIDED])
    return (f'<span class="chip" style="background:{colour};color:{_ink(colour)}">'
            f"{html.escape(verdict)}</span>")  # fmt: skip


def _ink(colour: str) -> str:
    """Black or white, whichever reads on `colour` (#rrggbb): by its relative luminance
    (WCAG), the lighter chips (orange, the greys) take black."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    # The contrast with white against that with black: the larger wins.
    return "#000" if (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) else "#fff"


def to_html(card: pd.DataFrame) -> str:
    """The card as a table of one line per claim, its verdicts as chips."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in card.columns)
    body = []
    for r in card.to_dict("records"):
        cells = [f'<td class="claim">{html.escape(r[CLAIM])}</td>',
                 f'<td class="ours">{html.escape(r[OURS])}</td>',
                 f'<td class="num">{html.escape(r[ARTICLE])}</td>',
                 f"<td>{chip(r[VERDICT])}</td>",
                 f'<td class="where">{html.escape(r[WHERE])}</td>']  # fmt: skip
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<table class="verdict-card"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")  # fmt: skip
