"""Domain types of search analytics: what a search and a click leave behind, and the
day's figures the console shows.

No client address, session or user agent is part of any of them: the log says what
was searched and opened, never by whom.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchEvent:
    """One answered search: ``page`` 1 is a new search, a later page is the same
    search read further (counted apart, so paging does not make a query popular)."""

    at: float  # epoch seconds
    day: str  # the day it counts for (YYYY-MM-DD in the configured time zone)
    query: str  # normalised: whitespace collapsed, case folded
    total: int  # results found
    page: int
    took_ms: float
    source: str = "web"  # web | api
    sort: str = "relevance"  # relevance | date


@dataclass(frozen=True)
class ClickEvent:
    """A result opened from a results page (``position`` counts from 1 over all pages)."""

    at: float
    day: str
    query: str
    url: str
    position: int


@dataclass(frozen=True)
class QueryStats:
    """One query's figures on one day."""

    query: str
    searches: int  # first pages asked for
    zero: int  # of them, how many found nothing
    clicks: int
    last_total: int  # results found the last time it was searched

    @property
    def click_through(self) -> float:
        """Clicks per search (may pass 1: a searcher opens several results)."""
        return self.clicks / self.searches if self.searches else 0.0


@dataclass(frozen=True)
class DayTotals:
    day: str
    searches: int  # first pages
    result_pages: int  # every page of results served, first pages included
    zero: int  # first pages that found nothing
    clicks: int
    took_ms_sum: float  # over result_pages

    @property
    def zero_share(self) -> float:
        return self.zero / self.searches if self.searches else 0.0

    @property
    def click_through(self) -> float:
        """Clicks per search that found something."""
        found = self.searches - self.zero
        return self.clicks / found if found > 0 else 0.0

    @property
    def mean_ms(self) -> float:
        return self.took_ms_sum / self.result_pages if self.result_pages else 0.0


@dataclass(frozen=True)
class DayReport:
    totals: DayTotals
    popular: list[QueryStats] = field(default_factory=list)  # most searched first
    zero_hit: list[QueryStats] = field(default_factory=list)  # most searched of those that found nothing
    clicked: list[tuple[str, int]] = field(default_factory=list)  # (url, clicks), most clicked first


def empty_day(day: str) -> DayTotals:
    return DayTotals(day, 0, 0, 0, 0, 0.0)
