"""A link graph written by the version before ids (URL strings per link) is converted
when an adapter opens it, and reads as it did."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import redis

from services.common.adapters.redis.connection import connect
from services.common.adapters.redis.link_graph import RedisLinkGraph
from services.common.adapters.sqlite.link_graph import SqliteLinkGraph
from services.common.ports import LinkGraph

A, B, C = "https://example.cn/a", "https://example.cn/b", "https://example.cn/c"
# The old graph: A links B twice (two texts) and C without text; B has no links.
OLD_LINKS = {A: [[B, "下一页"], [B, "第二章"], [C, ""]], B: []}


def old_sqlite_graph(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE nodes (url TEXT PRIMARY KEY) WITHOUT ROWID;"
        "CREATE TABLE links (source TEXT NOT NULL, target TEXT NOT NULL, anchor TEXT NOT NULL,"
        " PRIMARY KEY (source, target, anchor)) WITHOUT ROWID;"
    )
    db.executemany("INSERT INTO nodes VALUES (?)", [(url,) for url in OLD_LINKS])
    db.executemany("INSERT INTO links VALUES (?, ?, ?)", [(s, t, a) for s, pairs in OLD_LINKS.items() for t, a in pairs])
    db.commit()
    db.close()


def old_redis_graph(client: redis.Redis, prefix: str) -> None:
    for source, pairs in OLD_LINKS.items():
        client.zadd(f"{prefix}links:nodes", {source: 0})
        client.hset(f"{prefix}links:out", source, json.dumps(sorted(pairs), ensure_ascii=False))


def assert_reads_as_before(graph: LinkGraph) -> None:
    assert graph.nodes() == [A, B]
    assert sorted(graph.edges()) == [(A, B), (A, C)]
    assert {t: sorted(texts) for t, texts in graph.anchors().items()} == {B: ["下一页", "第二章"]}
    assert graph.set_outlinks(A, [(B, "下一页"), (B, "第二章"), (C, "")]) is False  # converted exactly


def test_an_old_sqlite_graph_is_converted_on_open(tmp_path: Path) -> None:
    path = tmp_path / "links.sqlite3"
    old_sqlite_graph(path)
    graph = SqliteLinkGraph(path)
    assert_reads_as_before(graph)
    graph.close()
    tables = {name for (name,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "links" not in tables and "nodes" not in tables


@pytest.mark.integration
def test_an_old_redis_graph_is_converted_on_open_and_its_keys_go(redis_url: str) -> None:
    target = connect(redis_url)
    old_redis_graph(target.client, target.prefix)
    graph = RedisLinkGraph.from_url(redis_url)
    assert_reads_as_before(graph)
    assert not target.client.exists(f"{target.prefix}links:out", f"{target.prefix}links:nodes")
    graph.close()
    target.client.close()


@pytest.mark.integration
def test_a_redis_graph_of_keys_without_the_hash_tag_gets_it_on_open(redis_url: str) -> None:
    first = RedisLinkGraph.from_url(redis_url)
    first.set_outlinks(A, [(B, "下一页"), (C, "")])
    first.set_outlinks(B, [])
    target = connect(redis_url)
    for key in first.key_names().values():  # as the version before Redis Cluster left them
        if target.client.exists(key):
            target.client.rename(key, key.replace("{graph}:", "graph:"))
    first.close()
    graph = RedisLinkGraph.from_url(redis_url)
    assert graph.nodes() == [A, B]
    assert graph.anchors() == {B: ["下一页"]}
    assert not target.client.keys(f"{target.prefix}graph:*")
    graph.close()
    target.client.close()
