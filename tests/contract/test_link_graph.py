"""The LinkGraph contract, run against every adapter."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.adapters.redis.link_graph import RedisLinkGraph
from services.common.adapters.sqlite.link_graph import SqliteLinkGraph
from services.common.ports import LinkGraph

A, B, C = "https://example.cn/a", "https://example.cn/b", "https://example.cn/c"


@pytest.fixture(params=[
    "sqlite",
    pytest.param("redis_url", marks=pytest.mark.integration, id="redis"),
    pytest.param("redis_cluster_url", marks=pytest.mark.integration, id="redis-cluster"),
])  # fmt: skip
def open_graph(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], LinkGraph]]:
    """Opens a new adapter on the same stored graph each time it is called."""
    opened: list[LinkGraph] = []
    if request.param == "sqlite":
        path = tmp_path / "links.sqlite3"

        def open_one() -> LinkGraph:
            opened.append(SqliteLinkGraph(path))
            return opened[-1]
    else:
        url = request.getfixturevalue(request.param)

        def open_one() -> LinkGraph:
            opened.append(RedisLinkGraph.from_url(url))
            return opened[-1]

    yield open_one
    for g in opened:
        g.close()


@pytest.fixture
def graph(open_graph: Callable[[], LinkGraph]) -> LinkGraph:
    return open_graph()


def anchor_sets(graph: LinkGraph) -> dict[str, list[str]]:
    """anchors() in a comparable form: the order of texts is not part of the contract."""
    return {target: sorted(texts) for target, texts in graph.anchors().items()}


def test_an_empty_graph_has_no_nodes_edges_or_anchors(graph: LinkGraph) -> None:
    assert graph.nodes() == []
    assert list(graph.edges()) == []
    assert dict(graph.anchors()) == {}
    graph.ping()


def test_set_outlinks_records_the_source_and_its_edges(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "第二页"), (C, "第三页")])
    assert graph.nodes() == [A]
    assert sorted(graph.edges()) == [(A, B), (A, C)]
    assert dict(graph.anchors()) == {B: ["第二页"], C: ["第三页"]}


def test_a_page_without_links_is_still_a_node(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [])
    assert graph.nodes() == [A]
    assert list(graph.edges()) == []


def test_set_outlinks_replaces_the_previous_links(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "旧链接")])
    graph.set_outlinks(A, [(C, "新链接")])
    assert sorted(graph.edges()) == [(A, C)]
    assert dict(graph.anchors()) == {C: ["新链接"]}
    graph.set_outlinks(A, [])
    assert list(graph.edges()) == []
    assert graph.nodes() == [A]


def test_replaying_the_same_outlinks_changes_nothing(graph: LinkGraph) -> None:
    links = [(B, "第二页"), (C, "")]
    graph.set_outlinks(A, links)
    before = (graph.nodes(), sorted(graph.edges()), anchor_sets(graph))
    graph.set_outlinks(A, links)
    assert (graph.nodes(), sorted(graph.edges()), anchor_sets(graph)) == before


def test_a_target_linked_twice_is_one_edge_but_keeps_each_anchor(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "下一页"), (B, "第二章"), (B, "下一页"), (B, "")])
    assert list(graph.edges()) == [(A, B)]
    assert sorted(graph.anchors()[B]) == ["下一页", "第二章"]


def test_anchors_collect_texts_from_every_linking_page(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(C, "安装手册")])
    graph.set_outlinks(B, [(C, "安装手册"), (A, "")])
    assert sorted(graph.anchors()[C]) == ["安装手册", "安装手册"]
    assert A not in graph.anchors()  # empty anchors are not anchor text
    assert sorted(graph.nodes()) == [A, B]


def test_targets_that_were_never_sources_are_not_nodes(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "x")])
    assert B not in graph.nodes()


def test_the_graph_survives_a_reopen(open_graph: Callable[[], LinkGraph]) -> None:
    first = open_graph()
    first.set_outlinks(A, [(B, "第二页")])
    first.set_outlinks(B, [])
    first.close()
    second = open_graph()
    assert sorted(second.nodes()) == [A, B]
    assert list(second.edges()) == [(A, B)]
    assert dict(second.anchors()) == {B: ["第二页"]}
    second.close()


def test_concurrent_writers_from_many_threads_all_land(graph: LinkGraph) -> None:
    def write(worker: int) -> None:
        for i in range(50):
            graph.set_outlinks(f"https://example.cn/{worker}/{i}", [(A, f"w{worker}")])

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(graph.nodes()) == 200
    assert len(list(graph.edges())) == 200


def test_set_outlinks_says_whether_the_graph_changed(graph: LinkGraph) -> None:
    assert graph.set_outlinks(A, [(B, "第二页"), (C, "第三页")]) is True  # a new page
    assert graph.set_outlinks(A, [(C, "第三页"), (B, "第二页")]) is False  # a recrawl, same links
    assert graph.set_outlinks(A, [(B, "第二页")]) is True
    assert graph.set_outlinks(A, [(B, "下一页")]) is True  # other anchor text
    assert graph.set_outlinks(B, []) is True  # a new page without links
    assert graph.set_outlinks(B, []) is False
    assert anchor_sets(graph) == {B: ["下一页"]}


def chunk_rows(graph: LinkGraph) -> tuple[list[int], list[tuple[int, int]], list[tuple[int, int, int]]]:
    """Every chunk's sources, edges and anchors, as ids."""
    sources, edges, anchors = [], [], []
    for chunk in graph.edge_chunks():
        sources += chunk.sources.tolist()
        edges += zip(chunk.src.tolist(), chunk.dst.tolist(), strict=True)
    for a in graph.anchor_chunks():
        anchors += zip(a.src.tolist(), a.dst.tolist(), a.text.tolist(), strict=True)
    return sources, edges, anchors


def test_chunks_stream_the_graph_as_ids_that_map_back_to_urls_and_texts(graph: LinkGraph) -> None:
    graph.set_outlinks_many([(A, [(B, "第二页"), (C, ""), (B, "下一页")]), (B, [])])
    a, b, c = graph.url_ids([A, B, C])
    assert sorted({a, b, c}) == [0, 1, 2]  # ids from 0, without gaps
    assert graph.url_ids(["https://example.cn/never"]) == [None]
    sources, edges, anchors = chunk_rows(graph)
    assert sorted(sources) == sorted([a, b]) and graph.node_count() == 2
    assert sorted(edges) == sorted([(a, b), (a, c)])
    assert sorted((s, t, graph.texts([x])[0]) for s, t, x in anchors) == sorted([(a, b, "下一页"), (a, b, "第二页")])
    assert graph.urls([c, a]) == [C, A]


def test_a_chunk_holds_whole_pages_and_every_page_comes_once(graph: LinkGraph) -> None:
    pages = [(f"https://example.cn/{i}", [(f"https://example.cn/{(i * 7) % 12_000}", "下一页")]) for i in range(12_000)]
    assert all(graph.set_outlinks_many(pages))
    sources, edges, anchors = chunk_rows(graph)
    assert len(sources) == len(set(sources)) == 12_000
    assert len(edges) == len(anchors) == 12_000  # 7 is prime to 12,000: no page links to itself
    # Ids from 0 without gaps, over more URLs than one id lookup takes.
    assert sorted(graph.url_ids([source for source, _ in pages])) == list(range(12_000))
    assert graph.set_outlinks_many(pages) == [False] * 12_000


def test_set_outlinks_many_answers_per_page_in_order(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "x")])
    assert graph.set_outlinks_many([(A, [(B, "x")]), (B, [(A, "")]), (B, [(A, "")]), (A, [])]) == [
        False, True, False, True]  # fmt: skip
    assert sorted(graph.edges()) == [(B, A)]


def test_one_text_on_many_links_is_stored_once(graph: LinkGraph) -> None:
    graph.set_outlinks(A, [(B, "下一页"), (C, "下一页"), (A, "本页")])  # a self-link is kept if stored
    _, edges, anchors = chunk_rows(graph)
    assert len({text for _, _, text in anchors}) == 2 and len(anchors) == 3
    assert sorted(graph.edges()) == [(A, A), (A, B), (A, C)]
    assert {t: texts for t, texts in graph.anchors().items()} == {A: ["本页"], B: ["下一页"], C: ["下一页"]}
