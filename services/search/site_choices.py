"""The sites the web UI's filter offers, listed once per index view.

Listing the sites is an aggregation over every document, and on a large index the
options of a select naming every site would be hundreds of KiB of every page the UI
serves. The list changes only when the index does, so each worker
keeps it while ``view_version()`` is unchanged (for ``ttl_s`` on a backend that
cannot tell), and past ``SELECT_LIMIT`` sites the UI asks for a site by name instead
of listing them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from services.common.ports import SearchIndex
from services.search.result_cache import ResultCache

log = logging.getLogger(__name__)

# More sites than this are typed, not picked from a list (a select of thousands of
# options is neither usable nor cheap to send).
SELECT_LIMIT = 200
_KEY = "sites"


class SiteChoices:
    def __init__(self, index: SearchIndex, ttl_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._index = index
        self._cache = ResultCache(1, ttl_s, clock)  # one entry, on the result cache's terms

    def sites(self) -> list[str]:
        """Every site of the index, sorted; [] when the index cannot say (the filter is a
        convenience: a failing index shows up in the search itself)."""
        try:
            version = self._index.view_version()
        except Exception:  # as for the listing below
            version = None
        cached: list[str] | None = self._cache.get(_KEY, version)
        if cached is not None:
            return cached
        try:
            sites = self._index.sites()
        except Exception:
            log.exception("cannot list sites for the filter")
            return []
        self._cache.put(_KEY, version, sites)
        return sites
