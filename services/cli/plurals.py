"""English counts in the command line's lines: "1 result", "2 results"."""

from __future__ import annotations


def counted(n: int, one: str, many: str = "") -> str:
    """``n`` and the noun it counts; ``many`` defaults to ``one`` + "s"."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
