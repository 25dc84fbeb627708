"""How many events the indexer takes in one poll: what it handles in a commit interval.

The pace is measured, not configured: events handled over the time spent handling
them (building documents, the index's round trips and commits), averaged over the
last few polls, a slowdown at once. When the index answers slowly the pace falls and polls shrink, so
the events wait in the bus rather than in the indexer, and a step still ends within
about an interval: a stop or a rebalance is noticed, and a poll never holds a
thousand events for half a minute.
"""

from __future__ import annotations

# Never fewer: a poll of one event a time would spend more on polling than on events.
SMALLEST = 10
# A slower poll sets the pace at once (the next poll shrinks as soon as the index slows
# down); a faster one moves it halfway, so a recovered index regains full polls
# within a few.
_NEWEST = 0.5


class PollSize:
    def __init__(self, largest: int, interval_s: float, smallest: int = SMALLEST) -> None:
        self._largest = max(1, largest)
        self._smallest = min(smallest, self._largest)
        self._interval_s = interval_s
        self._pace: float | None = None  # events a second
        self.size = self._largest

    def observe(self, handled: int, seconds: float) -> None:
        """A poll's ``handled`` events took ``seconds`` to handle (its wait for them left out)."""
        if handled <= 0:
            return
        pace = handled / max(seconds, 1e-3)
        if self._pace is None or pace < self._pace:
            self._pace = pace
        else:
            self._pace = _NEWEST * pace + (1 - _NEWEST) * self._pace
        self.size = max(self._smallest, min(self._largest, int(self._pace * self._interval_s)))
