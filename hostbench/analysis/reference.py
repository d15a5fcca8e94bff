"""Published numbers of the studies' articles, with provenance (studies/<id>/reference/).

`load_reference` returns every number an article states in its text, one row
each, with the quote it was read from; `load_setup` the article's stated
settings. Each study keeps its article's rows in its own folder; the loaders add
the columns `article` (the study id) and `source_file` (study.yaml's article).
The format is described in docs/reference-format.md.
"""

import pandas as pd

from ..errors import BadInput
from ..studies import STUDIES, Study, get_study
from .kept import content_key, keep

PUBLISHED_CSV = "published.csv"
SETUP_CSV = "setup.csv"
CLAIMS_CSV = "claims.csv"

PUBLISHED_COLUMNS = [
    "article",
    "source_file",
    "where",
    "setup",
    "mode",
    "relative_to",
    "scenario",
    "endpoint",
    "metric",
    "value",
    "value_low",
    "value_high",
    "unit",
    "qualifier",
    "os",
    "quote",
    "note",
]
NUMBER_COLUMNS = ["value", "value_low", "value_high"]
TEXT_COLUMNS = [c for c in PUBLISHED_COLUMNS if c not in NUMBER_COLUMNS]
SETUP_COLUMNS = ["article", "source_file", "item", "value", "unit", "where", "quote", "note"]
# claims.csv: each claim the article makes, read once as a ratio (docs/reference-format.md);
# one row per comparison it covers, a claim's rows sharing its `claim`.
CLAIM_COLUMNS = ["article", "source_file", "claim", "quote", "reading", "kind", "metric", "mode",
                 "relative_to", "scenario", "concurrency", "relative_concurrency", "variant",
                 "relative_variant", "value", "side", "note"]  # fmt: skip
CLAIM_NUMBERS = ["concurrency", "relative_concurrency", "value"]
CLAIM_KINDS = ("size", "equivalence", "direction", "order", "not testable", "not re-run")
# The kinds judged by no interval, each with its verdict's reason in the note (claims.py).
UNJUDGED_KINDS = ("not testable", "not re-run")
# relative_to: a mode, or this word for the run's own baseline (params.baseline_mode), the
# stand-in its study chose for the article's comparator.
RUN_BASELINE = "baseline"
# Added by the loaders from the study's folder; the files hold the other columns.
PROVENANCE = ["article", "source_file"]

# Our HostingMode names where one applies; the last three are the other
# articles' subjects, which no HostingMode of ours runs.
MODES = {
    "kestrel",
    "iis-outofprocess",
    "iis-inprocess",
    "httpsys",
    "nginx",
    "caddy",
    "go-iris",
    "webapi-selfhost",
    "iis-webapi",
}
METRICS = {
    "rps": "req/s",
    "rps_stdev": "req/s",
    "rps_max": "req/s",
    "rps_gain_pct": "%",
    "rps_loss_pct": "%",
    "latency_mean_ms": "ms",
    "latency_stdev_ms": "ms",
    "latency_max_ms": "ms",
    "time_per_request_ms": "ms",
    "throughput_mb_s": "MB/s",
    "duration_s": "s",
    "memory_mb": "MB",
    "lines_of_code": "lines",
}
QUALIFIERS = {"stated", "about", "approximately", "as much as", "mean of 3 rounds", "best of 3"}


def _read(study: Study, name: str, numbers: list[str], columns: list[str]) -> pd.DataFrame:
    path = study.reference_dir / name
    if not path.is_file():
        raise BadInput(f"reference data missing: {path}")
    text = [c for c in columns if c not in numbers]
    frame = pd.read_csv(
        path,
        dtype={c: "str" for c in text} | {c: "float64" for c in numbers},
        keep_default_na=False,
        na_values={c: [""] for c in numbers},
        encoding="utf-8",
    )
    expected = [c for c in columns if c not in PROVENANCE]
    if list(frame.columns) != expected:
        raise BadInput(f"{path}: columns {list(frame.columns)}, expected {expected}")
    frame.insert(0, "source_file", study.article)
    frame.insert(0, "article", study.id)
    return frame


def _check_published(frame: pd.DataFrame, study: Study) -> None:
    def bad(i: int, what: str):
        raise BadInput(f"{study.reference_dir / PUBLISHED_CSV} row {i + 2}: {what}")

    for i, r in enumerate(frame.itertuples(index=False)):
        if r.mode and r.mode not in MODES:
            bad(i, f"mode {r.mode!r}; allowed: {', '.join(sorted(MODES))}")
        if METRICS.get(r.metric) != r.unit:
            bad(i, f"metric {r.metric!r} with unit {r.unit!r}")
        if r.qualifier not in QUALIFIERS:
            bad(i, f"qualifier {r.qualifier!r}; allowed: {', '.join(sorted(QUALIFIERS))}")
        point = not pd.isna(r.value)
        low, high = not pd.isna(r.value_low), not pd.isna(r.value_high)
        if point == (low or high) or low != high:
            bad(i, "give either value, or both value_low and value_high")
        if low and r.value_low > r.value_high:
            bad(i, f"value_low {r.value_low} > value_high {r.value_high}")
        if r.metric.endswith("_pct") and not r.relative_to:
            bad(i, f"{r.metric} without relative_to")
        for col in ("where", "setup", "scenario", "quote"):
            if not getattr(r, col).strip():
                bad(i, f"empty {col}")


def _studies(study: str | Study | None) -> list[Study]:
    if isinstance(study, Study):
        return [study]
    if study is not None:
        return [get_study(study)]
    return [s for s in STUDIES.values() if (s.reference_dir / PUBLISHED_CSV).is_file()]


def load_reference(study: str | Study | None = None) -> pd.DataFrame:
    """Every published number (one row each), of one study's article (its id, or the Study)
    or of all of them.

    Text columns are strings ("" where not applicable); value, value_low and
    value_high are float64 (NaN where not applicable).
    """
    frames = []
    for one in _studies(study):
        key = ("published", one.id, content_key(one.reference_dir / PUBLISHED_CSV))
        frames.append(keep(key, lambda one=one: _published(one)))
    return pd.concat(frames, ignore_index=True)  # a new frame: the caller's own


def _published(study: Study) -> pd.DataFrame:
    frame = _read(study, PUBLISHED_CSV, NUMBER_COLUMNS, PUBLISHED_COLUMNS)
    _check_published(frame, study)
    return frame


def load_setup(study: str | Study | None = None) -> pd.DataFrame:
    """The articles' stated settings (hardware, versions, load-tool parameters), all strings."""
    frames = []
    for one in _studies(study):
        frame = _read(one, SETUP_CSV, [], SETUP_COLUMNS)
        for i, r in enumerate(frame.itertuples(index=False)):
            if not r.item or not r.quote:
                raise BadInput(f"{one.reference_dir / SETUP_CSV} row {i + 2}: no item or quote")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def stated_setting(study: str, item: str) -> str:
    """One of an article's stated settings (its setup.csv), value and unit as written there."""
    setup = load_setup(study).set_index("item")
    if item not in setup.index:
        raise BadInput(f"setup.csv has no {item!r} for {study}; items: {', '.join(setup.index)}")
    row = setup.loc[item]
    return f"{row['value']} {row['unit']}".strip()


def _check_claims(frame: pd.DataFrame, study: Study) -> None:
    def bad(i: int, what: str):
        raise BadInput(f"{study.reference_dir / CLAIMS_CSV} row {i + 2}: {what}")

    for i, r in enumerate(frame.itertuples(index=False)):
        for col in ("claim", "quote", "reading", "kind"):
            if not getattr(r, col).strip():
                bad(i, f"empty {col}")
        if r.kind not in CLAIM_KINDS:
            bad(i, f"kind {r.kind!r}; allowed: {', '.join(CLAIM_KINDS)}")
        if r.kind in UNJUDGED_KINDS:
            if not r.note.strip():
                bad(i, f"a claim {r.kind} here says why in its note")
            continue
        if not (r.mode and r.relative_to and r.metric):
            bad(i, "a testable claim names its mode, relative_to and metric")
        if not r.value > 0:
            bad(i, f"value {r.value!r}: a claim's value is a ratio > 0 (+70% is 1.70)")
        directed = r.kind in ("direction", "order")
        if directed != (r.side in ("above", "below")):
            bad(i, f"side {r.side!r}: a direction or order claim says above or below, "
                   "a size or equivalence none")  # fmt: skip
        if r.kind == "equivalence" and r.value != 1:
            bad(i, "an equivalence claim's value is 1 (the same)")
        if bool(r.variant) != bool(r.relative_variant):
            bad(i, "a claim between two variants names both: variant and relative_variant")
    for claim, rows in frame.groupby("claim", sort=False):
        if any(rows[c].nunique() > 1 for c in ("kind", "quote", "reading", "side")):
            where = study.reference_dir / CLAIMS_CSV
            raise BadInput(f"{where}: claim {claim!r} has rows of different kinds, quotes, "
                           "readings or sides; a claim is read once")  # fmt: skip


def load_claims(study: str | Study) -> pd.DataFrame | None:
    """The article's claims (reference/claims.csv), one row per comparison a claim covers;
    None for a study without the file (its article makes no claim an interval can judge).

    Read and checked once per content of the file (kept.py; every claims table, card and page
    asks for it); the caller gets its own copy."""
    one = study if isinstance(study, Study) else get_study(study)
    if not (one.reference_dir / CLAIMS_CSV).is_file():
        return None
    key = ("claims file", one.id, one.article, content_key(one.reference_dir / CLAIMS_CSV))
    return keep(key, lambda: _claims(one)).copy()


def _claims(study: Study) -> pd.DataFrame:
    frame = _read(study, CLAIMS_CSV, CLAIM_NUMBERS, CLAIM_COLUMNS)
    _check_claims(frame, study)
    return frame
