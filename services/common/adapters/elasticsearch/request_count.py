"""Every HTTP request the Elasticsearch client sends, counted by endpoint.

The count is taken where the request leaves (the client's node class), not where an
adapter method is called, so that a bulk helper's split requests and the client's
retries count as the round trips they are: ``tansuo_index_requests_total`` divided by
``tansuo_pages_indexed_total`` is the indexer's round trips a page.
"""

from __future__ import annotations

from typing import Any

from elastic_transport import Urllib3HttpNode
from elastic_transport._node import NodeApiResponse  # not re-exported at the top level

from services.common.runtime.metrics import INDEX_REQUESTS

# The API endpoints a search index uses, by their path segment; the rest (index and
# alias administration, point in time, ...) counts as "other".
_ENDPOINTS = {
    "_bulk": "bulk",
    "_search": "search",
    "_msearch": "msearch",
    "_mget": "mget",
    "_doc": "get",
    "_refresh": "refresh",
    "_count": "count",
}


def endpoint_of(method: str, target: str) -> str:
    """The endpoint label of a request: ``/alias/_bulk?refresh=true`` is "bulk"."""
    path = target.split("?", 1)[0]
    for segment in path.split("/"):
        if segment.startswith("_"):
            name = _ENDPOINTS.get(segment, "other")
            # A document is read with GET /_doc/<id>; a write of one is "other".
            return name if name != "get" or method == "GET" else "other"
    return "other"


class CountingNode(Urllib3HttpNode):
    """The client's default node, counting each request it sends."""

    def perform_request(self, method: str, target: str, *args: Any, **kwargs: Any) -> NodeApiResponse:
        INDEX_REQUESTS.labels(endpoint=endpoint_of(method, target)).inc()
        return super().perform_request(method, target, *args, **kwargs)
