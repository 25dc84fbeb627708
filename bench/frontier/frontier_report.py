"""The frontier sections of docs/benchmarks.md: scheduling rate, seen-set cost, partitions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FrontierResults:
    queued: int
    hosts: int
    tansuo_per_s: float
    naive_per_s: float
    admitted_per_s: float
    counts_s: float
    group_by_s: float
    seen: dict[str, float]
    partitions: list[dict[str, Any]]


def _table(rows: list[dict[str, Any]]) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(row[h]) for h in header) + " |" for row in rows]
    return "\n".join(lines)


def render_frontier(r: FrontierResults) -> str:
    seen = r.seen
    return f"""
### Frontier: URLs scheduled per second

{r.queued:,} URLs queued over {r.hosts:,} hosts (robots.txt known, delay 0) in the SQLite
frontier. One *scheduled* URL is a lease (politeness checked, host clock started,
persisted) plus its completion (recrawl interval computed, persisted), through
`Frontier.dispatch` and `Frontier.complete` with an injected clock. Baseline: the least a
scheduler can do in memory, a deque per host and a heap of host due times, leasing only.

| | URLs/s |
|---|---|
| Tansuo frontier (SQLite, durable) | {r.tansuo_per_s:,.0f} |
| in-memory heap (baseline) | {r.naive_per_s:,.0f} |
| **ratio** | **{r.tansuo_per_s / r.naive_per_s:.4f}** |

Admitting the {r.queued:,} URLs (dedup, scope bookkeeping, host budgets) ran at
{r.admitted_per_s:,.0f} URLs/s. The durable frontier is about {r.naive_per_s / r.tansuo_per_s:,.0f} times slower than a
bare heap, and still schedules far more URLs per second than a crawl can fetch politely
(at a 1 s delay, {r.hosts:,} hosts give at most {r.hosts:,} fetches per second).

### Frontier: counting a large frontier

`counts()` answers "how many URLs queued, due, in flight, done?" for the progress view
(five times a second during `tansuo crawl`), `tansuo frontier` and the scheduler's
gauges. With {r.queued:,} URLs queued, median of repeated calls, against counting the
URL table by state (what it did before it kept per-state counts):

| | ms per call |
|---|---|
| `counts()` (per-state counts kept by triggers) | {r.counts_s * 1000:.2f} |
| `GROUP BY state` over the URL table (baseline) | {r.group_by_s * 1000:.1f} |
| **ratio** | **{r.counts_s / r.group_by_s:.4f}** |

### Frontier: memory per seen URL

{seen['urls']:,.0f} distinct URLs admitted to the SQLite frontier (the seen-set is its
primary key, on disk; memory is bounded by SQLite's page cache, not by the number of
URLs). Baseline: a Python `set` of the same URL strings, all in RAM.

| | bytes per URL |
|---|---|
| SQLite frontier, on disk (URL row and indexes) | {seen['sqlite_disk_bytes_per_url']:.0f} |
| SQLite frontier, process memory growth | {seen['sqlite_rss_growth_bytes_per_url']:.1f} |
| Python set, RAM (baseline) | {seen['python_set_ram_bytes_per_url']:.0f} |

At this rate 100M URLs take about {seen['sqlite_disk_bytes_per_url'] * 1e8 / 1e9:.0f} GB of disk and no more memory
than 10M. The Redis frontier of cluster mode keeps every URL record in RAM: its bytes
per queued URL are measured beside SQLite in "The Redis frontier against SQLite" below.

### Host partitioning

Fetch jobs are keyed by host, so one host's jobs stay in one Kafka partition; measured
with kafka-python's own partitioner (murmur2) on 1,000,000 URLs over 10,000 hosts whose
sizes follow a power law (`bench/frontier/partition_spread.py`), against keying by URL (the
balance baseline, which would scatter a host over every consumer). URL counts per
partition are uneven when keyed by host, but the fetch topic never holds a host's
backlog: the frontier does, and it leases at most one job per host at a time under a
delay, so a partition's load follows its number of hosts, whose spread is the last
column.

{_table(r.partitions)}
"""
