"""The host -> partition rule shared by the bus, the scheduler and the Redis frontier."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import DefaultPartitioner

from services.common.domain.host_partition import host_partition, shards_of_partitions


class _Metadata:
    """The three questions kafka-python's partitioner asks of cluster metadata."""

    def __init__(self, partitions: int) -> None:
        self.all = set(range(partitions))

    def topics(self) -> set[str]:
        return {"pages.fetched"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self.all

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.all


@given(st.text(min_size=1, max_size=60), st.integers(min_value=1, max_value=64))
def test_a_host_goes_where_kafkas_default_partitioner_puts_its_key(host: str, partitions: int) -> None:
    key = host.encode("utf-8")
    kafka_says = DefaultPartitioner().partition("pages.fetched", host, key, None, None, _Metadata(partitions))
    assert host_partition(host, partitions) == kafka_says


def test_hosts_spread_over_every_partition() -> None:
    seen = {host_partition(f"127.0.0.{n}:8080", 12) for n in range(2, 200)}
    assert seen == set(range(12))


@given(st.text(min_size=1, max_size=40), st.sampled_from([(12, 4), (12, 12), (12, 3), (24, 6), (4, 1)]))
def test_the_shards_of_a_partition_hold_exactly_its_hosts(host: str, layout: tuple[int, int]) -> None:
    shards, partitions = layout
    part = host_partition(host, partitions)
    owned = shards_of_partitions({part}, partitions, shards)
    assert owned is not None and host_partition(host, shards) in owned
    others = shards_of_partitions(set(range(partitions)) - {part}, partitions, shards)
    assert host_partition(host, shards) not in others


def test_shards_that_straddle_partitions_mean_every_shard() -> None:
    assert shards_of_partitions({0}, 5, 12) is None
    assert shards_of_partitions(set(), 4, 12) == frozenset()


def test_no_partitions_is_a_mistake() -> None:
    with pytest.raises(ValueError):
        host_partition("a.cn", 0)


def test_an_embedded_crawl_does_not_import_kafka() -> None:
    """All of kafka-python takes a tenth of a second to import: an embedded crawl, with
    its one partition, never needs it, and its start-up is measured against Scrapy's."""
    import subprocess
    import sys

    code = (
        "import sys, services.cli.main, services.cli.embedded_crawl, services.crawler.worker;"
        "from services.common.domain.host_partition import host_partition;"
        "assert host_partition('docs.example.cn', 1) == 0;"
        "print('kafka' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
