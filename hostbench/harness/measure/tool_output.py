"""What one run of a load tool returns (LoadResult), and each tool's output read into it: a
pure function per tool (parse_k6, parse_bombardier, parse_wrk, parse_ab), so the unit tests run
them on recorded real outputs. The counting rules are loadgen.py's (its docstring), the same
for every tool; the scripts whose output k6 and wrk write are there too.
"""

import json
import math
import re
from dataclasses import dataclass

NAN = math.nan


@dataclass(frozen=True)
class LoadResult:
    tool: str
    tool_version: str
    requests: int
    duration_s: float
    rps: float
    latency_mean_ms: float
    latency_p50_ms: float
    latency_p90_ms: float
    latency_p99_ms: float
    latency_max_ms: float
    non_2xx: int
    errors: int
    bytes_read: int
    # CPU seconds the tool used (its rusage once reaped: exact, however short the run).
    cpu_s: float = math.nan


LATENCIES = ("mean", "p50", "p90", "p99", "max")


def load_result(
    tool: str, tool_version: str, requests: int, duration_s: float, latency_ms: dict, **counts
) -> LoadResult:
    """The one LoadResult of every parser: rps from the tool's own duration, the latencies
    in ms named as LATENCIES (one the tool did not give, or with no response at all, NaN),
    and `counts` (non_2xx, errors, bytes_read)."""
    latency_ms = latency_ms if requests > 0 else {}
    return LoadResult(
        tool=tool,
        tool_version=tool_version,
        requests=requests,
        duration_s=duration_s,
        rps=requests / duration_s if duration_s > 0 else 0.0,
        **{f"latency_{k}_ms": latency_ms.get(k, NAN) for k in LATENCIES},
        **counts,
    )


def json_number(value) -> float:
    """A number from a tool's JSON; null (no data) becomes NaN."""
    return NAN if value is None else float(value)


def parse_k6(summary_json: str, tool_version: str = "") -> LoadResult:
    """Parse the handleSummary() JSON of loadgen.K6_SCRIPT."""
    data = json.loads(summary_json)
    metrics = data["metrics"]

    def count(name: str) -> int:
        # k6 leaves a counter out of the summary when it was never added to.
        return int(metrics.get(name, {}).get("values", {}).get("count", 0))

    errors = count("hostbench_errors")
    sent = count("http_reqs")  # includes requests that got no response
    duration_s = data["state"]["testRunDurationMs"] / 1000
    requests = sent - errors
    # Durations cover failed attempts too; with no response at all k6 reports
    # zeros, which are no data (_result drops them).
    trend = metrics["http_req_duration"]["values"]
    names = ("avg", "p(50)", "p(90)", "p(99)", "max")
    return load_result(
        "k6",
        tool_version,
        requests,
        duration_s,
        {k: json_number(trend.get(name)) for k, name in zip(LATENCIES, names, strict=True)},
        non_2xx=count("hostbench_non_2xx"),
        errors=errors,
        bytes_read=count("data_received"),
    )


def parse_bombardier(stdout_json: str, tool_version: str = "") -> LoadResult:
    """Parse `bombardier -o json -p r` output; its latencies are in microseconds."""
    result = json.loads(stdout_json)["result"]
    # A failed attempt is counted twice: in `errors` and, as status 0, in `others`.
    errors = sum(int(e["count"]) for e in result.get("errors", []))
    classes = ("req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others")
    requests = sum(int(result[c]) for c in classes) - errors
    duration_s = float(result["timeTakenSeconds"])
    # Latencies cover failed attempts too; with no response at all, there is no data.
    latency = result.get("latency", {})
    pct = latency.get("percentiles", {})
    latency_us = {"mean": latency.get("mean"), "max": latency.get("max")}
    latency_us |= {f"p{q}": pct.get(str(q)) for q in (50, 90, 99)}
    return load_result(
        "bombardier",
        tool_version,
        requests,
        duration_s,
        {k: json_number(us) / 1000 for k, us in latency_us.items()},
        non_2xx=requests - int(result["req2xx"]),
        errors=errors,
        bytes_read=int(result["bytesRead"]),
    )


def parse_wrk(summary_json: str, tool_version: str = "") -> LoadResult:
    """Parse the JSON written by the done() of loadgen.WRK_SCRIPT (times in µs)."""
    data = json.loads(summary_json)
    requests = int(data["requests"])
    duration_s = int(data["duration_us"]) / 1e6
    e = data["errors"]
    # With no responses wrk's histogram reports 0 everywhere: no data (_result drops it).
    latency = data["latency_us"]
    return load_result(
        "wrk",
        tool_version,
        requests,
        duration_s,
        {k: json_number(latency.get(k)) / 1000 for k in LATENCIES},
        non_2xx=int(e["status"]),
        errors=int(e["connect"]) + int(e["read"]) + int(e["write"]) + int(e["timeout"]),
        bytes_read=int(data["bytes"]),
    )


def _ab_field(text: str, label: str, default: str | None = None) -> str:
    match = re.search(rf"^{re.escape(label)}:\s+(\S+)", text, re.MULTILINE)
    if match:
        return match.group(1)
    if default is None:
        raise ValueError(f"no '{label}' line in ab output")
    return default


def parse_ab(stdout_text: str, percentiles_csv: str, tool_version: str = "") -> LoadResult:
    """Parse ab's text report and its -e CSV (percentages served, in ms, 3 decimals)."""
    requests = int(_ab_field(stdout_text, "Complete requests"))
    duration_s = float(_ab_field(stdout_text, "Time taken for tests"))
    # "Time per request: X [ms] (mean)" = concurrency * time / requests: the mean
    # latency under load; the other "Time per request" line is 1/rps.
    mean = re.search(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)$", stdout_text, re.MULTILINE)
    # The breakdown is printed only when some request failed. Length failures are
    # not errors (and -l turns them off: dynamic pages vary in length).
    failed = re.search(
        r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", stdout_text
    )
    connect, receive, _, exceptions = (int(g) for g in failed.groups()) if failed else (0,) * 4
    # A receive error also counts as a complete request (ab's close_connection).
    requests -= receive
    errors = connect + receive + exceptions
    served = {}
    for line in percentiles_csv.splitlines()[1:]:
        if line.strip():
            pct, ms = line.split(",")
            served[int(pct)] = float(ms)
    latency_ms = {}
    if requests > 0:  # ab prints no percentages without a response
        latency_ms = {f"p{q}": served[q] for q in (50, 90, 99)} | {"max": served[100]}
        latency_ms |= {"mean": float(mean.group(1))} if mean else {}
    return load_result(
        "ab",
        tool_version,
        requests,
        duration_s,
        latency_ms,
        non_2xx=int(_ab_field(stdout_text, "Non-2xx responses", "0")),
        errors=errors,
        bytes_read=int(_ab_field(stdout_text, "Total transferred")),
    )
