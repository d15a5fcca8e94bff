"""check_connections: a concurrency this machine cannot open is refused, with real limits.

The limits are set for a child process only: a lower open-file limit (prlimit),
or a network namespace of its own with a small ephemeral port range (unshare -n,
root only), so the machine's own settings are never touched.
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap

import pytest

from hostbench.errors import BadInput
from hostbench.harness.launch import web
from hostbench.harness.launch.processes import ManagedProcess
from hostbench.harness.launch.tools import find_tool
from hostbench.harness.preflight import TOOL_SPARE_FILES, check_connections, max_connections

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _child(code: str, *, nofile: int | None = None, netns: bool = False) -> dict:
    """Run `code` (which prints one JSON line) in a child Python with the limits given."""
    prefix = []
    if netns:
        prefix += ["unshare", "--net", "--"]
    if nofile is not None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        prefix += ["prlimit", f"--nofile={nofile}:{hard}", "--"]
    env = {**os.environ, "PYTHONPATH": REPO}
    done = subprocess.run(
        [*prefix, sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


CHECK = """
    import json, sys
    from hostbench.errors import BadInput
    from hostbench.harness.preflight import check_connections, max_connections
    out = {"max": {t: max_connections(t)[0] for t in ("wrk", "ab", "k6", "bombardier")}}
    for c, tool in %s:
        try:
            check_connections(c, tool)
            out[f"{c} {tool}"] = "ok"
        except BadInput as e:
            out[f"{c} {tool}"] = str(e)
    print(json.dumps(out))
"""


def test_the_machines_own_limits_allow_the_studies_and_refuse_100000():
    allowed, _ = max_connections("bombardier")
    assert allowed >= 1000  # every study's concurrency fits on a stock machine
    check_connections(512, "k6")
    with pytest.raises(BadInput) as info:
        check_connections(100_000, "bombardier")
    message = str(info.value)
    assert message.startswith("concurrency 100000: bombardier can open at most")
    assert f"use concurrency <= {allowed}" in message and "\n" not in message


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("prlimit"), reason="needs prlimit (util-linux)")
def test_a_low_open_file_limit_refuses_c_tools_and_not_go_tools():
    cases = "[(300, 'wrk'), (100, 'wrk'), (300, 'bombardier'), (300, None)]"
    out = _child(CHECK % cases, nofile=256)
    assert out["max"]["wrk"] == out["max"]["ab"] == 256 - TOOL_SPARE_FILES
    assert "300 wrk" in out and "open-file soft limit (RLIMIT_NOFILE) 256" in out["300 wrk"]
    assert out["300 wrk"].endswith(f"use concurrency <= {256 - TOOL_SPARE_FILES}")
    assert out["100 wrk"] == "ok"
    # Go tools raise their soft limit to the hard one, which is not lowered here.
    assert out["300 bombardier"] == "ok"
    assert "a load tool can open at most" in out["300 None"]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    base = f"http://127.0.0.1:{web.free_port()}"
    log = tmp_path_factory.mktemp("testapp") / "testapp.log"
    ready = lambda: web.answers_ok(base + "/health")  # noqa: E731
    with ManagedProcess("TestApp", [find_tool("TestApp"), "--urls", base], log, ready=ready):
        yield base


@pytest.mark.live
@pytest.mark.skipif(not shutil.which("prlimit"), reason="needs prlimit (util-linux)")
def test_wrk_really_cannot_open_more_than_its_limit(app, tmp_path):
    # What the check guards against: wrk under a soft limit of 256 asked for 400
    # connections opens fewer and counts the rest as connect errors.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    argv = ["prlimit", f"--nofile=256:{hard}", "--", find_tool("wrk"), "-t1", "-c400", "-d1s"]
    done = subprocess.run([*map(str, argv), app + "/text"], capture_output=True, text=True)
    print(done.stdout)
    assert "Socket errors: connect" in done.stdout, done.stdout + done.stderr


NETNS = """
    import json, socket, subprocess
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with open("/proc/sys/net/ipv4/ip_local_port_range", "w") as f:
        f.write("40000 40199")  # 200 ports, in this namespace only
    from hostbench.errors import BadInput
    from hostbench.harness.preflight import SPARE_PORTS, check_connections, max_connections
    out = {"max": max_connections("bombardier"), "spare": SPARE_PORTS}
    for c in (150, 100):
        try:
            check_connections(c, "bombardier")
            out[str(c)] = "ok"
        except BadInput as e:
            out[str(c)] = str(e)
    # The kernel's own limit: connections to one address stop at the range's size, and
    # a second address (a proxy's upstream) gets the whole range again.
    listeners, opened = [], {}
    for port in (5001, 5002):
        s = socket.socket()
        s.bind(("127.0.0.1", port))
        s.listen(1024)
        listeners.append(s)
        conns = []
        try:
            for _ in range(300):
                c = socket.socket()
                c.connect(("127.0.0.1", port))
                conns.append(c)
        except OSError as e:
            opened[str(port)] = [len(conns), e.errno]
        listeners.append(conns)
    out["opened"] = opened
    print(json.dumps(out))
"""


@pytest.mark.live
@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
    reason="needs root, unshare and ip for a network namespace of its own",
)
def test_a_small_port_range_refuses_what_the_kernel_cannot_open():
    out = _child(NETNS, netns=True)
    allowed = 200 - out["spare"]
    assert out["max"][0] == allowed and "ephemeral ports 40000-40199 (200)" in out["max"][1]
    assert out["150"].startswith("concurrency 150: bombardier can open at most")
    assert out["150"].endswith(f"use concurrency <= {allowed}") and out["100"] == "ok"
    # 99 = EADDRNOTAVAIL: no free local port; per destination, so each listener got 200.
    assert out["opened"] == {"5001": [200, 99], "5002": [200, 99]}
