"""The load benchmark's section of docs/benchmarks.md.

bench/serving/load_bench.py writes it between two markers, and bench/report.py keeps the block
when a full `python -m bench.run` rewrites the rest of the file, so the two runs,
25 and 6 minutes long, need not be repeated together.
"""

from __future__ import annotations

from bench.measure.marked_block import MarkedBlock

START = "<!-- load-bench:start (bench/serving/load_bench.py --write) -->"
END = "<!-- load-bench:end -->"
BLOCK = MarkedBlock(START, END)
extract = BLOCK.extract
write = BLOCK.write
# The slow-client levels (load_bench.py --slow-clients), a block of their own: they
# run against another revision too, and take a few minutes.
SLOW_BLOCK = MarkedBlock("<!-- load-slow-clients:start (bench/serving/load_bench.py --slow-clients --write) -->",
                         "<!-- load-slow-clients:end -->")  # fmt: skip
