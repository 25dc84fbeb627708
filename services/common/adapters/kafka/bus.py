"""Cluster bus: Kafka topics through kafka-python (``TANSUO_BUS=kafka://…``).

URL forms::

    kafka://kafka:9092
    kafka://k1:9092,k2:9092,k3:9092          several bootstrap servers (port defaults to 9092)
    kafka://kafka:9092?prefix=tansuo.          prefix for topic and group names

Names on the cluster: topic ``T`` is ``<prefix>T``, and group ``G`` reading topic ``T``
is the Kafka group ``<prefix>G.T``. One Kafka group per (group, topic) because the bus
keeps one consumer per pair: two consumers sharing a Kafka group would have to rejoin
together on every rebalance, and one thread cannot poll both at once.

Delivery, per the ``Bus`` port:

- ``publish`` sends with the message key as the Kafka key (same key, same partition,
  so per-key order holds), ``acks=all`` and the idempotent producer. Sends are
  asynchronous; one that fails (after the producer's own retries, within
  ``bus_delivery_timeout_s``) is logged at once and raised as ``BusError`` from the next
  ``flush()`` or ``publish()``: a lost message is never silent.
- ``Message.offset`` is the Kafka offset within ``Message.partition``. ``commit``
  commits, per partition, the offset after the longest run of delivered messages that
  are all committed (messages may be committed out of order), so an uncommitted
  message is delivered again after a crash or a rebalance. A message whose partition
  went to another consumer in a rebalance is not committed here: its new owner
  delivers it again.
- ``pending`` is an estimate: for a partition this consumer has delivered from,
  delivered but uncommitted messages plus ``max(0, end - next offset)``; for any
  other partition, ``max(0, end - committed)``. ``end`` is the larger of
  ``end_offsets()`` and the high watermark of this consumer's last fetch, because
  Tansu under-reports ``end_offsets()`` (the base offset of the last batch, plus 1):
  so on Tansu the count for a partition this consumer has not read can be low, but
  it is never negative, and it is 0 once everything delivered is committed.

Failures: a call that needs the cluster and cannot reach it raises ``BusUnavailable``
(a ``ConnectionError``) within about ``bus_request_timeout_s``; nothing blocks for
ever. A consumer that already exists rides out an outage: kafka-python reconnects
with backoff (and logs each failed attempt), and ``poll`` returns ``[]`` after its
timeout, or raises ``BusUnavailable``. A failed ``commit`` raises too, and its offsets
go out with the next commit. After a failed delivery the producer is replaced and the
topics checked again (a restarted broker may not know the producer, or the topics).
``ping`` raises, so /readyz reports the outage.

Group joins block: kafka-python 3.0 (checked on 3.0.12) abandons a JoinGroup that
completes between two ``poll`` calls and sends a new one, so a caller polling with
timeout 0 (the crawler does, every 25 ms) never joins. While its consumer is not in a
stable group, ``poll`` therefore keeps polling, back to back, until the join completes
or ``bus_join_timeout_s`` passes. The first poll of a (group, topic) waits for one
join: about 3 s on Kafka (``group.initial.rebalance.delay.ms``) and on Tansu.

Only documented Kafka APIs are used (Metadata, CreateTopics, Produce, Fetch, ListOffsets,
the consumer group protocol, OffsetCommit and OffsetFetch); topics are never
auto-created, so their partitions, retention and size limit are always ours.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from kafka import (
    ConsumerRebalanceListener,
    KafkaAdminClient,
    KafkaConsumer,
    KafkaProducer,
    TopicPartition,
)
from kafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    IllegalGenerationError,
    KafkaError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from kafka.structs import MemberState, OffsetAndMetadata

from services.common.domain import messages
from services.common.errors import BackendError, BackendUnavailable
from services.common.ports import Message

if TYPE_CHECKING:
    from services.common.config import Settings

log = logging.getLogger(__name__)

_DEFAULT_PORT = 9092
_TOPIC_ALREADY_EXISTS = 36  # Kafka protocol error code
# Commit errors that mean "the group moved on": the partitions now belong to another
# member, which will deliver the uncommitted messages again.
_REBALANCE_ERRORS = (
    CommitFailedError,
    RebalanceInProgressError,
    IllegalGenerationError,
    UnknownMemberIdError,
    FencedInstanceIdError,
)
# Every topic named in domain/messages.py, created together on first use.
_MODEL_TOPICS = tuple(v for k, v in vars(messages).items() if k.startswith("TOPIC_") and isinstance(v, str))


class BusError(BackendError):
    """A message could not be published, or the bus refused a request."""


class BusUnavailable(BusError, BackendUnavailable):
    """No Kafka broker answered in time; the call can be retried later."""


@dataclass(frozen=True)
class KafkaBusOptions:
    """Tuning, from the ``bus_*`` settings (services/common/config.py says what each
    does and holds the defaults). Names on the cluster come from the URL."""

    topic_prefix: str
    partitions: int
    replication: int
    retention_hours: float
    max_message_bytes: int
    session_timeout_ms: int
    heartbeat_interval_ms: int
    request_timeout_s: float
    delivery_timeout_s: float
    join_timeout_s: float
    fetch_max_wait_ms: int

    @classmethod
    def from_settings(cls, cfg: Settings, topic_prefix: str) -> KafkaBusOptions:
        return cls(
            topic_prefix=topic_prefix,
            partitions=cfg.bus_partitions,
            replication=cfg.bus_replication,
            retention_hours=cfg.bus_retention_hours,
            max_message_bytes=cfg.bus_max_message_bytes,
            session_timeout_ms=cfg.bus_session_timeout_ms,
            heartbeat_interval_ms=cfg.bus_heartbeat_interval_ms,
            request_timeout_s=cfg.bus_request_timeout_s,
            delivery_timeout_s=cfg.bus_delivery_timeout_s,
            join_timeout_s=cfg.bus_join_timeout_s,
            fetch_max_wait_ms=cfg.bus_fetch_max_wait_ms,
        )


def parse_kafka_url(url: str) -> tuple[list[str], str]:
    """``kafka://h1:9092,h2/…?prefix=p`` → (["h1:9092", "h2:9092"], "p")."""
    parts = urlsplit(url)
    if parts.scheme != "kafka":
        raise ValueError(f"not a Kafka URL: {url!r} (expected kafka://host:9092[,host2:9092])")
    servers = []
    for server in parts.netloc.split(","):
        server = server.strip()
        if not server:
            continue
        host, sep, port = server.rpartition(":")
        if not sep or not port.isdigit() or host.endswith(":"):  # no port, or a bare IPv6 address
            host, port = server, str(_DEFAULT_PORT)
        servers.append(f"{host}:{port}")
    if not servers:
        raise ValueError(f"Kafka URL names no bootstrap server: {url!r}")
    query = dict(parse_qsl(parts.query))
    unknown = set(query) - {"prefix"}
    if unknown:
        raise ValueError(f"unknown Kafka URL parameter(s) {sorted(unknown)} (only prefix=… is known)")
    return servers, query.get("prefix", "")


def _split_host_port(server: str) -> tuple[str, int]:
    host, _, port = server.rpartition(":")
    return host.strip("[]"), int(port)


@dataclass
class _PartitionTrack:
    """Delivery state of one partition since it was last assigned to this consumer."""

    outstanding: set[int] = field(default_factory=set)  # delivered, not yet committed
    next: int | None = None  # offset after the last delivered message
    committed: int | None = None  # the last offset we committed


class _GroupConsumer(ConsumerRebalanceListener):
    """One KafkaConsumer for one (group, topic), and what it delivered.

    ``lock`` serialises calls into the KafkaConsumer, which is not thread-safe.
    ``_tracks_lock`` guards the delivery state; the rebalance callbacks take it from
    kafka-python's IO thread while ``poll`` holds ``lock``, so it is never held while
    calling into kafka-python.
    """

    def __init__(self, bus: KafkaBus, group: str, topic: str) -> None:
        opts = bus.options
        self.topic = topic
        self.physical = bus.physical_topic(topic)
        self.kafka_group = f"{opts.topic_prefix}{group}.{topic}"
        self._opts = opts
        self._bus = bus
        self.lock = threading.Lock()
        self._tracks_lock = threading.Lock()
        self._tracks: dict[int, _PartitionTrack] = {}
        self._dirty: set[int] = set()  # partitions whose last commit failed
        self._join_retry_at = 0.0
        self.kc = KafkaConsumer(
            bootstrap_servers=bus.servers,
            client_id=f"tansuo-{group}",
            group_id=self.kafka_group,
            enable_auto_commit=False,
            # Never "latest": a group that starts after messages were published must
            # still see them (and Tansu's wrong end offsets make "latest" re-deliver).
            auto_offset_reset="earliest",
            session_timeout_ms=opts.session_timeout_ms,
            heartbeat_interval_ms=opts.heartbeat_interval_ms,
            request_timeout_ms=max(int(opts.request_timeout_s * 1000), 1000),
            bootstrap_timeout_ms=int(opts.request_timeout_s * 1000),
            max_partition_fetch_bytes=opts.max_message_bytes,
            fetch_max_wait_ms=opts.fetch_max_wait_ms,
            allow_auto_create_topics=False,
        )
        self.kc.subscribe([self.physical], listener=self)

    # --- rebalance callbacks (kafka-python's IO thread)

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # What was delivered from these partitions and not committed goes to their
        # next owner (maybe us again, from the committed offset); forget it here.
        with self._tracks_lock:
            for tp in revoked:
                self._tracks.pop(tp.partition, None)
                self._dirty.discard(tp.partition)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        with self._tracks_lock:
            for tp in assigned:
                self._tracks[tp.partition] = _PartitionTrack()

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.on_partitions_revoked(lost)

    # --- the bus calls

    def poll(self, timeout_s: float, max_messages: int) -> list[Message]:
        with self.lock:
            batch = self.kc.poll(timeout_ms=max(int(timeout_s * 1000), 0), max_records=max_messages)
            if not batch and self._joining():
                batch = self._finish_join(max_messages)
        return self._deliver(batch)

    def _joining(self) -> bool:
        return self.kc.group_metadata().state != MemberState.STABLE

    def _finish_join(self, max_messages: int) -> dict[TopicPartition, list[Any]]:
        """Poll back to back until the group is stable; see the module docstring."""
        now = time.monotonic()
        if now < self._join_retry_at:
            return {}
        self._bus.check_reachable()  # an outage raises here instead of blocking
        deadline = now + self._opts.join_timeout_s
        while self._joining():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                log.warning(
                    "bus: group %s has not finished joining after %.0f s; polling on",
                    self.kafka_group,
                    self._opts.join_timeout_s,
                )
                # Give the caller its thread back for a while before blocking again.
                self._join_retry_at = time.monotonic() + min(5.0, self._opts.join_timeout_s)
                return {}
            batch = self.kc.poll(timeout_ms=int(min(remaining, 0.2) * 1000), max_records=max_messages)
            if batch:
                return batch
        return {}

    def _deliver(self, batch: dict[TopicPartition, list[Any]]) -> list[Message]:
        messages: list[Message] = []
        with self._tracks_lock:
            for tp, records in batch.items():
                if not records:
                    continue
                track = self._tracks.setdefault(tp.partition, _PartitionTrack())
                for r in records:
                    track.outstanding.add(r.offset)
                    key = r.key.decode("utf-8", "replace") if r.key else ""
                    messages.append(Message(self.topic, key, r.value or b"", r.offset, tp.partition))
                track.next = records[-1].offset + 1
        return messages

    def commit(self, messages: Sequence[Message]) -> None:
        with self._tracks_lock:
            touched = set(self._dirty)
            for m in messages:
                track = self._tracks.get(m.partition)
                if track is not None:  # else revoked: its next owner delivers it again
                    track.outstanding.discard(m.offset)
                    touched.add(m.partition)
            offsets = {}
            for partition in touched:
                track = self._tracks.get(partition)
                if track is None or track.next is None:
                    continue
                target = min(track.outstanding) if track.outstanding else track.next
                if track.committed is None or target > track.committed:
                    offsets[TopicPartition(self.physical, partition)] = OffsetAndMetadata(target, "", -1)
        if not offsets:
            return
        with self.lock:
            try:
                self.kc.commit(offsets, timeout_ms=int(self._opts.request_timeout_s * 1000))
            except _REBALANCE_ERRORS as exc:
                log.warning("bus: commit for group %s skipped, the group is rebalancing (%s); "
                            "its messages will be delivered again", self.kafka_group, exc)  # fmt: skip
                return
            except KafkaError as exc:
                with self._tracks_lock:
                    self._dirty.update(tp.partition for tp in offsets)
                raise BusUnavailable(
                    f"could not commit offsets of group {self.kafka_group} at {self._bus.where}: {exc!r}"
                ) from exc
        with self._tracks_lock:
            for tp, done in offsets.items():
                self._dirty.discard(tp.partition)
                track = self._tracks.get(tp.partition)
                if track is not None and (track.committed is None or done.offset > track.committed):
                    track.committed = done.offset

    def assignment(self) -> frozenset[int]:
        with self.lock:
            return frozenset(tp.partition for tp in self.kc.assignment() or ())

    def pending(self, partitions: list[int]) -> int:
        tps = [TopicPartition(self.physical, p) for p in partitions]
        timeout_ms = int(self._opts.request_timeout_s * 1000)
        with self.lock:
            end = self.kc.end_offsets(tps, timeout_ms=timeout_ms)
            assigned = self.kc.assignment() or set()
            for tp in tps:
                if tp in assigned:
                    # The fetch's high watermark is right where Tansu's end_offsets is not.
                    end[tp] = max(end.get(tp) or 0, self.kc.highwater(tp) or 0)
        with self._tracks_lock:
            known = {p: (len(t.outstanding), t.next) for p, t in self._tracks.items() if t.next is not None}
        total, unknown = 0, []
        for tp in tps:
            if tp.partition in known:
                outstanding, next_offset = known[tp.partition]
                total += outstanding + max(0, (end.get(tp) or 0) - next_offset)
            else:
                unknown.append(tp)
        if unknown:
            committed = self._bus.committed_offsets(self.kafka_group, unknown)
            never = [tp for tp in unknown if committed.get(tp, -1) < 0]
            if never:
                with self.lock:
                    committed.update(self.kc.beginning_offsets(never, timeout_ms=timeout_ms))
            total += sum(max(0, (end.get(tp) or 0) - committed[tp]) for tp in unknown)
        return total

    def close(self) -> None:
        with self.lock:
            # Uncommitted messages are not committed on the way out: they are redelivered.
            self.kc.close(autocommit=False, timeout_ms=int(self._opts.request_timeout_s * 1000))


class KafkaBus:
    """The ``Bus`` port on Kafka. Thread-safe; no I/O happens until the first call."""

    def __init__(self, servers: Sequence[str], options: KafkaBusOptions) -> None:
        self.servers = list(servers)
        self.options = options
        self.where = ",".join(self.servers)
        self._lock = threading.Lock()  # guards creation of the clients below
        self._producer: KafkaProducer | None = None
        self._producer_generation = 0  # which producer a failed send came from
        self._admin: KafkaAdminClient | None = None
        self._consumers: dict[tuple[str, str], _GroupConsumer] = {}
        self._ensured: set[str] = set()
        self._partitions: dict[str, tuple[float, list[int]]] = {}
        self._failures_lock = threading.Lock()
        self._failed_sends = 0
        self._first_failure = ""
        self._failed_generation = -1
        self._closed = False

    @classmethod
    def from_url(cls, url: str, cfg: Settings) -> KafkaBus:
        servers, prefix = parse_kafka_url(url)
        return cls(servers, KafkaBusOptions.from_settings(cfg, prefix))

    def physical_topic(self, topic: str) -> str:
        return f"{self.options.topic_prefix}{topic}"

    # --- publishing

    def publish(self, topic: str, payload: bytes, key: str = "") -> None:
        self._raise_failed_sends()
        producer = self._get_producer()
        physical = self._ensure_topic(topic)
        try:
            future = producer.send(physical, value=payload, key=key.encode("utf-8") if key else None)
        except MessageSizeTooLargeError as exc:
            raise BusError(
                f"a {len(payload)}-byte message to {physical} exceeds bus_max_message_bytes"
                f"={self.options.max_message_bytes}"
            ) from exc
        except KafkaTimeoutError as exc:
            self._ensured.discard(physical)  # check the topic again next time: it may be gone
            raise BusUnavailable(f"could not publish to {physical}: no answer from {self.where} ({exc})") from exc
        except KafkaError as exc:
            raise BusError(f"could not publish to {physical}: {exc!r}") from exc
        future.add_errback(self._send_failed, self._producer_generation, physical, key)

    def _send_failed(self, generation: int, physical: str, key: str, exc: BaseException) -> None:
        # Called on the producer's IO thread once the producer has given up.
        with self._failures_lock:
            self._failed_sends += 1
            self._failed_generation = max(self._failed_generation, generation)
            first = self._failed_sends == 1
            if first:
                self._first_failure = f"{physical} key={key!r}: {exc!r}"
        if first:
            log.error("bus: a message to %s (key %r) was not delivered: %r", physical, key, exc)

    def _raise_failed_sends(self) -> None:
        with self._failures_lock:
            failed, first, generation = self._failed_sends, self._first_failure, self._failed_generation
            self._failed_sends, self._first_failure = 0, ""
        if not failed:
            return
        if generation == self._producer_generation:
            self._replace_producer()
        raise BusError(f"{failed} published message(s) were not delivered; the first: {first}")

    def _replace_producer(self) -> None:
        """Start the next publish on a new producer, and check the topics again.

        After a failed delivery the idempotent producer can be stuck for good (its
        producer id unknown to a restarted broker), and a broker that lost its data
        lost the topics too; a new producer and a new topic check cure both."""
        with self._lock:
            old, self._producer = self._producer, None
            self._producer_generation += 1
            self._ensured.clear()
        if old is not None:
            # Closing waits for what the old producer still holds (delivered or failed
            # and reported by a later call); the caller need not wait for that.
            timeout = self.options.delivery_timeout_s + self.options.request_timeout_s
            closing = threading.Thread(target=old.close, kwargs={"timeout": timeout}, daemon=True)
            closing.start()

    def flush(self) -> None:
        """Block until every message published so far is acknowledged by all in-sync
        replicas; raise ``BusError`` if any of them was not."""
        producer = self._producer
        if producer is not None:
            timeout = self.options.delivery_timeout_s + self.options.request_timeout_s
            try:
                producer.flush(timeout=timeout)
            except KafkaTimeoutError as exc:
                raise BusUnavailable(
                    f"published messages not acknowledged by {self.where} within {timeout:.0f} s"
                ) from exc
        self._raise_failed_sends()

    # --- consuming

    def poll(self, topic: str, group: str, timeout_s: float, max_messages: int = 100) -> list[Message]:
        if self._closed:
            return []
        consumer = self._consumer(group, topic)
        try:
            return consumer.poll(timeout_s, max_messages)
        except KafkaError as exc:
            kind = BusUnavailable if exc.retriable else BusError
            raise kind(f"poll of {consumer.physical} by group {consumer.kafka_group} failed: {exc!r}") from exc

    def commit(self, group: str, messages: Sequence[Message]) -> None:
        by_topic: dict[str, list[Message]] = {}
        for m in messages:
            by_topic.setdefault(m.topic, []).append(m)
        for topic, batch in by_topic.items():
            consumer = self._consumers.get((group, topic))
            if consumer is None:
                log.warning("bus: commit of %d message(s) of %s by group %s, which never polled it",
                            len(batch), topic, group)  # fmt: skip
                continue
            consumer.commit(batch)

    def pending(self, topic: str, group: str) -> int:
        """An estimate (see the module docstring): never negative, 0 when caught up."""
        consumer = self._consumer(group, topic)
        try:
            return consumer.pending(self._partitions_of(consumer.physical))
        except KafkaError as exc:
            raise BusUnavailable(
                f"could not read offsets of {consumer.physical} from {self.where}: {exc!r}"
            ) from exc

    def assignment(self, topic: str, group: str) -> frozenset[int] | None:
        """The partitions the group coordinator gave this consumer at its last join:
        empty before its first ``poll`` (no consumer yet, none is started here) and
        while a rebalance has taken them away."""
        consumer = self._consumers.get((group, topic))
        return consumer.assignment() if consumer is not None else frozenset()

    def partition_count(self, topic: str) -> int:
        return len(self._partitions_of(self._ensure_topic(topic)))

    def _consumer(self, group: str, topic: str) -> _GroupConsumer:
        consumer = self._consumers.get((group, topic))
        if consumer is not None:
            return consumer
        self._ensure_topic(topic)
        with self._lock:
            consumer = self._consumers.get((group, topic))
            if consumer is None:
                self.check_reachable()
                try:
                    consumer = _GroupConsumer(self, group, topic)
                except KafkaError as exc:
                    raise BusUnavailable(f"could not start a consumer on {self.where}: {exc!r}") from exc
                self._consumers[(group, topic)] = consumer
        return consumer

    # --- cluster metadata

    def ensure_topics(self, topics: Sequence[str] = _MODEL_TOPICS) -> None:
        """Create the topics that do not exist yet; existing ones are left as they are."""
        configs = {
            "retention.ms": str(int(self.options.retention_hours * 3_600_000)),
            "max.message.bytes": str(self.options.max_message_bytes),
        }
        wanted = {
            self.physical_topic(t): {
                "num_partitions": self.options.partitions,
                "replication_factor": self.options.replication,
                "configs": configs,
            }
            for t in topics
            if self.physical_topic(t) not in self._ensured
        }
        if not wanted:
            return
        timeout_ms = int(self.options.request_timeout_s * 1000)
        result = self._admin_call(
            "create topics", lambda admin: admin.create_topics(wanted, timeout_ms=timeout_ms, raise_errors=False)
        )
        for item in result["topics"]:
            code = item["error_code"]
            if code not in (0, _TOPIC_ALREADY_EXISTS):
                raise BusError(f"could not create topic {item['name']}: error {code} {item.get('error_message')}")
            log.debug("bus: topic %s %s", item["name"], "created" if code == 0 else "exists")
        self._ensured.update(wanted)

    def _ensure_topic(self, topic: str) -> str:
        physical = self.physical_topic(topic)
        if physical not in self._ensured:
            self.ensure_topics(tuple(dict.fromkeys((*_MODEL_TOPICS, topic))))
        return physical

    def _partitions_of(self, physical: str) -> list[int]:
        cached = self._partitions.get(physical)
        if cached is not None and time.monotonic() - cached[0] < 60:
            return cached[1]
        (described,) = self._admin_call(
            f"describe topic {physical}", lambda admin: admin.describe_topics([physical])
        )
        partitions = sorted(p["partition_index"] for p in described["partitions"])
        self._partitions[physical] = (time.monotonic(), partitions)
        return partitions

    def committed_offsets(self, kafka_group: str, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The group's committed offsets; -1 where it never committed."""
        found = self._admin_call(
            f"read the offsets of group {kafka_group}", lambda admin: admin.list_group_offsets({kafka_group: tps})
        )
        offsets = found.get(kafka_group, {})
        return {tp: (offsets[tp].offset if tp in offsets and offsets[tp].offset is not None else -1) for tp in tps}

    # --- health

    def check_reachable(self) -> None:
        """Raise ``BusUnavailable`` unless some bootstrap server accepts a TCP connection.

        Cheap and bounded, so callers can fail fast instead of letting a kafka-python
        client wait out its bootstrap timeout (or hang, as KafkaAdminClient can)."""
        errors = []
        timeout = min(self.options.request_timeout_s, 2.0)
        for server in self.servers:
            try:
                with socket.create_connection(_split_host_port(server), timeout=timeout):
                    return
            except OSError as exc:
                errors.append(f"{server}: {exc}")
        raise BusUnavailable(f"no Kafka broker reachable ({'; '.join(errors)})")

    def ping(self) -> None:
        self.check_reachable()
        self._admin_call("answer a metadata request", lambda admin: admin.describe_cluster())

    def _admin_call(self, doing: str, call: Callable[[KafkaAdminClient], Any]) -> Any:
        for attempt in (1, 2):
            try:
                return call(self._get_admin())
            except KafkaError as exc:
                # kafka-python's admin client does not always find the cluster again
                # after an outage (NodeNotReadyError for ever): retry on a new one.
                self._drop_admin()
                if attempt == 2:
                    raise BusUnavailable(f"Kafka at {self.where} could not {doing}: {exc!r}") from exc
        raise AssertionError("unreachable")

    # --- lazily built clients

    def _get_producer(self) -> KafkaProducer:
        producer = self._producer
        if producer is not None:
            return producer
        with self._lock:
            if self._producer is None:
                self.check_reachable()
                opts = self.options
                try:
                    self._producer = KafkaProducer(
                        bootstrap_servers=self.servers,
                        client_id="tansuo",
                        acks="all",
                        # Idempotence keeps retries from duplicating or reordering a
                        # partition's messages (it needs acks=all and <= 5 in flight).
                        enable_idempotence=True,
                        max_in_flight_requests_per_connection=5,
                        linger_ms=5,
                        max_request_size=opts.max_message_bytes,
                        request_timeout_ms=int(opts.request_timeout_s * 1000),
                        delivery_timeout_ms=int(max(opts.delivery_timeout_s, opts.request_timeout_s + 1) * 1000),
                        max_block_ms=int(opts.request_timeout_s * 1000),
                        bootstrap_timeout_ms=int(opts.request_timeout_s * 1000),
                        allow_auto_create_topics=False,
                    )
                except KafkaError as exc:
                    raise BusUnavailable(f"could not start a producer on {self.where}: {exc!r}") from exc
            return self._producer

    def _get_admin(self) -> KafkaAdminClient:
        admin = self._admin
        if admin is not None:
            return admin
        with self._lock:
            if self._admin is None:
                self.check_reachable()
                ms = int(self.options.request_timeout_s * 1000)
                try:
                    self._admin = KafkaAdminClient(
                        bootstrap_servers=self.servers,
                        client_id="tansuo-admin",
                        request_timeout_ms=ms,
                        bootstrap_timeout_ms=ms,
                    )
                except KafkaError as exc:
                    raise BusUnavailable(f"could not reach Kafka at {self.where}: {exc!r}") from exc
            return self._admin

    def _drop_admin(self) -> None:
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            try:
                admin.close()
            except Exception:
                log.debug("bus: closing a failed admin client", exc_info=True)

    def close(self) -> None:
        """Flush, then close every client. A failed flush is logged, not raised."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        except BusError:
            log.exception("bus: closing with undelivered messages")
        with self._lock:
            for consumer in self._consumers.values():
                try:
                    consumer.close()
                except Exception:  # closing must go on for the others
                    log.exception("bus: could not close the consumer of %s", consumer.kafka_group)
            self._consumers.clear()
            if self._producer is not None:
                self._producer.close(timeout=self.options.request_timeout_s)
                self._producer = None
            if self._admin is not None:
                self._admin.close()
                self._admin = None
