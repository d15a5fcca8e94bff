"""How many blocks a study needs for the half-width it targets (params target_halfwidth_pct).

The launch (a block) is the independent unit of every interval (docs/method.md: most of a
ratio's variance here lies between windows and between launches, and windows of one launch
share that launch's state). So precision is bought with blocks. After the params'
`repetitions` blocks (the first stage), each focus mode's ratio to the baseline has a spread
s of its per-block log ratio; Stein's two-stage rule then fixes the number of blocks once:

    n = max(n0, ceil((t(0.975, n0 - 1) * s / log(1 + target)) ** 2))

with the first stage's t quantile, capped by max_repetitions and by max_minutes: the first
stage's minutes, then added blocks at the first stage's pace scaled by their share of a full
block's windows (an added block measures the focus alone). The number never depends on
blocks measured after it was set, so the 95% interval computed from all n blocks keeps its
meaning: the study cannot stop early because an interval happened to look narrow.
"""

import math

from ..analysis.intervals import blocks_for_halfwidth
from ..params import StudyParams

RULE = (
    "Stein's two-stage rule: after the first blocks, the blocks are set once to "
    "(t(0.975, n0-1) x s / log(1 + target))^2 for the widest focus ratio, within "
    "max_repetitions and max_minutes"
)


def block_log_ratios(rows: list[dict], params: StudyParams) -> dict[tuple, list[float]]:
    """Per (mode, variant, scenario, tool, concurrency) compared with the baseline: the
    log ratio of each block, from the mean log rps of its valid windows."""
    logs: dict[tuple, dict[int, list[float]]] = {}
    for row in rows:
        if row.get("valid") and row.get("rps"):
            cell = (row["mode"], row.get("variant") or "", row["scenario"], row["tool"],
                    row["concurrency"])  # fmt: skip
            logs.setdefault(cell, {}).setdefault(row["block"], []).append(math.log(row["rps"]))
    means = {cell: {b: sum(v) / len(v) for b, v in by.items()} for cell, by in logs.items()}
    baseline = params.baseline_mode
    compared = params.focus or [m for m in params.modes if m != baseline]
    out = {}
    for cell, by_block in means.items():
        if cell[0] not in compared:
            continue
        base = means.get((baseline, cell[1], *cell[2:])) or means.get((baseline, "", *cell[2:]))
        if base:
            out[cell] = [by_block[b] - base[b] for b in sorted(by_block) if b in base]
    return out


def blocks_needed(
    rows: list[dict], params: StudyParams, minutes_per_block: float, added_share: float = 1.0
) -> dict:
    """The blocks the study runs in all, and why (design.json). `added_share`: an added
    block's windows over a full block's (below 1 when a focus leaves modes out of it)."""
    n0 = params.repetitions
    spreads = {}
    for cell, ratios in block_log_ratios(rows, params).items():
        if len(ratios) >= 2:
            mean = sum(ratios) / len(ratios)
            spreads[cell] = math.sqrt(sum((r - mean) ** 2 for r in ratios) / (len(ratios) - 1))
    if not spreads or n0 < 2:
        wanted = n0
        why = "too few first blocks to estimate a spread"
    else:
        widest = max(spreads, key=spreads.get)
        wanted = blocks_for_halfwidth(spreads[widest], n0, params.target_halfwidth_pct)
        named = " / ".join(str(part) for part in widest[:3] if part)  # mode, variant, scenario
        why = (f"the widest focus ratio ({named}) spreads "
               f"{100 * spreads[widest]:.1f}% between blocks")  # fmt: skip
    by_time = math.inf
    if params.max_minutes is not None and minutes_per_block > 0:
        left = params.max_minutes - n0 * minutes_per_block
        by_time = n0 + max(0, math.floor(left / (minutes_per_block * added_share)))
    blocks = int(min(wanted, params.max_repetitions, by_time))
    limit = ""
    if blocks < wanted:
        by = (f"max_minutes {params.max_minutes:g}" if by_time <= params.max_repetitions
              else f"max_repetitions {params.max_repetitions}")  # fmt: skip
        limit = f"; capped at {blocks} by {by}"
    decision = (f"target half-width {params.target_halfwidth_pct:g}%: {why}, so {wanted} "
                f"blocks{limit}; {blocks - n0} more after the first {n0}")  # fmt: skip
    return {
        "blocks": blocks,
        "first_blocks": n0,
        "wanted_blocks": wanted,
        "target_halfwidth_pct": params.target_halfwidth_pct,
        "minutes_per_block": round(minutes_per_block, 2),
        "added_block_share": round(added_share, 3),
        "spread_pct": {
            " / ".join(str(p) for p in c if p != ""): round(100 * s, 2) for c, s in spreads.items()
        },  # fmt: skip
        "rule": RULE,
        "decision": decision,
    }
