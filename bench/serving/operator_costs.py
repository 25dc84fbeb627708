"""What issue 38's operator features cost, each as a ratio to the same work without them,
in one run on the demo site (Debian's Chinese manuals, ~/.cache/tansuo/zh-docs-site):

- **Search analytics on the search path**: /api/search through the Flask app (in
  process, no sockets), analytics on against off, the same queries in turns. On, each
  answer also gets its click links signed (HMAC) and an event buffered; the write to
  the search log happens in the background thread, as in `tansuo serve`.
- **A segmenter with user words**: the pages' analysis (words, sub-words, bigrams) with
  rjieba's own segmenter against one with 2,000 user words added (words drawn from the
  pages' own text, so they are met), in turns.
- **Sort by date**: the same queries through SearchService sorted by relevance and by
  date, on tantivy (the date is a fast field).

    python -m bench.serving.operator_costs [--rounds 5] [--site DIR]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench.measure.machine import describe
from bench.sites.corpus import site_pages
from services.analytics.recorder import SearchAnalytics
from services.api.app import create_app
from services.common.adapters.sqlite.search_log import SqliteSearchLog
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis import analyze_as_text, segment, words
from services.common.config import Settings
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService

T = TypeVar("T")
SITE = Path.home() / ".cache" / "tansuo" / "zh-docs-site"


def _interleaved(items: Sequence[T], a: Callable[[T], object], b: Callable[[T], object], rounds: int) -> tuple[float, float]:
    """Seconds of ``a`` and of ``b`` over every item, ``rounds`` times, the two taking
    turns item by item (each first every other time): on a machine shared with other
    work, a slow spell then costs both sides alike, and neither warms a cache for the
    other more than it is warmed for it."""
    ta = tb = 0.0
    clock = time.perf_counter
    for n in range(rounds):
        for i, item in enumerate(items):
            first, second = (a, b) if (n + i) % 2 == 0 else (b, a)
            t0 = clock()
            first(item)
            t1 = clock()
            second(item)
            t2 = clock()
            if first is a:
                ta, tb = ta + t1 - t0, tb + t2 - t1
            else:
                tb, ta = tb + t1 - t0, ta + t2 - t1
    return ta, tb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--site", type=Path, default=SITE)
    args = parser.parse_args()
    pages = site_pages(args.site)
    rng = random.Random(38)
    vocabulary = sorted({w for p in pages for w in segment(p.title) if len(w) >= 2})
    queries = [rng.choice(vocabulary) for _ in range(400)]
    machine = describe()
    print(f"{machine.cpu}, {machine.cores} cores, Python {machine.python}, commit {machine.commit}")
    print(f"{len(pages)} pages, {len(queries)} queries, {args.rounds} rounds in turns")

    with tempfile.TemporaryDirectory() as tmp:
        # No answer cache: every search is planned and run. The stored-hit cache stays on.
        cfg = Settings(data_dir=Path(tmp), search_cache_entries=0, api_rate_limit_per_s=0)
        index = TantivySearchIndex(Path(tmp) / "index", cfg)
        index.upsert([build_document(p) for p in pages])
        index.commit()
        # Two apps without analytics beside one with: the A/A pair says how far two
        # identical apps differ here (their own caches, the machine's other work).
        on_client = create_app(cfg, index=index).test_client()
        off_cfg = cfg.model_copy(update={"analytics_enabled": False})
        off_client, other_client = (create_app(off_cfg, index=index).test_client() for _ in range(2))

        def get(client: Any) -> Callable[[str], object]:
            return lambda q: client.get("/api/search", query_string={"q": q})

        on, off = _interleaved(queries, get(on_client), get(off_client), args.rounds)
        same, also = _interleaved(queries, get(other_client), get(off_client), args.rounds)
        print(f"analytics on / off, {len(queries)} API searches x {args.rounds}: {on:.3f} s / {off:.3f} s = "
              f"{on / off:.3f} (two apps without: {same / also:.3f})")  # fmt: skip
        recorder = SearchAnalytics(cfg, lambda: log)
        log = SqliteSearchLog(Path(tmp) / "log.sqlite3")
        started = time.perf_counter()
        for q in queries:
            recorder.searched(q, 10, 1, 12.0, "api")
        buffered = time.perf_counter() - started
        started = time.perf_counter()
        recorder.flush()
        written = time.perf_counter() - started
        print(f"per search: {buffered / len(queries) * 1e6:.1f} µs to buffer its event, "
              f"{written / len(queries) * 1e6:.1f} µs to write it (in the background thread, a batch of {len(queries)})")

        service = SearchService(cfg, index)
        by_date, by_relevance = _interleaved(queries, lambda q: service.search(q, sort="date"),
                                             lambda q: service.search(q), args.rounds)  # fmt: skip
        print(f"sort by date / by relevance, {len(queries)} searches x {args.rounds}: {by_date:.3f} s / "
              f"{by_relevance:.3f} s = {by_date / by_relevance:.3f}")  # fmt: skip
        index.close()

    texts = [p.body for p in pages]
    han = sorted({w for p in pages for w in segment(p.body) if len(w) >= 2})
    user_words = [(a + b, None) for a, b in zip(han[::2], han[1::2], strict=False)][:2000]
    default = words._segmenter
    started = time.perf_counter()
    words.set_user_words(user_words)
    built = time.perf_counter() - started
    mine = words._segmenter
    chars = sum(len(t) for t in texts)

    def analyse_with(segmenter: object) -> Callable[[str], object]:
        def run(text: str) -> object:
            words._segmenter = segmenter  # swapped directly: set_user_words would rebuild it
            return analyze_as_text(text)

        return run

    with_words, plain = _interleaved(texts, analyse_with(mine), analyse_with(default), args.rounds)
    words.set_user_words([])
    print(f"segmenter with {len(user_words)} user words: built in {built:.2f} s; analysis of {chars:,} characters "
          f"x {args.rounds}: {with_words:.3f} s / {plain:.3f} s = {with_words / plain:.3f}")  # fmt: skip

if __name__ == "__main__":
    main()
