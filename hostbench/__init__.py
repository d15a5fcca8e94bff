"""hostbench: re-run the JCSI 2018 comparison of ASP.NET Core hosting models.

Data flows one way: params YAML -> Study -> (HostingMode, LoadGenerator,
CpuMonitor) per run -> one tidy row per run in results.csv -> notebooks.
"""

__version__ = "0.1.0"
