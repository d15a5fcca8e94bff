"""The servers a mode starts, declared once: the test app (testapp/dotnet) and the Go servers
(testapp/go), both built by `make setup` and copied to an ssh host by the harness."""

from ..errors import ToolMissing
from ..paths import BIN, TESTAPP
from ..runtime_variants import check_env, get_variant, publish_argv
from ..runtimes import build_of
from .program import Program


class TestApp(Program):
    name = tool = "TestApp"
    built_by = "`make setup` publishes it to build/testapp/"
    ships = TESTAPP.parent
    log = "app.log"
    in_folder = False

    def executable(self, place, setup):
        """make setup's build, or the self-contained build of the launch's runtime (params key
        runtimes), published by the harness before the study (notebook.ensure_testapp); or the
        build of its runtime variant (runtime_variants.py; notebook.ensure_variant)."""
        if setup.opts.runtime_variant is not None:
            variant = get_variant(setup.opts.runtime_variant)
            if not variant.executable.is_file():
                publish = " ".join(publish_argv(variant))
                raise ToolMissing(f"runtime variant {variant.name!r} is not built at "
                                  f"{variant.executable}: {publish}")  # fmt: skip
            return place.tool(variant.build.executable, variant.executable.parent)
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
        """The study's app_env, and the GC setting of its runtime variant."""
        if setup.opts.runtime_variant is None:
            return dict(setup.opts.app_env)
        variant = get_variant(setup.opts.runtime_variant)
        check_env(variant, setup.opts.app_env)
        return {**setup.opts.app_env, **variant.env}


class GoServer(Program):
    name = tool = "goserver"
    built_by = "built from testapp/go by `make setup` (needs Go >= 1.22)"
    ships = BIN / "goserver"
    log = "app.log"
    in_folder = False

    def argv(self, exe, setup, folder):
        urls = f"http://{setup.listen}" if not setup.socket else f"http://unix:{setup.socket}"
        return [exe, "--urls", urls, *setup.mode.server_args]
