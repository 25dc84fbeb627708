"""`tansuo crawl` in one process against two (issue 12), beside a plain Scrapy spider.

Four crawlers fetch the same site on 127.0.0.1 in turns, the order rotating every
round, each from a fresh data directory with ``--delay 0``: `tansuo crawl` with
TANSUO_EMBEDDED_PROCESSES=1 (crawler, scheduler, indexer and ranker threads of one
process), `tansuo crawl` as it runs by default (the indexer and ranker in a second
process), the same with as many pages of the host in flight as the spider allows
itself (16; Tansuo's default is 4), and ``bench/crawl/scrapy_spider.py`` (fetch and extract,
nothing stored).

Pages are counted by the site server, as in ``bench/crawl/crawl_bench.py``. CPU is every
process's user + system time: this process makes itself a child subreaper, so that an
index process or helper whose parent exits first is re-parented here and reaped, and
its time lands in RUSAGE_CHILDREN with the rest.

    .venv/bin/python -m bench.crawl.process_compare --site ~/.cache/tansuo/zh-gimp-site --rounds 3 --write
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.crawl.crawl_bench import HOUSEKEEPING
from bench.crawl.crawl_profile import byte_compile, crawl_cmd
from bench.measure import machine
from bench.measure.marked_block import MarkedBlock
from services.cli.demo_site import default_cache
from services.cli.static_site_server import SiteServer

REPO = Path(__file__).resolve().parents[2]
_PR_SET_CHILD_SUBREAPER = 36
ONE = "tansuo crawl, one process (TANSUO_EMBEDDED_PROCESSES=1)"
TWO = "tansuo crawl, two processes (the default)"
# The spider fetches up to 16 pages of one host at once (bench/crawl/scrapy_spider.py); Tansuo,
# by default, 8 (TANSUO_FRONTIER_HOST_PARALLELISM, Scrapy's own per-domain default).
SPIDER_PER_HOST = 16
TWO_16 = f"tansuo crawl, two processes, {SPIDER_PER_HOST} pages of the host at once (as the spider)"
SCRAPY = "plain Scrapy spider (bench/crawl/scrapy_spider.py)"
BLOCK = MarkedBlock("<!-- embedded-processes:start (bench/crawl/process_compare.py --write) -->",
                    "<!-- embedded-processes:end -->")
DOCS = REPO / "docs" / "benchmarks.md"
HEADING = "## One process or two: `tansuo crawl` on two cores (issue 12)"


@dataclass(frozen=True)
class Run:
    pages: int
    wall_s: float
    cpu_s: float
    fetch_s: float  # the site server's first request to its last: the wall time less start-up and wind-down

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s

    @property
    def cpu_ms_per_page(self) -> float:
        return self.cpu_s / self.pages * 1000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reap_orphans() -> None:
    """Wait for every descendant re-parented here (subreaper), so its CPU is counted."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _measure(server: SiteServer, cmd: list[str], env: dict[str, str]) -> Run:
    server.clear_requests()
    cpu_before = _children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=1800)
    _reap_orphans()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    pages = [r for r in server.requests if r.method == "GET" and r.path not in HOUSEKEEPING]
    span = server.requests[-1].time - server.requests[0].time if server.requests else 0.0
    return Run(len(pages), wall, _children_cpu() - cpu_before, span)


def _tansuo(processes: str, host_parallelism: int = 0):
    def run(server: SiteServer) -> Run:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
        env["TANSUO_EMBEDDED_PROCESSES"] = processes
        if host_parallelism:
            env["TANSUO_FRONTIER_HOST_PARALLELISM"] = str(host_parallelism)
        with tempfile.TemporaryDirectory(prefix="tansuo-bench-procs-") as data:
            return _measure(server, crawl_cmd(server.url, data), env)

    return run


def _scrapy(server: SiteServer) -> Run:
    return _measure(server, [sys.executable, "-m", "bench.crawl.scrapy_spider", server.url], dict(os.environ))


def _row(label: str, runs: list[Run], one: list[Run], scrapy: list[Run]) -> str:
    def med(runs: list[Run], metric) -> float:
        return statistics.median(metric(r) for r in runs)

    rate = med(runs, lambda r: r.pages_per_s)
    cpu = med(runs, lambda r: r.cpu_ms_per_page)
    rates = sorted(r.pages_per_s for r in runs)
    cpus = sorted(r.cpu_ms_per_page for r in runs)
    vs_one = rate / med(one, lambda r: r.pages_per_s)
    vs_scrapy = rate / med(scrapy, lambda r: r.pages_per_s)
    cpu_vs_scrapy = cpu / med(scrapy, lambda r: r.cpu_ms_per_page)
    fetching = med(runs, lambda r: r.pages / r.fetch_s)
    fetching_vs_scrapy = fetching / med(scrapy, lambda r: r.pages / r.fetch_s)
    return (f"| {label} | {med(runs, lambda r: r.pages):.0f} | {med(runs, lambda r: r.wall_s):.1f} | "
            f"**{rate:.1f}** ({rates[0]:.1f}–{rates[-1]:.1f}) | **{cpu:.1f}** ({cpus[0]:.1f}–{cpus[-1]:.1f}) | "
            f"{vs_one:.2f} | {vs_scrapy:.2f} | {cpu_vs_scrapy:.2f} | {fetching:.1f} | {fetching_vs_scrapy:.2f} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crawl.process_compare", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=default_cache().parent / "libreoffice-help-site")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"write the section into {DOCS.relative_to(REPO)}")
    parser.add_argument("--reading", type=Path, help="a hand-written reading of the figures to put under them")
    args = parser.parse_args(argv)
    ctypes.CDLL(ctypes.util.find_library("c")).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    byte_compile(REPO)
    jobs = [(ONE, _tansuo("1")), (TWO, _tansuo("2")), (TWO_16, _tansuo("2", SPIDER_PER_HOST)), (SCRAPY, _scrapy)]
    runs: dict[str, list[Run]] = {label: [] for label, _ in jobs}
    load = [os.getloadavg()[0]]
    with SiteServer(args.site) as server:
        for n in range(args.rounds):
            for label, job in jobs[n % len(jobs):] + jobs[: n % len(jobs)]:
                run = job(server)
                runs[label].append(run)
                print(f"round {n + 1}, {label}: {run.pages} pages, {run.wall_s:.1f} s, {run.cpu_s:.1f} s CPU",
                      file=sys.stderr, flush=True)  # fmt: skip
    load.append(os.getloadavg()[0])
    section = _render(args, runs, (load[0], load[1]))
    print(section)
    if args.write:
        BLOCK.write(DOCS, section)
    return 0


def _render(args: argparse.Namespace, runs: dict[str, list[Run]], load: tuple[float, float]) -> str:
    m = machine.describe()
    rows = "\n".join(_row(label, runs[label], runs[ONE], runs[SCRAPY]) for label in (ONE, TWO, TWO_16, SCRAPY))
    return (
        f"{HEADING}\n\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Tansuo `{m.commit}`, {m.cpu}, "
        f"{m.cores} cores, Python {m.python}. Site `{args.site.name}` on 127.0.0.1, `--delay 0`, a fresh data "
        f"directory each run, {args.rounds} rounds with the order rotating. Load average (1 min) {load[0]:.1f} at "
        f"the start, {load[1]:.1f} at the end. `python -m bench.crawl.process_compare`: CPU is user + system of every "
        "process a run started (the index process included), pages are the site server's count; medians, "
        "ranges in brackets.\n\n"
        "| crawler | pages | wall s | pages/s (range) | CPU ms a page (range) | pages/s ÷ one process "
        "| pages/s ÷ Scrapy | CPU a page ÷ Scrapy | pages/s while fetching | ÷ Scrapy's |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n" + rows + "\n"
        "\n*Pages/s* is pages ÷ the whole wall time, start-up and wind-down (the last index commit and PageRank) "
        "included; *while fetching* is pages ÷ the site server's first request to its last.\n"
        + (f"\n{args.reading.read_text(encoding='utf-8').strip()}\n" if args.reading else "")
    )


if __name__ == "__main__":
    sys.exit(main())
