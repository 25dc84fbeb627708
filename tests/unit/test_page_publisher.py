"""A page's two messages (links, then its event) reach the bus together or are sent
again: a broker outage that loses one and delivers the other must not leave a page
marked fetched whose links never arrive.

The bus here is the real SQLite bus behind a thin wrapper that loses chosen sends and
reports them late, from the next flush, as the Kafka producer does: a broker cannot be
made to lose exactly one of two messages on cue.
"""

from __future__ import annotations

from pathlib import Path

from services.common.adapters.packs.page_store import PackPageStore
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.domain.messages import (
    TOPIC_FETCHES,
    TOPIC_LINKS,
    TOPIC_PAGES,
    FetchJob,
    LinkBatch,
    Outlink,
    PageEvent,
)
from services.crawler.crawl_session import CONSUMER_GROUP, WorkerStats
from services.crawler.fetch_outcome import FetchOutcome
from services.crawler.page_publisher import PagePublisher


class LosingBus:
    """SqliteBus that drops the next send to ``lose_topic`` and says so at the next flush."""

    def __init__(self, inner: SqliteBus) -> None:
        self.inner = inner
        self.lose_topic = ""
        self.down = False
        self._lost = 0

    def publish(self, topic: str, payload: bytes, key: str = "") -> None:
        if self.down:
            raise ConnectionError("no broker reachable")
        if topic == self.lose_topic:
            self.lose_topic, self._lost = "", self._lost + 1
            return
        self.inner.publish(topic, payload, key=key)

    def flush(self) -> None:
        if self.down:
            raise ConnectionError("no broker reachable")
        lost, self._lost = self._lost, 0
        if lost:
            raise RuntimeError(f"{lost} published message(s) were not delivered")

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def _outcome(bus: SqliteBus, url: str) -> FetchOutcome:
    job = FetchJob(url=url, host="a.cn", lease_id=f"lease-{url}")
    bus.publish(TOPIC_FETCHES, job.to_bytes(), key=job.host)
    (message,) = bus.poll(TOPIC_FETCHES, CONSUMER_GROUP, 0.0, max_messages=1)
    event = PageEvent(url=url, host="a.cn", lease_id=job.lease_id, status=200)
    return FetchOutcome(message, event, LinkBatch(source=url, depth=0, links=[Outlink(url + "next")]))


def _published(bus: SqliteBus, topic: str) -> list[str]:
    messages = bus.poll(topic, "reader", 0.0, max_messages=100)
    if topic == TOPIC_LINKS:
        return [LinkBatch.from_bytes(m.payload).source for m in messages]
    return [PageEvent.from_bytes(m.payload).url for m in messages]


def test_links_lost_while_the_event_arrived_are_sent_again_before_the_job_is_committed(tmp_path: Path) -> None:
    inner = SqliteBus(tmp_path / "bus.sqlite3")
    bus = LosingBus(inner)
    publisher = PagePublisher(bus, PackPageStore(tmp_path / "pages"), WorkerStats())  # type: ignore[arg-type]
    first, second = _outcome(inner, "http://a.cn/1"), _outcome(inner, "http://a.cn/2")

    bus.lose_topic = TOPIC_LINKS
    publisher.publish(first)  # its links are lost, its event arrives
    publisher.publish(second)
    try:
        publisher.commit_published()
    except RuntimeError:
        pass
    assert inner.pending(TOPIC_FETCHES, CONSUMER_GROUP) == 2  # nothing committed on a failed flush
    assert publisher.commit_published() == 2

    assert sorted(set(_published(inner, TOPIC_LINKS))) == ["http://a.cn/1", "http://a.cn/2"]
    assert set(_published(inner, TOPIC_PAGES)) == {"http://a.cn/1", "http://a.cn/2"}
    assert inner.pending(TOPIC_FETCHES, CONSUMER_GROUP) == 0


def test_nothing_is_committed_while_the_bus_is_down_and_all_is_sent_once_it_is_back(tmp_path: Path) -> None:
    inner = SqliteBus(tmp_path / "bus.sqlite3")
    bus = LosingBus(inner)
    publisher = PagePublisher(bus, PackPageStore(tmp_path / "pages"), WorkerStats())  # type: ignore[arg-type]
    outcome = _outcome(inner, "http://a.cn/1")
    bus.down = True
    publisher.publish(outcome)  # kept, not raised: the crawl goes on
    for _ in range(3):
        try:
            publisher.commit_published()
        except ConnectionError:
            pass
    assert inner.pending(TOPIC_FETCHES, CONSUMER_GROUP) == 1
    bus.down = False
    assert publisher.commit_published() == 1
    assert _published(inner, TOPIC_LINKS) == ["http://a.cn/1"]
    assert _published(inner, TOPIC_PAGES) == ["http://a.cn/1"]
