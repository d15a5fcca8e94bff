"""A claims profile measured for real: it looks after its first blocks, stops at its budget,
names the claims still open and leaves nothing running (hostbench/harness/study.py,
hostbench/analysis/until_decided.py)."""

import json
import os
from dataclasses import replace

import pytest

from conftest import descendants_named, profile_params
from hostbench.analysis import tables, until_decided
from hostbench.analysis.reference import load_claims
from hostbench.analysis.sequential import Plan
from hostbench.errors import BadInput
from hostbench.harness.study import run_study

STUDY = "jcsi2018"


@pytest.mark.live
def test_a_claims_run_stops_at_its_budget_and_names_the_open_claims(tmp_path):
    # Kestrel and the analog on HTML, 1 s windows (shorter ones spread more, so stay open
    # longer), the intervals planned for up to 100 blocks:
    # the first look's (3 blocks, the fewest that decide anything) is then the mean log ratio
    # +- 19.8 s / sqrt(3), too wide to decide "+70%" unless the blocks agree to within about
    # 1% (the committed claims run's 15 s windows spread 2.7%), whatever the processor makes of
    # the ratio. The budget (a second) stops the run there, long before its cap.
    params = profile_params(STUDY, "claims", scenarios=["html"], duration_s=1, warmup_s=1,
                            min_duration_s=0.5,
                            max_repetitions=100, max_minutes=0.01, quiet_max_cores=None,
                            require_steady=False)  # fmt: skip
    assert Plan.of(params).t_critical(3) > 19  # what the comment says
    run_dir = run_study(params, "claims", tmp_path, progress=False, study=STUDY).parent
    design = json.loads((run_dir / until_decided.DESIGN_FILE).read_text())
    assert design["blocks"] == 3 and "time budget" in design["stopped"]
    [look] = until_decided.looks_of(design)
    # The claims whose comparisons are all on HTML are this profile's; the rest read others.
    claims = load_claims(STUDY)
    testable = claims[claims["kind"] != "not testable"]
    own = [
        c for c, rows in testable.groupby("claim", sort=False) if set(rows["scenario"]) == {"html"}
    ]
    assert list(look.verdicts) == own
    results = tables.load_results(run_dir, valid_only=False)
    assert set(results["block"]) == {1, 2, 3} and set(results["scenario"]) == {"html"}
    text = until_decided.summary(run_dir, STUDY)
    assert f"Stopped: {design['stopped']}" in text
    for claim in look.open:
        assert f"Still open: {claim} (" in text or f"; {claim} (" in text
    assert not descendants_named(os.getpid())  # every launch stopped

    # Resumed with a budget that leaves room for one more block and no second: the last look
    # is taken again under it, the next block measures the open claims' cells, and the run
    # stops again, by the new budget. A smaller budget than the one recorded is refused.
    measured = sum(design["minutes"].values())
    more = measured + 1.2 * design["minutes"]["3"]  # stops after block 4 unless 40% faster
    with pytest.raises(BadInput, match="max_minutes"):
        run_study(replace(params, max_minutes=0.005), "claims", tmp_path, progress=False,
                  study=STUDY)  # fmt: skip
    run_study(replace(params, max_minutes=more), "claims", tmp_path, progress=False, study=STUDY)
    again = json.loads((run_dir / until_decided.DESIGN_FILE).read_text())
    assert again["blocks"] == 4 and f"({more:g} min;" in again["stopped"], again["stopped"]
    assert [x.after_block for x in until_decided.looks_of(again)] == [3, 4]
    assert until_decided.looks_of(again)[0] == look  # the same windows, judged the same
    results = tables.load_results(run_dir, valid_only=False)
    assert set(results["block"]) == {1, 2, 3, 4}
    assert not descendants_named(os.getpid())


def test_a_claims_profile_needs_its_study(tmp_path):
    params = profile_params(STUDY, "claims")
    with pytest.raises(BadInput, match="judges a study's claims"):
        run_study(params, "claims", tmp_path, progress=False)
    assert not (tmp_path / "claims").exists()  # nothing written
