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
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.measure.machine import describe
from bench.sites.corpus import site_pages
from services.api.app import create_app
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis import analyze_as_text, segment, words
from services.common.config import Settings
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService

SITE = Path.home() / ".cache" / "tansuo" / "zh-docs-site"


def _turns(a: Callable[[], None], b: Callable[[], None], rounds: int) -> tuple[float, float]:
    """Median seconds of ``a`` and of ``b``, run in alternating turns."""
    ta, tb = [], []
    for _ in range(rounds):
        for fn, out in ((a, ta), (b, tb)):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    return statistics.median(ta), statistics.median(tb)


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
        cfg = Settings(data_dir=Path(tmp), search_cache_entries=0, api_rate_limit_per_s=0)
        index = TantivySearchIndex(Path(tmp) / "index", cfg)
        index.upsert([build_document(p) for p in pages])
        index.commit()
        apps = {}
        for enabled in (True, False):
            app = create_app(cfg.model_copy(update={"analytics_enabled": enabled}), index=index)
            apps[enabled] = app.test_client()

        def searches(enabled: bool) -> Callable[[], None]:
            client = apps[enabled]
            return lambda: [client.get("/api/search", query_string={"q": q}) for q in queries]  # type: ignore[func-returns-value]

        on, off = _turns(searches(True), searches(False), args.rounds)
        print(f"analytics on / off, {len(queries)} API searches: {on:.3f} s / {off:.3f} s = {on / off:.3f}")

        service = SearchService(cfg, index)

        def sorted_by(sort: str) -> Callable[[], None]:
            return lambda: [service.search(q, sort=sort) for q in queries]  # type: ignore[func-returns-value]

        by_date, by_relevance = _turns(sorted_by("date"), sorted_by("relevance"), args.rounds)
        print(f"sort by date / by relevance, {len(queries)} searches: {by_date:.3f} s / {by_relevance:.3f} s "
              f"= {by_date / by_relevance:.3f}")  # fmt: skip
        index.close()

    texts = [p.body for p in pages]
    han = sorted({w for w in vocabulary if len(w) >= 2})
    user_words = [(a + b, None) for a, b in zip(han[::2], han[1::2], strict=False)][:2000]

    def analyse() -> None:
        for text in texts:
            analyze_as_text(text)

    def with_words() -> None:
        words.set_user_words(user_words)
        analyse()

    def without() -> None:
        words.set_user_words([])
        analyse()

    started = time.perf_counter()
    words.set_user_words(user_words)
    built = time.perf_counter() - started
    mine, plain = _turns(with_words, without, args.rounds)
    words.set_user_words([])
    chars = sum(len(t) for t in texts)
    print(f"segmenter with {len(user_words)} user words: built in {built:.2f} s; analysis of {chars:,} characters "
          f"{mine:.3f} s / {plain:.3f} s = {mine / plain:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
