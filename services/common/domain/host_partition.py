"""Which partition a host belongs to: the one rule the bus, the scheduler and the Redis
frontier share.

Fetch jobs and page events are published with the host as their Kafka key, and
kafka-python's default partitioner puts a key in partition ``murmur2(key) & 0x7fffffff
% partitions``. The Redis frontier keeps each host in the shard of that same number,
so a scheduler that consumes partition ``p`` of the page events can dispatch from
shard ``p`` and find there exactly the hosts whose outcomes it receives.
"""

from __future__ import annotations

from collections.abc import Collection


def host_partition(host: str, partitions: int) -> int:
    """The partition of ``host`` among ``partitions``, as the Kafka producer picks it for
    a message keyed by the host (kafka-python's ``DefaultPartitioner``)."""
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    if partitions == 1:
        return 0  # embedded mode's one partition: no hash, and no import of all of kafka at start-up
    from kafka.partitioner.default import murmur2  # see above

    return (murmur2(host.encode("utf-8")) & 0x7FFFFFFF) % partitions


def shards_of_partitions(assigned: Collection[int], partitions: int, shards: int) -> frozenset[int] | None:
    """The frontier shards whose hosts all fall in the ``assigned`` partitions of a topic
    with ``partitions`` partitions, when the frontier has ``shards`` shards.

    A host's shard is ``h % shards`` and its partition ``h % partitions`` for the same
    hash ``h``; when ``shards`` is a multiple of ``partitions`` the shard decides the
    partition (``shard % partitions``), so a partition's hosts are exactly those of its
    shards. Otherwise a shard's hosts straddle partitions and no set of shards matches:
    None, which callers read as "every shard" (correct, only not divided)."""
    if partitions < 1 or shards % partitions:
        return None
    owned = frozenset(assigned)
    return frozenset(s for s in range(shards) if s % partitions in owned)
