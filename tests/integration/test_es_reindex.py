"""Rebuilding an Elasticsearch index behind its alias while searches go on.

A reader (another process's view, opened read-only) searches in a loop from a
thread; every answer must come from exactly one of the two indices, never fail,
never be empty, and never go back to the old index once the new one answered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from elasticsearch import Elasticsearch

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.config import Settings
from services.common.domain.documents import LinkFields
from services.common.domain.search_types import SearchQuery
from services.search.query_plan import words_query
from tests.page_events import index_doc
from tests.servers.es_server import drop_alias

pytestmark = pytest.mark.integration

CFG = Settings()
QUERY = SearchQuery(tree=words_query(Settings(), ("共同",)), limit=100)
OLD = [f"https://old.example.cn/{i:02d}" for i in range(20)]
NEW = [f"https://new.example.cn/{i:02d}" for i in range(25)]


@dataclass
class SearchLoop:
    """Searches from a thread until stopped, recording every answer and error."""

    index: ElasticsearchSearchIndex
    answers: list[frozenset[str]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                hits = self.index.search(QUERY)
                urls = frozenset(h.url for h in hits.hits)
                assert hits.total == len(urls)
                self.answers.append(urls)
            except BaseException as exc:  # every failure is a finding
                self.errors.append(exc)

    def wait_for_answers(self, n: int, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        start = len(self.answers)
        while len(self.answers) < start + n and time.monotonic() < deadline and not self.errors:
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()


@pytest.fixture
def writer(es_index_url: str) -> Iterator[ElasticsearchSearchIndex]:
    index = ElasticsearchSearchIndex.from_url(es_index_url, CFG)
    index.upsert([index_doc(u, "共同 旧版", f"旧 正文 {i}") for i, u in enumerate(OLD)])
    index.commit()
    yield index
    index.close()


@pytest.fixture
def searching(es_index_url: str, writer: ElasticsearchSearchIndex) -> Iterator[SearchLoop]:
    reader = ElasticsearchSearchIndex.from_url(es_index_url, CFG, read_only=True)
    loop = SearchLoop(reader)
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    loop.wait_for_answers(5)
    yield loop
    loop.stop()
    thread.join(30)
    reader.close()


def _phases(answers: list[frozenset[str]]) -> list[frozenset[str]]:
    """The distinct answers in the order they first appeared, runs collapsed."""
    out: list[frozenset[str]] = []
    for a in answers:
        if not out or out[-1] != a:
            out.append(a)
    return out


def test_searches_answer_throughout_a_rebuild_and_swap(
    writer: ElasticsearchSearchIndex, searching: SearchLoop, es_client: Elasticsearch
) -> None:
    before = writer.concrete_indices()
    rebuilt = writer.begin_rebuild()
    rebuilt.upsert([index_doc(u, "共同 新版", f"新 正文 {i}") for i, u in enumerate(NEW)])
    rebuilt.commit()
    searching.wait_for_answers(5)
    # Filled and committed, but not behind the alias yet: searches still see the old index.
    assert searching.answers[-1] == frozenset(OLD)
    assert rebuilt.count() == len(NEW) and writer.count() == len(OLD)

    writer.finish_rebuild(rebuilt, grace_s=0.5)
    searching.wait_for_answers(5)
    searching.stop()

    assert searching.errors == []
    assert _phases(searching.answers) == [frozenset(OLD), frozenset(NEW)]
    after = writer.concrete_indices()
    assert len(before) == 1 and len(after) == 1 and after != before
    assert not es_client.indices.exists(index=before[0])  # the old index is gone
    # Writers that hold the alias now write into the new index.
    writer.upsert([index_doc("https://new.example.cn/late", "共同 迟到")])
    writer.commit()
    assert writer.count() == len(NEW) + 1


def test_repeated_swaps_never_show_a_missing_or_mixed_index(
    writer: ElasticsearchSearchIndex, searching: SearchLoop
) -> None:
    contents = {frozenset(OLD): "旧", frozenset(NEW): "新"}
    for round_ in range(6):
        urls = NEW if round_ % 2 == 0 else OLD
        rebuilt = writer.begin_rebuild()
        rebuilt.upsert([index_doc(u, "共同", contents[frozenset(urls)]) for u in urls])
        writer.finish_rebuild(rebuilt, grace_s=0.1)
        searching.wait_for_answers(3)
    searching.stop()
    assert searching.errors == []
    assert set(searching.answers) == set(contents)
    assert len(_phases(searching.answers)) == 7
    assert len(writer.concrete_indices()) == 1


def test_reindex_into_a_new_index_keeps_every_document_and_its_link_fields(
    writer: ElasticsearchSearchIndex, searching: SearchLoop
) -> None:
    writer.set_link_fields({OLD[3]: LinkFields(pagerank=0.2, rank=4.0, anchors="入口", anchors_tokens="入口")})
    writer.commit()
    ranked_first = writer.search(QUERY).hits[0].url
    doc_before = writer.get(OLD[3])
    before = writer.concrete_indices()

    new_name = writer.reindex_into_new_index(grace_s=0.5)
    searching.wait_for_answers(5)
    searching.stop()

    assert searching.errors == []
    assert _phases(searching.answers) == [frozenset(OLD)]  # the same answer throughout
    assert writer.concrete_indices() == [new_name] != before
    assert writer.urls() == sorted(OLD)
    assert writer.get(OLD[3]) == doc_before
    assert ranked_first == OLD[3] == writer.search(QUERY).hits[0].url


def test_an_abandoned_rebuild_leaves_the_alias_alone(
    writer: ElasticsearchSearchIndex, es_client: Elasticsearch
) -> None:
    before = writer.concrete_indices()
    rebuilt = writer.begin_rebuild()
    rebuilt.upsert([index_doc(NEW[0], "共同")])
    rebuilt.commit()
    assert writer.concrete_indices() == before and writer.urls() == sorted(OLD)
    writer.abandon_rebuild(rebuilt)
    assert not es_client.indices.exists(index=rebuilt.target)
    assert writer.concrete_indices() == before and writer.count() == len(OLD)
    with pytest.raises(Exception, match="not a rebuild"):
        writer.abandon_rebuild(writer)  # never the live index


def test_a_swap_changes_nothing_if_another_process_swapped_meanwhile(
    writer: ElasticsearchSearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = writer.concrete_indices()
    first, second = writer.begin_rebuild(), writer.begin_rebuild()
    assert first.target != second.target
    writer.finish_rebuild(first, delete_old=False)  # another process's swap...
    # ...that landed after this process had read the alias.
    monkeypatch.setattr(writer, "concrete_indices", lambda: original)
    with pytest.raises(Exception):  # noqa: B017 - the server refuses the swap (must_exist): its client's error
        writer.finish_rebuild(second, delete_old=False)
    monkeypatch.undo()
    assert writer.concrete_indices() == [first.target]


# --- opening an alias


def test_processes_opening_a_new_alias_at_once_share_one_index(
    es_client: Elasticsearch, es_index_url: str
) -> None:
    for round_ in range(8):  # a race: give it several chances to go wrong
        url = f"{es_index_url}-r{round_}"
        opened: list[ElasticsearchSearchIndex] = []
        threads = [
            threading.Thread(target=lambda: opened.append(ElasticsearchSearchIndex.from_url(url, CFG)))
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        try:
            assert len(opened) == 3
            assert len(opened[0].concrete_indices()) == 1
        finally:
            for index in opened:
                index.close()
            drop_alias(es_client, url.rsplit("/", 1)[1])


def test_a_read_only_instance_needs_an_existing_alias(es_index_url: str) -> None:
    with pytest.raises(Exception, match="no search index"):
        ElasticsearchSearchIndex.from_url(es_index_url, CFG, read_only=True)


def test_a_concrete_index_under_the_alias_name_is_refused(es_client: Elasticsearch, es_alias: str, es_url: str) -> None:
    es_client.indices.create(index=es_alias)
    try:
        with pytest.raises(Exception, match="not an alias"):
            ElasticsearchSearchIndex.from_url(es_url.replace("http", "elasticsearch", 1) + "/" + es_alias, CFG)
    finally:
        es_client.indices.delete(index=es_alias)


def test_ping_fails_once_the_alias_is_gone(writer: ElasticsearchSearchIndex, es_client: Elasticsearch) -> None:
    writer.ping()
    es_client.indices.delete(index=",".join(writer.concrete_indices()))
    with pytest.raises(Exception):  # noqa: B017 - the client's own error for a missing index: any will do
        writer.ping()
