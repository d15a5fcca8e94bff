"""A run folder's recorded wall time (reproduce.json) survives a re-run that only re-executes
its notebook, or a resume under another profile of its study (the scope profile resuming the
claims one): the earlier seconds are kept and the re-run's added."""

import json

from hostbench.reproduce import DONE_FILE, recorded_wall_s

# Two study ids: what is compared is the record's, whatever the study.
ONE, OTHER = "one-study", "other-study"


def _record(folder, **record):
    (folder / DONE_FILE).write_text(json.dumps(record))


def test_an_earlier_record_of_the_same_study_counts_whatever_its_profile(tmp_path):
    _record(tmp_path, study=ONE, profile="claims", wall_s=807)
    assert recorded_wall_s(tmp_path, ONE) == 807  # resumed with the scope profile, say


def test_another_study_or_no_record_counts_nothing(tmp_path):
    assert recorded_wall_s(tmp_path, OTHER) == 0  # none
    _record(tmp_path, study=OTHER, profile="quick", wall_s=600)
    assert recorded_wall_s(tmp_path, ONE) == 0
    (tmp_path / DONE_FILE).write_text("{not json")
    assert recorded_wall_s(tmp_path, OTHER) == 0
