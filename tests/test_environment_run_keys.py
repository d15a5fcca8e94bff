"""environment.json's keys only some runs record (hostbench/environment_keys.py): openssl's
version where a mode is on TLS, each runtime variant's build where the run has variants, as the
declarations and the built files say; listed in docs/results.md."""

import hashlib
import json
import subprocess

import pytest

from hostbench import results, runtime_variants
from hostbench.environment_keys import OPENSSL, RUN_DEPENDENT_KEYS, RUNTIME_VARIANTS
from hostbench.harness import environment
from hostbench.harness.run_folder import ENVIRONMENT_FILE, record_environment
from hostbench.runtime_variants import get_variant

# One variant published, one not, in a build folder of the test's own: what a checkout has
# built (a fresh clone none, a measuring machine all) decides nothing here.
BUILT, UNBUILT = get_variant("aot"), get_variant("jit-datas")


@pytest.fixture(autouse=True)
def one_built(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime_variants, "BUILD", tmp_path / "build")
    BUILT.executable.parent.mkdir(parents=True)
    BUILT.executable.write_bytes(b"a Native AOT build")


def test_a_built_files_facts_tell_one_publish_from_another(tmp_path):
    exe = tmp_path / "TestAppAot"
    exe.write_bytes(b"a build")
    facts = environment.file_facts(exe)
    assert facts["size_bytes"] == len(b"a build")
    assert facts["sha256"] == hashlib.sha256(b"a build").hexdigest()[:16]
    assert facts["mtime"].endswith("+00:00")  # UTC
    exe.write_bytes(b"another build")
    assert environment.file_facts(exe)["sha256"] != facts["sha256"]


def test_each_variants_build_is_recorded_as_declared_and_as_built():
    builds = environment.variant_builds([BUILT.name, UNBUILT.name])
    assert list(builds) == [BUILT.name, UNBUILT.name]
    for name, facts in builds.items():
        v = get_variant(name)
        assert (facts["build"], facts["app"], facts["runtime"], facts["gc_env"]) == (
            v.build.kind, v.build.app, v.runtime, v.env)  # fmt: skip
    assert builds[BUILT.name]["sha256"] == environment.file_facts(BUILT.executable)["sha256"]
    assert builds[UNBUILT.name]["executable"].endswith(": not built")
    assert "sha256" not in builds[UNBUILT.name]
    assert environment.run_dependent(False) == {}  # plain HTTP, no variants: neither key


@pytest.mark.live  # collect() asks each tool its version; openssl too
def test_a_run_on_tls_with_variants_records_openssl_and_each_variants_build(tmp_path):
    for name in ("tls", "plain"):
        (tmp_path / name).mkdir()
    record_environment(tmp_path / "tls", tls=True, variants=[BUILT.name])
    record = json.loads((tmp_path / "tls" / ENVIRONMENT_FILE).read_text())
    openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout
    assert record[OPENSSL] == openssl.strip()
    assert list(record[RUNTIME_VARIANTS]) == [BUILT.name]
    record_environment(tmp_path / "plain")
    plain = json.loads((tmp_path / "plain" / ENVIRONMENT_FILE).read_text())
    assert not set(RUN_DEPENDENT_KEYS) & set(plain)


def test_the_results_reference_lists_every_run_dependent_key():
    page = results.markdown()
    for key, meaning in RUN_DEPENDENT_KEYS.items():
        assert f"| `{key}` | {meaning} |" in page
