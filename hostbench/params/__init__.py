"""A study's parameters as data: every key declared once, validated once, read back typed.

Params are data (as crank's job definitions): modes x scenarios x tools x concurrency,
repeated in blocks, plus the settings that shape every run. A profile file may say
`extends: paper` and state only what differs. Every key has an effect or is refused, and
each problem is one line naming what was wrong and what is allowed.

One module per concern, and this package's names are imported from here:
- rules: what a key is (Key), its kind (Kind: what a run folder does with it) and what its
  values may be (Rule: type, range or choices; its form: one value, a list, or one per
  scenario);
- keys: every general key's declaration (KEYS), with the programs' own (hostbench/programs)
  every key (declared), and reading a params mapping against them;
- study: StudyParams, the rules between keys, each cell's Load (built and checked once);
- expansion: a variant sweep's variants and a sub-study's params;
- topology: loopback, network namespaces, or two hosts over ssh from an inventory;
- loading: a params file and the profile it `extends`;
- command_line: keys set with `--set KEY=VALUE` over a profile, and recorded;
- record: what a run folder records (params.json, the settings' fingerprint, the run id);
- docs_page: docs/params.md, from the same declarations (`python -m hostbench docs`).

This package is the core: the harness adds what only a launch can check
(harness/preflight.py: this machine's CPUs and connections, Windows-only modes), and the
analysis reads a run's params.json back as StudyParams (StudyParams.from_run). Nothing here
imports the harness.
"""

from .command_line import (
    COMMAND_LINE_KEY,
    params_with_settings,
    parse_assignment,
    parse_settings,
    settings_text,
    with_settings,
)
from .docs_page import markdown
from .expansion import expand_sweep, machine_cores
from .keys import KEYS, NOT_MEASURED, REQUIRED, SCHEDULE, declared, optional
from .loading import load_yaml
from .record import PARAMS_FILE, RECORDED, SKIPPED_SUB_STUDIES, check_run_id, fingerprint
from .rules import Key, Kind, Rule
from .study import LaunchOptions, StudyParams
from .topology import SSH_MODES, TOPOLOGIES

__all__ = [
    "COMMAND_LINE_KEY",
    "KEYS",
    "NOT_MEASURED",
    "PARAMS_FILE",
    "RECORDED",
    "REQUIRED",
    "SCHEDULE",
    "SKIPPED_SUB_STUDIES",
    "SSH_MODES",
    "TOPOLOGIES",
    "Key",
    "Kind",
    "LaunchOptions",
    "Rule",
    "StudyParams",
    "check_run_id",
    "declared",
    "expand_sweep",
    "fingerprint",
    "load_yaml",
    "machine_cores",
    "markdown",
    "optional",
    "params_with_settings",
    "parse_settings",
    "parse_assignment",
    "settings_text",
    "with_settings",
]
