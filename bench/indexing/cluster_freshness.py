"""Issue 40's figure: in a many-host cluster crawl, how long from a page's fetch to its
being searchable, and how many requests the indexer sends Elasticsearch a page.

    python -m bench.indexing.cluster_freshness            # print the figures (a few minutes)
    python -m bench.indexing.cluster_freshness --write    # and write their block in docs/benchmarks.md

The run is the issue's: ``--hosts`` loopback hosts of ``--pages`` pages each
(``bench/sites/many_host_site.py``), two schedulers, two crawlers, an indexer and a ranker,
each its own process on the test servers (``bench/cluster/cluster_servers.py``), with
the product's commit interval; one scheduler and one crawler are SIGKILLed once a third
of the pages are fetched, as ``tests/e2e/test_many_host_cluster.py`` does.

``--index-share 0.33`` slows the Elasticsearch-API server to a third of the time, the
issue's other case: it is SIGSTOPped and SIGCONTed every 0.1 s (``IndexThrottle``).

Fetch to searchable is read from outside the services (``bench/indexing/freshness_watch.py``):
each page's first request in its site server's log, and the answer of the first search
that found the page in the index, searched every 0.1 s. The indexer's requests come
from its own ``tansuo_index_requests_total`` (every HTTP request its client sent,
start-up and readiness pings included) over its ``tansuo_pages_indexed_total``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.cluster.cluster_servers import running_servers
from bench.cluster.cluster_services import bench_env, changed_settings, check_alive, start_all
from bench.indexing.freshness_watch import (
    Freshness,
    IndexWatch,
    RoundTrips,
    fetches,
    freshness,
    round_trips,
)
from bench.measure.machine import Machine, describe
from bench.measure.marked_block import MarkedBlock
from bench.measure.process_cpu import cpu_seconds
from bench.sites.loopback_hosts import LoopbackHosts
from bench.sites.many_host_site import loopback_addresses, page_path, paragraphs_of, write_site
from services.cli.demo_site import build_demo_site, default_cache
from services.common.adapters.redis.frontier import RedisFrontierState
from tests.cluster import Cluster

REPO = Path(__file__).resolve().parents[2]
BLOCK = MarkedBlock("<!-- cluster-freshness:start (bench/indexing/cluster_freshness.py --write) -->",
                    "<!-- cluster-freshness:end -->")  # fmt: skip
# A run with --index-share below 1 has a block of its own, after the main one.
SLOW_BLOCK = MarkedBlock("<!-- cluster-freshness-slow:start (bench/indexing/cluster_freshness.py --index-share S --write) -->",
                         "<!-- cluster-freshness-slow:end -->")  # fmt: skip
PARTITIONS = 4  # of every topic: two frontier shards for each scheduler


@dataclass(frozen=True)
class Run:
    started: datetime
    machine: Machine
    hosts: int
    pages_per_host: int
    delay_s: float
    settings: dict[str, str]
    killed_after: int  # pages fetched when one scheduler and one crawler were killed
    all_fetched_s: float  # seeding to the last page request
    all_searchable_s: float  # seeding to the last page's being found
    fresh: Freshness
    trips: RoundTrips
    indexer_cpu_s: float
    timeline: list[tuple[float, int, int]]  # (seconds after seeding, fetched, searchable)
    load: tuple[float, float]
    index_share: float  # of the time the Elasticsearch-API server was let run


class IndexThrottle:
    """Lets a process run ``share`` of every ``period_s`` and stops it for the rest."""

    def __init__(self, pid: int, share: float, period_s: float = 0.1) -> None:
        self._pid, self._share, self._period_s = pid, share, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="index-throttle", daemon=True)

    def __enter__(self) -> IndexThrottle:
        if self._share < 1:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        os.kill(self._pid, signal.SIGCONT)

    def _run(self) -> None:
        while not self._stop.is_set():
            os.kill(self._pid, signal.SIGCONT)
            if self._stop.wait(self._share * self._period_s):
                return
            os.kill(self._pid, signal.SIGSTOP)
            self._stop.wait((1 - self._share) * self._period_s)


def run(args: argparse.Namespace) -> Run:
    started, load0 = datetime.now(UTC), os.getloadavg()[0]
    build_demo_site(args.site)
    paragraphs = paragraphs_of(args.site)
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tansuo-freshness-", dir=args.workdir)))
        hosts = stack.enter_context(LoopbackHosts(work / "site", loopback_addresses(args.hosts)))
        write_site(work / "site", hosts.addresses, hosts.port, args.pages, paragraphs)
        pages = {f"http://{a}:{hosts.port}{page_path(n)}" for a in hosts.addresses for n in range(args.pages)}
        servers = stack.enter_context(running_servers(work / "servers"))
        env = bench_env(servers, work / "cluster") | {
            "TANSUO_BUS_PARTITIONS": str(PARTITIONS),
            "TANSUO_FRONTIER_HOST_DELAY_S": str(args.delay),
            "TANSUO_FRONTIER_LEASE_TIMEOUT_S": "10",
            "TANSUO_FRONTIER_SITEMAPS": "false",
        }
        (work / "logs").mkdir()
        cluster = Cluster(env, work / "logs")
        stack.callback(cluster.stop)
        start_all(cluster, ["scheduler0", "scheduler1", "crawler0", "crawler1", "indexer", "ranker"])
        watch = stack.enter_context(IndexWatch(env["TANSUO_INDEX"], pages))
        assert servers.es.proc is not None
        stack.enter_context(IndexThrottle(servers.es.proc.pid, args.index_share))
        hosts.clear_requests()
        seeded = time.monotonic()
        subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *hosts.front_pages()], env=env, cwd=REPO,
                       check=True, capture_output=True)  # fmt: skip
        frontier = RedisFrontierState.from_url(env["TANSUO_STATE"])
        _wait(cluster, lambda: frontier.counts(time.time()).fetched >= len(pages) // 3, args.timeout)
        for victim in ("scheduler1", "crawler1"):
            proc = cluster.procs.pop(victim)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        killed_after = frontier.counts(time.time()).fetched
        _wait(cluster, lambda: len(watch.first_seen) >= len(pages), args.timeout)
        indexer = cluster.procs["indexer"]
        trips = round_trips(indexer.health_port)  # type: ignore[attr-defined]
        indexer_cpu = cpu_seconds(indexer.pid)
        fetched = {u: t for u, t in fetches(hosts.requests(), hosts.port, since=seeded).items() if u in pages}
        seen = dict(watch.first_seen)
    fresh = freshness(fetched, seen, pages)
    return Run(
        started, describe(), args.hosts, args.pages, args.delay,
        {k: v for k, v in changed_settings(env).items()}, killed_after,
        max((t[-1] for t in fetched.values()), default=seeded) - seeded,
        max(seen.values(), default=seeded) - seeded, fresh, trips, indexer_cpu,
        _timeline({u: t[0] for u, t in fetched.items()}, seen, seeded), (load0, os.getloadavg()[0]),
        args.index_share,
    )  # fmt: skip


def _wait(cluster: Cluster, done: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        check_alive(cluster)
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:.0f} s\n{cluster.own_logs()}")
        time.sleep(0.2)


def _timeline(
    fetched: dict[str, float], seen: dict[str, float], since: float, step_s: float = 5.0
) -> list[tuple[float, int, int]]:
    """Pages fetched and pages searchable every ``step_s`` after seeding, to the end."""
    end = max([*fetched.values(), *seen.values(), since]) - since
    points, t = [], step_s
    while t < end + step_s:
        points.append(
            (t, sum(1 for v in fetched.values() if v - since <= t), sum(1 for v in seen.values() if v - since <= t))
        )
        t += step_s
    return points


def render(r: Run) -> str:
    m, f, t = r.machine, r.fresh, r.trips
    pages = r.hosts * r.pages_per_host
    settings = ", ".join(f"`{k}={v}`" for k, v in sorted(r.settings.items())) or "none"
    by_endpoint = ", ".join(f"{e} {n:.0f}" for e, n in sorted(t.requests.items()))
    timeline = "; ".join(f"{s:.0f} s: {a}/{b}" for s, a, b in r.timeline)
    return "\n".join([
        ("## Fresh within seconds: fetch to searchable in a cluster crawl (issue 40)\n" if r.index_share >= 1 else
         f"### The same crawl, the index server let run {r.index_share:.0%} of the time\n"),
        f"{r.started:%Y-%m-%d %H:%M} UTC, Tansuo `{m.commit}`, {m.cores} cores ({m.cpu}), {m.ram_gib:g} GiB, "
        f"Python {m.python}. Load average (1 min): {r.load[0]:.1f} at the start, {r.load[1]:.1f} at the end"
        + (" (other work shared the machine)." if max(r.load) > 0.5 * m.cores else ".") + "\n",
        f"{r.hosts} loopback hosts × {r.pages_per_host} pages ({pages:,} pages, `bench/sites/many_host_site.py`), "
        f"delay {r.delay_s:g} s; two schedulers, two crawlers, indexer and ranker each their own process on Redis 7, "
        f"Tansu, SeaweedFS and noida-db{_throttled(r.index_share)}, with {settings} (the commit interval is the "
        "product's 1 s). One scheduler "
        f"and one crawler were SIGKILLed after {r.killed_after:,} pages were fetched. "
        "`python -m bench.indexing.cluster_freshness`: fetch time from the site servers' request logs (a page's "
        "last fetch before it was found: one whose crawler was killed before publishing it is fetched again "
        f"once its lease expires, {f.refetched} pages here), searchable time from a search of the index every "
        "0.1 s; round trips from the indexer's own /metrics.\n",
        "| pages | all fetched, s after seeding | all searchable, s | fetch to searchable p50 s | p99 s | max s "
        "| never found | indexer requests to Elasticsearch a page | indexer CPU ms a page |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {len(f.latencies):,} | {r.all_fetched_s:.1f} | {r.all_searchable_s:.1f} | **{f.p50:.2f}** | **{f.p99:.2f}** "
        f"| {f.worst:.2f} | {f.missing} | **{t.per_page():.3f}** ({t.total:.0f} for {t.pages:.0f}) "
        f"| {r.indexer_cpu_s / max(t.pages, 1) * 1000:.1f} |",
        "",
        f"Requests by endpoint: {by_endpoint}. Fetched/searchable pages every 5 s after seeding: {timeline}.",
    ]) + "\n"  # fmt: skip


def _throttled(share: float) -> str:
    if share >= 1:
        return ""
    return f" (noida-db let run {share:.0%} of the time: SIGSTOP and SIGCONT every 0.1 s)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.indexing.cluster_freshness",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--hosts", type=int, default=100, help="loopback hosts, from 127.0.0.2")
    parser.add_argument("--pages", type=int, default=20, help="pages a host, its front page included")
    parser.add_argument("--delay", type=float, default=0.2, help="per-host delay, seconds")
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site",
                        help="the demo site the text comes from (built there if missing)")  # fmt: skip
    parser.add_argument("--workdir", type=Path, default=None, help="where the site, servers and logs go")
    parser.add_argument("--timeout", type=float, default=600, help="seconds each wait may take")
    parser.add_argument("--index-share", type=float, default=1.0,
                        help="share of the time the Elasticsearch-API server may run (0.33: a third)")  # fmt: skip
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: every process is stopped by PID
    result = run(args)
    print(result.fresh.describe(), "|", result.trips.describe(), file=sys.stderr)
    (BLOCK if args.index_share >= 1 else SLOW_BLOCK).publish(render(result), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
