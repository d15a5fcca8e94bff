"""The analysis: tables, intervals, figures, topology drawings, reference numbers, prose.

It reads results.csv, environment.json and data/reference, never starts a
process and never imports the harness.
"""
