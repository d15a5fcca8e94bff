"""The harness: launch the modes, fire the load, sample the CPU, write one row per run.

processes -> tools -> proxies/modes -> loadgen, cpumonitor -> run -> study.
It never plots; the analysis reads what it writes (results.csv).
"""
