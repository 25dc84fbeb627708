"""Search analytics as the API records them: every search answered and every result
opened, handed to the SearchLog port in batches.

A search must not wait for the log: events go into a bounded buffer that a thread
writes out about once a second, so an API worker makes one small write a second
however busy it is, and a slow or unreachable store costs searches nothing (events
past the buffer are counted as dropped, not waited for). What is kept is the query
(whitespace collapsed, case folded), the result count, the page, the time taken and
when; never who asked (no address, cookie or user agent).
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable

from services.common.config import Settings
from services.common.domain.search_analytics import ClickEvent, SearchEvent
from services.common.ports import SearchLog
from services.common.runtime.metrics import (
    SEARCH_ANALYTICS_DROPPED,
    SEARCH_ANALYTICS_SEARCHES,
    SEARCH_RESULT_CLICKS,
)
from services.common.runtime.periodic import Periodic

log = logging.getLogger(__name__)

# Events held while the store is slow or away: a minute of a busy worker's searches.
MAX_BUFFERED = 20_000
FLUSH_INTERVAL_S = 1.0
MAX_QUERY_CHARS = 200  # longer queries are kept cut: they are pasted text, not searches to count


def normalise(query: str) -> str:
    """A query as counted: whitespace collapsed, case folded, cut to ``MAX_QUERY_CHARS``."""
    return " ".join(query.split()).casefold()[:MAX_QUERY_CHARS]


def day_of(at: float, utc_offset_hours: float) -> str:
    """The day (YYYY-MM-DD) an instant counts for."""
    zone = datetime.timezone(datetime.timedelta(hours=utc_offset_hours))
    return datetime.datetime.fromtimestamp(at, zone).date().isoformat()


class SearchAnalytics:
    """Buffers search and click events and writes them to the log in the background."""

    def __init__(self, cfg: Settings, store: Callable[[], SearchLog], clock: Callable[[], float] = time.time) -> None:
        self._cfg = cfg
        self._store = store  # called on use: a server whose log is away still serves searches
        self._clock = clock
        self._lock = threading.Lock()
        self._searches: list[SearchEvent] = []
        self._clicks: list[ClickEvent] = []
        self._periodic = Periodic("search-analytics", FLUSH_INTERVAL_S, self.flush)
        self._failing = False
        for result in ("hits", "zero"):
            SEARCH_ANALYTICS_SEARCHES.labels(result=result)  # exported at 0: a ratio has both series from the start

    @property
    def enabled(self) -> bool:
        return self._cfg.analytics_enabled

    def today(self) -> str:
        return day_of(self._clock(), self._cfg.analytics_utc_offset_hours)

    def start(self) -> SearchAnalytics:
        """Write the buffer out every second from a daemon thread, from now on."""
        if self.enabled:
            self._periodic.start()
        return self

    def stop(self) -> None:
        """Stop the thread and write what is left."""
        self._periodic.stop(wait_s=5.0)
        self.flush()

    def _room(self) -> bool:
        if len(self._searches) + len(self._clicks) < MAX_BUFFERED:
            return True
        SEARCH_ANALYTICS_DROPPED.inc()
        return False

    def searched(self, query: str, total: int, page: int, took_ms: float, source: str, sort: str = "relevance") -> None:
        """One answered search (any page)."""
        if not self.enabled:
            return
        at = self._clock()
        event = SearchEvent(at, day_of(at, self._cfg.analytics_utc_offset_hours), normalise(query), int(total),
                            int(page), float(took_ms), source, sort)  # fmt: skip
        if page == 1:
            SEARCH_ANALYTICS_SEARCHES.labels(result="zero" if total == 0 else "hits").inc()
        with self._lock:
            if self._room():
                self._searches.append(event)

    def clicked(self, query: str, url: str, position: int) -> None:
        """A result opened (through a signed click link)."""
        if not self.enabled:
            return
        at = self._clock()
        SEARCH_RESULT_CLICKS.inc()
        event = ClickEvent(at, day_of(at, self._cfg.analytics_utc_offset_hours), normalise(query), url, int(position))
        with self._lock:
            if self._room():
                self._clicks.append(event)

    def flush(self) -> None:
        """Write the buffered events now; on failure they stay buffered (up to the bound)."""
        with self._lock:
            searches, clicks = self._searches, self._clicks
            self._searches, self._clicks = [], []
        if not searches and not clicks:
            return
        try:
            self._store().record(searches, clicks)
        except Exception as exc:  # the store away or unwritable: keep them for the next try
            with self._lock:
                room = MAX_BUFFERED - len(self._searches) - len(self._clicks)
                kept_s = searches[: max(0, room)]
                kept_c = clicks[: max(0, room - len(kept_s))]
                self._searches[:0], self._clicks[:0] = kept_s, kept_c
                lost = len(searches) + len(clicks) - len(kept_s) - len(kept_c)
            if lost:
                SEARCH_ANALYTICS_DROPPED.inc(lost)
            if not self._failing:
                log.warning("search analytics: cannot write to the search log, holding events: %s", exc)
            self._failing = True
        else:
            if self._failing:
                log.info("search analytics: the search log takes writes again")
            self._failing = False
