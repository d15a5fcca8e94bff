"""The processor as recorded (harness/environment.py's cpu_identity) and as every page names it
(analysis.tables.processor): a masked model name ("Intel(R) Xeon(R) Processor") with the
vendor, family, model and stepping that tell processors apart, where recorded."""

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from hostbench import gallery
from hostbench.analysis import findings, tables
from hostbench.analysis.compare import Run
from hostbench.harness import environment
from hostbench.paths import RUNS

XEON = {"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_cores_logical": 2, "os": "Debian 12",
        "cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model_number": 106,
        "cpu_stepping": 6}  # fmt: skip
NAMED = "Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 106, stepping 6)"


def test_the_record_reads_vendor_family_model_and_stepping_from_proc_cpuinfo():
    text = Path("/proc/cpuinfo").read_text()
    found = environment.cpu_identity()
    for field, key in environment.CPU_IDENTITY.items():
        match = re.search(rf"^{field}\s*:\s*(.+)$", text, re.M)
        if match:  # an architecture without the field leaves it out
            assert str(found[key]) == match.group(1).strip()
    assert set(environment.CPU_IDENTITY.values()) == set(tables.CPU_IDENTITY)


def test_the_processor_is_named_with_what_is_recorded():
    assert tables.processor(XEON) == NAMED
    # An older run recorded the model name only: printed as it is.
    older = {k: v for k, v in XEON.items() if k in ("cpu_model", "cpu_cores_logical", "os")}
    assert tables.processor(older) == "Intel(R) Xeon(R) Processor"
    assert tables.processor({**older, "cpu_stepping": 6}) == f"{older['cpu_model']} (stepping 6)"
    assert findings.machine_line(_results(), XEON).startswith(f"Machine: {NAMED}, 2 cores")


def test_the_gallery_names_the_processor_with_its_family_model_and_stepping(tmp_path):
    committed = RUNS / "example-paper"
    run_dir = tmp_path / "example-paper"
    run_dir.mkdir()
    for name in ("params.json", "results.csv"):
        (run_dir / name).write_bytes((committed / name).read_bytes())
    (run_dir / "environment.json").write_text(json.dumps(XEON))
    assert gallery.machine(Run(run_dir, "jcsi2018", None))["machine"] == f"2-core {NAMED}"


def _results():
    return pd.DataFrame({"valid": [True], "cpu_steal_pct": [0.0], "load_avg_1m": [0.5]})


@pytest.mark.live  # it runs git
def test_a_run_folder_a_resume_rewrites_is_not_dirty_code_and_a_changed_module_is(
    tmp_path, monkeypatch
):
    def git(*argv):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv],
                       cwd=tmp_path, check=True, capture_output=True)  # fmt: skip

    run = tmp_path / "data" / "runs" / "example-x"
    run.mkdir(parents=True)
    (run / "params.json").write_text("{}")
    (tmp_path / "module.py").write_text("a = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "first")
    monkeypatch.setattr(environment, "ROOT", tmp_path)
    commit = environment.git_commit()
    assert re.fullmatch(r"[0-9a-f]{7,}", commit)
    (run / "params.json").write_text('{"resumed": true}')  # what resuming an example does
    assert environment.git_commit() == commit
    (tmp_path / "module.py").write_text("a = 2\n")
    assert environment.git_commit() == commit + "+dirty"
