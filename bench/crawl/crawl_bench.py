"""Crawl speed: `tansuo crawl` against the naive crawler, on the same site, in turns.

Both run as subprocesses and are timed from spawn to exit, so each pays for its own
start-up. Pages are counted by the site server (every GET but robots.txt and the sitemap, which
only Tansuo asks for), so both are measured the same way whatever they report themselves.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.sites.slow_site import SlowSiteServer
from services.cli.static_site_server import SiteServer

NAIVE = "naive urllib crawler"
# Files only Tansuo asks for, before any page: robots.txt, and the sitemap it probes
# when robots.txt names none. Counting them would credit Tansuo with pages it never parsed.
HOUSEKEEPING = frozenset({"/robots.txt", "/sitemap.xml"})
RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class CrawlRun:
    pages: int  # GETs the site served to this run, HOUSEKEEPING left out
    wall_s: float  # spawn to exit
    first_request_s: float  # spawn to the first request: start-up
    last_request_s: float  # spawn to the last request; wall_s minus this is the wind-down
    urls: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s > 0 else 0.0


@dataclass(frozen=True)
class Contender:
    """One crawler configuration and its runs."""

    label: str
    runs: list[CrawlRun]

    def median(self, metric: Callable[[CrawlRun], float]) -> float:
        return statistics.median(metric(r) for r in self.runs)


@dataclass(frozen=True)
class CrawlCondition:
    """One site condition: the baseline and every Tansuo configuration, run in turns."""

    latency_ms: int
    baseline: Contender
    contenders: list[Contender]

    @property
    def same_urls(self) -> bool:
        """Every run of every crawler fetched the same set of pages."""
        sets = {r.urls for c in [self.baseline, *self.contenders] for r in c.runs}
        return len(sets) == 1

    def ratio(self, contender: Contender) -> float:
        base = self.baseline.median(lambda r: r.pages_per_s)
        return contender.median(lambda r: r.pages_per_s) / base if base else 0.0


@dataclass(frozen=True)
class TansuoConfig:
    label: str
    env: dict[str, str]  # TANSUO_* variables for this configuration


def run_condition(site_root: Path, latency_ms: int, configs: Sequence[TansuoConfig], rounds: int,
                  log: Callable[[str], None] = print) -> CrawlCondition:
    """``rounds`` runs of the baseline and of each config against one server; the
    order rotates every round so that no crawler always runs first on a cold cache."""
    server: SiteServer = SlowSiteServer(site_root, latency_s=latency_ms / 1000) if latency_ms else SiteServer(site_root)
    jobs: list[tuple[str, Callable[[str], CrawlRun]]] = [(NAIVE, lambda url: _crawl(server, _naive_cmd(url), {}))]
    for config in configs:
        jobs.append((config.label, lambda url, c=config: _tansuo_crawl(server, url, c)))
    runs: dict[str, list[CrawlRun]] = {label: [] for label, _ in jobs}
    with server:
        for n in range(rounds):
            shift = n % len(jobs)
            for label, job in jobs[shift:] + jobs[:shift]:
                run = job(server.url)
                runs[label].append(run)
                log(f"  crawl, {latency_ms} ms latency, {label}: {run.pages} pages in {run.wall_s:.1f} s "
                    f"({run.pages_per_s:.1f} pages/s)")
    return CrawlCondition(
        latency_ms=latency_ms,
        baseline=Contender(NAIVE, runs[NAIVE]),
        contenders=[Contender(c.label, runs[c.label]) for c in configs],
    )


def _naive_cmd(url: str) -> list[str]:
    return [sys.executable, "-m", "bench.crawl.naive_crawler", url]


def _tansuo_crawl(server: SiteServer, url: str, config: TansuoConfig) -> CrawlRun:
    # A fresh data directory every time: in an old one the crawl would resume and
    # fetch nothing.
    with tempfile.TemporaryDirectory(prefix="tansuo-bench-crawl-") as data:
        cmd = [sys.executable, "-m", "services.cli.main", "crawl", url, "--data", data,
               "--delay", "0", "--allow-private-networks", "--no-progress"]
        return _crawl(server, cmd, config.env)


def _crawl(server: SiteServer, cmd: list[str], env: dict[str, str]) -> CrawlRun:
    # Only this configuration's TANSUO_* variables: one left in the caller's shell
    # would silently change what is measured.
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")} | env
    server.clear_requests()
    spawned = time.monotonic()
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=child_env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          cwd=Path(__file__).resolve().parents[2])
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(cmd[:4])} exited {proc.returncode}:\n{tail}")
    requests = server.requests
    pages = [r for r in requests if r.method == "GET" and r.path not in HOUSEKEEPING]
    if not pages:
        raise RuntimeError(f"{' '.join(cmd[:4])} fetched nothing")
    return CrawlRun(
        pages=len(pages),
        wall_s=wall,
        first_request_s=requests[0].time - spawned,
        last_request_s=pages[-1].time - spawned,
        urls=frozenset(r.path for r in pages),
    )
