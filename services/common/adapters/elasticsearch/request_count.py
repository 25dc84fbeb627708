"""Every HTTP request the Elasticsearch client sends, counted by endpoint.

The count is taken where the request leaves (the client's node class), not where an
adapter method is called, so that split bulk requests and the client's retries count
as the round trips they are. Whoever builds the adapter says what counting means
(bootstrap: ``tansuo_index_requests_total``), so the adapter knows no metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elastic_transport import Urllib3HttpNode
from elastic_transport._node import NodeApiResponse  # not re-exported at the top level

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


def counting_node(count: Callable[[str], None]) -> type[Urllib3HttpNode]:
    """The client's default node class, calling ``count(endpoint)`` for each request it sends."""

    class CountingNode(Urllib3HttpNode):
        def perform_request(self, method: str, target: str, *args: Any, **kwargs: Any) -> NodeApiResponse:
            count(endpoint_of(method, target))
            return super().perform_request(method, target, *args, **kwargs)

    return CountingNode
