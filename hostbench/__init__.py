"""hostbench: re-run published benchmarks of ASP.NET Core hosting models.

Data flows one way: studies/<study>/params/<profile>.yaml -> harness (launch, load,
measure: one tidy row per run in results.csv) -> analysis (tables, intervals,
figures, prose) -> the study's notebook and report. catalog holds the facts
about modes and scenarios, programs declares what a mode starts (the test app, the Go
servers, the proxies); studies finds the study folders (studies/<id>/).
"""

__version__ = "0.2.0"
