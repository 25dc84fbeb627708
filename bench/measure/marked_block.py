"""A block of docs/benchmarks.md that one benchmark owns, between two HTML comments.

Benchmarks that take many minutes run on their own (the load benchmark, the cluster
parity run); each writes only its block, and ``python -m bench.run`` keeps every
block when it rewrites the rest of the file, so no run has to repeat another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class MarkedBlock:
    start: str  # the opening comment, naming the command that writes the block
    end: str
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", re.compile(re.escape(self.start) + r".*?" + re.escape(self.end) + r"\n?", re.S))

    def extract(self, text: str) -> str:
        """The block with its markers, or "" when the text has none."""
        found = self._pattern.search(text)
        return found.group(0) if found else ""

    def publish(self, section: str, write: bool) -> None:
        """Print ``section`` and, with ``write``, put it in its block of docs/benchmarks.md:
        what each benchmark's ``--write`` does."""
        print(section)
        if write:
            self.write(Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md", section)

    def write(self, path: Path, section: str) -> None:
        """Put ``section`` between the markers in ``path``, replacing an earlier block
        or appending one."""
        block = f"{self.start}\n{section.rstrip()}\n{self.end}\n"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if self._pattern.search(text):
            text = self._pattern.sub(lambda _: block, text)
        else:
            text = text.rstrip() + "\n\n" + block
        path.write_text(text, encoding="utf-8")
