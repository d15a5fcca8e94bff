"""A Native AOT variant and a GC variant measured across two hosts, real: in the netns topology
(two network namespaces) and over ssh (two sshd hosts, tests/ssh_hosts.py), each row recording
the build and GC its app reported and environment.json each variant's build. The variants'
builds are this checkout's (build/), published as a study publishes them when missing or older
than their sources (conftest.variant_builds)."""

import json

import pytest

from conftest import SHORT_RUNS
from hostbench.environment_keys import RUNTIME_VARIANTS
from hostbench.harness.launch import netns
from hostbench.harness.run_folder import ENVIRONMENT_FILE
from hostbench.harness.study import run_study
from hostbench.params import StudyParams
from hostbench.results import read_results
from hostbench.runtime_variants import get_variant
from tests.ssh_hosts import NEEDED, left, two_ssh_hosts

pytestmark = pytest.mark.live
# Native AOT with the runtime's default GC (server GC, DATAS on .NET 10), and the MVC test app
# with workstation GC: a build and a GC setting, each a variant of Kestrel in the same block.
VARIANTS = ["aot", "workstationgc"]
DEFAULT_GC = ("server", "datas")
SETTINGS = {"modes": ["kestrel"], "scenarios": ["text"], "tools": ["bombardier"],
            "concurrency": [2], "duration_s": 1, "warmup_s": 0, "repetitions": 1,
            "runtime_variants": VARIANTS, **SHORT_RUNS}  # fmt: skip


@pytest.fixture(autouse=True)
def published(variant_builds):
    """The variants' builds in build/, published once a session (conftest.variant_builds)."""
    assert set(VARIANTS) <= set(variant_builds)


def _each_row_records_its_variant(study_dir) -> None:
    rows = read_results(study_dir / "results.csv")
    assert sorted(rows["variant"]) == sorted(VARIANTS)
    for r in rows.itertuples():
        assert r.valid, r.invalid_reason
        variant = get_variant(r.variant)
        assert r.build == variant.build.kind, r.run_key
        assert (r.gc == variant.gc.reported) if variant.gc.reported else (r.gc in DEFAULT_GC)
        assert r.runtime_version.startswith("10.0.") and r.startup_ms > 0
    builds = json.loads((study_dir / ENVIRONMENT_FILE).read_text())[RUNTIME_VARIANTS]
    assert {n: b["build"] for n, b in builds.items()} == {"aot": "aot", "workstationgc": "jit"}
    assert all(len(b["sha256"]) == 16 for b in builds.values())


@pytest.mark.skipif(bool(netns.not_allowed()), reason=netns.not_allowed() or "allowed")
def test_an_aot_and_a_gc_variant_run_across_two_namespaces(tmp_path):
    params = StudyParams.from_dict({**SETTINGS, "topology": "netns"})
    run_study(params, "two-hosts", tmp_path, progress=False)
    _each_row_records_its_variant(tmp_path / "two-hosts")


@NEEDED[0]  # two namespaces
@NEEDED[1]  # sshd in each
def test_an_aot_and_a_gc_variant_run_on_the_server_host_over_ssh(tmp_path):
    with two_ssh_hosts(tmp_path) as (hosts, inventory, _, _):
        params = StudyParams.from_dict({**SETTINGS, "topology": "ssh",
                                        "inventory": str(inventory)})  # fmt: skip
        netns.call_in(hosts.client, run_study, params, "ssh", tmp_path, progress=False)
        rows = read_results(tmp_path / "ssh" / "results.csv")
        assert set(rows["request_path"]) == {"ssh loadgen-host -> server-host"}
        _each_row_records_its_variant(tmp_path / "ssh")
    assert not left("/tmp/hostbench\\.") and not left("hb-ssh")
