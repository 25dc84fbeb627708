"""`tansuo report` for people: the totals, a row per host, then what went wrong where."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Problems printed; `tansuo report --json` has every one the report lists.
PROBLEMS_PRINTED = 50


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "-"


def print_report(result: dict[str, Any], hosts: int, console: Console | None = None) -> None:
    console = console or Console()
    t = result["totals"]
    documents = "" if t.get("documents") is None else f", {t['documents']} documents in the index"
    console.print(
        f"{t['hosts']} hosts: fetched [bold]{t['fetched']}[/], errors {t['errors']}{documents}, queued {t['queued']}, "
        f"in flight {t['in_flight']}, given up {t['hosts_given_up']}; skipped: {escape(_pairs(t['skipped']))}; "
        f"failed: {escape(_pairs(t['failed']))}; not indexed: {escape(_pairs(t['not_indexed']))}; "
        f"limits hit: {escape(_pairs(t['limits']))}; documents: {escape(_pairs(t.get('extraction', {})))}"
    )
    table = Table("host", "fetched (by status)", "errors", "not indexed", "skipped", "failed", "limits hit",
                  "documents", "given up", title="per host")  # fmt: skip
    for row in result["hosts"][:hosts]:
        table.add_row(escape(row["host"]), f"{row['fetched']} ({_pairs(row['by_status'])})", str(row["errors"]),
                      escape(_pairs(row["not_indexed"])), escape(_pairs(row["skipped"])), escape(_pairs(row["failed"])),
                      escape(_pairs(row["limits"])), escape(_pairs(row.get("extraction", {}))),
                      escape(row["given_up"] or "-"))  # fmt: skip
    console.print(table)
    print_problems(result, console)


def print_problems(result: dict[str, Any], console: Console) -> None:
    """One URL a line, never folded, so that it can be copied or grepped whole."""
    problems = result.get("problems", [])
    if not problems:
        return
    errors = [p for p in problems if p["kind"] == "error"]
    skipped = [p for p in problems if p["kind"] != "error"]
    if errors:
        console.print("\n[bold]URLs that answered an error or nothing[/], and the pages linking to them:")
        for p in errors[:PROBLEMS_PRINTED]:
            console.print(f"  {escape(p['why'])}  {escape(p['url'])}", soft_wrap=True)
            more = f" and {p['linked_from_more']} more" if p["linked_from_more"] else ""
            if p["linked_from"]:
                console.print(f"      linked from {escape(', '.join(p['linked_from']))}{more}", soft_wrap=True)
    if skipped:
        console.print("\n[bold]fetched, not indexed[/]:")
        for p in skipped[:PROBLEMS_PRINTED]:
            console.print(f"  {escape(p['url'])}  {escape(p['why'])}", soft_wrap=True)
    shown = min(len(errors), PROBLEMS_PRINTED) + min(len(skipped), PROBLEMS_PRINTED)
    if result.get("problems_total", 0) > shown:
        console.print(f"{result['problems_total'] - shown} more: tansuo report --json lists them")
