"""Claims that rest on an earlier claim's comparisons (docs/reference-format.md): two claims
with the same evidence are one piece of it, counted once (restated), and the later one is
computed as the earlier (as_rested_on), a mean latency at fixed connections read as its
modes' requests/s the other way round by Little's law, never from a second measure of them."""

import math

import pandas as pd

from .reference import RUN_BASELINE, UNJUDGED_KINDS

# Little's law: at a fixed number of connections a closed-loop load's mean latency is the
# connections over its requests/s, so A's mean latency over B's is B's requests/s over A's.
_INVERSE_OF = {"latency_mean_ms": "rps"}


def _evidence(claim_rows: pd.DataFrame, baseline: str) -> frozenset:
    """The comparisons a claim rests on, read as requests/s where Little's law makes a
    latency one of them: two claims with the same rest on the same evidence."""
    found = set()
    for r in claim_rows.itertuples(index=False):
        mode, relative = r.mode, baseline if r.relative_to == RUN_BASELINE else r.relative_to
        metric, variants = r.metric, (r.variant, r.relative_variant)
        if metric in _INVERSE_OF and math.isnan(r.relative_concurrency):
            mode, relative, metric = relative, mode, _INVERSE_OF[metric]
            variants = variants[::-1]
        numbers = [None if math.isnan(v) else v for v in (r.concurrency, r.relative_concurrency)]
        found.add((metric, mode, relative, r.scenario, *numbers, *variants, r.value, r.side))
    return frozenset(found)


def as_rested_on(claim_rows: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """A restated claim's rows as the comparisons it rests on: a mean latency's read as the
    requests/s of its modes the other way round (Little's law), the same ratio, so its
    verdict is computed as the earlier claim's and never from a second measure of them."""
    inverse = (
        claim_rows["metric"].isin(list(_INVERSE_OF)) & claim_rows["relative_concurrency"].isna()
    )
    if not inverse.any():
        return claim_rows
    rows = claim_rows.copy()
    relative = rows["relative_to"].replace(RUN_BASELINE, baseline)
    rows.loc[inverse, "relative_to"], rows.loc[inverse, "mode"] = rows["mode"], relative
    rows.loc[inverse, "metric"] = rows["metric"].map(_INVERSE_OF)
    rows.loc[inverse, ["variant", "relative_variant"]] = rows.loc[
        inverse, ["relative_variant", "variant"]].to_numpy()  # fmt: skip
    return rows


def named_as_claimed(found: list[dict], rows: pd.DataFrame, claim_rows: pd.DataFrame):
    """Each comparison of as_rested_on's rows named again as the claim names it (Iris's
    latency / .NET's, where its numbers are .NET's requests/s / Iris's)."""
    if rows is claim_rows:
        return found
    swapped = {(m, r) for m, r in zip(rows["mode"], rows["relative_to"], strict=True)}
    swapped -= set(zip(claim_rows["mode"], claim_rows["relative_to"], strict=True))
    return [c | dict(mode=c["relative_to"], relative_to=c["mode"], variants=c["variants"][::-1])
            if (c["mode"], c["relative_to"]) in swapped else c for c in found]  # fmt: skip


def restated(table: pd.DataFrame, baseline: str) -> dict[str, str]:
    """{claim: the earlier claim whose comparisons it rests on again}: the claims a count of
    verdicts leaves out, as not more evidence (the JCSI paper's "the fastest" and "the
    slowest" with only Kestrel beside its baseline's analog; a mean latency at fixed
    connections beside its requests/s, by Little's law)."""
    seen, again = {}, {}
    for claim, rows in table.groupby("claim", sort=False):
        if rows["kind"].iloc[0] in UNJUDGED_KINDS:
            continue
        evidence = _evidence(rows, baseline)
        if evidence in seen:
            again[claim] = seen[evidence]
        else:
            seen[evidence] = claim
    return again
