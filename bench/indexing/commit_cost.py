"""What an index commit costs: tantivy alone at several commit sizes, and the indexer
service at a crawl's pace with several commit intervals.

Every commit makes a segment, and tantivy spends much the same on a small one as on a
large one (then merges them), so the indexer's commit interval is a trade between how
soon a page is searchable and how much CPU a page costs. This measures both halves on
the demo site's pages (``bench/sites/corpus.py``, repeated under other hosts):

- **tantivy alone**: the documents built and converted beforehand, written with the
  index's schema and writer, a commit every N documents, the merges waited for;
- **the indexer service**: one process publishes the page events to the embedded bus
  at a fixed rate (a crawl's), another runs ``Indexer.step`` until it has indexed them
  all, with ``TANSUO_INDEXER_COMMIT_INTERVAL_S`` set to each interval in turn; CPU is
  that process's user + system time (tantivy's threads included).

    .venv/bin/python -m bench.indexing.commit_cost --rounds 4
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import queue
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.indexing.index_bench import tantivy_writes
from bench.measure import machine
from bench.sites.corpus import repeated, site_pages
from services.cli.demo_site import default_cache
from services.common.domain.documents import IndexDoc
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document


def _pages(site: Path, copies: int) -> list[PageEvent]:
    return repeated(site_pages(site), copies)


def tantivy_alone(docs: Sequence[IndexDoc], every: int) -> tuple[float, int]:
    """CPU ms a document, and the segments left, writing ``docs`` with a commit every
    ``every`` documents (converted for tantivy first, untimed)."""
    from services.common.adapters.tantivy.search_index import _to_tantivy

    converted = [_to_tantivy(doc) for doc in docs]
    with tempfile.TemporaryDirectory(prefix="tansuo-commit-cost-") as path:
        gc.collect()
        spent, segments = tantivy_writes(converted, Path(path), every)
        return spent * 1000 / len(converted), segments


def _publish(bus_path: Path, site: Path, copies: int, rate: float, start: object) -> None:
    from services.common.adapters.sqlite.bus import SqliteBus
    from services.common.domain.messages import TOPIC_PAGES

    blobs = [(p.to_bytes(), p.host) for p in _pages(site, copies)]
    bus = SqliteBus(bus_path)
    start.wait()  # type: ignore[attr-defined]
    began = time.monotonic()
    for n, (payload, host) in enumerate(blobs):
        delay = began + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        bus.publish(TOPIC_PAGES, payload, key=host)
        bus.flush()
    bus.close()


def _index(bus_path: Path, index_path: Path, pages: int, interval_s: float, start: object, out: object) -> None:
    from services.common.adapters.sqlite.bus import SqliteBus
    from services.common.adapters.tantivy.search_index import TantivySearchIndex
    from services.common.config import Settings
    from services.common.domain.messages import TOPIC_PAGES
    from services.indexer.indexer import GROUP, Indexer

    cfg = Settings(indexer_commit_interval_s=interval_s, indexer_search_idle_after_s=0)  # the interval asked, searched or not
    bus = SqliteBus(bus_path)
    bus.subscribe(TOPIC_PAGES, GROUP)
    index = TantivySearchIndex(index_path, cfg)
    commits = [0]
    commit = index.commit

    def counted() -> None:
        commits[0] += 1
        commit()

    index.commit = counted  # type: ignore[method-assign]
    indexer = Indexer(cfg, bus, index)
    start.set()  # type: ignore[attr-defined]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    before = usage.ru_utime + usage.ru_stime
    while indexer.indexed < pages:
        indexer.step(0.5)
    indexer.flush()
    index.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put(((usage.ru_utime + usage.ru_stime - before) * 1000 / pages, commits[0]))  # type: ignore[attr-defined]
    bus.close()


def indexer_at_rate(site: Path, copies: int, pages: int, rate: float, interval_s: float) -> tuple[float, int]:
    """CPU ms a page of the indexer process, and its commits, for the ``pages`` page
    events of ``copies`` of the site arriving at ``rate`` a second."""
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="tansuo-commit-cost-") as work:
        bus_path = Path(work) / "bus.sqlite3"
        start, out = ctx.Event(), ctx.Queue()
        indexer = ctx.Process(target=_index, args=(bus_path, Path(work) / "index", pages, interval_s, start, out))
        publisher = ctx.Process(target=_publish, args=(bus_path, site, copies, rate, start))
        indexer.start()
        publisher.start()
        result = _result(out, [indexer, publisher])
        indexer.join()
        publisher.join()
        return result


def _result(out: object, procs: list[multiprocessing.process.BaseProcess]) -> tuple[float, int]:
    """The indexer's figures, or an error as soon as either process has failed (it
    would never send them)."""
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        try:
            return out.get(timeout=1.0)  # type: ignore[attr-defined,no-any-return]
        except queue.Empty:
            failed = [p.name for p in procs if p.exitcode not in (None, 0)]
            if failed:
                for p in procs:
                    p.kill()
                raise RuntimeError(f"{', '.join(failed)} failed (its traceback is above)") from None
    raise TimeoutError("the indexer did not finish in 30 minutes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.indexing.commit_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    parser.add_argument("--copies", type=int, default=8, help="copies of the site's pages (8: 2,040 demo pages)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="100,250,1000,5000", help="documents a commit, tantivy alone")
    parser.add_argument("--rate", type=float, default=130.0, help="page events a second for the indexer")
    parser.add_argument("--intervals", default="1,3,5", help="commit intervals (s) for the indexer")
    args = parser.parse_args(argv)
    pages = _pages(args.site, args.copies)
    docs = [build_document(page) for page in pages]  # once: the commit sizes all write these
    sizes = [int(s) for s in args.sizes.split(",")]
    intervals = [float(s) for s in args.intervals.split(",")]
    alone: dict[int, list[tuple[float, int]]] = {s: [] for s in sizes}
    paced: dict[float, list[tuple[float, int]]] = {i: [] for i in intervals}
    for n in range(args.rounds):
        for size in sizes:
            alone[size].append(tantivy_alone(docs, size))
            print(f"round {n + 1}, commits of {size}: {alone[size][-1][0]:.2f} ms a document", file=sys.stderr)
        for interval in intervals:
            paced[interval].append(indexer_at_rate(args.site, args.copies, len(pages), args.rate, interval))
            print(f"round {n + 1}, interval {interval:g} s: {paced[interval][-1][0]:.2f} ms a page", file=sys.stderr)
    print(_render(args, len(pages), alone, paced))
    return 0


def _cell(values: list[float]) -> str:
    return f"**{statistics.median(values):.2f}** ({min(values):.2f}–{max(values):.2f})"


def _render(args: argparse.Namespace, pages: int, alone: dict[int, list[tuple[float, int]]],
            paced: dict[float, list[tuple[float, int]]]) -> str:  # fmt: skip
    m = machine.describe()
    head = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Tansuo `{m.commit}`, {m.cpu}, {m.cores} cores, "
            f"Python {m.python}; {pages} pages of `{args.site.name}`, {args.rounds} rounds; medians, ranges in brackets.")  # fmt: skip
    rows_alone = "\n".join(
        f"| {size:,} | {_cell([r[0] for r in runs])} | {runs[-1][1]} |" for size, runs in alone.items()
    )
    rows_paced = "\n".join(
        f"| {interval:g} | {_cell([r[0] for r in runs])} | {statistics.median(r[1] for r in runs):.0f} |"
        for interval, runs in paced.items()
    )
    return (
        f"{head}\n\n"
        "| documents a commit (tantivy alone) | CPU ms a document | segments left |\n|---|---|---|\n"
        f"{rows_alone}\n\n"
        f"| commit interval, s (the indexer, {args.rate:g} pages a second) | CPU ms a page | commits |\n|---|---|---|\n"
        f"{rows_paced}\n"
    )


if __name__ == "__main__":
    sys.exit(main())
