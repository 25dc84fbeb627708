"""Issue 17's "done when", measured: one site of a few thousand pages crawled in embedded
mode and in cluster mode, a crawler SIGKILLed a third of the way through the cluster crawl.

    python -m bench.cluster.cluster_parity            # print the figures (about 30 minutes on 2 cores)
    python -m bench.cluster.cluster_parity --write    # and write their block in docs/benchmarks.md

What it does, in order:

1. Builds (or reuses) the LibreOffice help site (``bench/sites/libreoffice_help_site.py``,
   about 2,590 pages) and serves it on one loopback port for both crawls, so both
   index the same URLs and one known-item set fits both.
2. ``tansuo crawl`` of it (embedded mode), then a known-item set generated from that
   index (``tansuo eval --generate``, seeded, a sample of pages) and its MRR@10.
3. The cluster: Redis, the Kafka-protocol broker, the S3 server and the
   Elasticsearch-API server started by the test suite's own classes, and scheduler,
   two crawlers, indexer and ranker each its own process, as the cluster e2e tests
   run them (``tests/cluster.py``). Once a third of the pages are fetched, one crawler
   is SIGKILLed; the other finishes the crawl.
4. From the moment the frontier settles (nothing queued, nothing in flight), it counts
   the documents of the Elasticsearch index without PageRank every 2 s, until every
   page is indexed and none is left, or ``--watch`` seconds pass; the pass mark is 0
   within ``--limit`` (60) seconds.
5. Repeated fetches in the site server's log (``bench/crawl/repeated_fetches.py`` says what
   counts), the cluster index's URLs against the embedded one's, and the MRR@10 of
   the cluster index on the same known-item set (pass mark: within 0.02).

Settings: the product's defaults, except a host delay of 0.05 s in both modes (the
default 1 s would make a 45-minute crawl) and, in the cluster, what the e2e tests set
for the test servers (``tests/cluster.py``): a 30 s lease timeout (default 10 minutes:
the killed crawler's URLs would hold the frontier that long) and the broker timings
Tansu needs. The ranker interval is the product's default (300 s) unless
``--ranker-interval`` says otherwise; the report names what ran.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.cluster import parity_report
from bench.cluster.cluster_servers import running_servers
from bench.cluster.cluster_services import (
    bench_env,
    changed_settings,
    check_alive,
    start_all,
)
from bench.crawl.repeated_fetches import Repeats, classify, leased_now, page_fetches
from bench.measure.machine import Machine, describe
from bench.pagerank import link_field_watch as watch
from bench.quality.known_items import Quality, embedded_env, evaluate, generate
from bench.sites.libreoffice_help_site import build_libreoffice_help_site
from services.cli.demo_site import default_cache
from services.cli.static_site_server import SiteServer
from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from tests.cluster import DELAY, Cluster

REPO = Path(__file__).resolve().parents[2]
SERVICES = ("scheduler", "crawler0", "crawler1", "extractor", "indexer", "ranker")


@dataclass(frozen=True)
class EmbeddedRun:
    docs: int
    unranked: int
    wall_s: float
    fetches: Repeats
    quality: Quality


@dataclass(frozen=True)
class ClusterRun:
    settings: dict[str, str]  # the TANSUO_ settings that differ from the product's defaults
    docs: int
    missing: tuple[str, ...]  # in the embedded index, not in the cluster's
    extra: tuple[str, ...]  # the other way round
    fetched_at_kill: int
    leased_at_kill: int
    crawl_s: float  # seeding to settling
    settled_after_kill_s: float
    samples: tuple[watch.Sample, ...]
    fetches: Repeats
    quality: Quality
    replaced: bool


@dataclass(frozen=True)
class ParityResults:
    started: datetime
    duration_s: float
    machine: Machine
    site_pages: int
    load: tuple[float, float]
    limit_s: float
    queries: int
    sample_pages: int
    embedded: EmbeddedRun
    cluster: ClusterRun


def _urls(settings: Settings) -> list[str]:
    return build_search_index(settings, read_only=True).urls()


def crawl_embedded(site: SiteServer, data: Path) -> tuple[int, int, float]:
    """``tansuo crawl`` of the site: (documents, documents without PageRank, wall seconds)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "crawl", site.url, "--data", str(data), "--delay", str(DELAY),
         "--allow-private-networks", "--no-progress"],
        env=embedded_env(), capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"tansuo crawl failed: {done.stderr[-3000:]}")
    wall = time.monotonic() - started
    index = build_search_index(Settings(data_dir=data), read_only=True)
    urls = index.urls()
    return len(urls), sum(1 for u in urls if not (index.get(u).pagerank > 0)), wall  # type: ignore[union-attr]


def _kill(cluster: Cluster, name: str) -> None:
    victim = cluster.procs.pop(name)
    victim.send_signal(signal.SIGKILL)
    victim.wait()


def crawl_cluster(site: SiteServer, work: Path, embedded_urls: list[str], args: argparse.Namespace,
                  judgments: Path) -> ClusterRun:  # fmt: skip
    expected = len(embedded_urls)
    with running_servers(work / "servers") as servers:
        env = bench_env(servers, work / "cluster")
        if args.ranker_interval:
            env["TANSUO_RANKER_INTERVAL_S"] = str(args.ranker_interval)
        (work / "logs").mkdir(parents=True, exist_ok=True)
        cluster = Cluster(env, work / "logs")
        try:
            start_all(cluster, SERVICES)
            since = time.time()
            subprocess.run([sys.executable, "-m", "services.cli.main", "seed", site.url], env=env, check=True,
                           capture_output=True)  # fmt: skip
            frontier = RedisFrontierState.from_url(env["TANSUO_STATE"])
            alive = lambda: check_alive(cluster)
            watch.wait_until_fetched(frontier, int(expected * args.kill_at), args.timeout, alive)
            _kill(cluster, "crawler0")
            killed = time.time()
            fetched_at_kill = frontier.counts(killed).fetched
            requested = {site.url.rstrip("/") + r.path for r in site.requests}
            leased = leased_now(frontier, set(embedded_urls) | requested)
            print(f"killed crawler0 after {fetched_at_kill} fetches, {len(leased)} URLs leased", file=sys.stderr)
            if args.replace:
                cluster.start("crawler2", "crawler")
            settled = watch.wait_until_settled(frontier, expected // 2, args.timeout, alive)
            print(f"frontier settled {settled - killed:.0f}s after the kill", file=sys.stderr)
            counter = watch.IndexCounter(env["TANSUO_INDEX"])
            samples = watch.watch_link_fields(counter, settled, expected, args.watch)
            counter.close()
            urls = _urls(Settings(index=env["TANSUO_INDEX"]))
            fetches = classify(page_fetches(site.requests, since), leased)
        finally:
            cluster.stop()
        # With the services stopped: the Elasticsearch-API server answers a query in
        # seconds here, and idle services polling beside it would only slow it more.
        quality = evaluate(judgments, env, None, work / "misses-cluster.tsv")
    return ClusterRun(
        settings=changed_settings(env), docs=len(urls), missing=tuple(sorted(set(embedded_urls) - set(urls))),
        extra=tuple(sorted(set(urls) - set(embedded_urls))), fetched_at_kill=fetched_at_kill,
        leased_at_kill=len(leased), crawl_s=settled - since, settled_after_kill_s=settled - killed,
        samples=tuple(samples), fetches=fetches, quality=quality, replaced=args.replace,
    )  # fmt: skip


def run(args: argparse.Namespace) -> ParityResults:
    started, t0, load0 = datetime.now(UTC), time.monotonic(), os.getloadavg()[0]
    site_pages = build_libreoffice_help_site(args.site)
    work = Path(tempfile.mkdtemp(prefix="tansuo-parity-", dir=args.workdir))
    site = SiteServer(args.site).start()
    try:
        print(f"site {site.url} ({site_pages} help pages); work in {work}", file=sys.stderr)
        docs, unranked, wall = crawl_embedded(site, work / "embedded")
        embedded_fetches = classify(page_fetches(site.requests))
        embedded_urls = _urls(Settings(data_dir=work / "embedded"))
        print(f"embedded: {docs} documents in {wall:.0f}s, {unranked} without PageRank", file=sys.stderr)
        judgments = work / "known-items.tsv"
        queries = generate(work / "embedded", judgments, args.sample_pages)
        quality = evaluate(judgments, embedded_env(), work / "embedded", work / "misses-embedded.tsv")
        print(f"embedded MRR@10 {quality.mrr:.4f} on {queries} queries", file=sys.stderr)
        embedded = EmbeddedRun(docs, unranked, wall, embedded_fetches, quality)
        cluster = crawl_cluster(site, work, embedded_urls, args, judgments)
    finally:
        site.stop()
    results = ParityResults(started, time.monotonic() - t0, describe(), site_pages, (load0, os.getloadavg()[0]),
                            args.limit, queries, args.sample_pages, embedded, cluster)  # fmt: skip
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cluster.cluster_parity", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--site", type=Path, default=default_cache() / "libreoffice-help-site")
    parser.add_argument("--workdir", type=Path, default=None, help="where data and logs go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep data, logs and misses files afterwards")
    parser.add_argument("--kill-at", type=float, default=1 / 3, help="share of pages fetched when a crawler dies")
    parser.add_argument("--replace", action="store_true", help="start a new crawler after the kill")
    parser.add_argument("--ranker-interval", type=float, default=0, help="TANSUO_RANKER_INTERVAL_S (default: the product's)")
    parser.add_argument("--limit", type=float, default=60, help="seconds after settling by which none may lack PageRank")
    parser.add_argument("--watch", type=float, default=330, help="seconds after settling to keep counting")
    parser.add_argument("--sample-pages", type=int, default=60,
                        help="pages the known-item set is drawn from (the cluster's test server takes seconds a query)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a crawl may take")
    args = parser.parse_args(argv)
    # A SIGTERM unwinds like Ctrl-C, so every service and server is stopped by PID.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = run(args)
    section = parity_report.render(results)
    print(section)
    if args.write:
        parity_report.BLOCK.write(REPO / "docs" / "benchmarks.md", section)
    return 0 if parity_report.passed(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
