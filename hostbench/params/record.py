"""What a run folder records of its params: params.json, what it holds besides the keys (the
version that ran, the settings' fingerprint), and the run id that names the folder."""

import hashlib
import json
import re

from ..errors import BadInput

PARAMS_FILE = "params.json"  # a run folder's params, as the harness recorded them
# What params.json holds besides the keys: the version that ran, the settings' hash, and (when
# there are any) the sub-studies skipped where the study ran, each with why.
SKIPPED_SUB_STUDIES = "sub_studies_skipped"
RECORDED = ("hostbench_version", "fingerprint", SKIPPED_SUB_STUDIES)
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def fingerprint(settings: dict) -> str:
    """A short stable hash of a settings mapping."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        raise BadInput(
            f"run id {run_id!r}: use up to 64 letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return run_id
