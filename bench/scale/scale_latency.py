"""Search latency on one index of the million-page benchmark, in a process of its own,
printed as one JSON line.

    python -m bench.scale.scale_latency DATA_DIR QUERIES.json [PROFILE_OUT]

Three passes over the same queries (the first ``WARM_UP`` of the file only warm up):

1. **In turns**: each query through ``SearchService.search(q, page=1, size=10)`` and as
   the bare tantivy query, the order alternating query by query. The bare query is the
   floor under the service: the tree(s) the service's planner makes for the query
   (the second, any-word tree too when the first finds nothing), translated by the
   index adapter and run with ``searcher.search`` over the adapter's rescoring window,
   counting; no document loads, no folding, no snippets, no result shaping. The trees
   are planned before the timing.
2. **Stages**: a fresh SearchService (empty caches, as in pass 1), each query's time split
   by wrapping the functions the service calls (``bench.pagerank.pagerank_child.StageClock``'s
   method, with a guard for the recursive translation).
3. **Profile**: another fresh SearchService under cProfile; the top functions by own time.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WARM_UP = 20
SITES_CALLS = 20

STAGES = (
    ("parse", "query syntax (`parse`)"),
    ("plan", "planning (`QueryPlanner.plan`), term statistics excluded"),
    ("term_stats", "term statistics for planning (`term_stats`: doc frequencies)"),
    ("translate", "query tree → tantivy query (`_translate`)"),
    ("index", "tantivy search: top 500 by BM25, count, rank feature (the rest of `index.search`)"),
    ("fold_keys", "fold keys from fast fields (`fold_keys.read`, `sharing_a_band`), where the index has them"),
    ("doc_loads", "stored-document reads wherever they happen (`StoredHitCache.get`): every hit of the window on "
                  "an index without fold keys; with them, the hits shown and those sharing a band"),
    ("fold", "near-duplicate folding (`fold_near_duplicates`)"),
    ("paginate", "site diversity (`paginate`)"),
    ("snippets", "snippets and highlighted titles (`snippet_at`, `title_html`)"),
    ("other", "the rest (validation, cache, answer dict)"),
)


class Stages:
    """Seconds per stage of the query running now; a stage nested in itself (the
    recursive translation) counts once, and a stage's time is taken out of the stage
    that called it."""

    def __init__(self) -> None:
        self.now: dict[str, float] = {}
        self._stack: list[list[Any]] = []  # [stage, started, seconds of inner stages]

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._stack and self._stack[-1][0] == stage:
                return inner(*args, **kwargs)
            frame = [stage, time.perf_counter(), 0.0]
            self._stack.append(frame)
            try:
                return inner(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.perf_counter() - frame[1]
                self.now[stage] = self.now.get(stage, 0.0) + spent - frame[2]
                if self._stack:
                    self._stack[-1][2] += spent

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        taken, self.now = self.now, {}
        return taken


def _service(cfg: Any) -> tuple[Any, Any]:
    from services.common.bootstrap import build_search_index
    from services.search.search_service import SearchService

    index = build_search_index(cfg, read_only=True)  # as `tansuo serve` opens it
    return SearchService(cfg, index), index


def _bare(index: Any, cfg: Any, queries: list[str]) -> Callable[[int], tuple[int, int]]:
    """The bare query of each query as a function of its position: (total, hits)."""
    from services.common.domain.search_types import SearchQuery
    from services.search.query_plan import QueryPlanner
    from services.search.search_service import MAX_RESULT_WINDOW, SearchService

    planner = QueryPlanner(cfg, index.term_stats)
    parser = SearchService(cfg, index)
    trees = []
    # As for page 1 of 10: the service asks for 30 hits, the adapter collects its rescoring window.
    window = max(min(MAX_RESULT_WINDOW, 10 + max(10, 20)), cfg.search_rescore_window)
    for q in queries:
        parsed = parser.parse(q)
        plan = planner.plan(parsed)
        tree = [plan.tree]
        if plan.widens and index.search(SearchQuery(tree=plan.tree, offset=0, limit=10)).total == 0:
            tree.append(planner.plan(parsed, any_clause=True).tree)
        trees.append(tree)

    def run(i: int) -> tuple[int, int]:
        total = hits = 0
        for tree in trees[i]:
            searcher = index._searcher()
            result = searcher.search(index._translate(tree), limit=window, count=True)
            total, hits = int(result.count or 0), len(result.hits)
            if total:
                break
        return total, hits

    return run


def in_turns(cfg: Any, queries: list[str]) -> dict[str, Any]:
    service, index = _service(cfg)
    bare = _bare(index, cfg, queries)
    for i in range(WARM_UP):
        service.search(queries[i])
        bare(i)
    times: dict[str, list[float]] = {"service": [], "bare": []}
    totals, shown, folded = [], [], []
    for i in range(WARM_UP, len(queries)):
        jobs: list[tuple[str, Callable[[], Any]]] = [("service", lambda: service.search(queries[i])),
                                                     ("bare", lambda: bare(i))]  # fmt: skip
        for name, job in jobs if i % 2 == 0 else jobs[::-1]:
            started = time.perf_counter()
            out = job()
            times[name].append((time.perf_counter() - started) * 1000)
            if name == "service":
                totals.append(out["total"])
                shown.append(len(out["results"]))
                folded.append(sum(len(r["similar"]) for r in out["results"]))
    sites_ms = []
    for _ in range(SITES_CALLS):  # what the web UI's page asks for its site filter, every time
        started = time.perf_counter()
        sites = len(index.sites())
        sites_ms.append((time.perf_counter() - started) * 1000)
    return {"docs": index.count(), "service_ms": times["service"], "bare_ms": times["bare"],
            "totals": totals, "shown": shown, "folded": folded, "sites": sites, "sites_ms": sites_ms}  # fmt: skip


def stages(cfg: Any, queries: list[str]) -> list[dict[str, float]]:
    from services.common.adapters.tantivy import fold_keys
    from services.common.adapters.tantivy.stored_hit_cache import StoredHitCache
    from services.search import search_service

    service, index = _service(cfg)
    clock = Stages()
    clock.wrap(service, "parse", "parse")
    clock.wrap(service._planner, "plan", "plan")
    clock.wrap(index, "term_stats", "term_stats")
    clock.wrap(index, "search", "index")
    clock.wrap(index, "_translate", "translate")
    clock.wrap(fold_keys, "read", "fold_keys")
    clock.wrap(fold_keys, "sharing_a_band", "fold_keys")
    clock.wrap(StoredHitCache, "get", "doc_loads")
    clock.wrap(search_service, "fold_near_duplicates", "fold")
    clock.wrap(search_service, "paginate", "paginate")
    clock.wrap(search_service, "snippet_at", "snippets")
    clock.wrap(search_service, "title_html", "snippets")
    for q in queries[:WARM_UP]:
        service.search(q)
    clock.take()
    per_query = []
    for q in queries[WARM_UP:]:
        started = time.perf_counter()
        service.search(q)
        total = time.perf_counter() - started
        spent = clock.take()
        spent["other"] = total - sum(spent.values())
        spent["total"] = total
        per_query.append({k: v * 1000 for k, v in spent.items()})
    return per_query


def profile(cfg: Any, queries: list[str], out: Path | None, top: int = 15) -> list[dict[str, Any]]:
    service, _ = _service(cfg)
    for q in queries[:WARM_UP]:
        service.search(q)
    profiler = cProfile.Profile()
    profiler.enable()
    for q in queries[WARM_UP:]:
        service.search(q)
    profiler.disable()
    if out is not None:
        profiler.dump_stats(str(out))
    stats = pstats.Stats(profiler)
    total = sum(tt for _, _, tt, _, _ in stats.stats.values())  # type: ignore[attr-defined]
    rows = []
    for (path, line, name), (_, calls, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        short = "/".join(Path(path).parts[-2:]) if path != "~" else "builtin"
        rows.append({"where": f"{name} ({short}:{line})", "calls": calls, "self_s": tt, "cum_s": ct,
                     "self_share": tt / total if total else 0.0})  # fmt: skip
    rows.sort(key=lambda r: -r["self_s"])
    return rows[:top]


def main(argv: list[str]) -> dict[str, Any]:
    from bench.measure.resource_use import status_kib
    from services.common.config import Settings

    data_dir, queries_file = Path(argv[0]), Path(argv[1])
    profile_out = Path(argv[2]) if len(argv) > 2 else None
    queries = [q["text"] for q in json.loads(queries_file.read_text(encoding="utf-8"))]
    cfg = Settings(data_dir=data_dir)
    load = [os.getloadavg()[0]]
    turns = in_turns(cfg, queries)
    load.append(os.getloadavg()[0])
    split = stages(cfg, queries)
    load.append(os.getloadavg()[0])
    top = profile(cfg, queries, profile_out)
    load.append(os.getloadavg()[0])
    return {**turns, "stages": split, "profile": top, "load1": load, "vmhwm_kib": status_kib("VmHWM")}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])), flush=True)
