"""Issue 12's many-host case: a crawl of many small hosts, each with a per-host delay,
against its politeness bound of hosts ÷ delay pages/s.

    python -m bench.crawl.many_hosts            # print the figures (about 15 minutes on 2 cores)
    python -m bench.crawl.many_hosts --write    # and write their block in docs/benchmarks.md
    python -m bench.run --many-hosts      # the same, with --write

What it does, in order:

1. Serves ``--hosts`` small Chinese sites (``bench/sites/many_host_site.py``), one on each
   loopback address from 127.0.0.2, all on one port, from this process
   (``bench/sites/loopback_hosts.py``). Each front page lists its host's pages.
2. ``tansuo crawl`` of every front page, with ``--delay`` and otherwise the product's
   defaults (embedded mode).
3. The cluster on the test servers (``bench/cluster/cluster_servers.py``): scheduler, indexer,
   ranker and 1, 2, then 4 crawlers, each its own process, as ``tests/cluster.py``
   starts them; ``tansuo seed`` of every front page; timed until the frontier settles.
   ``--schedulers 1 2`` runs each set of crawlers with one scheduler, then with two,
   which divide the hosts by their partitions of the page events.
4. For each run, from the site servers' own logs (``bench/crawl/host_fetch_log.py``): pages,
   the window from the first page request to a delay after the last, the shortest and the median gap
   between two requests to one host; and the CPU seconds of the crawl's processes.

The bound is the frontier's rule read literally: with a delay, a host has one fetch in
flight and the next may start ``delay`` after the last one ended, so no crawl, however
many crawlers it runs, fetches more than hosts ÷ delay pages a second. The frontier
counts "ended" from the response's end as the crawler saw it, crediting up to 0.25 s of
the trip back through the bus, so each host's real cycle is the delay plus the fetch and
any round trip beyond that credit: the median gap shows it. robots.txt and the sitemap probe take a slot of each host too, and are not pages.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.cluster.cluster_servers import Servers, running_servers
from bench.cluster.cluster_services import (
    bench_env,
    changed_settings,
    check_alive,
    start_all,
)
from bench.crawl import many_hosts_report
from bench.crawl.host_fetch_log import FetchLog, read_log
from bench.measure.machine import Machine, describe
from bench.measure.process_cpu import cpu_seconds, machine_busy_seconds
from bench.pagerank.link_field_watch import wait_until_settled
from bench.quality.known_items import embedded_env
from bench.sites.loopback_hosts import LoopbackHosts
from bench.sites.many_host_site import (
    loopback_addresses,
    page_path,
    paragraphs_of,
    write_site,
)
from services.cli.demo_site import build_demo_site, default_cache
from services.common.adapters.redis.frontier import RedisFrontierState
from tests.cluster import Cluster

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Shape:
    hosts: int
    pages_per_host: int
    delay_s: float

    @property
    def bound_per_s(self) -> float:
        """Pages a second the per-host delay allows at most."""
        return self.hosts / self.delay_s if self.delay_s > 0 else float("inf")

    @property
    def pages(self) -> int:
        return self.hosts * self.pages_per_host

    def fetch_log(self, hosts: LoopbackHosts, since: float) -> FetchLog:
        """The servers' logs of this crawl, which began at monotonic time ``since``."""
        return read_log(hosts.requests(), [page_path(n) for n in range(self.pages_per_host)], self.delay_s, since)


@dataclass(frozen=True)
class CrawlRun:
    shape: Shape
    mode: str
    wall_s: float  # embedded: spawn to exit; cluster: seeding to the frontier settling
    log: FetchLog
    cpu_s: dict[str, float]  # the crawl's processes by role, over wall_s
    servers_cpu_s: float  # Redis, the broker, S3 and the Elasticsearch API (cluster only)
    site_cpu_s: float  # this process: the site servers (and a poll of the frontier)
    machine_cpu_s: float  # every process on the machine, other work included
    load: float  # 1-minute load average as the run started

    @property
    def ratio(self) -> float:
        """Achieved pages/s ÷ the politeness bound."""
        return self.log.pages_per_s / self.shape.bound_per_s


@dataclass(frozen=True)
class ManyHostResults:
    started: datetime
    duration_s: float
    machine: Machine
    shapes: list[Shape]  # one per delay; the same hosts and pages
    load: tuple[float, float]
    cluster_settings: dict[str, str]  # what the cluster ran with that is not the product's default
    runs: list[CrawlRun]


def serve_site(stack: ExitStack, root: Path, shape: Shape, paragraphs: list[str]) -> LoopbackHosts:
    """Bind every host first: the pages' links to other hosts need the port."""
    hosts = stack.enter_context(LoopbackHosts(root, loopback_addresses(shape.hosts)))
    write_site(root, hosts.addresses, hosts.port, shape.pages_per_host, paragraphs)
    return hosts


def crawl_embedded(hosts: LoopbackHosts, shape: Shape, work: Path) -> CrawlRun:
    """One ``tansuo crawl`` of every front page, from a fresh data directory."""
    cmd = [sys.executable, "-m", "services.cli.main", "crawl", *hosts.front_pages(), "--data", str(work / "data"),
           "--delay", str(shape.delay_s), "--allow-private-networks", "--no-progress"]  # fmt: skip
    work.mkdir(parents=True, exist_ok=True)
    hosts.clear_requests()
    load, since, site0, machine0 = os.getloadavg()[0], time.monotonic(), time.process_time(), machine_busy_seconds()
    with open(work / "crawl.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=embedded_env(), stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)  # wait4: the child's own CPU time
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall, machine = time.monotonic() - since, machine_busy_seconds() - machine0
    if proc.returncode != 0:
        raise RuntimeError(f"tansuo crawl failed; see {work / 'crawl.log'}")
    return CrawlRun(shape, "embedded (tansuo crawl)", wall, shape.fetch_log(hosts, since),
                    {"tansuo crawl": usage.ru_utime + usage.ru_stime}, 0.0, time.process_time() - site0, machine, load)  # fmt: skip


def crawl_cluster(hosts: LoopbackHosts, shape: Shape, servers: Servers, crawlers: int, work: Path,
                  timeout_s: float, schedulers: int = 1) -> tuple[CrawlRun, dict[str, str]]:  # fmt: skip
    """``schedulers`` schedulers (each dispatching the hosts of its partitions), indexer,
    ranker and ``crawlers`` crawlers, fresh keys and topics on the shared servers; timed
    from seeding to the frontier settling."""
    env = bench_env(servers, work / "cluster") | {"TANSUO_FRONTIER_HOST_DELAY_S": str(shape.delay_s)}
    names = [*(f"scheduler{n}" for n in range(schedulers)), *(f"crawler{n}" for n in range(crawlers)), "indexer",
             "ranker"]  # fmt: skip
    (work / "logs").mkdir(parents=True, exist_ok=True)
    cluster = Cluster(env, work / "logs")
    try:
        start_all(cluster, names)
        hosts.clear_requests()
        load, since = os.getloadavg()[0], time.monotonic()
        before = _cpu(cluster, servers)
        subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *hosts.front_pages()], env=env,
                       cwd=REPO, check=True, capture_output=True)  # fmt: skip
        frontier = RedisFrontierState.from_url(env["TANSUO_STATE"])
        wait_until_settled(frontier, shape.pages, timeout_s, lambda: check_alive(cluster))
        wall = time.monotonic() - since
        after = _cpu(cluster, servers)
    finally:
        cluster.stop()
    roles = {role: after[0][role] - before[0][role] for role in after[0]}
    mode = f"cluster, {crawlers} crawler{'s' if crawlers > 1 else ''}"
    if schedulers > 1:
        mode = f"cluster, {schedulers} schedulers, {crawlers} crawler{'s' if crawlers > 1 else ''}"
    run = CrawlRun(shape, mode, wall,
                   shape.fetch_log(hosts, since), roles, after[1] - before[1],
                   after[2] - before[2], after[3] - before[3], load)  # fmt: skip
    # The delay is named in each row; the settings line holds what all runs share.
    return run, {k: v for k, v in changed_settings(env).items() if k != "TANSUO_FRONTIER_HOST_DELAY_S"}


def _cpu(cluster: Cluster, servers: Servers) -> tuple[dict[str, float], float, float, float]:
    """CPU seconds so far of the services by role (crawlers summed), of the servers, of
    this process and of the whole machine."""
    roles: dict[str, float] = {}
    for name, proc in cluster.procs.items():
        role = name.rstrip("0123456789")
        roles[role] = roles.get(role, 0.0) + cpu_seconds(proc.pid)
    backing = [servers.redis.proc, servers.kafka.proc, servers.s3.proc, servers.es.proc]
    servers_s = sum(cpu_seconds(p.pid) for p in backing if p is not None)
    return roles, servers_s, time.process_time(), machine_busy_seconds()


def _say(run: CrawlRun) -> None:
    print(f"{run.mode}, delay {run.shape.delay_s:g} s: {run.log.pages} pages in {run.log.window_s:.1f} s "
          f"({run.log.pages_per_s:.1f} pages/s, {run.ratio:.2f} of the bound), {sum(run.cpu_s.values()):.1f} CPU s, "
          f"min gap {run.log.min_gap_s:.3f} s", file=sys.stderr)  # fmt: skip


def run(args: argparse.Namespace) -> ManyHostResults:
    started, t0, load0 = datetime.now(UTC), time.monotonic(), os.getloadavg()[0]
    shapes = [Shape(args.hosts, args.pages, delay) for delay in args.delay]
    build_demo_site(args.site)
    paragraphs = paragraphs_of(args.site)
    runs: list[CrawlRun] = []
    settings: dict[str, str] = {}
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tansuo-many-hosts-", dir=args.workdir)))
        hosts = serve_site(stack, work / "site", shapes[0], paragraphs)
        print(f"{args.hosts} hosts x {args.pages} pages on port {hosts.port}; work in {work}", file=sys.stderr)
        # Every embedded crawl first: the test servers, idle, would still take some CPU.
        for shape in shapes if not args.no_embedded else []:
            runs.append(crawl_embedded(hosts, shape, work / f"delay-{shape.delay_s:g}" / "embedded"))
            _say(runs[-1])
        servers = stack.enter_context(running_servers(work / "servers")) if args.crawlers else None
        for shape in shapes if servers else []:
            for schedulers in args.schedulers:
                for n in args.crawlers:
                    where = work / f"delay-{shape.delay_s:g}" / f"cluster-{schedulers}-{n}"
                    cluster_run, settings = crawl_cluster(hosts, shape, servers, n, where, args.timeout, schedulers)
                    runs.append(cluster_run)
                    _say(cluster_run)
    return ManyHostResults(started, time.monotonic() - t0, describe(), shapes, (load0, os.getloadavg()[0]),
                           settings, runs)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crawl.many_hosts", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--hosts", type=int, default=128, help="loopback hosts, from 127.0.0.2")
    parser.add_argument("--pages", type=int, default=30, help="pages a host, its front page included")
    parser.add_argument("--delay", type=float, nargs="+", default=[1.0],
                        help="per-host delays, seconds, each a set of runs (the product's default: 1)")
    parser.add_argument("--crawlers", type=int, nargs="*", default=[1, 2, 4],
                        help="crawler processes of each cluster run; none: no cluster (needs the test install)")
    parser.add_argument("--schedulers", type=int, nargs="+", default=[1],
                        help="scheduler processes of each cluster run (each set of crawlers runs with each)")
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded crawl")
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site",
                        help="the demo site the text comes from (built there if missing)")
    parser.add_argument("--workdir", type=Path, default=None, help="where the site, data and logs go")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a cluster crawl may take")
    args = parser.parse_args(argv)
    # A SIGTERM unwinds like Ctrl-C, so every service and server is stopped by PID.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = run(args)
    many_hosts_report.BLOCK.publish(many_hosts_report.render(results), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
