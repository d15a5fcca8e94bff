"""A run folder's recorded wall time (reproduce.json) survives a re-run that only re-executes
its notebook: the earlier seconds are kept and the re-run's added."""

import json

from hostbench.reproduce import DONE_FILE, recorded_wall_s

# Two study ids: what is compared is the record's, whatever the study.
ONE, OTHER = "one-study", "other-study"


def _record(folder, **record):
    (folder / DONE_FILE).write_text(json.dumps(record))


def test_an_earlier_record_of_the_same_study_and_profile_counts(tmp_path):
    _record(tmp_path, study=ONE, profile="paper", wall_s=807)
    assert recorded_wall_s(tmp_path, ONE, "paper") == 807


def test_another_profile_or_study_or_no_record_counts_nothing(tmp_path):
    assert recorded_wall_s(tmp_path, OTHER, "paper") == 0  # none
    _record(tmp_path, study=OTHER, profile="quick", wall_s=600)
    assert recorded_wall_s(tmp_path, OTHER, "paper") == 0
    assert recorded_wall_s(tmp_path, ONE, "quick") == 0
    (tmp_path / DONE_FILE).write_text("{not json")
    assert recorded_wall_s(tmp_path, OTHER, "quick") == 0
