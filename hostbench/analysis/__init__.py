"""The analysis: tables, intervals, figures, topology drawings, reference numbers, prose.

It reads results.csv, environment.json and each study's reference/, never starts a
process and never imports the harness.
"""
