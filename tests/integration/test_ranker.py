"""Link batches in through the embedded bus, ranks and anchors out into the index."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import networkx as nx
import pytest

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.adapters.sqlite.link_graph import SqliteLinkGraph
from services.common.config import Settings
from services.common.domain.documents import IndexDoc, LinkFields
from services.common.domain.messages import TOPIC_LINKS, LinkBatch, Outlink
from services.common.domain.search_types import SearchHits, SearchQuery
from services.ranker.anchor_text import MAX_ANCHORS_CHARS, join_anchors
from services.ranker.ranker import Ranker
from services.search.query_plan import words_query

SITE = "http://docs.example.cn"
HOME, INSTALL, FAQ, APT = (f"{SITE}/", f"{SITE}/install.html", f"{SITE}/faq.html", f"{SITE}/apt.html")


class RecordingIndex:
    """The part of SearchIndex the ranker uses, remembering what it was told."""

    def __init__(self) -> None:
        self.fields: dict[str, LinkFields] = {}
        self.pending: dict[str, LinkFields] = {}
        self.calls = 0
        self.commits = 0

    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None:
        self.calls += 1
        self.pending.update(fields)

    def commit(self) -> None:
        self.commits += 1
        self.fields.update(self.pending)
        self.pending.clear()

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...
    def delete(self, urls: Iterable[str]) -> None: ...
    def url_for_hash(self, content_hash: str) -> str | None: ...
    def search(self, query: SearchQuery) -> SearchHits:
        return SearchHits(0, [])

    def get(self, url: str) -> IndexDoc | None: ...
    def count(self) -> int:
        return len(self.fields)

    def sites(self) -> list[str]:
        return []

    def urls(self) -> list[str]:
        return list(self.fields)

    def ping(self) -> None: ...
    def close(self) -> None: ...


def fake_segment(text: str) -> list[str]:
    """Whitespace-separated words, lower-cased: enough to see tokens arrive."""
    return [w.lower() for w in text.replace("|", " ").split()]


@pytest.fixture
def bus(tmp_path: Path) -> Iterator[SqliteBus]:
    b = SqliteBus(tmp_path / "bus.sqlite3")
    yield b
    b.close()


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SqliteLinkGraph]:
    g = SqliteLinkGraph(tmp_path / "links.sqlite3")
    yield g
    g.close()


@pytest.fixture
def index() -> RecordingIndex:
    return RecordingIndex()


@pytest.fixture
def ranker(tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex) -> Ranker:
    cfg = Settings(data_dir=tmp_path, ranker_interval_s=0.05)
    return Ranker(cfg, bus, graph, index, segment=fake_segment)


def publish(bus: SqliteBus, source: str, *links: tuple[str, str]) -> None:
    batch = LinkBatch(source=source, depth=0, links=[Outlink(url, anchor) for url, anchor in links])
    bus.publish(TOPIC_LINKS, batch.to_bytes(), key="docs.example.cn")


def publish_site(bus: SqliteBus) -> None:
    publish(bus, HOME, (INSTALL, "安装手册"), (FAQ, "常见问题"), (APT, "APT 指南"), (HOME + "#top", "顶部"))
    publish(bus, INSTALL, (HOME, "首页"), (APT, " APT\n 指南 "), ("mailto:debian@example.cn", "邮件"))
    publish(bus, FAQ, (HOME, "首页"), (INSTALL, "安装手册"), (f"{SITE}/install.html#step-1", "第一步"))
    publish(bus, APT)  # a page without links is still a page


def anchor_sets(graph: SqliteLinkGraph) -> dict[str, list[str]]:
    return {target: sorted(texts) for target, texts in graph.anchors().items()}


def drain(ranker: Ranker) -> int:
    handled = 0
    while n := ranker.step(timeout_s=0.05):
        handled += n
    return handled


def test_link_batches_become_ranks_and_anchors_in_the_index(
    ranker: Ranker, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex
) -> None:
    publish_site(bus)
    assert drain(ranker) == 4
    assert bus.pending(TOPIC_LINKS, "ranker") == 0

    run = ranker.recompute()
    assert (run.nodes, run.edges, run.converged) == (4, 7, True)
    assert index.commits == 1 and set(index.fields) == {HOME, INSTALL, FAQ, APT}

    expected = nx.pagerank(
        nx.DiGraph([(HOME, INSTALL), (HOME, FAQ), (HOME, APT), (INSTALL, HOME), (INSTALL, APT),
                    (FAQ, HOME), (FAQ, INSTALL)]),
        alpha=0.85, tol=1e-12,
    )  # fmt: skip
    for url, fields in index.fields.items():
        assert fields.pagerank == pytest.approx(expected[url], abs=1e-6)
        assert fields.rank == pytest.approx(fields.pagerank * 4, rel=0.005)  # kept to 9 bits, as Lucene does
    assert sum(f.pagerank for f in index.fields.values()) == pytest.approx(1.0)

    # Anchors: distinct, most common first, whitespace collapsed; self-links add nothing.
    assert index.fields[INSTALL].anchors == "安装手册 | 第一步"
    assert index.fields[APT].anchors == "APT 指南"
    assert index.fields[APT].anchors_tokens == "apt 指南"
    assert index.fields[HOME].anchors == "首页"
    assert "顶部" not in index.fields[HOME].anchors
    assert ranker.stats().dropped_links == 2  # the mailto: link and HOME#top


def test_redelivered_batches_change_nothing(
    tmp_path: Path, ranker: Ranker, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex
) -> None:
    publish_site(bus)
    drain(ranker)
    ranker.recompute()
    before = (sorted(graph.edges()), graph.nodes(), anchor_sets(graph), dict(index.fields))

    publish_site(bus)  # the crawler replays every page after a crash
    drain(ranker)
    ranker.recompute()
    assert (sorted(graph.edges()), graph.nodes(), anchor_sets(graph), dict(index.fields)) == before


def test_uncommitted_batches_come_back_after_a_crash(tmp_path: Path, index: RecordingIndex) -> None:
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    graph = SqliteLinkGraph(tmp_path / "links.sqlite3")
    publish_site(bus)
    messages = bus.poll(TOPIC_LINKS, "ranker", timeout_s=0.1)
    assert len(messages) == 4  # delivered, never committed: the ranker died here
    bus.close()

    bus = SqliteBus(tmp_path / "bus.sqlite3")
    ranker = Ranker(Settings(data_dir=tmp_path), bus, graph, index, segment=fake_segment)
    assert drain(ranker) == 4
    assert ranker.recompute().nodes == 4
    bus.close()
    graph.close()


def test_a_restarted_ranker_ranks_a_graph_it_inherited(tmp_path: Path, bus: SqliteBus, index: RecordingIndex) -> None:
    graph = SqliteLinkGraph(tmp_path / "links.sqlite3")
    graph.set_outlinks(HOME, [(INSTALL, "安装手册")])
    ranker = Ranker(Settings(data_dir=tmp_path), bus, graph, index, segment=fake_segment)
    assert ranker.stats().dirty
    graph.close()


def test_undecodable_messages_are_skipped_and_committed(ranker: Ranker, bus: SqliteBus) -> None:
    bus.publish(TOPIC_LINKS, b"not json")
    bus.publish(TOPIC_LINKS, LinkBatch(source="ftp://example.cn/", depth=0).to_bytes())
    publish(bus, HOME, (INSTALL, "安装手册"))
    assert drain(ranker) == 3
    assert bus.pending(TOPIC_LINKS, "ranker") == 0
    stats = ranker.stats()
    assert (stats.bad_batches, stats.batches, stats.links) == (2, 1, 1)


def test_an_empty_graph_ranks_nothing_and_writes_nothing(ranker: Ranker, index: RecordingIndex) -> None:
    run = ranker.recompute()
    assert (run.nodes, run.edges) == (0, 0)
    assert index.calls == 0


def test_run_ranks_while_the_graph_changes_and_once_more_on_stop(
    ranker: Ranker, bus: SqliteBus, index: RecordingIndex
) -> None:
    stop = threading.Event()
    worker = threading.Thread(target=ranker.run, args=(stop,))
    worker.start()
    try:
        publish_site(bus)
        for _ in range(200):
            if ranker.stats().runs >= 1 and set(index.fields) == {HOME, INSTALL, FAQ, APT}:
                break
            stop.wait(0.05)
        assert ranker.stats().runs >= 1
        publish(bus, f"{SITE}/new.html", (HOME, "首页"))
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()
    assert f"{SITE}/new.html" in index.fields  # the final run after stop saw it
    assert not ranker.stats().dirty


def test_a_failed_run_leaves_the_graph_dirty(ranker: Ranker, bus: SqliteBus, index: RecordingIndex) -> None:
    publish_site(bus)
    drain(ranker)

    def broken(fields: Mapping[str, LinkFields]) -> None:
        raise ConnectionError("index is down")

    index.set_link_fields = broken  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        ranker.recompute()
    assert ranker.stats().dirty


def test_anchor_text_is_capped_keeping_the_most_common_texts() -> None:
    texts = ["首页"] * 5 + [f"第{i}章 " + "长" * 50 for i in range(100)]
    joined = join_anchors(texts)
    assert joined.startswith("首页 | ")
    assert len(joined) <= MAX_ANCHORS_CHARS
    assert join_anchors(["b", "a", "", "b"]) == "b | a"


def test_the_default_segmenter_is_the_indexers(
    tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex
) -> None:
    chinese_tokens = pytest.importorskip("services.common.analysis.words")
    ranker = Ranker(Settings(data_dir=tmp_path), bus, graph, index)
    publish(bus, HOME, (INSTALL, "Debian 安装手册"))
    publish(bus, INSTALL)
    drain(ranker)
    ranker.recompute()
    assert index.fields[INSTALL].anchors_tokens == " ".join(chinese_tokens.segment("Debian 安装手册"))
    assert index.fields[INSTALL].anchors_tokens


def test_ranks_and_anchors_reach_the_tantivy_index(tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph) -> None:
    tantivy_adapter = pytest.importorskip("services.common.adapters.tantivy.search_index")
    document_builder = pytest.importorskip("services.indexer.document_builder")
    from services.common.domain.messages import PageEvent

    cfg = Settings(data_dir=tmp_path)
    index = tantivy_adapter.TantivySearchIndex(tmp_path / "index", cfg)
    try:
        pages = {HOME: "首页", INSTALL: "安装", FAQ: "问答", APT: "软件源"}
        index.upsert(
            [
                document_builder.build_document(
                    PageEvent(url=url, host="docs.example.cn", lease_id="", status=200, title=title, body=title)
                )
                for url, title in pages.items()
            ]
        )
        index.commit()
        ranker = Ranker(cfg, bus, graph, index)
        publish_site(bus)
        drain(ranker)
        ranker.recompute()

        install = index.get(INSTALL)
        assert install is not None
        assert install.anchors == "安装手册 | 第一步"
        assert install.rank == pytest.approx(install.pagerank * 4, rel=0.005)
        assert sum(index.get(url).pagerank for url in pages) == pytest.approx(1.0)  # type: ignore[union-attr]
        # Anchor text makes a page findable by words it does not contain itself.
        hits = index.search(SearchQuery(tree=words_query(Settings(), ("手册",))))
        assert INSTALL in [hit.url for hit in hits.hits]

        # Re-indexing a page keeps the link fields the ranker wrote.
        index.upsert(
            [
                document_builder.build_document(
                    PageEvent(url=INSTALL, host="docs.example.cn", lease_id="", status=200, title="安装", body="新版")
                )
            ]
        )
        index.commit()
        assert index.get(INSTALL).anchors == "安装手册 | 第一步"  # type: ignore[union-attr]
    finally:
        index.close()


def _tantivy_docs(index, urls: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    from services.common.domain.messages import PageEvent
    from services.indexer.document_builder import build_document

    index.upsert(
        [
            build_document(PageEvent(url=u, host="docs.example.cn", lease_id="", status=200, title=t, body=t))
            for u, t in urls.items()
        ]
    )
    index.commit()


def announce(bus: SqliteBus, *urls: str) -> None:
    from services.common.domain.messages import TOPIC_INDEXED, IndexedDocuments

    bus.publish(TOPIC_INDEXED, IndexedDocuments(list(urls), 0.0).to_bytes(), key="docs.example.cn")


def test_a_page_indexed_after_the_last_run_gets_its_link_fields_without_another_run(
    tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph
) -> None:
    from services.common.adapters.tantivy.search_index import TantivySearchIndex
    from services.common.runtime.metrics import RANKER_DOCUMENTS_WAITING

    cfg = Settings(data_dir=tmp_path)
    index = TantivySearchIndex(tmp_path / "index", cfg)
    try:
        _tantivy_docs(index, {HOME: "首页", INSTALL: "安装"})  # the indexer trails the crawl
        ranker = Ranker(cfg, bus, graph, index)
        publish_site(bus)
        drain(ranker)
        ranker.recompute()
        assert index.get(INSTALL).pagerank > 0  # type: ignore[union-attr]

        # FAQ and APT are indexed after the graph's last change: no run is due.
        _tantivy_docs(index, {FAQ: "问答", APT: "软件源"})
        assert index.get(APT).pagerank == 0  # type: ignore[union-attr]
        announce(bus, FAQ, APT)
        drain(ranker)
        assert not ranker.stats().dirty and ranker.stats().runs == 1
        apt = index.get(APT)
        assert apt is not None and apt.pagerank > 0 and apt.anchors == "APT 指南"
        assert ranker.stats().waiting == 0 and RANKER_DOCUMENTS_WAITING._value.get() == 0

        # A page no run has ranked yet waits for the next run, which its links bring.
        new = f"{SITE}/new.html"
        _tantivy_docs(index, {new: "新页面"})
        announce(bus, new)
        drain(ranker)
        assert ranker.stats().waiting == 1 and RANKER_DOCUMENTS_WAITING._value.get() == 1
        publish(bus, new, (HOME, "首页"))
        drain(ranker)
        assert ranker.recompute_due() or ranker.stats().dirty
        ranker.recompute()
        assert index.get(new).pagerank > 0  # type: ignore[union-attr]
        assert ranker.stats().waiting == 0
    finally:
        index.close()


def test_a_run_rewrites_only_the_pages_whose_fields_moved(
    ranker: Ranker, bus: SqliteBus, index: RecordingIndex
) -> None:
    publish_site(bus)
    drain(ranker)
    ranker.recompute()
    assert ranker.stats().written == 4
    publish(bus, APT)  # the same links again: nothing moves
    drain(ranker)
    ranker.recompute()
    assert ranker.stats().written == 4 and index.commits == 1
    publish(bus, APT, (FAQ, "常见问题"))  # a new link moves every rank
    drain(ranker)
    ranker.recompute()
    assert ranker.stats().written > 4 and index.fields[FAQ].anchors == "常见问题"


def test_a_recrawl_that_changes_no_link_needs_no_new_run(ranker: Ranker, bus: SqliteBus) -> None:
    publish_site(bus)
    drain(ranker)
    ranker.recompute()
    publish_site(bus)  # every page fetched again, nothing changed
    drain(ranker)
    assert not ranker.stats().dirty
    publish(bus, APT, (HOME, "首页"))  # one page gained a link
    drain(ranker)
    assert ranker.stats().dirty


def ranked_site(cfg: Settings, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex) -> Ranker:
    """A ranker with ``cfg`` that has taken in the site and ranked it once."""
    ranker = Ranker(cfg, bus, graph, index, segment=fake_segment)
    publish_site(bus)
    drain(ranker)
    ranker.recompute()
    return ranker


def test_documents_waiting_when_the_crawl_goes_quiet_are_ranked_before_the_interval_ends(
    tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex
) -> None:
    # The product's 300 s interval: on a cluster crawl the last pages were indexed after
    # the graph's last run and waited out the rest of the interval once the crawl ended.
    ranker = ranked_site(Settings(data_dir=tmp_path, ranker_interval_s=300, ranker_quiet_s=0.2), bus, graph, index)
    new = f"{SITE}/new.html"
    publish(bus, new, (HOME, "首页"))  # the crawl's last page: the graph changes
    announce(bus, new)  # and the indexer makes it searchable; no run has ranked it
    drain(ranker)
    assert ranker.stats().dirty and ranker.stats().waiting == 1
    assert not ranker.recompute_due()  # the graph changed a moment ago: the crawl may go on
    time.sleep(0.25)
    assert ranker.recompute_due()  # quiet since: ranked now, not 300 s after the last run
    ranker.recompute()
    assert index.fields[new].pagerank > 0 and ranker.stats().waiting == 0


def test_a_quiet_dirty_graph_with_no_document_waiting_keeps_to_the_interval(
    tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex
) -> None:
    ranker = ranked_site(Settings(data_dir=tmp_path, ranker_interval_s=300, ranker_quiet_s=0.01), bus, graph, index)
    publish(bus, APT, (FAQ, "常见问题"))  # a recrawl changed a link of a ranked page
    drain(ranker)
    time.sleep(0.05)
    assert ranker.stats().dirty and ranker.stats().waiting == 0
    assert not ranker.recompute_due()  # every document has fields: the interval decides


def test_early_runs_keep_to_a_tenth_of_the_rankers_time(
    tmp_path: Path, bus: SqliteBus, graph: SqliteLinkGraph, index: RecordingIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranker = ranked_site(Settings(data_dir=tmp_path, ranker_interval_s=300, ranker_quiet_s=0.01), bus, graph, index)
    slow = ranker.stats().last_run
    assert slow is not None
    monkeypatch.setattr(ranker, "_last_run", type(slow)(slow.nodes, slow.edges, slow.iterations, slow.converged, 60.0))
    new = f"{SITE}/new.html"
    publish(bus, new, (HOME, "首页"))
    announce(bus, new)
    drain(ranker)
    time.sleep(0.05)
    assert ranker.stats().waiting == 1 and not ranker.recompute_due()  # a 60 s run began moments ago


def publish_redirect(bus: SqliteBus, source: str, target: str) -> None:
    batch = LinkBatch(source=source, depth=0, links=[Outlink(target)], kind="redirect")
    bus.publish(TOPIC_LINKS, batch.to_bytes(), key="docs.example.cn")


def test_links_to_a_redirect_count_for_its_target(ranker: Ranker, bus: SqliteBus, index: RecordingIndex) -> None:
    # The site links to http://…/install.html, which redirects (twice) to the https page:
    # the https page gets the inbound links' PageRank and anchor text, as a page
    # linked directly would; the redirecting URLs are no pages of their own.
    https_install = "https://docs.example.cn/install.html"
    publish(bus, HOME, (INSTALL, "安装手册"), (FAQ, "常见问题"))
    publish(bus, FAQ, (HOME, "首页"), (INSTALL, "安装"))
    publish_redirect(bus, INSTALL, f"{SITE}/install/")
    publish_redirect(bus, f"{SITE}/install/", https_install)
    publish(bus, https_install, (HOME, "首页"))
    drain(ranker)
    ranker.recompute()
    assert set(index.fields) == {HOME, FAQ, https_install}
    expected = nx.pagerank(
        nx.DiGraph([(HOME, https_install), (HOME, FAQ), (FAQ, HOME), (FAQ, https_install), (https_install, HOME)]),
        alpha=0.85, tol=1e-12,
    )  # fmt: skip
    for url, fields in index.fields.items():
        assert fields.pagerank == pytest.approx(expected[url], abs=1e-6)
    assert set(index.fields[https_install].anchors.split(" | ")) == {"安装手册", "安装"}


def test_a_redirect_loop_aliases_nothing(ranker: Ranker, bus: SqliteBus, index: RecordingIndex) -> None:
    publish(bus, HOME, (INSTALL, "安装手册"))
    publish_redirect(bus, INSTALL, FAQ)
    publish_redirect(bus, FAQ, INSTALL)
    drain(ranker)
    ranker.recompute()
    assert HOME in index.fields
    assert not any(t.startswith("\ue001") for f in index.fields.values() for t in f.anchors.split(" | "))


def test_a_canonical_variant_is_its_pages_other_name(ranker: Ranker, bus: SqliteBus, index: RecordingIndex) -> None:
    # install.html?print=1 names install.html as canonical: the indexer files it there,
    # so links to the variant, and the variant's own links, are install.html's.
    variant = INSTALL + "?print=1"
    publish(bus, HOME, (variant, "打印版"), (FAQ, "常见问题"))
    publish(bus, FAQ, (INSTALL, "安装"))
    batch = LinkBatch(source=variant, depth=1, links=[Outlink(APT, "APT 指南")], canonical=INSTALL)
    bus.publish(TOPIC_LINKS, batch.to_bytes(), key="docs.example.cn")
    publish(bus, APT, (HOME, "首页"))
    drain(ranker)
    ranker.recompute()
    assert set(index.fields) == {HOME, FAQ, INSTALL, APT}
    assert set(index.fields[INSTALL].anchors.split(" | ")) == {"打印版", "安装"}
    expected = nx.pagerank(
        nx.DiGraph([(HOME, INSTALL), (HOME, FAQ), (FAQ, INSTALL), (INSTALL, APT), (APT, HOME)]), alpha=0.85, tol=1e-12
    )
    for url, fields in index.fields.items():
        assert fields.pagerank == pytest.approx(expected[url], abs=1e-6)
