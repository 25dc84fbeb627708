"""What a crawl did, and what it did not do and why, per host: `tansuo report` and
GET /api/report.

`tansuo frontier` shows the frontier as it is now (queues, blocks, next fetches); this
is the account an operator reads after a crawl: per host, pages fetched by status,
URLs skipped (robots.txt, the host budget), URLs failed and why, the crawl limits that
cut something there (depth, traps, caps, --max-pages), and whether the host was given
up; then the URLs themselves that went wrong (the ones that answered 4xx/5xx or
nothing, with the pages that link to them) and the files fetched but not indexed.

The figures the crawl's own lines show (``fetched``, ``errors``, ``documents``) are the
totals here, read from the same counters (services/scheduler/frontier.py,
``counts_as_error``), so the two always agree. The per-host rows count URLs as they
stand: in a one-pass crawl they add up to the totals; a continuous crawl's totals count
every recrawl again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from services.common.domain.frontier_types import UrlInfo
from services.common.ports import FrontierState, LinkGraph

_GIVEN_UP = "given up: "
# URLs listed by name, and pages named as linking to each.
PROBLEMS_LISTED = 200
REFERRERS_LISTED = 5
# Why a fetched file was not indexed, by the frontier's note.
NOT_INDEXED = {"not_html": "not HTML", "noindex": "noindex (the page asks not to be indexed)",
               "document": "document skipped",
               "too_large": "larger than the page size cap", "private_address": "on a private address"}  # fmt: skip


def crawl_report(
    state: FrontierState,
    links: LinkGraph | None = None,
    documents: int | None = None,
    problems: int = PROBLEMS_LISTED,
) -> dict[str, Any]:
    """Per host, busiest first, totals over all hosts, and the URLs that went wrong.
    ``links``: the link graph, to name the pages that link to a broken URL;
    ``documents``: the documents in the search index, shown beside the totals."""
    hosts: dict[str, dict[str, Any]] = defaultdict(_empty_host)
    for host, kind, url_state, note, status, n in state.url_breakdown():
        _count_url(hosts[host], kind, url_state, note, status, n)
    counters = state.counters()
    for name, n in counters.items():
        limit, at, host = name.partition("@")
        if at and limit.startswith("limit:"):
            hosts[host]["limits"][limit.removeprefix("limit:")] += n
        elif at and limit.startswith("document:"):
            hosts[host]["extraction"][limit.removeprefix("document:")] += n
    for info in state.hosts(limit=-1):
        if info.block_reason.startswith(_GIVEN_UP):
            hosts[info.host]["given_up"] = info.block_reason.removeprefix(_GIVEN_UP)
    rows = [{"host": host, **_plain(row)} for host, row in hosts.items()]
    rows.sort(key=lambda r: (-r["fetched"], r["host"]))
    totals = _totals(rows)
    # The crawl's own figures: the counters every view of the crawl reads.
    totals["fetched"] = counters.get("fetched", totals["fetched"])
    totals["errors"] = counters.get("errors", totals["errors"])
    totals["documents"] = documents
    # A missing sitemap.xml is the usual answer to the guess made when robots.txt names none.
    listed = [u for u in state.attention_urls(-1) if not (u.kind == "sitemap" and u.status in (404, 410))]
    return {
        "hosts": rows,
        "totals": totals,
        "problems": _problems(listed[:problems] if problems >= 0 else listed, links),
        "problems_total": len(listed),
    }


def _empty_host() -> dict[str, Any]:
    return {
        "fetched": 0,
        "errors": 0,
        "by_status": defaultdict(int),
        "skipped": defaultdict(int),
        "failed": defaultdict(int),
        "not_indexed": defaultdict(int),
        "limits": defaultdict(int),
        "sitemaps": defaultdict(int),
        # Documents (PDF, Office...) by what extraction made of them: extracted, cut (a
        # page or character cap), or the reason one was skipped (encrypted, malformed...).
        "extraction": defaultdict(int),
        "queued": 0,
        "in_flight": 0,
        "given_up": "",
    }


def why_not_indexed(note: str) -> str:
    """The report's words for a fetched page the index did not take, from its note."""
    name, _, detail = note.partition(":")
    why = NOT_INDEXED.get(name, name)
    return f"{why} ({detail})" if detail else why


def _count_url(row: dict[str, Any], kind: str, url_state: str, note: str, status: int | None, n: int) -> None:
    if kind == "sitemap" and url_state in ("done", "failed"):
        row["sitemaps"][str(status) if status else "failed"] += n
    elif url_state == "done":
        row["fetched"] += n
        row["by_status"][str(status) if status is not None else "none"] += n
        if not status or status >= 400:
            row["errors"] += n
        elif note and note not in ("redirect", "not_modified"):
            row["not_indexed"][why_not_indexed(note)] += n
    elif url_state == "excluded":
        row["skipped"][note or "excluded"] += n
    elif url_state == "failed":
        reason = note.removeprefix("failed: ") or "failed"
        row["failed"][reason] += n
        if not reason.startswith("host_"):  # a URL never tried because its host was given up
            row["errors"] += n
    elif url_state == "queued":
        row["queued"] += n
    elif url_state == "leased":
        row["in_flight"] += n


def _problems(urls: Sequence[UrlInfo], links: LinkGraph | None) -> list[dict[str, Any]]:
    """Each URL that went wrong: what happened, and for the broken ones, who links there."""
    broken = [u.url for u in urls if _is_error(u)]
    referrers = _referrers(links, broken) if links is not None and broken else {}
    out = []
    for u in urls:
        pages = referrers.get(u.url, [])
        out.append({
            "url": u.url,
            "host": u.host,
            "kind": "error" if _is_error(u) else "not_indexed",
            "status": u.status,
            "why": _why(u),
            "linked_from": pages[:REFERRERS_LISTED],
            "linked_from_more": max(0, len(pages) - REFERRERS_LISTED),
        })  # fmt: skip
    return out


def _is_error(u: UrlInfo) -> bool:
    return u.state == "failed" or not u.status or u.status >= 400


def _why(u: UrlInfo) -> str:
    if u.state == "failed":
        return u.note.removeprefix("failed: ") or "failed"
    if not u.status:
        return u.note or "no answer"
    if u.status >= 400:
        return f"HTTP {u.status}"
    return why_not_indexed(u.note)


def _referrers(links: LinkGraph, targets: Sequence[str]) -> dict[str, list[str]]:
    """The pages (sorted) that link to each of ``targets``, from the ranker's link graph:
    one pass over every edge, for a report only."""
    ids = links.url_ids(list(targets))
    known = {i: url for url, i in zip(targets, ids, strict=True) if i is not None}
    if not known:
        return {}
    wanted = np.fromiter(known, dtype=np.int64)
    pairs: list[tuple[int, int]] = []
    for chunk in links.edge_chunks():
        hit = np.isin(chunk.dst, wanted)
        if hit.any():
            pairs += zip(chunk.src[hit].tolist(), chunk.dst[hit].tolist(), strict=True)
    names = dict(zip(sorted({s for s, _ in pairs}), links.urls(sorted({s for s, _ in pairs})), strict=True))
    found: dict[str, list[str]] = defaultdict(list)
    for src, dst in pairs:
        found[known[dst]].append(names[src])
    return {url: sorted(pages) for url, pages in found.items()}


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """defaultdicts as sorted plain dicts, for JSON and stable output."""
    return {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in row.items()}


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, Any] = {"hosts": len(rows), "fetched": 0, "errors": 0, "queued": 0, "in_flight": 0,
                              "skipped": defaultdict(int), "failed": defaultdict(int), "not_indexed": defaultdict(int),
                              "limits": defaultdict(int), "extraction": defaultdict(int),
                              "hosts_given_up": sum(1 for r in rows if r["given_up"])}  # fmt: skip
    for row in rows:
        for key in ("fetched", "errors", "queued", "in_flight"):
            totals[key] += row[key]
        for key in ("skipped", "failed", "not_indexed", "limits", "extraction"):
            for name, n in row[key].items():
                totals[key][name] += n
    return _plain(totals)
