"""The programs a hosting mode starts, each declared once: the test app, the Go servers and
the proxies (nginx, caddy, YARP).

A mode (hostbench/catalog.py) names its programs: `server` always, `proxy` when a request
passes through one. Each program here says what provides it, how an ssh host gets it, its
configs, its command line and how its version is read; modes.py starts them through a place
(places.Local here or in a namespace, remote.Connection on an ssh host), so loopback,
netns and ssh launch the same declaration. PROGRAMS finds one by the name a mode gives,
as load.TOOLS does for load tools.

Every program is ready once GET /health through it answers 200 (a proxy: the app behind
it must be up already).
"""

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...catalog import Mode
from ...errors import BadInput, ToolMissing
from ...params import LaunchOptions  # data: the params' launch keys
from ...paths import BIN, TESTAPP, YARP_PROXY
from ...runtimes import build_of
from . import proxies


@dataclass(frozen=True)
class Setup:
    """One program's part in one launch: where it listens, what it forwards to."""

    mode: Mode
    opts: LaunchOptions
    listen: str  # "host:port", or "unix:/path" (the app behind a proxy over a Unix socket)
    upstream: str = ""  # a proxy's app: "127.0.0.1:port" or "unix:/path"
    cpus: list[int] | None = None  # pinned to these CPU ids; None: any

    @property
    def url(self) -> str:
        """The URL this program answers at: http://host:port, or http://localhost over a socket."""
        return "http://localhost" if self.listen.startswith("unix:") else f"http://{self.listen}"

    @property
    def socket(self) -> str | None:
        return self.listen.removeprefix("unix:") if self.listen.startswith("unix:") else None


class Program:
    """One program a mode starts. Subclasses say how it is configured and started."""

    name = ""  # the name a Mode gives (Mode.server, Mode.proxy)
    tool = ""  # its executable, as tools.find_tool looks for it
    package = ""  # what provides it here (tools.find_tool says it when it is missing)
    # What an ssh host is given: this machine's build (a file, or a published folder whose
    # program it is), or None: the host's own, installed by deploy/provision.yml.
    ships: Path | None = None
    log = ""  # its console log in the run folder
    in_folder = True  # runs in its folder (the app runs where the harness does, as always)

    def configs(self, setup: Setup, folder: PurePosixPath, place) -> dict[str, str]:
        """The files it reads (name: text), written into the run folder (and onto an ssh host)."""
        return {}

    def dirs(self, folder: PurePosixPath) -> list[str]:
        """Folders it writes into, made before it starts."""
        return []

    def argv(self, exe: str, setup: Setup, folder: PurePosixPath) -> list[str]:
        raise NotImplementedError

    def env(self, setup: Setup, folder: PurePosixPath) -> dict[str, str]:
        """Variables added to its environment."""
        return {}

    def version(self, place) -> str | None:
        """Its version as the environment record names it; None for the harness's own
        programs (their build is recorded otherwise)."""
        return None

    def executable(self, place, setup: Setup) -> str:
        """Its path on `place`."""
        return place.tool(self.tool, self.ships)

    def process(self, place, run_dir: Path, setup: Setup):
        """The program set up on `place` for `setup` (configs written, kept in run_dir); not
        started yet."""
        folder = PurePosixPath(place.folder(run_dir))
        files = self.configs(setup, folder, place)
        place.put(run_dir, str(folder), files, self.dirs(folder))
        exe = self.executable(place, setup)
        return place.process(
            self.name,
            self.argv(exe, setup, folder),
            Path(run_dir) / self.log,
            env=self.env(setup, folder),
            cpus=setup.cpus,
            cwd=folder if self.in_folder else None,
            ready=lambda: place.answers_ok(setup.url + "/health", setup.socket),
            ready_timeout_s=60,
        )


class TestApp(Program):
    name = tool = "TestApp"
    package = "`make setup` publishes it to build/testapp/"
    ships = TESTAPP.parent
    log = "app.log"
    in_folder = False

    def executable(self, place, setup):
        """make setup's build, or the self-contained build of the launch's runtime (params key
        runtimes), published by the harness before the study (notebook.ensure_testapp)."""
        if setup.opts.runtime is None:
            return super().executable(place, setup)
        build = build_of(setup.opts.runtime)
        if not build.is_file():
            raise ToolMissing(f"TestApp for {setup.opts.runtime} is not built at {build}: a "
                              "study publishes it first (hostbench.harness.notebook."
                              f"ensure_testapp({setup.opts.runtime!r}))")  # fmt: skip
        return place.tool(self.tool, build.parent)  # here, or a copy of it on an ssh host

    def argv(self, exe, setup, folder):
        urls = f"http://{setup.listen}" if not setup.socket else f"http://unix:{setup.socket}"
        return [exe, "--urls", urls, *setup.mode.server_args, *setup.opts.app_args]

    def env(self, setup, folder):
        return dict(setup.opts.app_env)


class GoServer(Program):
    name = tool = "goserver"
    package = "built from testapp/go by `make setup` (needs Go >= 1.22)"
    ships = BIN / "goserver"
    log = "app.log"
    in_folder = False

    def argv(self, exe, setup, folder):
        urls = f"http://{setup.listen}" if not setup.socket else f"http://unix:{setup.socket}"
        return [exe, "--urls", urls, *setup.mode.server_args]


def _front(setup: Setup) -> dict:
    host, _, port = setup.listen.rpartition(":")
    return {"listen_host": host, "listen_port": int(port), "upstream": setup.upstream,
            "access_log": setup.opts.access_log}  # fmt: skip


class Nginx(Program):
    name = tool = "nginx"
    package = "apt-get install nginx (done by `make setup` as root)"
    log = "nginx.log"

    def configs(self, setup, folder, place):
        mode, opts = setup.mode, setup.opts
        text = proxies.nginx_config(
            **_front(setup),
            # The pool's size, where the mode has a pool (a mode without one keeps none).
            keepalive=mode.keepalive and (opts.nginx_keepalive_pool or mode.keepalive),
            workers=opts.nginx_workers or place.cores(setup.cpus),  # one per core it may use
            run_dir=Path(folder),
            user=place.root_user(),
        )
        return {"nginx.conf": text}

    def dirs(self, folder):
        return [str(folder / "nginx-temp")]

    def argv(self, exe, setup, folder):
        # -p and -e keep nginx away from its compiled-in prefix and /var/log/nginx.
        return [exe, "-p", str(folder), "-e", "stderr", "-c", str(folder / "nginx.conf")]

    def version(self, place):
        """E.g. "nginx/1.22.1" (nginx -v prints "nginx version: nginx/1.22.1" on stderr)."""
        out = place.output(place.tool(self.tool), "-v")
        return out.rpartition("version:")[2].split()[0]


class Caddy(Program):
    name = tool = "caddy"
    package = "apt-get install caddy (done by `make setup` as root)"
    log = "caddy.log"

    def configs(self, setup, folder, place):
        return {"Caddyfile": proxies.caddy_config(**_front(setup), run_dir=Path(folder))}

    def dirs(self, folder):
        env = proxies.caddy_home_env(folder / "caddy-home")
        return [env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"]]

    def argv(self, exe, setup, folder):
        return [exe, "run", "--config", str(folder / "Caddyfile"), "--adapter", "caddyfile"]

    def env(self, setup, folder):
        return proxies.caddy_home_env(folder / "caddy-home")

    def version(self, place):
        """E.g. "caddy/2.6.2" (`caddy version` prints "v2.6.2 h1:..." or, Debian's, "2.6.2")."""
        return "caddy/" + place.output(place.tool(self.tool), "version").split()[0].lstrip("v")


class Yarp(Program):
    name = "yarp"
    tool = "YarpProxy"
    package = "`make setup`, which publishes it to build/yarp/ (from testapp/yarp)"
    ships = YARP_PROXY.parent
    log = "yarp.log"

    def configs(self, setup, folder, place):
        return {"yarp.json": proxies.yarp_config(**_front(setup))}

    def argv(self, exe, setup, folder):
        return [exe, "--config", str(folder / "yarp.json")]

    def version(self, place):
        """E.g. "yarp/2.3.0" (`YarpProxy --version` prints "Yarp.ReverseProxy 2.3.0+<commit>");
        "unknown" when the build answers something else (a runtime that will not start)."""
        out = place.output(place.tool(self.tool, self.ships), "--version")
        match = re.fullmatch(r"Yarp\.ReverseProxy ([^\s+]+)(\+\S*)?", out)
        return f"yarp/{match.group(1)}" if match else "unknown"


# Every program a mode can name, by that name.
PROGRAMS: dict[str, Program] = {
    p.name: p for p in (TestApp(), GoServer(), Nginx(), Caddy(), Yarp())
}


def get_program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise BadInput(f"unknown program {name!r}; allowed: {', '.join(PROGRAMS)}") from None


def programs_of(mode: Mode) -> list[Program]:
    """The programs `mode` starts, the app first."""
    names = [mode.server] + ([mode.proxy] if mode.proxy else [])
    return [get_program(n) for n in names]
