"""The links a result carries besides its URL: the click link that counts it when opened
(services/analytics/click_links.py) and its cached copy (cache_views.py)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from services.analytics.click_links import ClickLinks


def with_links(result: dict[str, Any], query: str, links: ClickLinks | None) -> dict[str, Any]:
    """A copy of a search answer whose results have ``click_url`` (None without click
    links, analytics being off, or when they cannot be signed now) and ``cache_url``;
    the answer itself may be a cached one, shared, and is not changed."""
    first = (result["page"] - 1) * result["size"] + 1
    results = [
        {**r, "click_url": links.link(r["url"], query, first + i) if links is not None else None,
         # A document's copy is the file itself, which the cached-copy page does not show.
         "cache_url": None if r.get("filetype") else "/cache?" + urlencode({"url": r["url"]})}
        for i, r in enumerate(result["results"])
    ]  # fmt: skip
    return {**result, "results": results}
