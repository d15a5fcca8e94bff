"""The Sockets settings swept here, as Kestrel reported running them (the transport_* columns
of results.csv): each variant's settings and whose they are (the article's IOQueueCount, or
ours), its requests/s over blocks (sweep) and its gain over the runtime's defaults, paired
within blocks (gains)."""

import math

import pandas as pd

from hostbench.analysis.intervals import mean_interval, paired_ratios
from hostbench.analysis.wording import describe
from hostbench.errors import BadInput
from hostbench.results import typed, valid_rows

DEFAULT = "default"  # the variant without options: the runtime's defaults, the baseline of gains
# Whose setting a variant varies: the article swept only ThreadCount / IOQueueCount; inline
# scheduling and wait-for-data are ours (origin()).
ARTICLES = "the article's setting (IOQueueCount)"
OURS = "ours: not varied in the article"
SCENARIOS = ("plaintext", "hello-json")
SETTINGS = {
    "transport_io_queue_count": "IOQueueCount",
    "transport_inline_scheduling": "inline scheduling",
    "transport_wait_for_data": "wait for data",
    "transport_inline_completions": "inline completions",
}


def prepared(results: pd.DataFrame) -> pd.DataFrame:
    """The results typed (the transport_* flags as bool, an empty variant as ""), refused
    without variants."""
    df = typed(results)  # the transport_* flags as bool, an empty variant as ""
    if "variant" not in df.columns or (df["variant"] == "").all():
        raise BadInput("results have no variants: this analysis needs the transport sweep's runs")
    df["scenario"] = df["scenario"].astype(str)
    return df


def _flag(value) -> bool | None:
    return None if pd.isna(value) else bool(value)


def origin(inline_scheduling, wait_for_data) -> str:
    """Whose setting a variant varies, from what Kestrel reported it ran with: the article's
    IOQueueCount sweep (inline scheduling off and wait-for-data on, the runtime's defaults),
    or ours (either changed: settings the article never varied)."""
    if _flag(inline_scheduling) is True or _flag(wait_for_data) is False:
        return OURS
    return ARTICLES


def setting_name(variant: str, io_queues: int, inline: bool | None, wait: bool | None) -> str:
    """A variant as a reader names it, from what Kestrel reported it ran with (the params'
    variant ids, such as ioq2-inline-nowait, stay in params and results.csv)."""
    if variant == DEFAULT:
        return f"the runtime's defaults (IOQueueCount {io_queues})"
    words = [f"IOQueueCount {io_queues}"]
    if inline:
        words.append("inline scheduling")
    if wait is False:
        words.append("no wait for data")
    return ", ".join(words)


def settings(results: pd.DataFrame) -> pd.DataFrame:
    """Each variant's settings as Kestrel reported them (GET /__transport, in every row).

    `runs` counts the variant's runs, `consistent` whether all of them reported the same.
    """
    df = prepared(results)
    rows = []
    for variant, runs in df.groupby("variant", sort=False):
        seen = runs[list(SETTINGS)].drop_duplicates()
        first = seen.iloc[0]
        rows.append(
            {
                "variant": variant,
                "setting": setting_name(
                    variant,
                    int(first["transport_io_queue_count"]),
                    _flag(first["transport_inline_scheduling"]),
                    _flag(first["transport_wait_for_data"]),
                ),  # fmt: skip
                "IOQueueCount": int(first["transport_io_queue_count"]),
                "inline scheduling": _flag(first["transport_inline_scheduling"]),
                "inline completions": _flag(first["transport_inline_completions"]),
                "wait for data": _flag(first["transport_wait_for_data"]),
                "origin": "the runtime's defaults"
                if variant == DEFAULT
                else origin(first["transport_inline_scheduling"], first["transport_wait_for_data"]),
                "runs": len(runs),
                "consistent": len(seen) == 1,
            }
        )
    out = pd.DataFrame(rows)
    out["_default"] = out["variant"] != DEFAULT
    out = out.sort_values(["_default", "IOQueueCount", "inline scheduling", "wait for data"],
                          ascending=[True, True, True, False])  # fmt: skip
    return out.drop(columns="_default").reset_index(drop=True)


def sweep(results: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and variant: mean requests/s with its 95% interval over blocks, the
    machine's busy %, and the cores the app and wrk used."""
    df = valid_rows(prepared(results))
    known = settings(results).set_index("variant")
    rows = []
    for (scenario, variant), runs in df.groupby(["scenario", "variant"], sort=False):
        n, rps, low, high = mean_interval(runs["rps"])
        low = max(low, 0.0) if not math.isnan(low) else low  # requests/s are never negative
        s = known.loc[variant]
        rows.append(
            {
                "scenario": scenario,
                "variant": variant,
                "setting": s["setting"],
                "IOQueueCount": s["IOQueueCount"],
                "inline": s["inline scheduling"],
                "wait for data": s["wait for data"],
                "n": n,
                "rps": rps,
                "rps_ci_low": low,
                "rps_ci_high": high,
                "pipeline": int(runs["pipeline"].iloc[0]),
                "cpu_total_pct": runs["cpu_total_pct"].mean(),
                "app_cores": runs["cpu_server_cores"].mean(),
                "wrk_cores": runs["cpu_loadgen_cores"].mean(),
                "other_cores": max(
                    0.0,
                    (
                        runs["cpu_total_pct"] / 100 * runs["machine_cores"]
                        - runs["cpu_server_cores"]
                        - runs["cpu_loadgen_cores"]
                    ).mean(),
                ),  # fmt: skip
                "latency_p99_ms": runs["latency_p99_ms"].mean(),
            }
        )
    out = pd.DataFrame(rows)
    out["_s"] = out["scenario"].map({s: i for i, s in enumerate(SCENARIOS)})
    out["_d"] = out["variant"] != DEFAULT
    out = out.sort_values(["_s", "_d", "IOQueueCount", "inline", "wait for data"],
                          ascending=[True, True, True, True, False])  # fmt: skip
    return out.drop(columns=["_s", "_d"]).reset_index(drop=True)


# A variant that reported every setting as the defaults did (IOQueueCount = the cores, as
# the sweep's ioq<cores> is): its ratio is the design's A/A check, not a finding.
SAME_AS_DEFAULTS = "the defaults, set explicitly"


def _changes(variant: pd.Series, default: pd.Series) -> str:
    """What a variant sets differently from the runtime's defaults, in words."""
    parts = []
    if variant["IOQueueCount"] != default["IOQueueCount"]:
        parts.append(f"IOQueueCount {variant['IOQueueCount']} (default {default['IOQueueCount']})")
    if variant["inline scheduling"] != default["inline scheduling"]:
        parts.append("inline scheduling " + ("on" if variant["inline scheduling"] else "off"))
    if variant["wait for data"] != default["wait for data"]:
        parts.append("wait for data " + ("on" if variant["wait for data"] else "off"))
    return ", ".join(parts) or SAME_AS_DEFAULTS


def gains(results: pd.DataFrame, baseline: str = DEFAULT) -> pd.DataFrame:
    """Every variant's requests/s as a ratio to `baseline` (the runtime's defaults), paired
    within blocks, with a 95% CI, what the variant changes, and the ratio in words."""
    df = prepared(results)
    if baseline not in set(df["variant"]):
        raise BadInput(f"variant {baseline!r} is not in the results: gains need it as baseline")
    # The variant is what is compared: it takes the mode's place in the pairing.
    pairs = df.assign(mode=df["variant"])
    out = paired_ratios(pairs, baseline)
    known = settings(results).set_index("variant")
    out["variant"] = out["mode"]
    out["setting"] = [known.loc[v, "setting"] for v in out["variant"]]
    out["changes"] = [_changes(known.loc[v], known.loc[baseline]) for v in out["variant"]]
    out["origin"] = [known.loc[v, "origin"] for v in out["variant"]]
    out["gain_pct"] = 100 * (out["ratio"] - 1)
    for column in ("ratio", "ci_low", "ci_high"):
        out[f"{column}_pct"] = 100 * out[column]
    out["in words"] = [
        describe(r.ratio, r.ci_low, r.ci_high, confidence=r.confidence).replace(
            "the baseline", "the defaults"
        )
        for r in out.itertuples(index=False)
    ]
    order = {v: i for i, v in enumerate(settings(results)["variant"])}
    out["_s"] = out["scenario"].map({s: i for i, s in enumerate(SCENARIOS)})
    out["_v"] = out["variant"].map(order)
    out = out.sort_values(["_s", "_v"]).drop(columns=["_s", "_v"])
    columns = ["scenario", "variant", "setting", "changes", "origin", "n", "ratio", "ci_low",
               "ci_high", "ratio_pct", "ci_low_pct", "ci_high_pct", "gain_pct", "in words",
               "confidence", "method", "left_out_invalid"]  # fmt: skip
    return out[columns].reset_index(drop=True)
