"""Benchmarks: Tansuo timed side by side with a simple baseline in the same run.

Not tests. ``python -m bench.run`` records the ratios, with the machine they were
measured on, in docs/benchmarks.md.
"""
