"""The scheduler service loop: links and fetch outcomes in, fetch jobs out.

It owns the politeness clock, so however many crawler workers run, a host never gets
more than the frontier allows: workers only ever fetch what it leased to them.
"""

from __future__ import annotations

import logging
import threading
import time

from services.common.metrics import ERRORS, JOBS_DISPATCHED, PAGES_REMOVED
from services.common.model import (
    TOPIC_FETCHES,
    TOPIC_LINKS,
    TOPIC_PAGES,
    TOPIC_REMOVALS,
    TOPIC_SEEDS,
    LinkBatch,
    PageEvent,
    PageRemoval,
    SeedRequest,
)
from services.common.ports import Bus
from services.common.url_canonical import host_of
from services.scheduler.frontier import Frontier

log = logging.getLogger(__name__)

GROUP = "scheduler"


class ProgressReport:
    """One INFO line a minute while the crawl moves, and one when it stops moving with
    work left, so an operator reading the log sees progress, and sees a stall."""

    def __init__(self, interval_s: float = 60.0) -> None:
        self.interval_s = interval_s
        self._next = time.monotonic() + interval_s
        self._last = (0, 0)

    def maybe_log(self, scheduler: Scheduler) -> None:
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.interval_s
        moved = (scheduler.dispatched, scheduler.outcomes)
        counts = scheduler.frontier.counts()
        if moved == self._last and counts.idle:
            return
        dispatched, outcomes = (now - before for now, before in zip(moved, self._last))
        self._last = moved
        log.info(
            "last %.0f s: %d jobs dispatched, %d outcomes; frontier: %d queued (%d due), %d in flight, "
            "%d fetched, %d blocked hosts", self.interval_s, dispatched, outcomes, counts.queued, counts.due,
            counts.leased, counts.fetched, counts.blocked_hosts,
        )  # fmt: skip


class Scheduler:
    def __init__(self, frontier: Frontier, bus: Bus, continuous: bool = False) -> None:
        """``continuous``: fetched pages come back for recrawl when due; otherwise the
        crawl is one pass and ends when the frontier is empty."""
        self.frontier = frontier
        self.bus = bus
        self.continuous = continuous
        self.dispatched = 0
        self.outcomes = 0
        self.removed = 0
        self._next_sweep = 0.0
        self._report = ProgressReport()

    def step(self, timeout_s: float = 0.05) -> int:
        """One cycle: admit links first (so a page's links are queued before its outcome
        may make the frontier look empty), then outcomes, then hand out due jobs.
        Returns the number of messages and jobs handled."""
        handled = self._consume_seeds() + self._consume_links(0.0)
        handled += self._consume_outcomes(timeout_s if handled == 0 else 0.0)
        if self.continuous and time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self.frontier.cfg.frontier_sweep_interval_s
            handled += self.frontier.sweep_recrawl()
        handled += self._dispatch()
        self._report.maybe_log(self)
        return handled

    def _consume_seeds(self) -> int:
        msgs = self.bus.poll(TOPIC_SEEDS, GROUP, 0.0, max_messages=50)
        for m in msgs:
            try:
                request = SeedRequest.from_bytes(m.payload)
                accepted = self.frontier.submit_seeds(request.urls, request.allow_domains)
            except (ValueError, KeyError, TypeError) as exc:
                log.error("dropping bad seed request at offset %s: %s", m.offset, exc)
                ERRORS.labels(service="scheduler", kind="malformed_message").inc()
                continue
            log.info("seeds from %s: %d of %d accepted", request.source or "?", len(accepted), len(request.urls))
        self.bus.commit(GROUP, msgs)
        return len(msgs)

    def _consume_links(self, timeout_s: float) -> int:
        msgs = self.bus.poll(TOPIC_LINKS, GROUP, timeout_s, max_messages=200)
        for m in msgs:
            try:
                self.frontier.offer_links(LinkBatch.from_bytes(m.payload))
            except (ValueError, KeyError, TypeError):
                log.exception("dropping malformed link batch at offset %s", m.offset)
                ERRORS.labels(service="scheduler", kind="malformed_message").inc()
        self.bus.commit(GROUP, msgs)
        return len(msgs)

    def _consume_outcomes(self, timeout_s: float) -> int:
        msgs = self.bus.poll(TOPIC_PAGES, GROUP, timeout_s, max_messages=200)
        for m in msgs:
            try:
                event = PageEvent.from_bytes(m.payload)
                # Removals are durable (published and flushed) before the frontier
                # records the outcome, and that before the offset is committed: a
                # crash anywhere replays the event and sends them again, never drops them.
                removals = self.frontier.complete(event, self._publish_removals)
            except (ValueError, KeyError, TypeError):
                log.exception("dropping malformed page event at offset %s", m.offset)
                ERRORS.labels(service="scheduler", kind="malformed_message").inc()
                continue
            for removal in removals:
                PAGES_REMOVED.labels(reason=removal.kind).inc()
            self.removed += len(removals)
            self.outcomes += 1
        self.bus.commit(GROUP, msgs)
        return len(msgs)

    def _publish_removals(self, removals: list[PageRemoval]) -> None:
        for removal in removals:
            self.bus.publish(TOPIC_REMOVALS, removal.to_bytes(), key=host_of(removal.url))
        self.bus.flush()

    def _dispatch(self) -> int:
        jobs = self.frontier.dispatch()
        for n, job in enumerate(jobs):
            try:
                self.bus.publish(TOPIC_FETCHES, job.to_bytes(), key=job.host)
            except Exception:
                # Leased but never sent: back to the queue now, or each would wait out
                # the lease timeout for a job that no crawler will ever get.
                self.frontier.release_unsent(jobs[n:])
                raise
        self.dispatched += len(jobs)
        JOBS_DISPATCHED.inc(len(jobs))
        return len(jobs)

    def idle(self) -> bool:
        """Caught up with every input and nothing left to fetch."""
        return (
            self.bus.pending(TOPIC_SEEDS, GROUP) == 0
            and self.bus.pending(TOPIC_LINKS, GROUP) == 0
            and self.bus.pending(TOPIC_PAGES, GROUP) == 0
            and self.frontier.finished()
        )

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.step()
