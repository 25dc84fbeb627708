"""The Bus contract, run against every adapter.

Each test opens buses through ``open_bus``: every bus it returns shares one backend (the
same SQLite file, or the same broker and topic prefix), so "close, then a new consumer
of the same group" is two calls. A group's first poll on Kafka waits for a group join
(about 3 s on Tansu), so the tests use few groups.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from services.common.adapters.kafka.bus import (
    BusError,
    BusUnavailable,
    KafkaBus,
    KafkaBusOptions,
)
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.config import Settings
from services.common.domain.host_partition import host_partition
from services.common.domain.messages import TOPIC_FETCHES, TOPIC_LINKS, TOPIC_PAGES
from services.common.ports import Bus, Message
from tests.servers.kafka_broker import KafkaBroker
from tests.servers.net import free_port

OpenBus = Callable[[], Bus]
T = TypeVar("T")


def kafka_test_options(prefix: str, **overrides: object) -> KafkaBusOptions:
    """Small topics and Tansu's fast group settings (INFRA.md)."""
    settings: dict = dict(
        partitions=3, session_timeout_ms=6000, heartbeat_interval_ms=1000,
        request_timeout_s=5.0, delivery_timeout_s=10.0, join_timeout_s=20.0, fetch_max_wait_ms=50,
    )  # fmt: skip
    settings.update(overrides)
    return dataclasses.replace(KafkaBusOptions.from_settings(Settings(), prefix), **settings)


@pytest.fixture(params=["sqlite", pytest.param("kafka", marks=pytest.mark.integration)])
def open_bus(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenBus]:
    opened: list[Bus] = []
    if request.param == "sqlite":

        def make() -> Bus:
            opened.append(SqliteBus(tmp_path / "bus.sqlite3"))
            return opened[-1]

    else:
        bootstrap = request.getfixturevalue("kafka_bootstrap")
        options = kafka_test_options(request.getfixturevalue("kafka_topic_prefix"))

        def make() -> Bus:
            opened.append(KafkaBus([bootstrap], options))
            return opened[-1]

    yield make
    for bus in opened:
        bus.close()


def drain(bus: Bus, topic: str, group: str, count: int, timeout_s: float = 30.0) -> list[Message]:
    """Poll until ``count`` messages came (or the time is up), the way the crawler
    polls: timeout 0, then a short sleep."""
    got: list[Message] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        batch = bus.poll(topic, group, 0.0, max_messages=count - len(got))
        got.extend(batch)
        if not batch:
            time.sleep(0.025)
    return got


def settle(bus: Bus, topic: str, group: str, wait_s: float = 1.0) -> list[Message]:
    """Whatever else arrives within ``wait_s``: checks that nothing more comes."""
    return bus.poll(topic, group, wait_s)


def publish_all(bus: Bus, topic: str, items: list[tuple[str, bytes]]) -> None:
    for key, payload in items:
        bus.publish(topic, payload, key=key)
    bus.flush()


def test_published_messages_arrive_with_their_keys_and_payloads(open_bus: OpenBus) -> None:
    bus = open_bus()
    sent = [("news.example.cn", "新闻".encode()), ("blog.example.cn", b"\x00\xff binary"), ("", b"no key")]
    publish_all(bus, TOPIC_PAGES, sent)
    got = drain(bus, TOPIC_PAGES, "indexer", len(sent))
    assert sorted((m.key, m.payload) for m in got) == sorted(sent)
    assert {m.topic for m in got} == {TOPIC_PAGES}
    assert settle(bus, TOPIC_PAGES, "indexer", 0.5) == []


def test_messages_with_the_same_key_arrive_in_publish_order(open_bus: OpenBus) -> None:
    bus = open_bus()
    hosts = [f"host{i}.example.cn" for i in range(6)]
    sent = [(host, f"{host}/{n}".encode()) for n in range(10) for host in hosts]
    publish_all(bus, TOPIC_FETCHES, sent)
    got = drain(bus, TOPIC_FETCHES, "crawler", len(sent))
    assert len(got) == len(sent)
    for host in hosts:
        assert [m.payload for m in got if m.key == host] == [p for k, p in sent if k == host]


def test_a_message_polled_but_not_committed_is_delivered_again_after_close(open_bus: OpenBus) -> None:
    first = open_bus()
    sent = [(f"h{i}.cn", f"job {i}".encode()) for i in range(3)]
    publish_all(first, TOPIC_FETCHES, sent)
    polled = drain(first, TOPIC_FETCHES, "crawler", 3)
    assert len(polled) == 3
    first.commit("crawler", polled[:1])  # one done, two still in flight when the consumer dies
    first.close()

    second = open_bus()
    again = drain(second, TOPIC_FETCHES, "crawler", 2)
    assert {m.payload for m in again} >= {m.payload for m in polled[1:]}


def test_out_of_order_commits_move_the_committed_position_only_past_a_complete_prefix(
    open_bus: OpenBus,
) -> None:
    first = open_bus()
    sent = [("one.host.cn", f"m{i}".encode()) for i in range(5)]  # one key: one partition, one order
    publish_all(first, TOPIC_LINKS, sent)
    m = drain(first, TOPIC_LINKS, "scheduler", 5)
    assert [x.payload for x in m] == [p for _, p in sent]
    first.commit("scheduler", [m[4], m[2]])
    first.commit("scheduler", [m[0]])
    first.commit("scheduler", [m[1]])  # m0..m2 done: the position moves to m3, which is not
    first.close()

    second = open_bus()
    again = drain(second, TOPIC_LINKS, "scheduler", 1)
    # m3 comes back first; m4 may come back too (at-least-once), nothing before m3 does.
    assert [x.payload for x in again] == [b"m3"]
    rest = again + settle(second, TOPIC_LINKS, "scheduler")
    assert [x.payload for x in rest] in ([b"m3"], [b"m3", b"m4"])
    second.commit("scheduler", rest)
    assert second.pending(TOPIC_LINKS, "scheduler") == 0


def test_every_group_gets_every_message(open_bus: OpenBus) -> None:
    bus = open_bus()
    sent = [(f"h{i % 3}.cn", f"page {i}".encode()) for i in range(9)]
    publish_all(bus, TOPIC_PAGES, sent)
    for group in ("indexer", "ranker"):
        got = drain(bus, TOPIC_PAGES, group, len(sent))
        assert sorted(m.payload for m in got) == sorted(p for _, p in sent), group
        bus.commit(group, got)
    assert bus.pending(TOPIC_PAGES, "indexer") == 0
    assert bus.pending(TOPIC_PAGES, "ranker") == 0


def test_pending_counts_messages_not_yet_committed_and_drops_after_commit(open_bus: OpenBus) -> None:
    bus = open_bus()
    sent = [(f"h{i % 2}.cn", f"event {i}".encode()) for i in range(6)]
    publish_all(bus, TOPIC_PAGES, sent)
    # Before a poll Kafka can only estimate from end offsets (and Tansu under-reports
    # them), so only "something is pending" is part of the contract.
    assert bus.pending(TOPIC_PAGES, "scheduler") >= 1
    got = drain(bus, TOPIC_PAGES, "scheduler", len(sent))
    assert len(got) == 6
    assert bus.pending(TOPIC_PAGES, "scheduler") == 6
    bus.commit("scheduler", got[:2])  # the first two delivered: a prefix of their partition(s)
    assert bus.pending(TOPIC_PAGES, "scheduler") == 4
    bus.commit("scheduler", got)
    assert bus.pending(TOPIC_PAGES, "scheduler") == 0
    bus.publish(TOPIC_PAGES, b"one more", key="h0.cn")
    bus.flush()
    assert bus.pending(TOPIC_PAGES, "scheduler") >= 1


def test_payloads_of_900_kb_round_trip(open_bus: OpenBus) -> None:
    bus = open_bus()
    payload = os.urandom(450 * 1024) + ("长" * 150_000).encode()  # 900 KB: binary, then UTF-8
    publish_all(bus, TOPIC_PAGES, [("big.example.cn", payload)])
    (got,) = drain(bus, TOPIC_PAGES, "indexer", 1)
    assert got.payload == payload


def test_a_keyed_message_lands_in_the_partition_host_partition_names(open_bus: OpenBus) -> None:
    """The scheduler maps its partitions to frontier shards with host_partition: it
    must agree with where the bus really put each host's messages."""
    bus = open_bus()
    hosts = [f"h{i}.example.cn" for i in range(12)] + ["127.0.0.2:8080", "新闻.example.cn"]
    publish_all(bus, TOPIC_PAGES, [(h, h.encode()) for h in hosts])
    got = drain(bus, TOPIC_PAGES, "scheduler", len(hosts))
    partitions = bus.partition_count(TOPIC_PAGES)
    assert len(got) == len(hosts)
    assert {m.key: m.partition for m in got} == {h: host_partition(h, partitions) for h in hosts}
    assert partitions == 1 or len({m.partition for m in got}) > 1


def test_a_lone_consumer_is_handed_every_partition(open_bus: OpenBus) -> None:
    bus = open_bus()
    publish_all(bus, TOPIC_PAGES, [("h.example.cn", b"x")])
    drain(bus, TOPIC_PAGES, "scheduler", 1)
    assigned = bus.assignment(TOPIC_PAGES, "scheduler")
    # None ("everything") where one consumer is all a group can have; else every partition.
    assert assigned is None or assigned == frozenset(range(bus.partition_count(TOPIC_PAGES)))


# --- Kafka only: what the adapter does when the cluster is away


def test_kafka_calls_fail_fast_and_clearly_when_no_broker_listens() -> None:
    bus = KafkaBus([f"127.0.0.1:{free_port()}"], kafka_test_options("down.", request_timeout_s=1.0))
    started = time.monotonic()
    with pytest.raises(BusUnavailable, match="no Kafka broker reachable"):
        bus.ping()
    with pytest.raises(BusUnavailable):
        bus.publish(TOPIC_PAGES, b"x", key="h.cn")
    with pytest.raises(BusUnavailable):
        bus.poll(TOPIC_PAGES, "indexer", 0.0)
    with pytest.raises(BusUnavailable):
        bus.pending(TOPIC_PAGES, "indexer")
    assert time.monotonic() - started < 10
    bus.close()


def test_kafka_url_names_servers_and_prefix() -> None:
    from services.common.adapters.kafka.bus import parse_kafka_url

    assert parse_kafka_url("kafka://k1:9093,k2?prefix=tansuo.") == (["k1:9093", "k2:9092"], "tansuo.")
    with pytest.raises(ValueError):
        parse_kafka_url("redis://k1:9092")
    with pytest.raises(ValueError):
        parse_kafka_url("kafka://k1:9092?partitions=3")
    bus = KafkaBus.from_url("kafka://k1:9093?prefix=tansuo.", Settings())  # no I/O until used
    assert (bus.servers, bus.options.topic_prefix, bus.options.partitions) == (["k1:9093"], "tansuo.", 12)


@pytest.mark.integration
def test_kafka_sends_lost_while_the_broker_is_down_raise_from_flush(private_kafka_broker: KafkaBroker) -> None:
    bus = KafkaBus([private_kafka_broker.bootstrap], kafka_test_options("fault.", delivery_timeout_s=2.0,
                                                                      request_timeout_s=1.0))  # fmt: skip
    bus.publish(TOPIC_PAGES, b"before", key="h.cn")
    bus.flush()
    private_kafka_broker.stop()
    bus.publish(TOPIC_PAGES, b"lost", key="h.cn")  # metadata is cached: the send is queued
    started = time.monotonic()
    with pytest.raises(BusError, match="not delivered"):
        bus.flush()
    assert time.monotonic() - started < 15
    with pytest.raises(BusUnavailable):
        bus.ping()

    private_kafka_broker.start()  # empty again: Tansu keeps nothing
    bus.ping()
    bus.close()


def _retry_while_unavailable(call: Callable[[], object], timeout_s: float = 30.0) -> object:
    """What the services do around a bus call during an outage: back off and try again."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return call()
        except BusUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.integration
def test_a_kafka_consumer_rides_out_a_broker_restart_and_keeps_its_committed_position(
    durable_kafka_broker: KafkaBroker,
) -> None:
    options = kafka_test_options("restart.", request_timeout_s=2.0, delivery_timeout_s=10.0)
    producer = KafkaBus([durable_kafka_broker.bootstrap], options)
    consumer = KafkaBus([durable_kafka_broker.bootstrap], options)
    publish_all(producer, TOPIC_PAGES, [(f"h{i}.cn", f"before-{i}".encode()) for i in range(6)])
    first = drain(consumer, TOPIC_PAGES, "indexer", 3)
    consumer.commit("indexer", first)
    committed = {m.payload for m in first}

    durable_kafka_broker.stop()
    with pytest.raises(BusUnavailable):
        consumer.ping()
    durable_kafka_broker.start()

    for i in range(3):
        _retry_while_unavailable(lambda i=i: producer.publish(TOPIC_PAGES, f"after-{i}".encode(), key=f"h{i}.cn"))
    _retry_while_unavailable(producer.flush)
    expected = {f"before-{i}".encode() for i in range(6)} - committed | {f"after-{i}".encode() for i in range(3)}
    got: set[bytes] = set()
    deadline = time.monotonic() + 60
    while not expected <= got and time.monotonic() < deadline:
        batch = _retry_while_unavailable(lambda: consumer.poll(TOPIC_PAGES, "indexer", 0.5))
        got.update(m.payload for m in batch)  # type: ignore[union-attr]
    assert expected <= got, f"missing after the restart: {sorted(expected - got)}"
    assert not got & committed, "messages committed before the restart came again"
    producer.close()
    consumer.close()


@pytest.mark.integration
def test_kafka_consumers_of_one_group_split_the_partitions_and_take_them_back(
    kafka_bootstrap: str, kafka_topic_prefix: str
) -> None:
    """What host-partitioned schedulers rest on: two consumers of a group are handed
    disjoint partitions covering the topic, and when one leaves the other gets all."""
    options = kafka_test_options(kafka_topic_prefix, partitions=4)
    buses = [KafkaBus([kafka_bootstrap], options) for _ in range(2)]
    assert buses[0].assignment(TOPIC_PAGES, "scheduler") == frozenset()  # no consumer before a poll
    stop = threading.Event()

    def keep_polling(bus: KafkaBus) -> None:
        while not stop.is_set():
            bus.poll(TOPIC_PAGES, "scheduler", 0.2)

    threads = [threading.Thread(target=keep_polling, args=(b,), daemon=True) for b in buses]
    for t in threads:
        t.start()
    try:
        split = _wait_for(lambda: [b.assignment(TOPIC_PAGES, "scheduler") for b in buses],
                          lambda a: all(a) and not (a[0] & a[1]) and a[0] | a[1] == frozenset(range(4)))  # fmt: skip
        assert len(split[0]) + len(split[1]) == 4
        assert buses[0].partition_count(TOPIC_PAGES) == 4
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    buses[1].close()
    stop.clear()
    survivor = threading.Thread(target=keep_polling, args=(buses[0],), daemon=True)
    survivor.start()
    try:
        _wait_for(lambda: buses[0].assignment(TOPIC_PAGES, "scheduler"), lambda a: a == frozenset(range(4)))
    finally:
        stop.set()
        survivor.join(10)
        buses[0].close()


def _wait_for(read: Callable[[], T], done: Callable[[T], bool], timeout_s: float = 40.0) -> T:
    deadline = time.monotonic() + timeout_s
    while True:
        seen = read()
        if done(seen):
            return seen
        assert time.monotonic() < deadline, f"last seen: {seen}"
        time.sleep(0.2)
