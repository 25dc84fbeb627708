"""One scheduler against two on the many-host site (issue 13): the same cluster crawl of
many loopback hosts, with one scheduler process and then with two, which divide the
hosts by the partitions of the page events Kafka hands each (services/scheduler/scheduler.py).

    python -m bench.frontier.scheduler_scaling            # print the figures (about 10 minutes)
    python -m bench.frontier.scheduler_scaling --write    # and write their block in docs/benchmarks.md

The crawl, the servers and the figures are bench/crawl/many_hosts.py's (pages/s against the
politeness bound, CPU by role, the per-host gaps from the site servers' logs); the runs
alternate, one scheduler then two, ``--rounds`` times, on fresh keys and topics.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from bench.cluster.cluster_servers import running_servers
from bench.crawl import many_hosts_report
from bench.crawl.many_hosts import (
    CrawlRun,
    ManyHostResults,
    Shape,
    crawl_cluster,
    serve_site,
)
from bench.measure.machine import describe
from bench.measure.marked_block import MarkedBlock
from bench.sites.many_host_site import paragraphs_of
from services.cli.demo_site import build_demo_site, default_cache

BLOCK = MarkedBlock("<!-- scheduler-scaling:start (bench/frontier/scheduler_scaling.py --write) -->",
                    "<!-- scheduler-scaling:end -->")  # fmt: skip
HEADING = "## One scheduler against two, on many hosts (issue 13)"


def reading(runs: list[CrawlRun]) -> str:
    """Two schedulers over one, per round, in pages/s and in scheduler CPU per page."""
    ones = [r for r in runs if "schedulers" not in r.mode]
    twos = [r for r in runs if "schedulers" in r.mode]
    parts = []
    for one, two in zip(ones, twos, strict=True):
        per_page = [r.cpu_s.get("scheduler", 0.0) / r.log.pages * 1000 if r.log.pages else 0.0 for r in (one, two)]
        parts.append(f"{two.log.pages_per_s / one.log.pages_per_s:.2f}× the pages/s (scheduler CPU "
                     f"{per_page[0]:.1f} → {per_page[1]:.1f} ms a page)")  # fmt: skip
    return "Two schedulers against one, round by round: " + "; ".join(parts) + "."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.frontier.scheduler_scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--hosts", type=int, default=128)
    parser.add_argument("--pages", type=int, default=10, help="pages a host, its front page included")
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--crawlers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: services and servers stopped by PID
    started, t0, load0 = datetime.now(UTC), time.monotonic(), os.getloadavg()[0]
    shape = Shape(args.hosts, args.pages, args.delay)
    build_demo_site(args.site)
    runs: list[CrawlRun] = []
    settings: dict[str, str] = {}
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tansuo-schedulers-", dir=args.workdir)))
        hosts = serve_site(stack, work / "site", shape, paragraphs_of(args.site))
        servers = stack.enter_context(running_servers(work / "servers"))
        for n in range(args.rounds):
            for schedulers in (1, 2):
                where = work / f"round-{n}" / f"schedulers-{schedulers}"
                run, settings = crawl_cluster(hosts, shape, servers, args.crawlers, where, args.timeout, schedulers)
                runs.append(run)
                print(f"{run.mode}: {run.log.pages} pages, {run.log.pages_per_s:.1f} pages/s, "
                      f"min gap {run.log.min_gap_s:.3f} s", file=sys.stderr, flush=True)  # fmt: skip
    results = ManyHostResults(started, time.monotonic() - t0, describe(), [shape], (load0, os.getloadavg()[0]),
                              settings, runs)  # fmt: skip
    BLOCK.publish(many_hosts_report.render(results, heading=HEADING).rstrip() + "\n\n" + reading(runs) + "\n", args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
