"""The load benchmark's section of docs/benchmarks.md.

bench/load_bench.py writes it between two markers, and bench/report.py keeps the block
when a full `python -m bench.run` rewrites the rest of the file, so the two runs,
25 and 6 minutes long, need not be repeated together.
"""

from __future__ import annotations

import re
from pathlib import Path

START = "<!-- load-bench:start (bench/load_bench.py --write) -->"
END = "<!-- load-bench:end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END) + r"\n?", re.S)


def extract(text: str) -> str:
    """The block with its markers, or "" when the file has none."""
    found = _BLOCK.search(text)
    return found.group(0) if found else ""


def write(path: Path, section: str) -> None:
    """Put ``section`` between the markers in ``path``, replacing an earlier block or
    appending one."""
    block = f"{START}\n{section.rstrip()}\n{END}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if _BLOCK.search(text):
        text = _BLOCK.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block
    path.write_text(text, encoding="utf-8")
