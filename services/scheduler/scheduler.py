"""The scheduler service loop: links and fetch outcomes in, fetch jobs out.

It owns the politeness clock, so however many crawler workers run, a host never gets
more than the frontier allows: workers only ever fetch what it leased to them.

Several schedulers divide the hosts between them by the bus's own assignment: the
one handed partition ``p`` of the page events (which are keyed by host) dispatches
from the frontier shards of ``p``, which hold exactly the hosts whose outcomes it
receives (services/common/domain/host_partition.py). A scheduler joining or leaving moves
partitions, and with them hosts. Nothing a scheduler knows about a host lives in the
scheduler: every lease, release and robots claim is one atomic call on the host's
shard, so two schedulers that both believe they own a host during a rebalance can
never send it two requests closer than its delay, and the leases a killed scheduler
held come back to the queue after the lease timeout, whoever owns the host then.
Links and seeds can be admitted by any scheduler: admission is atomic per shard too.
"""

from __future__ import annotations

import logging
import threading
import time

from services.common.domain.host_partition import shards_of_partitions
from services.common.domain.messages import (
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
from services.common.domain.url_canonical import host_of
from services.common.ports import Bus
from services.common.runtime.metrics import ERRORS, JOBS_DISPATCHED, PAGES_REMOVED
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
        dispatched, outcomes = (now - before for now, before in zip(moved, self._last, strict=True))
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
        self._owned: frozenset[int] | None = None
        self._layout_warned = False

    def owned_shards(self) -> frozenset[int] | None:
        """The frontier shards this scheduler dispatches from: those of the partitions of
        page events the bus hands it now (None: every shard, as when it is the only
        consumer). Empty while it has no partition: before its first poll, during a
        rebalance, or when there are more schedulers than partitions."""
        assigned = self.bus.assignment(TOPIC_PAGES, GROUP)
        if assigned is None:
            return None
        partitions = self.bus.partition_count(TOPIC_PAGES)
        shards = self.frontier.state.shards()
        owned = shards_of_partitions(assigned, partitions, shards)
        if owned is None:
            if not self._layout_warned:
                self._layout_warned = True
                log.warning(
                    "the frontier has %d shards, not a multiple of the %d partitions of %s: every scheduler "
                    "dispatches from every shard (correct, but not divided between them); see docs/deploy.md",
                    shards, partitions, TOPIC_PAGES,
                )  # fmt: skip
            return None
        if owned != self._owned:
            log.info("dispatching from %d of %d frontier shards (partitions %s of %s)", len(owned), shards,
                     sorted(assigned), TOPIC_PAGES)  # fmt: skip
        self._owned = owned
        return owned

    def step(self, timeout_s: float = 0.05) -> int:
        """One cycle: admit links first (so a page's links are queued before its outcome
        may make the frontier look empty), then outcomes, then hand out due jobs.
        Returns the number of messages and jobs handled."""
        handled = self._consume_seeds() + self._consume_links(0.0)
        handled += self._consume_outcomes(timeout_s if handled == 0 else 0.0)
        owned = self.owned_shards()
        if self.continuous and time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self.frontier.cfg.frontier_sweep_interval_s
            handled += self.frontier.sweep_recrawl(shards=owned)
        handled += self._dispatch(owned)
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

    def _dispatch(self, shards: frozenset[int] | None) -> int:
        if shards is not None and not shards:
            return 0
        jobs = self.frontier.dispatch(shards=shards)
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
