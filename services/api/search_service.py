"""The search use case, shared by the JSON API, the web UI and the CLI.

It turns a user's query string into a backend-neutral ``SearchQuery``, runs it
(all words first; if that finds nothing, any word or any of their search-mode
parts) and shapes the answer. Input
is validated here, once, so every entry point rejects the same things the same way.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from services.api.snippets import snippet_html, title_html
from services.common.metrics import SEARCH_DURATION, SEARCH_REQUESTS
from services.common.model import SearchQuery
from services.common.ports import SearchIndex
from services.common.settings import Settings
from services.indexer.chinese_tokens import segment, subwords

MAX_QUERY_CHARS = 500
# Deep paging costs the index a top-(offset+size) collection per request; ten
# thousand hits is also Elasticsearch's default max_result_window.
MAX_RESULT_WINDOW = 10_000
MAX_SITE_CHARS = 253  # longest DNS name

# Words too common to be required: a query of 中国的首都 must not fail for want of 的.
# They stay in the phrase, which only adds score.
STOP_WORDS = frozenset(
    """
    的 了 是 在 和 与 及 等 之 或 也 就 都 而 并 其 这 那 个 把 被 着 过 吗 呢 吧 啊
    a an the of to in on at by for from with and or is are was were be been it its as that this
    """.split()
)


class BadQuery(ValueError):
    """The caller's parameters are invalid; the message says which and why, in a
    form fit to show to the user."""


def _as_int(name: str, value: int | str) -> int:
    if isinstance(value, bool):
        raise BadQuery(f"{name} must be an integer")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        raise BadQuery(f"{name} must be an integer, not {text[:20]!r}") from None


class SearchService:
    """Validate, segment, search, then build snippets for one page of results."""

    def __init__(self, cfg: Settings, index: SearchIndex) -> None:
        self._cfg = cfg
        self._index = index

    def validate(self, q: str, page: int | str, size: int | str, site: str) -> tuple[str, int, int, str]:
        """Clean parameters, or BadQuery. Strings are accepted so that the HTTP and
        command-line layers can pass raw input through."""
        q = (q or "").strip()
        if not q:
            raise BadQuery("q must not be empty")
        if len(q) > MAX_QUERY_CHARS:
            raise BadQuery(f"q is too long: at most {MAX_QUERY_CHARS} characters")
        page_n = _as_int("page", page)
        size_n = _as_int("size", size)
        if size_n < 1 or size_n > self._cfg.search_max_page_size:
            raise BadQuery(f"size must be between 1 and {self._cfg.search_max_page_size}")
        if page_n < 1:
            raise BadQuery("page must be 1 or more")
        if page_n * size_n > MAX_RESULT_WINDOW:
            raise BadQuery(f"page * size must not exceed {MAX_RESULT_WINDOW}: narrow the query instead")
        site = (site or "").strip().lower()
        if len(site) > MAX_SITE_CHARS or any(c.isspace() or c == "/" for c in site):
            raise BadQuery("site must be a host name such as www.example.cn")
        return q, page_n, size_n, site

    def search(self, q: str, page: int | str = 1, size: int | str = 10, site: str = "") -> dict[str, Any]:
        """One page of results as a JSON-ready dict.

        ``snippet`` and ``title_html`` are HTML: page text escaped, matches in ``<em>``.
        ``matched_all`` is False when no page had every word and the results are
        pages with any of them.
        """
        started = time.perf_counter()
        try:
            result = self._search(started, q, page, size, site)
        except BadQuery:
            SEARCH_REQUESTS.labels(outcome="bad_request").inc()
            raise
        except Exception:
            SEARCH_REQUESTS.labels(outcome="error").inc()
            # Failures count in the latency too: a backend timing out is slow, not absent.
            SEARCH_DURATION.observe(time.perf_counter() - started)
            raise
        SEARCH_REQUESTS.labels(outcome="ok").inc()
        SEARCH_DURATION.observe(time.perf_counter() - started)
        return result

    def _search(self, started: float, q: str, page: int | str, size: int | str, site: str) -> dict[str, Any]:
        q, page_n, size_n, site = self.validate(q, page, size, site)
        words = segment(q)
        # A query of only stop-words (“的”) still searches for them.
        terms = tuple(w for w in dict.fromkeys(words) if w not in STOP_WORDS) or tuple(dict.fromkeys(words))
        query = SearchQuery(
            terms=terms,
            phrase=tuple(words),
            site=site,
            offset=(page_n - 1) * size_n,
            limit=size_n,
            require_all=True,
        )
        found = self._index.search(query) if terms else None
        matched_all = True
        if found is not None and found.total == 0:
            # Any word will do; and a word the pages split differently (安全更新 vs
            # 安全 … 更新) gets a second chance through its parts.
            extras = tuple(w for w in dict.fromkeys(subwords(q)) if w not in STOP_WORDS and w not in terms)
            if len(terms) > 1 or extras:
                matched_all = False
                terms = terms + extras
                found = self._index.search(dataclasses.replace(query, terms=terms, require_all=False))
        results = []
        total = 0
        if found is not None:
            total = found.total
            for hit in found.hits:
                results.append(
                    {
                        "url": hit.url,
                        "title": hit.title,
                        "title_html": title_html(hit.title or hit.url, terms),
                        "snippet": snippet_html(hit.body or hit.headings, terms),
                        "score": round(hit.score, 6),
                        "pagerank": hit.pagerank,
                        "site": hit.site,
                    }
                )
        pages = min(math.ceil(total / size_n), MAX_RESULT_WINDOW // size_n)
        return {
            "query": q,
            "total": total,
            "took_ms": round((time.perf_counter() - started) * 1000, 1),
            "page": page_n,
            "size": size_n,
            "pages": pages,
            "site": site,
            "terms": list(terms),
            "matched_all": matched_all,
            "results": results,
        }
