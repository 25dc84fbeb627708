"""What a crawl did, and what it did not do and why, per host: `tansuo report` and
GET /api/report.

`tansuo frontier` shows the frontier as it is now (queues, blocks, next fetches); this
is the account an operator reads after a crawl: per host, pages fetched by status,
URLs skipped (robots.txt, the host budget), URLs failed and why, the crawl limits that
cut something there (depth, traps, caps), and whether the host was given up.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from services.common.ports import FrontierState

_GIVEN_UP = "given up: "


def crawl_report(state: FrontierState) -> dict[str, Any]:
    """Per host, busiest first, and totals over all hosts."""
    hosts: dict[str, dict[str, Any]] = defaultdict(_empty_host)
    for host, url_state, note, status, n in state.url_breakdown():
        _count_url(hosts[host], url_state, note, status, n)
    for name, n in state.counters().items():
        limit, at, host = name.partition("@")
        if at and limit.startswith("limit:"):
            hosts[host]["limits"][limit.removeprefix("limit:")] += n
        elif at and limit.startswith("document:"):
            hosts[host]["documents"][limit.removeprefix("document:")] += n
    for info in state.hosts(limit=-1):
        if info.block_reason.startswith(_GIVEN_UP):
            hosts[info.host]["given_up"] = info.block_reason.removeprefix(_GIVEN_UP)
    rows = [{"host": host, **_plain(row)} for host, row in hosts.items()]
    rows.sort(key=lambda r: (-r["fetched"], r["host"]))
    return {"hosts": rows, "totals": _totals(rows)}


def _empty_host() -> dict[str, Any]:
    return {
        "fetched": 0,
        "by_status": defaultdict(int),
        "skipped": defaultdict(int),
        "failed": defaultdict(int),
        "limits": defaultdict(int),
        # Documents (PDF, Office...) by what extraction made of them: extracted, cut (a
        # page or character cap), or the reason one was skipped (encrypted, malformed...).
        "documents": defaultdict(int),
        "queued": 0,
        "in_flight": 0,
        "given_up": "",
    }


def _count_url(row: dict[str, Any], url_state: str, note: str, status: int | None, n: int) -> None:
    if url_state == "done":
        row["fetched"] += n
        row["by_status"][str(status) if status is not None else "none"] += n
    elif url_state == "excluded":
        row["skipped"][note or "excluded"] += n
    elif url_state == "failed":
        row["failed"][note.removeprefix("failed: ") or "failed"] += n
    elif url_state == "queued":
        row["queued"] += n
    elif url_state == "leased":
        row["in_flight"] += n


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """defaultdicts as sorted plain dicts, for JSON and stable output."""
    return {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in row.items()}


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, Any] = {"hosts": len(rows), "fetched": 0, "queued": 0, "in_flight": 0,
                              "skipped": defaultdict(int), "failed": defaultdict(int), "limits": defaultdict(int),
                              "documents": defaultdict(int),
                              "hosts_given_up": sum(1 for r in rows if r["given_up"])}  # fmt: skip
    for row in rows:
        for key in ("fetched", "queued", "in_flight"):
            totals[key] += row[key]
        for key in ("skipped", "failed", "limits", "documents"):
            for name, n in row[key].items():
                totals[key][name] += n
    return _plain(totals)
