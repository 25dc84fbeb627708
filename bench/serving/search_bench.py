"""Search latency: SearchService on the benchmark's tantivy index against SQLite FTS5
on the same pages, one query at a time, the two engines taking turns.

Queries are drawn from the corpus with a fixed seed, so every run asks the same ones:
page titles, one to three words of one page, words of two different pages (which
usually miss and take the any-word second pass) and the Latin words of the manuals.
"""

from __future__ import annotations

import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.indexing.fts5_baseline import Fts5Index
from services.common.analysis.stop_words import STOP_WORDS
from services.common.analysis.words import segment
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.search.search_service import SearchService

SEED = 20_251_122
WARM_UP = 20  # queries run on both engines before timing: first-touch page cache and lazy loads
_HAN_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")
_LATIN_WORD = re.compile(r"[a-z][a-z0-9._+#-]{2,}")

# Share of each kind of query, in the order they are drawn.
_MIX = (
    ("title", 0.20),
    ("1 word", 0.20),
    ("2 words", 0.20),
    ("3 words", 0.15),
    ("2 words, 2 pages", 0.05),
    ("English", 0.20),
)


@dataclass(frozen=True)
class Query:
    text: str
    kind: str


@dataclass(frozen=True)
class LatencyStats:
    times_ms: list[float] = field(repr=False)
    with_results: int  # queries that found at least one page
    kinds: list[str] = field(default_factory=list, repr=False)  # kind of query of each time

    def of_kind(self, kind: str) -> LatencyStats:
        times = [t for t, k in zip(self.times_ms, self.kinds, strict=True) if k == kind]
        return LatencyStats(times, 0, [kind] * len(times))

    def quantile(self, q: float) -> float:
        ordered = sorted(self.times_ms)
        # Nearest rank: the p99 of 1,000 queries is the 990th fastest, a time really seen.
        return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))]

    @property
    def p50(self) -> float:
        return self.quantile(0.50)

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times_ms)


@dataclass(frozen=True)
class SearchComparison:
    queries: int
    kinds: dict[str, int]
    docs: int
    tansuo: LatencyStats
    fts5: LatencyStats
    same_total: int  # queries for which both engines counted the same number of matching pages

    def ratio(self, metric: Callable[[LatencyStats], float]) -> float:
        """Tansuo's latency over the baseline's: below 1 means Tansuo is faster."""
        base = metric(self.fts5)
        return metric(self.tansuo) / base if base else 0.0


def draw_queries(pages: Sequence[PageEvent], n: int, seed: int = SEED) -> list[Query]:
    """``n`` queries in the proportions of ``_MIX``, the same ones for the same pages and seed."""
    rng = random.Random(seed)
    titles = sorted({p.title for p in pages if p.title.strip()})
    words_by_page = []
    latin: set[str] = set()
    for page in pages:
        tokens = segment(f"{page.title}\n{page.body}")
        han = sorted({t for t in tokens if _HAN_WORD.fullmatch(t) and t not in STOP_WORDS})
        if len(han) >= 3:
            words_by_page.append(han)
        latin.update(t for t in tokens if _LATIN_WORD.fullmatch(t) and t not in STOP_WORDS)
    english = sorted(latin)
    queries: list[Query] = []
    for kind, share in _MIX:
        for _ in range(round(n * share)):
            if kind == "title":
                text = rng.choice(titles)
            elif kind == "English":
                text = rng.choice(english)
            elif kind == "2 words, 2 pages":
                text = f"{rng.choice(rng.choice(words_by_page))} {rng.choice(rng.choice(words_by_page))}"
            else:
                text = " ".join(rng.sample(rng.choice(words_by_page), int(kind[0])))
            queries.append(Query(text, kind))
    rng.shuffle(queries)
    return queries[:n]


def run_search_bench(tansuo_data_dir: Path, fts5_path: Path, queries: Sequence[Query],
                     log: Callable[[str], None] = print, overrides: dict[str, Any] | None = None) -> SearchComparison:
    cfg = Settings(data_dir=tansuo_data_dir, **(overrides or {}))
    # Read-only, as `tansuo serve` opens it: it also checks for new commits per query.
    index = build_search_index(cfg, read_only=True)
    service = SearchService(cfg, index)
    fts5 = Fts5Index(fts5_path)
    engines: list[tuple[str, Callable[[str], dict[str, Any]]]] = [
        ("tansuo", lambda q: service.search(q, page=1, size=10)),
        ("fts5", lambda q: fts5.search(q, size=10)),
    ]
    for query in queries[:WARM_UP]:
        for _, search in engines:
            search(query.text)
    times: dict[str, list[float]] = {name: [] for name, _ in engines}
    found: Counter[str] = Counter()
    same_total = 0
    for i, query in enumerate(queries):
        totals = {}
        for name, search in engines if i % 2 == 0 else engines[::-1]:
            started = time.perf_counter()
            result = search(query.text)
            times[name].append((time.perf_counter() - started) * 1000)
            found[name] += bool(result["results"])
            totals[name] = result["total"]
        same_total += totals["tansuo"] == totals["fts5"]
    kinds = [q.kind for q in queries]
    comparison = SearchComparison(
        queries=len(queries),
        kinds={kind: n for kind, _ in _MIX if (n := kinds.count(kind))},
        docs=index.count(),
        tansuo=LatencyStats(times["tansuo"], found["tansuo"], kinds),
        fts5=LatencyStats(times["fts5"], found["fts5"], kinds),
        same_total=same_total,
    )
    fts5.close()
    log(f"  search, {len(queries)} queries: tansuo p50 {comparison.tansuo.p50:.2f} ms, "
        f"p99 {comparison.tansuo.p99:.2f} ms; fts5 p50 {comparison.fts5.p50:.2f} ms, p99 {comparison.fts5.p99:.2f} ms")
    return comparison
