"""The harness: launch the modes, fire the load, sample the CPU, write one row per run.

Three concerns, one folder each (docs/layout.md):
- launch/: what runs and where: child processes, the tools, the proxies, a mode's app
  behind them; two network namespaces or two hosts over ssh;
- measure/: one measured window: the quiet gate, the load generators, the CPU monitor,
  the response checks, the row (run.py);
- here: a study as a whole: its params' preflight, the blocks and their order, how many
  (design), resuming, the notebook run, the machine's record, the C# tour.
launch -> measure -> study; the machine's record (environment.py: each tool's version) is read
by measure/ too, so it imports launch/ only (tests/test_import_rule.py). It never plots; the
analysis reads what it writes (results.csv).
"""
