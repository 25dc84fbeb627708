"""One side of the PageRank benchmark, in its own process: load a synthetic link graph
into Redis, or rank it there, and print what it measured as one JSON line.

    python -m bench.pagerank.pagerank_child load REDIS_URL NODES EDGES       # through set_outlinks
    python -m bench.pagerank.pagerank_child bulk-load REDIS_URL NODES EDGES  # the stored layout, directly
    python -m bench.pagerank.pagerank_child rank REDIS_URL RECRAWL_PLAN.json

It runs against whichever ``services`` package comes first on ``sys.path``: this
checkout's, or an older revision's exported by ``bench.pagerank.pagerank_bench`` (the baseline),
so it uses only what both have: ``RedisLinkGraph``, ``set_outlinks`` and
``Ranker.recompute``. A process per step keeps each peak RSS apart: a rank's peak is
its own, not the loader's.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bench.measure.resource_use import status_kib

SEED = 1
TEXTS = 5000  # distinct anchor texts, like a site's titles: each target is linked by its own
CHANGED_SHARE = 0.01  # pages that gain a link between the cold run and the warm one


def synthetic_graph(nodes: int, edges: int) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` distinct links, no self-links, sorted by source. Out-degrees are
    Poisson around the mean; in-degrees follow a power law (the k-th most linked page
    gets about k^-0.75 of the links), the popular pages spread over the id range."""
    rng = np.random.default_rng(SEED)
    drawn = int(edges * 1.1)
    src = rng.integers(0, nodes, drawn)
    dst = rng.permutation(nodes)[(nodes * rng.random(drawn) ** 4).astype(np.int64)]
    keys = np.unique(src[src != dst] * nodes + dst[src != dst])
    keys = np.sort(rng.choice(keys, edges, replace=False))
    return keys // nodes, keys % nodes


def url(node: int) -> str:
    return f"https://h{node % 1000}.example.cn/doc/{node}.html"


def anchor(src: int, dst: int) -> str:
    """Half the links carry their target's title; the rest are images and icons."""
    return _title(dst % TEXTS) if (src + dst) % 2 == 0 else ""


def _title(j: int) -> str:
    return f"第{j}节 软件包管理"


def pages(src: np.ndarray, dst: np.ndarray, nodes: int) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Every node as (URL, links), linkless ones included."""
    bounds = np.searchsorted(src, np.arange(nodes + 1))
    for node in range(nodes):
        targets = dst[bounds[node] : bounds[node + 1]].tolist()
        yield url(node), [(url(t), anchor(node, t)) for t in targets]


def store(graph: Any, batch: list[tuple[str, list[tuple[str, str]]]]) -> None:
    many = getattr(graph, "set_outlinks_many", None)
    if many is not None:
        many(batch)
    else:  # the baseline's graph: one round trip a page
        for source, links in batch:
            graph.set_outlinks(source, links)


def load(redis_url: str, nodes_arg: str, edges_arg: str) -> dict[str, Any]:
    nodes, edges = int(nodes_arg), int(edges_arg)
    from services.common.adapters.redis.link_graph import RedisLinkGraph

    src, dst = synthetic_graph(nodes, edges)
    graph = RedisLinkGraph.from_url(redis_url)
    started = time.perf_counter()
    batch: list[tuple[str, list[tuple[str, str]]]] = []
    for page in pages(src, dst, nodes):
        batch.append(page)
        if len(batch) == 2000:
            store(graph, batch)
            batch = []
    store(graph, batch)
    return {"load_s": time.perf_counter() - started, "edges": len(src), "nodes": nodes}


def bulk_load(redis_url: str, nodes_arg: str, edges_arg: str) -> dict[str, Any]:
    """The same graph as ``load`` gives, written straight in the stored layout (node i
    gets URL id i, title j text id j) in pipelined HSETs: seconds instead of the many
    minutes that ten million links through one script per page would take. For this
    checkout only; the per-page path is measured by ``load`` at the baseline size."""
    from services.common.adapters.redis.link_graph import RedisLinkGraph
    from services.common.domain.link_ids import ID

    nodes, edges = int(nodes_arg), int(edges_arg)
    src, dst = synthetic_graph(nodes, edges)
    graph = RedisLinkGraph.from_url(redis_url)
    keys, client = graph.key_names(), graph._r  # a benchmark's loader, not product code
    started = time.perf_counter()
    titles = [_title(j) for j in range(TEXTS)]
    _hset_all(client, keys["urls"], {i: url(i) for i in range(nodes)})
    _hset_all(client, keys["url-ids"], {url(i): i for i in range(nodes)})
    _hset_all(client, keys["texts"], dict(enumerate(titles)))
    _hset_all(client, keys["text-ids"], {t: j for j, t in enumerate(titles)})
    client.hset(keys["next"], mapping={"url": nodes, "text": TEXTS})
    bounds = np.searchsorted(src, np.arange(nodes + 1))
    with_text = (src + dst) % 2 == 0
    for start in range(0, nodes, 10_000):
        targets, anchors = {}, {}
        for node in range(start, min(start + 10_000, nodes)):
            row = slice(bounds[node], bounds[node + 1])
            targets[node] = dst[row].astype(ID).tobytes()  # ascending already: the keys were sorted
            linked = dst[row][with_text[row]]
            if len(linked):
                anchors[node] = np.column_stack([linked, linked % TEXTS]).astype(ID).tobytes()
        client.hset(keys["targets"], mapping=targets)
        if anchors:
            client.hset(keys["anchors"], mapping=anchors)
    return {"load_s": time.perf_counter() - started, "edges": len(src), "nodes": nodes, "bulk": True}


def _hset_all(client: Any, key: str, mapping: dict[Any, Any]) -> None:
    items = list(mapping.items())
    for start in range(0, len(items), 10_000):
        client.hset(key, mapping=dict(items[start : start + 10_000]))


class CountingIndex:
    """The part of SearchIndex the ranker writes through, counting instead of indexing:
    the benchmark measures the ranker, and a search engine's own bulk speed is its own."""

    def __init__(self) -> None:
        self.calls = self.fields = self.commits = 0

    def set_link_fields(self, fields: Mapping[str, Any]) -> None:
        self.calls += 1
        self.fields += len(fields)

    def commit(self) -> None:
        self.commits += 1

    def get(self, url: str) -> None:
        return None


class StageClock:
    """Seconds spent in named functions, by wrapping them where the ranker looks them up."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - started

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        taken, self.seconds = self.seconds, {}
        return taken


def rank(redis_url: str, plan_file: str) -> dict[str, Any]:
    """A cold run (nothing written yet), the recrawl in ``plan_file``, a warm run."""
    from services.common.adapters.redis.link_graph import RedisLinkGraph
    from services.common.adapters.sqlite.bus import SqliteBus
    from services.common.config import Settings
    from services.ranker import ranker as ranker_module

    graph = RedisLinkGraph.from_url(redis_url)
    index = CountingIndex()
    with tempfile.TemporaryDirectory() as tmp:
        bus = SqliteBus(Path(tmp) / "bus.sqlite3")
        ranker = ranker_module.Ranker(Settings(data_dir=Path(tmp)), bus, graph, index)
        clock = _stage_clock(ranker_module, graph)
        # The segmenter's dictionary is the ranker's for good, loaded by its first write:
        # loaded here, so that the RSS the runs add is the runs' own.
        from services.common.analysis.words import segment

        segment("预热")
        rss_before = status_kib("VmRSS")
        cold = _timed_run(ranker, index, clock)
        plan = json.loads(Path(plan_file).read_text())
        store(graph, plan)
        warm = _timed_run(ranker, index, clock)
        bus.close()
    peak = status_kib("VmHWM")
    return {"cold": cold, "warm": warm, "changed_pages": len(plan), "rss_before_kib": rss_before, "peak_rss_kib": peak}


def _stage_clock(ranker_module: Any, graph: Any) -> StageClock:
    """The new ranker reads through ``read_snapshot``; the old one called the graph's
    ``anchors``, ``nodes`` and ``edges`` itself. Either way a second counts once."""
    clock = StageClock()
    if hasattr(ranker_module, "read_snapshot"):
        clock.wrap(ranker_module, "read_snapshot", "read")
    else:
        for name in ("nodes", "edges", "anchors"):
            clock.wrap(graph, name, "read")
    clock.wrap(ranker_module, "pagerank_of_ids", "pagerank")
    clock.wrap(ranker_module, "compute_pagerank", "pagerank")
    clock.wrap(ranker_module, "joined_by_node", "anchors")
    clock.wrap(ranker_module.Ranker, "_write", "write")
    return clock


def _timed_run(ranker: Any, index: CountingIndex, clock: StageClock) -> dict[str, Any]:
    calls, fields = index.calls, index.fields
    started = time.perf_counter()
    run = ranker.recompute()
    total = time.perf_counter() - started
    stages = clock.take()
    return {"seconds": total, "stages": stages, "nodes": run.nodes, "edges": run.edges, "iterations": run.iterations,
            "write_calls": index.calls - calls, "written": index.fields - fields}  # fmt: skip


def recrawl_plan(nodes: int, edges: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """A recrawl: ``CHANGED_SHARE`` of the pages, each with one link more (to a random
    page). Computed by the parent: regenerating the graph here would cost the rank
    process more memory than ranking it."""
    src, dst = synthetic_graph(nodes, edges)
    rng = np.random.default_rng(SEED + 1)
    bounds = np.searchsorted(src, np.arange(nodes + 1))
    plan = []
    for node in np.sort(rng.choice(nodes, int(nodes * CHANGED_SHARE), replace=False)).tolist():
        targets = dst[bounds[node] : bounds[node + 1]].tolist() + [int(rng.integers(0, nodes))]
        plan.append((url(node), [(url(t), anchor(node, t)) for t in targets]))
    return plan


COMMANDS: dict[str, Callable[..., dict[str, Any]]] = {"load": load, "bulk-load": bulk_load, "rank": rank}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])), flush=True)
