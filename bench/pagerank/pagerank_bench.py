"""PageRank at 10 million links: Redis → scipy → index writes, by stage, with its peak
RSS and the graph's Redis memory, beside the code before the graph had ids.

    python -m bench.pagerank.pagerank_bench            # print the section (about 10 minutes on 2 cores)
    python -m bench.pagerank.pagerank_bench --write    # and write its block in docs/benchmarks.md

What it does, on one Redis 7 (the test suite's server class, ``tests/servers``):

1. A synthetic link graph (``bench.pagerank.pagerank_child.synthetic_graph``, seeded): 10 links a
   page on average, power-law in-degrees, half the links with one of 5,000 anchor texts.
2. Each side loads it through its own ``RedisLinkGraph.set_outlinks`` (at full size, the
   same graph is written straight in the stored layout: ``bulk-load``) and ranks it in a process of
   its own (``bench.pagerank.pagerank_child``): the real ``Ranker.recompute``, once cold (every
   page written) and once after a recrawl in which 1% of the pages gained a link (only
   material changes written). Index writes go to a counting index: the calls and the
   fields are counted, not sent to tantivy or Elasticsearch, whose bulk speed is their own.
3. The baseline, at 1 million links: ``services/`` of ``BASE_REV`` (the last revision
   with the JSON graph and whole-graph reads), exported with ``git archive``, ranking the
   same graph on the same Redis. Also networkx's ``pagerank`` against
   ``pagerank_of_ids`` on the same edges (the solver alone), with the largest difference.
4. ``MEMORY USAGE … SAMPLES 0`` of every key of each graph.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import redis

from bench.ab_compare import export
from bench.measure import machine
from bench.pagerank.pagerank_child import recrawl_plan, synthetic_graph
from bench.pagerank.pagerank_report import BLOCK, render
from tests.servers.redis_server import RedisServer

REPO = Path(__file__).resolve().parents[2]
BASE_REV = "8e7b337"  # the last revision before the link graph had ids


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def child(tree: Path, *args: str) -> dict[str, Any]:
    """``bench.pagerank.pagerank_child`` with ``tree``'s ``services`` first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(REPO)])
    proc = subprocess.run([sys.executable, "-m", "bench.pagerank.pagerank_child", *args], cwd=tree, env=env,
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"bench.pagerank.pagerank_child {args[0]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def graph_memory(client: redis.Redis, prefix: str) -> int:
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    return sum(int(client.memory_usage(key, samples=0) or 0) for key in keys)


def one_side(
    tree: Path, server: RedisServer, prefix: str, nodes: int, edges: int, work: Path, loader: str = "load"
) -> dict[str, Any]:
    """Load, measure the graph's memory, rank twice; the keys are deleted afterwards."""
    url = f"{server.url}?prefix={prefix}"
    plan = work / f"plan-{nodes}-{edges}.json"
    if not plan.exists():
        plan.write_text(json.dumps(recrawl_plan(nodes, edges)))
    loaded = child(tree, loader, url, str(nodes), str(edges))
    client = redis.Redis(port=server.port)
    try:
        loaded["redis_bytes"] = graph_memory(client, prefix)
        ranked = child(tree, "rank", url, str(plan))
        for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
            client.unlink(key)
    finally:
        client.close()
    return {**loaded, **ranked}


def solver_against_networkx(nodes: int, edges: int) -> dict[str, float]:
    import networkx as nx

    from services.ranker.pagerank import pagerank_of_ids

    src, dst = synthetic_graph(nodes, edges)
    started = time.perf_counter()
    ours = pagerank_of_ids(nodes, src, dst).scores
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    graph = nx.DiGraph()
    graph.add_nodes_from(range(nodes))
    graph.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
    nx.pagerank(graph, alpha=0.85, tol=1e-6)
    nx_s = time.perf_counter() - started
    exact = nx.pagerank(graph, alpha=0.85, tol=1e-12, max_iter=10_000)  # untimed: the reference
    worst = float(np.max(np.abs(ours - np.array([exact[i] for i in range(nodes)]))))
    return {"ours_s": ours_s, "networkx_s": nx_s, "max_abs_diff": worst}


def run(edges: int, baseline_edges: int) -> dict[str, Any]:
    started, clock = datetime.now(UTC), time.perf_counter()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tansuo-pagerank-") as tmp:
        work = Path(tmp)
        (work / "old").mkdir()
        old_tree = export(BASE_REV, work / "old")
        server = RedisServer(work / "redis")
        server.start()
        try:
            _log(f"baseline size: {baseline_edges:,} links, this revision")
            small_new = one_side(REPO, server, "new-small", baseline_edges // 10, baseline_edges, work)
            _log(f"baseline size: {baseline_edges:,} links, {BASE_REV}")
            small_old = one_side(old_tree, server, "old-small", baseline_edges // 10, baseline_edges, work)
            _log("solver against networkx")
            solver = solver_against_networkx(baseline_edges // 10, baseline_edges)
            _log(f"full size: {edges:,} links, this revision")
            full = one_side(REPO, server, "new-full", edges // 10, edges, work, loader="bulk-load")
        finally:
            server.stop()
    return {"started": started.strftime("%Y-%m-%d %H:%M UTC"), "minutes": (time.perf_counter() - clock) / 60,
            "load": (load_before, os.getloadavg()[0]), "machine": machine.describe(),
            "full": full, "small_new": small_new, "small_old": small_old, "solver": solver,
            "base_rev": BASE_REV}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pagerank.pagerank_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=10_000_000, help="links of the full-size graph")
    parser.add_argument("--baseline-edges", type=int, default=1_000_000, help="links of the side-by-side graph")
    parser.add_argument("--write", action="store_true", help="write the block in docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also keep the raw results here")
    args = parser.parse_args(argv)
    results = run(args.edges, args.baseline_edges)
    if args.json:
        args.json.write_text(json.dumps(results, default=str, indent=1))
    section = render(results)
    print(section)
    if args.write:
        BLOCK.write(REPO / "docs" / "benchmarks.md", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
