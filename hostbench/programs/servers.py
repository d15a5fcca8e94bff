"""The servers a mode starts, declared once: the test app (testapp/dotnet) and the Go servers
(testapp/go), both built by `make setup` and copied to an ssh host by the harness."""

from ..errors import ToolMissing
from ..paths import BIN, TESTAPP
from ..runtime_variants import check_env, get_variant, publish_argv
from ..runtimes import build_of
from .program import Certificate, Program

# The test app serves HTTPS through Kestrel's own configuration (its default certificate, a PEM
# file and its key), read from the environment, so every build of it does, on every runtime:
# `--urls https://...` then listens with it. HTTP/1.1 only, as over plain HTTP: the load tools
# would otherwise negotiate HTTP/2 by ALPN, and the TLS twins would change two things at once.
KESTREL_TLS_ENV = {
    "cert": "Kestrel__Certificates__Default__Path",
    "key": "Kestrel__Certificates__Default__KeyPath",
}
KESTREL_HTTP1_ONLY = {"Kestrel__EndpointDefaults__Protocols": "Http1"}


def kestrel_tls_env(tls: Certificate) -> dict[str, str]:
    """The environment that makes Kestrel serve HTTPS/1.1 with `tls`."""
    return {KESTREL_TLS_ENV["cert"]: tls.cert, KESTREL_TLS_ENV["key"]: tls.key,
            **KESTREL_HTTP1_ONLY}  # fmt: skip


class TestApp(Program):
    name = tool = "TestApp"
    built_by = "`make setup` publishes it to build/testapp/"
    ships = TESTAPP.parent
    log = "app.log"
    in_folder = False
    terminates_tls = True

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
        urls = setup.url if not setup.socket else f"http://unix:{setup.socket}"
        return [exe, "--urls", urls, *setup.mode.server_args, *setup.opts.app_args]

    def env(self, setup, folder):
        """The study's app_env, the GC setting of its runtime variant, and Kestrel's
        certificate where it terminates TLS."""
        tls = kestrel_tls_env(setup.tls) if setup.tls else {}
        if setup.opts.runtime_variant is None:
            return {**setup.opts.app_env, **tls}
        variant = get_variant(setup.opts.runtime_variant)
        check_env(variant, setup.opts.app_env)
        return {**setup.opts.app_env, **variant.env, **tls}


class GoServer(Program):
    name = tool = "goserver"
    built_by = "built from testapp/go by `make setup` (needs Go >= 1.22)"
    ships = BIN / "goserver"
    log = "app.log"
    in_folder = False

    def argv(self, exe, setup, folder):
        urls = f"http://{setup.listen}" if not setup.socket else f"http://unix:{setup.socket}"
        return [exe, "--urls", urls, *setup.mode.server_args]
