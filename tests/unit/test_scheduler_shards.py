"""Which frontier shards a scheduler dispatches from, read off the bus's assignment."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.domain.messages import TOPIC_PAGES
from services.scheduler.scheduler import GROUP, Scheduler


@dataclass
class AssignedBus:
    """The two questions a scheduler asks the bus about its partitions."""

    assigned: frozenset[int] | None
    partitions: int

    def assignment(self, topic: str, group: str) -> frozenset[int] | None:
        assert (topic, group) == (TOPIC_PAGES, GROUP)
        return self.assigned

    def partition_count(self, topic: str) -> int:
        return self.partitions


@dataclass
class Shards:
    count: int

    def shards(self) -> int:
        return self.count


@dataclass
class FrontierOfShards:
    state: Shards


def scheduler(bus: object, shards: int) -> Scheduler:
    return Scheduler(FrontierOfShards(Shards(shards)), bus)  # type: ignore[arg-type]


def test_a_scheduler_owns_the_shards_of_its_partitions() -> None:
    assert scheduler(AssignedBus(frozenset({1, 3}), 4), 12).owned_shards() == frozenset({1, 3, 5, 7, 9, 11})
    assert scheduler(AssignedBus(frozenset(range(12)), 12), 12).owned_shards() == frozenset(range(12))


def test_without_partitions_it_owns_nothing_and_dispatches_nothing() -> None:
    # Before its first poll, during a rebalance, or beside more schedulers than partitions.
    idle = scheduler(AssignedBus(frozenset(), 4), 12)
    assert idle.owned_shards() == frozenset()
    assert idle._dispatch(frozenset()) == 0


def test_the_only_consumer_owns_every_shard(tmp_path: Path) -> None:
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    assert scheduler(bus, 1).owned_shards() is None
    bus.close()


def test_shards_that_straddle_partitions_make_it_dispatch_everything_and_say_so(caplog: pytest.LogCaptureFixture) -> None:
    s = scheduler(AssignedBus(frozenset({0, 1}), 5), 12)
    with caplog.at_level(logging.WARNING):
        assert s.owned_shards() is None
        assert s.owned_shards() is None
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "not a multiple of the 5 partitions" in caplog.records[0].message
