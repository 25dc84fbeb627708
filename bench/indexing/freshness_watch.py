"""Fetch to searchable, read from outside the services: when a page's request reached
its site server (the server's own log), and when the page first showed in the
Elasticsearch index (a search run every ``period_s``); and the indexer's round trips
to Elasticsearch a page, from its /metrics.

Neither clock is the indexer's, so the figure does not depend on the code it checks.
A page counts as searchable when a search that found it has answered: an upper bound,
late by at most one watch period plus one search. It counts from the page's last
fetch before that: a fetch whose crawler was killed before it published the page
is fetched again once its lease expires, and that wait is the crawl's, not the
indexer's (such pages are counted apart).
"""

from __future__ import annotations

import statistics
import threading
import time
import urllib.request
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from elasticsearch import Elasticsearch
from prometheus_client.parser import text_string_to_metric_families

from services.cli.static_site_server import RequestRecord
from services.common.adapters.elasticsearch.search_index import parse_url

# URLs a watch search asks for at once: far below Elasticsearch's 65,536 terms a query.
_TERMS_PER_SEARCH = 2000


class IndexWatch:
    """Records, on a thread of its own, when each of ``urls`` is first found in the
    index of a TANSUO_INDEX URL (``time.monotonic()``, the site servers' clock)."""

    def __init__(self, index_url: str, urls: Collection[str], period_s: float = 0.1) -> None:
        nodes, self._alias, options = parse_url(index_url)
        self._es = Elasticsearch(nodes, request_timeout=30, **options)
        self._unseen = set(urls)
        self._period_s = period_s
        self.first_seen: dict[str, float] = {}
        self.searches = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="index-watch", daemon=True)

    def __enter__(self) -> IndexWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)
        self._es.close()

    def _run(self) -> None:
        while not self._stop.is_set() and self._unseen:
            try:
                self._look()
            except Exception:  # the alias may not exist yet, or the server is stopped
                pass
            self._stop.wait(self._period_s)

    def _look(self) -> None:
        unseen = sorted(self._unseen)
        for i in range(0, len(unseen), _TERMS_PER_SEARCH):
            part = unseen[i : i + _TERMS_PER_SEARCH]
            found = self._es.search(index=self._alias, query={"terms": {"url": part}}, size=len(part),
                                    source=["url"], track_total_hits=False)  # fmt: skip
            answered = time.monotonic()
            self.searches += 1
            for hit in found["hits"]["hits"]:
                url = str(hit["_source"]["url"])
                if url in self._unseen:
                    self._unseen.discard(url)
                    self.first_seen[url] = answered


def fetches(logs: Mapping[str, Sequence[RequestRecord]], port: int, since: float = 0.0) -> dict[str, list[float]]:
    """URL -> when each of its GETs reached its site server (``time.monotonic()``, in
    order), from each host's request log (``bench/sites/loopback_hosts.py``) since ``since``."""
    times: dict[str, list[float]] = {}
    for address, records in logs.items():
        for r in records:
            if r.method == "GET" and r.time >= since:
                times.setdefault(f"http://{address}:{port}{r.path}", []).append(r.time)
    for found in times.values():
        found.sort()
    return times


@dataclass(frozen=True)
class Freshness:
    """Seconds from each page's first fetch to its being found in the index."""

    latencies: list[float]
    missing: int  # pages never found in the index while watched
    refetched: int  # pages fetched more than once before they were found

    @property
    def p50(self) -> float:
        return _quantile(self.latencies, 0.5)

    @property
    def p99(self) -> float:
        return _quantile(self.latencies, 0.99)

    @property
    def worst(self) -> float:
        return max(self.latencies, default=0.0)

    def describe(self) -> str:
        return (f"fetch to searchable over {len(self.latencies)} pages: p50 {self.p50:.2f} s, p99 {self.p99:.2f} s, "
                f"max {self.worst:.2f} s; {self.missing} never seen, {self.refetched} fetched again first")  # fmt: skip


def freshness(fetched: Mapping[str, Sequence[float]], seen: Mapping[str, float], pages: Collection[str]) -> Freshness:
    """Fetch-to-searchable of each of ``pages`` that was both fetched and seen, from
    its last fetch before it was seen."""
    latencies, refetched = [], 0
    for url in pages:
        if url not in seen or not fetched.get(url):
            continue
        before = [t for t in fetched[url] if t <= seen[url]] or fetched[url][:1]
        refetched += len(before) > 1
        latencies.append(max(0.0, seen[url] - before[-1]))
    return Freshness(sorted(latencies), sum(1 for u in pages if u not in seen), refetched)


def _quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile, inclusive method (the p99 of 100 values lies within them)."""
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


@dataclass(frozen=True)
class RoundTrips:
    """The indexer's requests to Elasticsearch, from its /metrics, and the pages it indexed."""

    requests: dict[str, float]  # by endpoint
    pages: float

    @property
    def total(self) -> float:
        return sum(self.requests.values())

    def per_page(self, endpoints: Collection[str] | None = None) -> float:
        """Requests a page, of every endpoint or of ``endpoints``."""
        spent = sum(n for e, n in self.requests.items() if endpoints is None or e in endpoints)
        return spent / self.pages if self.pages else float("inf")

    def describe(self) -> str:
        parts = ", ".join(f"{e} {n:.0f}" for e, n in sorted(self.requests.items()))
        return f"{self.total:.0f} requests to Elasticsearch ({parts}) for {self.pages:.0f} pages: {self.per_page():.3f} a page"


def round_trips(health_port: int) -> RoundTrips:
    """What a service's /metrics says it sent to Elasticsearch and indexed so far."""
    with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    requests: dict[str, float] = {}
    pages = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "tansuo_index_requests_total":
                requests[sample.labels["endpoint"]] = sample.value
            elif sample.name == "tansuo_pages_indexed_total":
                pages = sample.value
    return RoundTrips(requests, pages)


def gauge(health_port: int, name: str) -> float | None:
    """One unlabelled gauge of a service's /metrics; None when it exports none."""
    with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and not sample.labels:
                return sample.value
    return None
