"""k6 over an interleaved window: the script that sends each request to the target whose
slice it starts in, and the reading of its summary per target (the window's design, its rows
and its warm-up together are interleave.py's).

Each request is tagged with its target, and a threshold on every tagged metric makes k6's
summary carry each target's count, errors and latency apart.
"""

import json
from collections.abc import Sequence
from pathlib import Path

from ...errors import HostbenchError
from .loadgen import K6, LATENCIES, as_ms, json_number, k6_insecure, load_result, parse_k6
from .slices import SliceSchedule

# The paper's Listing 1 (the run's k6 script, loadgen.K6_SCRIPT) with the target chosen per
# request by the slice it starts in. Tags are k6's way to count per target: a threshold on a
# tagged metric that always passes makes the summary carry that target's sub-metric.
# Counters are added to only on a failure, so the per-request work stays as in K6_SCRIPT.
K6_INTERLEAVED_SCRIPT = """\
import {{ check }} from "k6";
import exec from "k6/execution";
import http from "k6/http";
import {{ Counter }} from "k6/metrics";

const URLS = {urls};
const START_MS = {start_ms}; // when the first slice starts (epoch ms); 0: the load's own start
const SLICE_MS = {slice_ms};
const ORDER = {order};
const PARAMS = URLS.map((_, i) => ({{ tags: {{ target: "t" + i }} }}));
const non2xx = new Counter("hostbench_non_2xx");
const transportErrors = new Counter("hostbench_errors");

const thresholds = {{}};
const RULES = {{
  http_reqs: "count>=0",
  http_req_duration: "max>=0",
  hostbench_non_2xx: "count>=0",
  hostbench_errors: "count>=0",
}};
URLS.forEach((_, i) => {{
  for (const [metric, rule] of Object.entries(RULES)) {{
    thresholds[metric + "{{target:t" + i + "}}"] = [rule];
  }}
}});

export const options = {{
  vus: {vus},
  duration: "{duration}",
  summaryTrendStats: ["avg", "min", "med", "max", "p(50)", "p(90)", "p(99)"],
  thresholds: thresholds,{insecure}
}};

export default function () {{
  const slice = Math.floor((Date.now() - (START_MS || exec.scenario.startTime)) / SLICE_MS);
  const i = ORDER[Math.min(Math.max(slice, 0), ORDER.length - 1)];
  const response = http.get(URLS[i], PARAMS[i]);
  check(response, {{
    "is status 200": (r) => r.status === 200,
  }});
  if (response.status === 0) {{
    transportErrors.add(1, PARAMS[i].tags);
  }} else if (response.status < 200 || response.status > 299) {{
    non2xx.add(1, PARAMS[i].tags);
  }}
}}

export function handleSummary(data) {{
  return {{ {summary}: JSON.stringify(data, null, 1) }};
}}
"""


def k6_interleaved_script(
    urls: Sequence[str],
    vus: int,
    schedule: SliceSchedule,
    summary: str = "summary.json",
    start_ms: int = 0,
    duration_s: float | None = None,
) -> str:
    """The k6 script of an interleaved window: `urls[i]` is target i's full URL. The slices
    count from the load's own start, or from `start_ms` (epoch ms, this machine's clock)
    when a reader of the apps' counters must know when each slice is
    (interleave.warm_up_together); k6 then runs `duration_s`."""
    if len(urls) != schedule.targets:
        raise HostbenchError(f"{len(urls)} URLs for a schedule of {schedule.targets} targets")
    return K6_INTERLEAVED_SCRIPT.format(
        urls=json.dumps(list(urls)),
        start_ms=int(start_ms),
        slice_ms=round(schedule.slice_s * 1000),
        order=json.dumps(list(schedule.order)),
        vus=vus,
        duration=as_ms(schedule.duration_s if duration_s is None else duration_s),
        summary=json.dumps(summary),
        insecure=k6_insecure(urls),
    )


def parse_k6_targets(summary_json: str, schedule: SliceSchedule, tool_version: str = ""):
    """Each target's LoadResult from the interleaved script's summary: its requests over
    its own slices' time. k6 does not tag the bytes it reads by request, so a target's
    bytes_read is the window's in proportion to its responses (an estimate: a proxy's
    headers make its responses a little longer)."""
    metrics = json.loads(summary_json)["metrics"]

    def values(name: str) -> dict:
        return metrics.get(name, {}).get("values", {})

    def count(name: str) -> int:
        # A sub-metric with no sample at all may be left out of the summary.
        return int(values(name).get("count", 0))

    answered_all = count("http_reqs") - count("hostbench_errors")
    out = []
    for i in range(schedule.targets):
        tag = f"{{target:t{i}}}"
        errors = count("hostbench_errors" + tag)
        sent = count("http_reqs" + tag)
        trend = values("http_req_duration" + tag)
        names = ("avg", "p(50)", "p(90)", "p(99)", "max")
        share = (sent - errors) / answered_all if answered_all else 0.0
        out.append(
            load_result(
                "k6",
                tool_version,
                sent - errors,
                schedule.seconds(i),
                {k: json_number(trend.get(n)) for k, n in zip(LATENCIES, names, strict=True)},
                non_2xx=count("hostbench_non_2xx" + tag),
                errors=errors,
                bytes_read=round(count("data_received") * share),
            )
        )
    return out


class InterleavedK6(K6):
    """k6 firing one window over several targets, in slices (the K6 generator's command
    line, environment and process handling; its own script)."""

    def __init__(self, urls: Sequence[str], schedule: SliceSchedule, start_ms: int = 0):
        super().__init__()
        self.urls = list(urls)
        self.schedule = schedule
        self.start_ms = start_ms

    def script(self, load, summary):
        return k6_interleaved_script(self.urls, load.concurrency, self.schedule, summary,
                                     self.start_ms, load.duration_s)  # fmt: skip

    def parse(self, load, out_dir):
        return parse_k6((out_dir / "summary.json").read_text())  # the window's total

    def parse_targets(self, out_dir: Path):
        return parse_k6_targets((Path(out_dir) / "summary.json").read_text(), self.schedule,
                                self.version())  # fmt: skip
