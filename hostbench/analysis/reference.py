"""Published numbers of the five seed articles, with provenance (data/reference/).

`load_reference` returns every number the articles state in their text, one row
each, with the quote it was read from. `paper_ratios` turns the JCSI 2018
paper's Section 5 claims into "% of baseline" ranges that a notebook can put
beside measured ratios; `paper_setup` returns the paper's settings (Tables 1-3,
Section 2.2). The format is described in data/reference/README.md.
"""

from pathlib import Path

import pandas as pd

from ..catalog import PAPER_BASELINE
from ..errors import BadInput
from ..paths import REFERENCE

PUBLISHED_CSV = REFERENCE / "published.csv"
SETUP_CSV = REFERENCE / "setup.csv"

ARTICLES = {
    "jcsi2018": "000_2af38a5eebd924d4.txt",
    "linux-proxies-2021": "001_31753488cea10760.txt",
    "webapi-selfhost-2012": "002_b9ae302f2b400911.txt",
    "go-vs-dotnet-2017": "003_ae4b4a100af9962a.plain.txt",
    "kestrel-transports-2018": "004_4e5a6bf5cec8e862.txt",
}

TEXT_COLUMNS = [
    "article",
    "source_file",
    "where",
    "setup",
    "mode",
    "relative_to",
    "scenario",
    "endpoint",
    "metric",
    "unit",
    "qualifier",
    "os",
    "quote",
    "note",
]
NUMBER_COLUMNS = ["value", "value_low", "value_high"]
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
SETUP_COLUMNS = ["article", "source_file", "item", "value", "unit", "where", "quote", "note"]

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
QUALIFIERS = {"stated", "about", "approximately", "up to", "mean of 3 rounds", "best of 3"}

PAPER = "jcsi2018"
PAPER_SCENARIOS = ["html", "text", "json", "xml"]


def _read(path: Path, text: list[str], numbers: list[str], columns: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise BadInput(f"reference data missing: {path}")
    frame = pd.read_csv(
        path,
        dtype={c: "str" for c in text} | {c: "float64" for c in numbers},
        keep_default_na=False,
        na_values={c: [""] for c in numbers},
        encoding="utf-8",
    )
    if list(frame.columns) != columns:
        raise BadInput(f"{path.name}: columns {list(frame.columns)}, expected {columns}")
    return frame


def _check_published(frame: pd.DataFrame) -> None:
    def bad(i: int, what: str):
        raise BadInput(f"{PUBLISHED_CSV.name} row {i + 2}: {what}")

    for i, r in enumerate(frame.itertuples(index=False)):
        if ARTICLES.get(r.article) != r.source_file:
            bad(i, f"article {r.article!r} with source file {r.source_file!r}")
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


def load_reference(article: str | None = None) -> pd.DataFrame:
    """Every published number (one row each), optionally of one article only.

    Text columns are strings ("" where not applicable); value, value_low and
    value_high are float64 (NaN where not applicable).
    """
    if article is not None and article not in ARTICLES:
        raise BadInput(f"unknown article {article!r}; allowed: {', '.join(ARTICLES)}")
    frame = _read(PUBLISHED_CSV, TEXT_COLUMNS, NUMBER_COLUMNS, PUBLISHED_COLUMNS)
    _check_published(frame)
    if article is not None:
        frame = frame[frame["article"] == article].reset_index(drop=True)
    return frame


def load_setup(article: str | None = None) -> pd.DataFrame:
    """The articles' stated settings (hardware, versions, load-tool parameters), all strings."""
    if article is not None and article not in ARTICLES:
        raise BadInput(f"unknown article {article!r}; allowed: {', '.join(ARTICLES)}")
    frame = _read(SETUP_CSV, SETUP_COLUMNS, [], SETUP_COLUMNS)
    for i, r in enumerate(frame.itertuples(index=False)):
        if ARTICLES.get(r.article) != r.source_file or not r.item or not r.quote:
            raise BadInput(f"{SETUP_CSV.name} row {i + 2}: bad article, source file, item or quote")
    if article is not None:
        frame = frame[frame["article"] == article].reset_index(drop=True)
    return frame


def paper_setup() -> pd.DataFrame:
    """The JCSI 2018 paper's settings: item, value, unit, where, quote, note."""
    return load_setup(PAPER).drop(columns=["article", "source_file"])


def paper_ratios() -> pd.DataFrame:
    """The JCSI 2018 paper's throughput claims as "% of baseline" ranges.

    Values are requests/s as a percentage OF the baseline Kestrel + IIS
    (out-of-process) = 100, not "% above" it: Kestrel's "+70%" for HTML is 170.
    One row per (mode, scenario) of the paper's four of each. Columns: mode,
    scenario, ratio_low_pct, ratio_high_pct, qualifier, derived, quote.

    - iis-outofprocess: 100 by definition (Fig. 9).
    - kestrel, httpsys: 100 + the stated gain ("nawet 200%" reads as up to 300).
    - iis-inprocess: the paper gives only "about 10-20% below Kestrel", so the
      range is derived: Kestrel's value times 0.80 to 0.90 (derived=True).
    """
    ref = load_reference(PAPER)
    setup = paper_setup().set_index("item")
    rows = []
    for scenario in PAPER_SCENARIOS:
        rows.append(
            dict(
                mode=PAPER_BASELINE,
                scenario=scenario,
                ratio_low_pct=100.0,
                ratio_high_pct=100.0,
                qualifier="definition",
                derived=False,
                quote=setup.loc["baseline_100pct", "quote"],
            )
        )
    baseline_name = setup.loc["baseline_100pct", "value"]  # "Kestrel + IIS (outofprocess)"
    gains = ref[(ref["metric"] == "rps_gain_pct") & (ref["relative_to"] == baseline_name)]
    kestrel: dict[str, float] = {}
    for mode in ("kestrel", "httpsys"):
        for scenario in PAPER_SCENARIOS:
            row = gains[(gains["mode"] == mode) & (gains["scenario"] == scenario)]
            if len(row) != 1:
                raise BadInput(f"{PUBLISHED_CSV.name}: expected one {mode}/{scenario} gain row")
            row = row.iloc[0]
            pct = 100.0 + row["value"]
            if mode == "kestrel":
                kestrel[scenario] = pct
            rows.append(
                dict(
                    mode=mode,
                    scenario=scenario,
                    ratio_low_pct=pct,
                    ratio_high_pct=pct,
                    qualifier=row["qualifier"],
                    derived=False,
                    quote=row["quote"],
                )
            )
    loss = ref[(ref["mode"] == "iis-inprocess") & (ref["metric"] == "rps_loss_pct")]
    if len(loss) != 1:
        raise BadInput(f"{PUBLISHED_CSV.name}: expected one iis-inprocess loss row")
    loss = loss.iloc[0]
    for scenario in PAPER_SCENARIOS:
        rows.append(
            dict(
                mode="iis-inprocess",
                scenario=scenario,
                ratio_low_pct=round(kestrel[scenario] * (1 - loss["value_high"] / 100), 6),
                ratio_high_pct=round(kestrel[scenario] * (1 - loss["value_low"] / 100), 6),
                qualifier="derived from Kestrel minus " + loss["qualifier"] + " 10-20%",
                derived=True,
                quote=loss["quote"],
            )
        )
    # rows are in the order above (baseline, kestrel, httpsys, iis-inprocess) x
    # PAPER_SCENARIOS; mode and scenario stay plain
    # strings so the table merges with results on either column
    return pd.DataFrame(rows).astype({"mode": "str", "scenario": "str", "quote": "str"})
