"""The search under test: Tansuo's own, run in-process or over HTTP.

Both go through what /api/search runs (``SearchService``), so the figures are the
ones users get. Recall@100 needs 100 results; where the page-size limit
(``TANSUO_SEARCH_MAX_PAGE_SIZE``, default 100) is lower, the target pages through.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from services.common.config import Settings
from services.common.errors import BackendError
from services.common.ports import SearchIndex

DEPTH = 100  # results fetched per query: the deepest cut-off of the metrics
_MAX_SIZE = re.compile(r"size must be between 1 and (\d+)")
_MAX_RATE_LIMIT_WAITS = 10  # 429s in a row for one request before the run fails

Search = Callable[[str, int], list[str]]


class TargetError(BackendError):
    """The search under test failed in a way that invalidates the run."""


def in_process(cfg: Settings, index: SearchIndex) -> Search:
    """Tansuo through SearchService over ``index``: no server needed."""
    from services.search.search_service import BadQuery, SearchService

    service = SearchService(cfg, index)
    size = max(1, min(DEPTH, cfg.search_max_page_size))

    def search(query: str, depth: int = DEPTH) -> list[str]:
        urls: list[str] = []
        page = 1
        while len(urls) < depth:
            try:
                result = service.search(query, page=page, size=size)
            except BadQuery:
                return urls  # a query the service rejects finds nothing, as for a user
            urls.extend(hit["url"] for hit in result["results"])
            if not result["results"] or page >= result["pages"]:
                break
            page += 1
        return urls[:depth]

    return search


def over_http(base_url: str, timeout_s: float = 30.0, sleep: Callable[[float], None] = time.sleep) -> Search:
    """Tansuo through ``GET /api/search`` of a running API at ``base_url``. A 429 (the
    server's per-address rate limit) is waited out as its Retry-After asks; any other
    refusal fails the run."""
    root = base_url.rstrip("/")
    size = [DEPTH]

    def fetch(query: str, page: int, waited: int = 0) -> dict:
        qs = urllib.parse.urlencode({"q": query, "page": page, "size": size[0]})
        try:
            with urllib.request.urlopen(f"{root}/api/search?{qs}", timeout=timeout_s) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            body = exc.read().decode("utf-8", "replace")
            retry_after = exc.headers.get("Retry-After", "")
            if exc.code == 429 and retry_after.isdigit() and waited < _MAX_RATE_LIMIT_WAITS:
                sleep(min(float(retry_after), 60.0))
                return fetch(query, page, waited + 1)
            limit = _MAX_SIZE.search(body)
            if exc.code == 400 and limit and int(limit.group(1)) < size[0]:
                size[0] = int(limit.group(1))  # the server's page-size limit: page through
                return fetch(query, page)
            if exc.code == 400:
                return {"results": [], "pages": 0}  # a rejected query finds nothing
            raise TargetError(f"{root}/api/search answered {exc.code}: {body[:200]}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise TargetError(f"cannot reach {root}/api/search: {exc}") from None

    def search(query: str, depth: int = DEPTH) -> list[str]:
        urls: list[str] = []
        page = 1
        while len(urls) < depth:
            result = fetch(query, page)
            urls.extend(hit["url"] for hit in result.get("results", []))
            if not result.get("results") or page >= result.get("pages", 0):
                break
            page = len(urls) // size[0] + 1  # the size may have shrunk after page 1
        return urls[:depth]

    return search
