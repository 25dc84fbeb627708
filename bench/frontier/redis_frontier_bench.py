"""The Redis frontier against the SQLite one, in one run (issue 13): URLs admitted and
scheduled per second, and Redis memory per queued URL, on one Redis and on a Redis
Cluster of three primaries.

    python -m bench.frontier.redis_frontier_bench            # print the figures (about 5 minutes)
    python -m bench.frontier.redis_frontier_bench --write    # and write their block in docs/benchmarks.md
    python -m bench.run --redis-frontier            # the same, with --write

What it does, for each backend in turns (SQLite file, one Redis 7, a three-primary
Redis Cluster, each started here from Debian's ``redis-server`` as the tests start
them; a fresh frontier every round):

1. *Admitted*: ``--urls`` URLs over ``--hosts`` hosts (robots.txt known, delay 0) offered
   through ``Frontier.offer_links``, the scheduler's own path, as pages of 50 links to
   their own host: canonicalisation, scope, the robots.txt check on the batch's host
   (read once a batch), then ``add_urls``.
2. *Bytes per queued URL*: ``MEMORY USAGE … SAMPLES 0`` of every key of the frontier
   (on every node of the cluster), over the URLs queued; for SQLite, its files on disk.
3. *Scheduled*: ``--cycles`` URLs leased and completed through ``Frontier.dispatch``
   (512 at a time) and ``Frontier.complete``, with an injected clock, as
   bench/frontier/frontier_bench.py measures the SQLite frontier.
4. *Bytes per fetched URL*: a fifth of the URLs over a fifth of the hosts, every one of
   them leased and completed (their records then hold a content hash, an ETag and a
   Last-Modified, and they wait in the recrawl index), on a frontier of their own.
5. The same memory measure with big hosts (``--big-hosts`` hosts holding the same number
   of URLs), where Redis leaves its compact encodings past 128 URLs a host.

The Redis frontier does a network round trip per call where SQLite does a function
call, so the figure that matters is the ratio, in one run on one machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.frontier import redis_frontier_report
from bench.measure.machine import Machine, describe
from services.common.adapters.redis.connection import connect
from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.frontier_types import HostUpdate
from services.common.domain.messages import LinkBatch, Outlink, PageEvent
from services.common.ports import FrontierState
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope

LINKS_PER_PAGE = 50
BACKENDS = ("SQLite", "Redis", "Redis Cluster (3 primaries)")


@dataclass(frozen=True)
class Round:
    backend: str
    admitted_per_s: float
    scheduled_per_s: float
    bytes_per_url: float  # Redis memory (SQLite: disk) per queued URL
    big_host_bytes_per_url: float | None  # Redis only
    fetched_bytes_per_url: float | None  # Redis only: a URL fetched and waiting for its recrawl


@dataclass(frozen=True)
class FrontierRun:
    started: datetime
    duration_s: float
    machine: Machine
    load: tuple[float, float]
    urls: int
    hosts: int
    big_hosts: int
    cycles: int
    url_chars: float  # mean length of the URLs
    rounds: list[Round]

    def median(self, backend: str, field: str) -> float:
        return statistics.median(getattr(r, field) for r in self.rounds if r.backend == backend)


def _urls(n_urls: int, n_hosts: int, seed: int = 3) -> dict[str, list[str]]:
    """Each host's URLs, shaped like frontier_bench's: a random path segment and a number."""
    rng = random.Random(seed)
    by_host: dict[str, list[str]] = {}
    for i in range(n_urls):
        host = f"h{i % n_hosts}.example.cn"
        by_host.setdefault(host, []).append(f"http://{host}/p/{rng.randrange(10**9)}/{i}.html")
    return by_host


def _frontier(state: FrontierState, hosts: list[str]) -> Frontier:
    cfg = Settings(data_dir=Path("unused"), frontier_host_delay_s=0, frontier_sitemaps=False,
                   frontier_host_page_budget=10**9, frontier_max_in_flight=10**6)  # fmt: skip
    for host in hosts:
        state.ensure_host(host, "http", 0.0)
        state.update_host(host, HostUpdate(robots_state="ready", robots_txt=""), 0.0, release=False)
    return Frontier(cfg, state, Scope([]), clock=lambda: 1.0)


def admit(frontier: Frontier, by_host: dict[str, list[str]]) -> float:
    """Seconds to offer every URL, a page of 50 links to its own host at a time."""
    batches = [
        LinkBatch(source=f"http://{host}/", depth=0, links=[Outlink(u) for u in urls[start : start + LINKS_PER_PAGE]])
        for host, urls in by_host.items()
        for start in range(0, len(urls), LINKS_PER_PAGE)
    ]
    random.Random(5).shuffle(batches)  # pages of many hosts come in mixed, as from many crawlers
    started = time.perf_counter()
    for batch in batches:
        frontier.offer_links(batch)
    return time.perf_counter() - started


def schedule(frontier: Frontier, cycles: int) -> float:
    """URLs leased and completed per second; each outcome carries what a real one stores
    (a sha1 content hash, an ETag and a Last-Modified), so fetched URLs weigh what they do."""
    done, started = 0, time.perf_counter()
    while done < cycles:
        jobs = frontier.dispatch(limit=512)
        if not jobs:
            raise RuntimeError(f"the frontier ran dry after {done} URLs")
        for job in jobs:
            frontier.complete(PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, status=200,
                                        content_hash=hashlib.sha1(job.url.encode()).hexdigest(), fetched_at=1.0,
                                        etag='"5f2a-1b3c9"', last_modified="Wed, 21 Oct 2015 07:28:00 GMT"))  # fmt: skip
            done += 1
    return done / (time.perf_counter() - started)


def fetched_bytes(server_url: str, n_urls: int, n_hosts: int) -> float:
    """Redis memory per URL once every URL of a frontier is fetched: measured on a frontier
    of its own, since the first long record turns its host's hash from a listpack into a
    hash table, and so changes what its still-queued URLs cost too."""
    url = f"{server_url}?prefix=bench{uuid.uuid4().hex[:8]}"
    by_host = _urls(n_urls, n_hosts, seed=11)
    state = RedisFrontierState.from_url(url)
    frontier = _frontier(state, list(by_host))
    admit(frontier, by_host)
    schedule(frontier, n_urls)
    if state.counts(1.0).done != n_urls:
        raise RuntimeError("not every URL was fetched")
    state.close()
    return redis_bytes(url) / n_urls


def redis_bytes(url: str) -> int:
    """MEMORY USAGE of every key under the URL's prefix, on every node."""
    target = connect(url)
    client, total = target.client, 0
    nodes = [client.get_redis_connection(n) for n in client.get_primaries()] if target.cluster else [client]
    for node in nodes:
        for key in node.scan_iter(match=f"{target.prefix}*", count=5000):
            total += int(node.memory_usage(key, samples=0) or 0)
    client.close()
    return total


def one_round(backend: str, url: str | None, work: Path, args: argparse.Namespace) -> Round:
    by_host = _urls(args.urls, args.hosts)
    n = sum(map(len, by_host.values()))
    if url is None:
        path = work / f"frontier-{uuid.uuid4().hex[:8]}.sqlite3"
        state: FrontierState = SqliteFrontierState(path)
    else:
        url = f"{url}?prefix=bench{uuid.uuid4().hex[:8]}"
        state = RedisFrontierState.from_url(url)
    frontier = _frontier(state, list(by_host))
    admitted = n / admit(frontier, by_host)
    counted = state.counts(1.0).queued
    if counted != n:
        raise RuntimeError(f"{backend}: {counted} of {n} URLs queued")
    size = redis_bytes(url) if url else sum(f.stat().st_size for f in work.glob(f"{path.name}*"))
    scheduled = schedule(frontier, args.cycles)
    state.close()
    big = fetched = None
    if url is not None:
        fetched = fetched_bytes(url.rsplit("?", 1)[0], args.urls // 5, max(1, args.hosts // 5))
        # The same URLs over few hosts.
        big_url = url.rsplit("?", 1)[0] + f"?prefix=bench{uuid.uuid4().hex[:8]}"
        big_hosts = _urls(args.urls, args.big_hosts)
        state = RedisFrontierState.from_url(big_url)
        admit(_frontier(state, list(big_hosts)), big_hosts)
        big = redis_bytes(big_url) / state.counts(1.0).queued
        state.close()
    return Round(backend, admitted, scheduled, size / n, big, fetched)


@contextmanager
def servers(workdir: Path) -> Iterator[dict[str, str | None]]:
    """The three backends' URLs (None: SQLite), the Redis servers stopped by PID on the way out."""
    from tests.servers.redis_server import (  # the test install's servers
        RedisCluster,
        RedisServer,
    )

    with ExitStack() as stack:
        single = RedisServer(workdir / "redis")
        cluster = RedisCluster(workdir / "redis-cluster")
        for server in (single, cluster):
            stack.callback(server.stop)
            server.start()
        yield {BACKENDS[0]: None, BACKENDS[1]: single.url, BACKENDS[2]: cluster.url}


def run(args: argparse.Namespace, say: Callable[[str], None]) -> FrontierRun:
    started, t0, load0 = datetime.now(UTC), time.monotonic(), os.getloadavg()[0]
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="tansuo-redis-frontier-", dir=args.workdir) as tmp:
        work = Path(tmp)
        with servers(work) as urls:
            for n in range(args.rounds):
                for backend in BACKENDS:  # in turns, so a busy moment of the machine hits all three
                    rounds.append(one_round(backend, urls[backend], work, args))
                    r = rounds[-1]
                    say(f"round {n + 1} {backend}: admitted {r.admitted_per_s:,.0f}/s, scheduled "
                        f"{r.scheduled_per_s:,.0f}/s, {r.bytes_per_url:.0f} B/URL, big hosts {r.big_host_bytes_per_url}")  # fmt: skip
    chars = statistics.fmean(len(u) for urls in _urls(args.urls, args.hosts).values() for u in urls)
    return FrontierRun(started, time.monotonic() - t0, describe(), (load0, os.getloadavg()[0]), args.urls, args.hosts,
                       args.big_hosts, args.cycles, chars, rounds)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.frontier.redis_frontier_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--urls", type=int, default=50_000, help="URLs queued")
    parser.add_argument("--hosts", type=int, default=500, help="hosts they belong to")
    parser.add_argument("--big-hosts", type=int, default=10, help="hosts of the big-host memory measure")
    parser.add_argument("--cycles", type=int, default=10_000, help="URLs scheduled (leased and completed)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three backends, in turns")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: servers stopped by PID
    results = run(args, lambda line: print(line, file=sys.stderr, flush=True))
    redis_frontier_report.BLOCK.publish(redis_frontier_report.render(results), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
