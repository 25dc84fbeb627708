"""The documents in the search index, for the crawl figures the console and the report
show beside the frontier's: None while the index cannot be read (an api worker still
connecting, an embedded index a crawl has not made yet)."""

from __future__ import annotations

import logging

from services.common.errors import TansuoError
from services.common.ports import SearchIndex

log = logging.getLogger(__name__)


def index_documents(index: SearchIndex) -> int | None:
    try:
        return index.count()
    except (TansuoError, OSError, ValueError) as exc:
        log.warning("cannot count the documents in the index: %s", exc)
        return None
