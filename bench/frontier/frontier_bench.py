"""Frontier speed and memory: URLs scheduled per second with 1M queued over 10k hosts,
the cost of the seen-URL set and of counting the frontier, each side by side with a
baseline in the same run.

- Scheduling: Tansuo's Frontier (lease with politeness, complete with recrawl
  bookkeeping, all persisted) against a minimal in-memory scheduler (a deque per host
  and a heap of host due times) that does only the leasing.
- Seen set: bytes per URL of the SQLite frontier (disk; its memory is bounded by
  SQLite's page cache) against a Python set of the same URL strings (RAM).
"""

from __future__ import annotations

import heapq
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.frontier_types import HostUpdate, NewUrl
from services.common.domain.messages import PageEvent
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope


def _urls(n_urls: int, n_hosts: int, seed: int = 3) -> list[NewUrl]:
    rng = random.Random(seed)
    return [
        NewUrl(f"http://h{i % n_hosts}.example.cn/p/{rng.randrange(10**9)}/{i}.html", f"h{i % n_hosts}.example.cn", 1)
        for i in range(n_urls)
    ]


def _filled_frontier(path: Path, n_urls: int, n_hosts: int) -> tuple[Frontier, float]:
    cfg = Settings(data_dir=path.parent, frontier_host_delay_s=0, frontier_sitemaps=False,
                   frontier_host_page_budget=10**9, frontier_max_in_flight=10**6)  # fmt: skip
    state = SqliteFrontierState(path)
    for i in range(n_hosts):
        state.ensure_host(f"h{i}.example.cn", "http", 0.0)
        state.update_host(f"h{i}.example.cn", HostUpdate(robots_state="ready", robots_txt=""), 0.0, release=False)
    start = time.perf_counter()
    urls = _urls(n_urls, n_hosts)
    for i in range(0, n_urls, 20_000):
        state.add_urls(urls[i : i + 20_000], 0.0, host_budget=10**9)
    return Frontier(cfg, state, Scope([]), clock=lambda: 1.0), time.perf_counter() - start


def _median_s(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def counts_cost(state: SqliteFrontierState, now: float) -> dict[str, float]:
    """Seconds per ``counts()`` (the embedded progress view calls it 5 times a second),
    against the baseline of counting the URL table by state, as it did before it kept
    per-state counts."""
    scan = "SELECT state, COUNT(*) FROM urls GROUP BY state"
    return {
        "counts_s": _median_s(lambda: state.counts(now), 21),
        "group_by_s": _median_s(lambda: state._db.execute(scan).fetchall(), 5),
    }


def tansuo_schedule_rate(n_urls: int, n_hosts: int, cycles: int) -> tuple[float, float, dict[str, float]]:
    """(URLs scheduled and completed per second, admission rate, counts() cost) with
    n_urls queued."""
    with tempfile.TemporaryDirectory() as tmp:
        frontier, fill_s = _filled_frontier(Path(tmp) / "frontier.sqlite3", n_urls, n_hosts)
        counting = counts_cost(frontier.state, 1.0)  # type: ignore[arg-type]
        done = 0
        start = time.perf_counter()
        while done < cycles:
            for job in frontier.dispatch(limit=512):
                frontier.complete(PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, status=200,
                                            content_hash="h", fetched_at=1.0))  # fmt: skip
                done += 1
        return done / (time.perf_counter() - start), n_urls / fill_s, counting


def naive_schedule_rate(n_urls: int, n_hosts: int, cycles: int) -> float:
    """The least a scheduler can do: per-host deques and a heap of host due times."""
    queues: dict[str, deque[str]] = {}
    for u in _urls(n_urls, n_hosts):
        queues.setdefault(u.host, deque()).append(u.url)
    heap = [(0.0, h) for h in queues]
    heapq.heapify(heap)
    done, now = 0, 1.0
    start = time.perf_counter()
    while done < cycles and heap:
        due, host = heapq.heappop(heap)
        queues[host].popleft()
        done += 1
        if queues[host]:
            heapq.heappush(heap, (max(due, now), host))
    return done / (time.perf_counter() - start)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def seen_set_cost(n_urls: int) -> dict[str, float]:
    """Bytes per URL: SQLite frontier on disk and its process memory, and a Python set."""
    urls = _urls(n_urls, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frontier.sqlite3"
        state = SqliteFrontierState(path)
        for i in range(10_000):
            state.ensure_host(f"h{i}.example.cn", "http", 0.0)
        rss_before = _rss_bytes()
        for i in range(0, n_urls, 50_000):
            state.add_urls(urls[i : i + 50_000], 0.0, host_budget=10**9)
        rss_growth = _rss_bytes() - rss_before
        disk = sum(f.stat().st_size for f in Path(tmp).iterdir())
        state.close()
    strings = [u.url for u in urls]
    del urls
    before = _rss_bytes()
    seen = set(strings)
    set_bytes = _rss_bytes() - before + sum(sys.getsizeof(s) for s in strings)
    del seen
    return {
        "urls": n_urls,
        "sqlite_disk_bytes_per_url": disk / n_urls,
        "sqlite_rss_growth_bytes_per_url": max(rss_growth, 0) / n_urls,
        "python_set_ram_bytes_per_url": set_bytes / n_urls,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rate, admit, counting = tansuo_schedule_rate(n, 10_000, cycles=20_000)
    naive = naive_schedule_rate(n, 10_000, cycles=200_000)
    print({"queued": n, "tansuo_per_s": round(rate), "naive_per_s": round(naive), "ratio": round(rate / naive, 4),
           "admitted_per_s": round(admit), **counting})  # fmt: skip
    print(seen_set_cost(int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000))
