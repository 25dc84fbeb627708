"""The DictionaryStore contract, run against every adapter: SQLite, one Redis and a
Redis Cluster (marked integration)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.adapters.redis.dictionaries import RedisDictionaryStore
from services.common.adapters.sqlite.dictionaries import SqliteDictionaryStore
from services.common.domain.dictionaries import SYNONYMS, USER_WORDS, EditedText
from services.common.ports import DictionaryStore
from tests.contract.test_frontier_state import REDIS_BACKENDS

T = 1_800_000_000.25

OpenStore = Callable[[], DictionaryStore]


@pytest.fixture(params=["sqlite", *REDIS_BACKENDS])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    opened: list[DictionaryStore] = []
    url = None if request.param == "sqlite" else request.getfixturevalue(request.param)

    def open_() -> DictionaryStore:
        store: DictionaryStore
        store = SqliteDictionaryStore(tmp_path / "d.sqlite3") if url is None else RedisDictionaryStore.from_url(url)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


def test_texts_are_saved_replaced_and_removed_and_every_change_moves_the_version(open_store: OpenStore) -> None:
    store, other = open_store(), open_store()
    assert store.load() == {}
    versions = [store.version()]
    store.save(USER_WORDS, "探索引擎\n清华大学 100\n", T)
    versions.append(other.version())
    store.save(SYNONYMS, "电脑, 计算机\n", T + 1)
    store.save(USER_WORDS, "探索引擎\n", T + 2)
    versions.append(other.version())
    assert other.load() == {USER_WORDS: EditedText(USER_WORDS, "探索引擎\n", T + 2),
                            SYNONYMS: EditedText(SYNONYMS, "电脑, 计算机\n", T + 1)}  # fmt: skip
    store.remove(SYNONYMS)
    store.remove("never_saved")
    versions.append(other.version())
    assert list(other.load()) == [USER_WORDS]
    assert len(set(versions)) == len(versions)


def test_one_indexer_claims_the_reanalysis_and_another_takes_it_over_when_it_goes_silent(open_store: OpenStore) -> None:
    store, a, b = open_store(), open_store(), open_store()
    assert store.reanalysis() is None and a.claim_reanalysis("a", T, 60) is None
    job = store.request_reanalysis(T, "digest1")
    assert (job.state, job.user_words) == ("pending", "digest1") and store.reanalysis() == job
    mine = a.claim_reanalysis("a", T + 1, 60)
    assert mine is not None and (mine.state, mine.owner, mine.heartbeat_at) == ("running", "a", T + 1)
    assert b.claim_reanalysis("b", T + 30, 60) is None
    assert a.claim_reanalysis("a", T + 30, 60) is not None  # its own again
    progress = dataclasses.replace(mine, done=10, total=40, cursor="https://a.cn/9", heartbeat_at=T + 40)
    assert a.update_reanalysis(progress) and store.reanalysis() == progress
    taken = b.claim_reanalysis("b", T + 100, 60)  # a silent since T + 40
    assert taken is not None and (taken.owner, taken.done, taken.cursor) == ("b", 10, "https://a.cn/9")
    assert not a.update_reanalysis(dataclasses.replace(progress, done=20))  # a lost it
    finished = dataclasses.replace(taken, state="done", done=40, finished_at=T + 120)
    assert b.update_reanalysis(finished) and store.reanalysis() == finished
    assert not b.update_reanalysis(finished)  # a finished job takes no more updates
    assert a.claim_reanalysis("a", T + 500, 60) is None


def test_a_new_request_replaces_a_running_job_and_its_owner_stops_writing(open_store: OpenStore) -> None:
    store = open_store()
    store.request_reanalysis(T, "d1")
    running = store.claim_reanalysis("a", T, 60)
    assert running is not None
    new = store.request_reanalysis(T + 5, "d2")
    assert new.job_id != running.job_id and store.reanalysis() == new
    assert not store.update_reanalysis(dataclasses.replace(running, done=5))
    assert store.claim_reanalysis("a", T + 6, 60).job_id == new.job_id
