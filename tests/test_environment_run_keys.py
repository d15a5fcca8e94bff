"""environment.json's keys only some runs record (harness/environment.py's
RUN_DEPENDENT_KEYS): openssl's version where a mode is on TLS, each runtime variant's build
where the run has variants, as the declarations and the built files say; listed in
docs/results.md."""

import hashlib
import json
import subprocess

from hostbench import results
from hostbench.harness import environment
from hostbench.harness.run_folder import ENVIRONMENT_FILE, record_environment
from hostbench.runtime_variants import VARIANTS, get_variant


def test_a_built_files_facts_tell_one_publish_from_another(tmp_path):
    exe = tmp_path / "TestAppAot"
    exe.write_bytes(b"a build")
    facts = environment.file_facts(exe)
    assert facts["size_bytes"] == len(b"a build")
    assert facts["sha256"] == hashlib.sha256(b"a build").hexdigest()[:16]
    assert facts["mtime"].endswith("+00:00")  # UTC
    exe.write_bytes(b"another build")
    assert environment.file_facts(exe)["sha256"] != facts["sha256"]


def test_a_run_on_tls_with_variants_records_openssl_and_each_variants_build(tmp_path):
    built = next(v for v in VARIANTS.values() if v.executable.is_file())  # make setup's
    unbuilt = next(v for v in VARIANTS.values() if not v.executable.is_file())
    record_environment(tmp_path, tls=True, variants=[built.name, unbuilt.name])
    record = json.loads((tmp_path / ENVIRONMENT_FILE).read_text())
    openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout
    assert record[environment.OPENSSL] == openssl.strip()
    builds = record[environment.RUNTIME_VARIANTS]
    assert list(builds) == [built.name, unbuilt.name]
    for name, facts in builds.items():
        v = get_variant(name)
        assert (facts["build"], facts["runtime"], facts["gc_env"]) == (
            v.build.kind, v.runtime, v.env)  # fmt: skip
    assert builds[built.name]["sha256"] == environment.file_facts(built.executable)["sha256"]
    assert builds[unbuilt.name]["executable"].endswith(": not built")
    assert "sha256" not in builds[unbuilt.name]


def test_a_plain_run_without_variants_records_neither(tmp_path):
    record_environment(tmp_path)
    record = json.loads((tmp_path / ENVIRONMENT_FILE).read_text())
    assert not set(environment.RUN_DEPENDENT_KEYS) & set(record)


def test_the_results_reference_lists_every_run_dependent_key():
    page = results.markdown()
    for key, meaning in environment.RUN_DEPENDENT_KEYS.items():
        assert f"| `{key}` | {meaning} |" in page
