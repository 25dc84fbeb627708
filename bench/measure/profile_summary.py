"""The top of a py-spy profile (``py-spy record -f raw``): where the time of a process
went, by function (inclusive) and by source line (self), as markdown tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def _frame(raw: str) -> tuple[str, str]:
    """("function (file)", "function (file:line)") of one collapsed frame."""
    name, _, where = raw.partition(" (")
    where = where.rstrip(")")
    path, _, line = where.rpartition(":")
    short = "/".join(path.split("/")[-2:]) if path else where
    return f"{name} ({short})", f"{name} ({short}:{line})"


def summarise(raw_profile: Path, top: int = 15, within: str = "") -> str:
    """Shares of the samples whose stack has a frame named ``within`` (all samples when
    empty): py-spy samples every thread, and idle threads would otherwise dominate."""
    inclusive: Counter[str] = Counter()
    by_line: Counter[str] = Counter()
    total = 0
    for row in raw_profile.read_text(encoding="utf-8").splitlines():
        stack, _, count = row.rpartition(" ")
        if not stack or not count.isdigit() or (within and f";{within} (" not in f";{stack}"):
            continue
        n = int(count)
        total += n
        frames = [_frame(f) for f in stack.split(";") if f]
        for func in {f for f, _ in frames}:
            inclusive[func] += n
        by_line[frames[-1][1]] += n
    if not total:
        return "(empty profile)\n"

    def table(title: str, counts: Counter[str]) -> str:
        rows = [f"| {n / total * 100:.1f}% | `{name}` |" for name, n in counts.most_common(top)]
        return f"| {title} | where |\n|---|---|\n" + "\n".join(rows) + "\n"

    return (
        f"{total} samples{f' inside `{within}`' if within else ''}.\n\n"
        + table("share of samples (inclusive)", inclusive)
        + "\n"
        + table("share of samples (self, by line)", by_line)
    )
