"""Where the CPU of a real `tansuo crawl` goes, page by page.

Runs the same crawl as ``bench/crawl/crawl_bench.py`` (the demo site on 127.0.0.1, a fresh
data directory, ``--delay 0``) twice: once bare, to measure the process's CPU time per
page (user + system, from ``wait4``), and once under py-spy (``record -f raw``), to
split that time between the parts of the pipeline. The split is by the innermost
frame of each sample that belongs to a known part, so numpy under MinHash counts as
MinHash and lxml under the extractor as extraction; samples of idle threads are not
taken (py-spy's default; nor are timed waits, which py-spy counts as busy), so the
shares are shares of busy time.

    .venv/bin/python -m bench.crawl.crawl_profile --raw /tmp/crawl.raw   # prints markdown
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.crawl.crawl_bench import HOUSEKEEPING
from bench.measure import machine
from bench.measure.profile_summary import summarise
from services.cli.demo_site import build_demo_site, default_cache
from services.cli.static_site_server import SiteServer

REPO = Path(__file__).resolve().parents[2]
# docs/benchmarks.md holds the profile, and what each change it led to measured, between
# these markers; bench/report.py keeps the block below the crawl section when a full
# `python -m bench.run` rewrites the rest, since the profile comes from its own run.
START = "<!-- crawl-profile:start (bench/crawl/crawl_profile.py) -->"
END = "<!-- crawl-profile:end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END) + r"\n?", re.S)
PY_SPY = Path(sys.executable).parent / "py-spy"

# (part, path fragments of its frames); the first part whose fragment matches the
# innermost matching frame of a sample wins, so the order goes from specific to general.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("charset detection and decoding", ("crawler/charset.py", "charset_normalizer/")),
    ("HTML extraction (lxml, boilerplate, links)",
     ("crawler/extract.py", "crawler/page_text.py", "crawler/boilerplate.py", "crawler/robots_directives.py")),
    ("URL canonicalisation and scope", ("common/url_canonical.py", "scheduler/scope.py", "scheduler/url_limits.py",
                                        "w3lib/url.py")),
    ("MinHash signature", ("common/minhash.py",)),
    ("analysis: folding, segmentation, sub-words, bigrams", ("common/analysis/",)),
    ("page store", ("adapters/page_store_packs.py", "adapters/page_packs.py")),
    ("index writes and commits (tantivy)", ("adapters/search_index_tantivy.py", "adapters/token_fields.py")),
    ("ranker (link graph, PageRank)", ("ranker/", "adapters/link_graph_sqlite.py", "scipy/")),
    ("frontier (SQLite state, robots rules)", ("scheduler/", "adapters/frontier_sqlite.py", "protego")),
    ("bus (SQLite log)", ("adapters/bus_sqlite.py",)),
    ("messages (PageEvent encode/decode)", ("common/domain/messages.py", "crawler/message_caps.py")),
    ("indexer, rest", ("indexer/",)),
    ("crawler, rest (spider, worker, publisher)", ("services/crawler/",)),
    ("Scrapy and Twisted (fetching, scheduling, middlewares)", ("scrapy/", "twisted/", "parsel/", "w3lib/")),
    ("progress, CLI, start-up", ("services/cli/", "importlib", "<frozen")),
)


# Leaf frames of threads that wait with a timeout (bus polls, the watcher, Twisted's
# thread pool): py-spy counts a timed lock acquire as busy, but it burns no CPU.
WAITS = ("Condition.wait (threading.py", "Event.wait (threading.py", "Queue.get (queue.py",
         "Condition._acquire_restore (threading.py")


@dataclass(frozen=True)
class CrawlCpu:
    pages: int
    wall_s: float
    cpu_s: float  # user + system of the crawl process and its threads

    @property
    def cpu_ms_per_page(self) -> float:
        return self.cpu_s / self.pages * 1000 if self.pages else 0.0


def extract_block(text: str) -> str:
    """The profile block with its markers, or "" when the report has none."""
    found = _BLOCK.search(text)
    return found.group(0) if found else ""


def crawl_cmd(url: str, data: str) -> list[str]:
    return [sys.executable, "-m", "services.cli.main", "crawl", url, "--data", data,
            "--delay", "0", "--allow-private-networks", "--no-progress"]


def byte_compile(tree: Path) -> None:
    """Write the ``.pyc`` files of ``tree``'s ``services`` package, as an install does.

    Without them, under PYTHONDONTWRITEBYTECODE (or in a read-only checkout), every
    crawl compiles the package from source at start-up, about a third of a second
    that a user's second crawl never pays, and that ``bench.ab_compare``'s exported
    old tree would pay while this checkout does not. Up-to-date files are skipped.
    """
    compileall.compile_dir(tree / "services", quiet=1)


def measure(server: SiteServer, prefix: list[str] | None = None, env: dict[str, str] | None = None,
            cwd: Path = REPO) -> CrawlCpu:
    """One crawl from a fresh data directory; ``prefix`` wraps the command (py-spy);
    ``cwd`` holds the ``services`` package that runs (bench/ab_compare.py's old code)."""
    byte_compile(cwd)
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")} | (env or {})
    with tempfile.TemporaryDirectory(prefix="tansuo-profile-crawl-") as data:
        server.clear_requests()
        started = time.perf_counter()
        proc = subprocess.Popen([*(prefix or []), *crawl_cmd(server.url, data)], cwd=cwd, env=child_env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        stderr = proc.stderr.read() if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"crawl failed:\n{stderr[-2000:]}")
    pages = [r for r in server.requests if r.method == "GET" and r.path not in HOUSEKEEPING]
    return CrawlCpu(len(pages), wall, usage.ru_utime + usage.ru_stime)


def part_of(stack: str) -> str:
    """The pipeline part a collapsed py-spy stack belongs to (see PARTS)."""
    frames = stack.split(";")
    for frame in reversed(frames):
        for part, fragments in PARTS:
            if any(f in frame for f in fragments):
                return part
    return "other (threading, sleeps, stdlib)"


def busy_rows(raw_profile: Path) -> list[str]:
    """The raw profile's rows less those whose leaf frame is a wait (see WAITS)."""
    rows = []
    for row in raw_profile.read_text(encoding="utf-8").splitlines():
        stack, _, n = row.rpartition(" ")
        if stack and n.isdigit() and not stack.rsplit(";", 1)[-1].startswith(WAITS):
            rows.append(row)
    return rows


def parts(rows: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for row in rows:
        stack, _, n = row.rpartition(" ")
        counts[part_of(stack)] += int(n)
    return counts


def process_of(stack: str) -> str:
    """Which process of the crawl a stack was sampled in (py-spy --subprocesses puts
    each child's command line under its parent's frame)."""
    frames = stack.split(";", 2)
    child = frames[1] if len(frames) > 1 and frames[1].startswith("process ") else ""
    if "multiprocessing.spawn" in child:
        return "index process (indexer, ranker)"
    if child:
        return "helper processes"
    return "crawler process (Scrapy, extraction, scheduler)"


def by_process(rows: list[str]) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for row in rows:
        stack, _, n = row.rpartition(" ")
        counts[(process_of(stack), part_of(stack))] += int(n)
    return counts


def render(bare: list[CrawlCpu], profiled: CrawlCpu, raw: Path, load: tuple[float, float]) -> str:
    m = machine.describe()
    cpu = sorted(r.cpu_ms_per_page for r in bare)[len(bare) // 2]
    rows = busy_rows(raw)
    busy = raw.with_name(raw.name + ".busy")
    busy.write_text("\n".join(rows) + "\n", encoding="utf-8")
    split = parts(rows)
    total = sum(split.values())
    table = "\n".join(f"| {part} | {n / total * 100:.1f}% | {n / total * cpu:.2f} |" for part, n in split.most_common())
    per_process = by_process(rows)
    processes = Counter[str]()
    for (process, _), n in per_process.items():
        processes[process] += n
    process_table = "\n".join(
        f"| {process} | {n / total * 100:.1f}% | "
        + ", ".join(f"{part} {m / total * 100:.1f}%" for (p, part), m in per_process.most_common(40)
                    if p == process and m / total >= 0.02) + " |"
        for process, n in processes.most_common())
    runs = ", ".join(f"{r.pages} pages, {r.cpu_s:.1f} s CPU in {r.wall_s:.1f} s" for r in bare)
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Tansuo `{m.commit}`, {m.cpu}, {m.cores} cores, "
        f"Python {m.python}; load average (1 min) {load[0]:.1f} at the start, {load[1]:.1f} at the end.\n\n"
        f"CPU per page (median of {len(bare)} bare runs: {runs}): **{cpu:.1f} ms**. "
        f"The profiled run fetched {profiled.pages} pages; {total} busy samples at 200 a second.\n\n"
        "| part | share of busy samples | ≈ CPU ms per page |\n|---|---|---|\n" + table + "\n\n"
        + "| process | share of busy samples | its largest parts (2% and more) |\n|---|---|---|\n"
        + process_table + "\n\n"
        + summarise(busy, 20)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.crawl.crawl_profile", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    parser.add_argument("--raw", type=Path, default=Path(tempfile.gettempdir()) / "tansuo-crawl.raw",
                        help="where py-spy writes the raw profile")
    parser.add_argument("--rounds", type=int, default=3, help="bare runs for the CPU per page")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").exists():  # the demo site is built on first use; others are given built
        build_demo_site(args.site)
    load_start = os.getloadavg()[0]
    with SiteServer(args.site) as server:
        bare = [measure(server) for _ in range(args.rounds)]
        spy = [str(PY_SPY), "record", "-s", "-f", "raw", "-r", "200", "-o", str(args.raw), "--"]
        profiled = measure(server, spy)
    print(render(bare, profiled, args.raw, (load_start, os.getloadavg()[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
