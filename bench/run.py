"""Run every benchmark and write docs/benchmarks.md.

    .venv/bin/python -m bench.run            # full run, rewrites docs/benchmarks.md
    .venv/bin/python -m bench.run --quick    # smoke run, printed to stdout
    .venv/bin/python -m bench.run --pagerank # only the PageRank benchmark, into its own block
                                             # (bench.pagerank.pagerank_bench; with --quick, 1M links, printed)
    .venv/bin/python -m bench.run --many-hosts  # only the many-host crawl, into its own block
                                                # (bench.crawl.many_hosts; with --quick, 16 hosts, printed)
    .venv/bin/python -m bench.run --index    # only the indexing benchmark (section 2), into its
                                             # section (about 3 minutes; with --quick, printed)
    .venv/bin/python -m bench.run --redis-frontier  # only the Redis frontier against SQLite, into its
                                                    # own block (bench.frontier.redis_frontier_bench)
    .venv/bin/python -m bench.run --scale    # only the million-page benchmark, into its own block
                                             # (bench.scale.scale_million; with --quick, 5,000 pages, printed)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import report
from bench.crawl.crawl_bench import TansuoConfig, run_condition
from bench.frontier.frontier_bench import (
    naive_schedule_rate,
    seen_set_cost,
    tansuo_schedule_rate,
)
from bench.frontier.frontier_report import FrontierResults
from bench.frontier.partition_spread import run as partition_spread
from bench.indexing.index_bench import run_index_bench
from bench.measure import machine
from bench.scale.scale_search import run_scale_bench
from bench.serving.search_bench import draw_queries, run_search_bench
from bench.sites.corpus import repeated, site_pages
from services.cli.demo_site import build_demo_site, default_cache

REPO = Path(__file__).resolve().parent.parent
LATENCY_MS = 50
DEFAULT_PARALLELISM = TansuoConfig("tansuo crawl (host parallelism 8, the default)", {})
HIGH_PARALLELISM = TansuoConfig("tansuo crawl, TANSUO_FRONTIER_HOST_PARALLELISM=16",
                                {"TANSUO_FRONTIER_HOST_PARALLELISM": "16"})


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_frontier_benches(quick: bool) -> FrontierResults:
    queued, seen_urls, partition_urls = (100_000, 200_000, 100_000) if quick else (1_000_000, 10_000_000, 1_000_000)
    tansuo, admitted, counting = tansuo_schedule_rate(queued, 10_000, cycles=5_000 if quick else 20_000)
    naive = naive_schedule_rate(queued, 10_000, cycles=200_000)
    return FrontierResults(
        queued=queued,
        hosts=10_000,
        tansuo_per_s=tansuo,
        naive_per_s=naive,
        admitted_per_s=admitted,
        counts_s=counting["counts_s"],
        group_by_s=counting["group_by_s"],
        seen=seen_set_cost(seen_urls),
        partitions=partition_spread(partition_urls, 10_000),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one round, a small corpus and 200 queries; prints the report instead of writing it")
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site",
                        help="where the demo site is (built there if missing)")
    parser.add_argument("--out", type=Path,
                        help="report file (default: docs/benchmarks.md for a full run, stdout for --quick)")
    parser.add_argument("--pagerank", action="store_true",
                        help="run only the PageRank benchmark (10M links, about 15 minutes) and write its block")
    parser.add_argument("--many-hosts", action="store_true",
                        help="run only the many-host crawl (128 hosts, about 15 minutes) and write its block")
    parser.add_argument("--index", action="store_true",
                        help="run only the indexing benchmark (section 2) and replace that section")
    parser.add_argument("--redis-frontier", action="store_true",
                        help="run only the Redis frontier against SQLite (about 5 minutes) and write its block")
    parser.add_argument("--scale", action="store_true",
                        help="run only the million-page benchmark (hours on 2 cores; resumes a stopped build) "
                             "and write its block")  # fmt: skip
    args = parser.parse_args(argv)
    if args.scale:
        from bench.scale import scale_million

        if not args.quick:
            return scale_million.main(["--write"])
        with tempfile.TemporaryDirectory(prefix="tansuo-scale-") as work:
            return scale_million.main(["--pages", "5000", "--at", "2000", "--queries", "200", "--work", work])
    if args.pagerank:
        from bench.pagerank import (
            pagerank_bench,  # needs the test install (its Redis server class)
        )

        small = ["--edges", "1000000", "--baseline-edges", "100000"]
        return pagerank_bench.main(small if args.quick else ["--write"])
    if args.many_hosts:
        from bench.crawl import (
            many_hosts,  # its cluster runs need the test install (the servers' classes)
        )

        return many_hosts.main(["--hosts", "16", "--pages", "5", "--crawlers", "1"] if args.quick else ["--write"])
    if args.redis_frontier:
        from bench.frontier import (
            redis_frontier_bench,  # needs the test install (its Redis server classes)
        )

        small = ["--urls", "10000", "--hosts", "100", "--cycles", "2000", "--rounds", "1"]
        return redis_frontier_bench.main(small if args.quick else ["--write"])
    out = args.out or (None if args.quick else REPO / "docs" / "benchmarks.md")
    rounds, copies, queries = (1, 2, 200) if args.quick else (3, 8, 1000)
    if args.index:
        return _index_only(args.site, out, rounds, copies)
    scale_docs = 5_000 if args.quick else 100_000

    # The in-process index and search benchmarks read Settings from the environment
    # too; the crawl subprocesses get their variables from crawl_bench alone.
    for name in [n for n in os.environ if n.startswith("TANSUO_")]:
        _log(f"ignoring {name} from the environment")
        del os.environ[name]

    load_before = os.getloadavg()[0]
    started = datetime.now(UTC)
    clock = time.perf_counter()
    _log(f"demo site in {args.site} ...")
    pages_on_site = build_demo_site(args.site)

    _log("1/4 crawl")
    conditions = [
        run_condition(args.site, 0, [DEFAULT_PARALLELISM], rounds, _log),
        run_condition(args.site, LATENCY_MS, [DEFAULT_PARALLELISM] + ([] if args.quick else [HIGH_PARALLELISM]),
                      rounds, _log),
    ]

    _log("2/4 index")
    corpus = site_pages(args.site)
    with tempfile.TemporaryDirectory(prefix="tansuo-bench-") as work:
        index = run_index_bench(repeated(corpus, copies), Path(work), rounds, _log)
        _log("3/4 search")
        search = run_search_bench(index.tansuo_data_dir, index.fts5_path, draw_queries(corpus, queries), _log)
        _log(f"3b search at scale ({scale_docs} documents)")
        scale = run_scale_bench(repeated(corpus, copies), scale_docs, draw_queries(corpus, queries), Path(work) / "scale", _log)

    _log("4/4 frontier (scheduling rate, seen-set cost, partition spread)")
    frontier = run_frontier_benches(quick=args.quick)

    results = report.BenchResults(
        quick=args.quick,
        started=started,
        duration_s=time.perf_counter() - clock,
        machine=machine.describe(),
        site_pages=pages_on_site,
        load=(load_before, os.getloadavg()[0]),
        crawl=conditions,
        index=index,
        search=search,
        scale=scale,
        frontier=frontier,
    )
    if out is None:
        print(report.render(results))
    else:
        report.write(out, results)
        _log(f"wrote {out}")
    return 0


def _index_only(site: Path, out: Path | None, rounds: int, copies: int) -> int:
    """Section 2 alone, with the machine, date, commit and load average above its table."""
    for name in [n for n in os.environ if n.startswith("TANSUO_")]:
        del os.environ[name]
    build_demo_site(site)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tansuo-bench-") as work:
        index = run_index_bench(repeated(site_pages(site), copies), Path(work), rounds, _log)
    m = machine.describe()
    heading, _, rest = report.render_index(index).partition("\n\n")
    section = (f"{heading}\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, `python -m bench.run --index`, "
               f"Tansuo `{m.commit}`, {m.cpu}, {m.cores} cores, Python {m.python}; load average (1 min) "
               f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.\n\n{rest}")
    if out is None:
        print(section)
    else:
        report.splice_section(out, section)
        _log(f"wrote section 2 of {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
