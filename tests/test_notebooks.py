"""The notebooks: committed clean, and `make reproduce` with the quick profile end to end."""

import json

import pytest

from hostbench.harness.tour import NOTEBOOK
from hostbench.paths import NOTEBOOKS
from hostbench.reproduce import reproduce
from hostbench.studies import STUDIES

PAPER_NOTEBOOK = STUDIES["jcsi2018"].notebook


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_committed_notebooks_carry_no_outputs_and_one_parameters_cell(notebook):
    nb = json.loads(notebook.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1


def test_reproduce_quick_profile_writes_report_figures_and_results(tmp_path):
    out = reproduce("jcsi2018", "quick", run_id="ci-quick", runs_dir=tmp_path)
    assert out == tmp_path / "ci-quick"
    executed = json.loads((out / PAPER_NOTEBOOK).read_text())
    errors = [
        o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert errors == []
    html = (out / "report.html").read_text()
    assert "Fig. 9" in html and "<Figure size" not in html
    assert html.count("data:image/png;base64") >= 6  # figures inline, in their sections
    modes = json.loads((out / "params.json").read_text())["modes"]
    expected = ["topology", "all-models", "relative", "cpu", *(f"model-{m}" for m in modes)]
    for name in expected:
        for ext in ("png", "svg"):
            path = out / "figures" / f"{name}.{ext}"
            assert path.stat().st_size > 1000, path
    results = (out / "results.csv").read_text().splitlines()
    assert len(results) == 1 + len(modes) * 4  # header + every mode x the paper's 4 scenarios
    assert (out / "headline.txt").read_text().strip()
    # The C# tour ran one way or the other (tests/test_tour.py checks its contents).
    assert (out / "app_work.csv").exists()
    if (out / NOTEBOOK.name).exists():  # only where .NET Interactive is installed
        tour = json.loads((out / NOTEBOOK.name).read_text())
        assert not [
            o for c in tour["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
        ]


def test_unknown_profile_or_study_is_refused(tmp_path):
    from hostbench.errors import BadInput

    with pytest.raises(BadInput, match="study 'jcsi2018' has no profile 'fast'; allowed: paper"):
        reproduce("jcsi2018", "fast", runs_dir=tmp_path)
    with pytest.raises(BadInput, match="unknown study 'jcsi'; allowed: jcsi2018, linux-prox"):
        reproduce("jcsi", "quick", runs_dir=tmp_path)


def test_the_studies_command_lists_every_study():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "hostbench", "studies"], capture_output=True, text=True, check=True
    ).stdout
    for study in STUDIES.values():
        assert study.id in out
    assert "01-jcsi2018-hosting-models.ipynb" in out and "paper, quick" in out
