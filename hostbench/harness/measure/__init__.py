"""One measured window on a launched mode: the quiet-machine gate (quiet.py), the load
generators (loadgen.py), the CPU readings (cpumonitor.py), the response checks (checks.py),
whether the load generator limited it (limits.py), the server's progress (progress.py), and
the row it writes (run.py); the compared modes sharing one window in slices (slices.py):
interleave.py, one k6 run switching target (its script, k6_interleaved.py); alternate.py,
short runs of the other tools, one per slice."""
