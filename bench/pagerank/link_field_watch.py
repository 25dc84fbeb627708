"""Watching a cluster crawl end: when the frontier settles, and how long documents then
go without PageRank in the Elasticsearch index (issue 17's convergence figure).

Counted in the index itself, not from the ranker's own gauge: the figure must not
depend on the code it checks. A document "without PageRank" is one whose ``pagerank``
field is missing or not above 0 (every page in a link graph gets a positive PageRank,
so 0 means the ranker never wrote it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from elasticsearch import Elasticsearch

from services.common.adapters.elasticsearch.search_index import parse_url
from services.common.adapters.redis.frontier import RedisFrontierState

_UNRANKED = {"bool": {"must_not": [{"range": {"pagerank": {"gt": 0}}}]}}


@dataclass(frozen=True)
class Sample:
    """One look at the index, ``after_s`` seconds after the frontier settled."""

    after_s: float
    docs: int
    unranked: int


class IndexCounter:
    """Counts documents, and those without PageRank, in the index of a TANSUO_INDEX URL."""

    def __init__(self, index_url: str) -> None:
        nodes, self.alias, options = parse_url(index_url)
        self._es = Elasticsearch(nodes, request_timeout=30, **options)

    def counts(self) -> tuple[int, int]:
        """(documents, documents without PageRank); (0, 0) before the index exists."""
        if not self._es.indices.exists_alias(name=self.alias):
            return 0, 0
        docs = int(self._es.count(index=self.alias)["count"])
        unranked = int(self._es.count(index=self.alias, query=_UNRANKED)["count"])
        return docs, unranked

    def close(self) -> None:
        self._es.close()


def wait_until_fetched(frontier: RedisFrontierState, pages: int, timeout_s: float,
                       alive: Callable[[], None]) -> None:  # fmt: skip
    """Return once the frontier counts ``pages`` fetches; ``alive`` raises if a service died."""
    deadline = time.monotonic() + timeout_s
    while frontier.counts(time.time()).fetched < pages:
        alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {pages} pages fetched after {timeout_s:.0f}s")
        time.sleep(0.2)


def wait_until_settled(frontier: RedisFrontierState, min_fetched: int, timeout_s: float,
                       alive: Callable[[], None]) -> float:  # fmt: skip
    """The wall time at which the frontier first had nothing queued and nothing in flight
    (robots.txt fetches included) after ``min_fetched`` fetches: the crawl's last page
    is fetched, and only the indexer and the ranker may still be behind."""
    deadline = time.monotonic() + timeout_s
    while True:
        counts = frontier.counts(time.time())
        if counts.fetched >= min_fetched and counts.queued == 0 and counts.leased == 0:
            return time.time()
        alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"the frontier did not settle in {timeout_s:.0f}s: {counts}")
        time.sleep(0.25)


def watch_link_fields(counter: IndexCounter, settled_at: float, expected_docs: int, limit_s: float,
                      interval_s: float = 2.0) -> list[Sample]:  # fmt: skip
    """Samples every ``interval_s`` from the settling on, until the index holds
    ``expected_docs`` documents and none without PageRank, or ``limit_s`` has passed."""
    samples: list[Sample] = []
    while True:
        docs, unranked = counter.counts()
        samples.append(Sample(round(time.time() - settled_at, 1), docs, unranked))
        if (docs >= expected_docs and unranked == 0) or samples[-1].after_s > limit_s:
            return samples
        time.sleep(interval_s)


def converged_after(samples: list[Sample], expected_docs: int) -> float | None:
    """Seconds from the settling to the first sample with every document in and ranked."""
    return next((s.after_s for s in samples if s.docs >= expected_docs and s.unranked == 0), None)


def unranked_at(samples: list[Sample], after_s: float) -> Sample | None:
    """The last sample taken at or before ``after_s`` seconds after the settling."""
    before = [s for s in samples if s.after_s <= after_s]
    return before[-1] if before else None
