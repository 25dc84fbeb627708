"""One step of the million-page benchmark, in a process of its own, printing what it
measured as one JSON line (progress goes to stderr).

    python -m bench.scale.scale_index ranks PAGES OUT.npy    # PageRank of a synthetic link graph
    python -m bench.scale.scale_index build PAGES DATA_DIR RANKS.npy [AT DATA_DIR_AT [BUILDERS]]

``ranks``: ten links a page, power-law in-degrees (``bench.pagerank.pagerank_child``'s graph),
ranked by the ranker's own solver (``pagerank_of_ids``); saved as PageRank and the
``rank`` feature (PageRank × N at the index's precision), by page number.

``build``: pages ``0 … PAGES-1`` of ``bench.sites.scale_corpus`` as ``PageEvent``s, turned into
documents by the indexer's ``build_document`` and written by the product's index
adapter, ``upsert`` and ``commit`` per batch of ``TANSUO_INDEXER_BATCH_SIZE``, as the
indexer does, then ``close`` (waiting for segment merges). Each document carries its
page's PageRank and rank, as the ranker would have written them. A process of its own,
so its peak RSS (VmHWM) is the build's alone.

With ``AT``, the build also stops after its first ``AT`` pages: it closes the index (the
merges end), records what a build of ``AT`` pages would report, copies the index to
``DATA_DIR_AT`` and opens it again to go on. One build then gives both the 100,000-page
and the 1,000,000-page figures; the copy is not timed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from bench.measure.resource_use import dir_bytes, status_kib

PROGRESS_EVERY = 50_000  # documents between two progress lines (at a commit)
STATE_EVERY = 10_000  # documents between two saves of the figures, for a resumed build


def ranks(pages_arg: str, out: str) -> dict[str, Any]:
    from bench.pagerank.pagerank_child import synthetic_graph
    from services.ranker.pagerank import pagerank_of_ids
    from services.ranker.rank_writes import feature_precision_array

    n = int(pages_arg)
    started = time.perf_counter()
    links = 10 * n
    while True:
        try:
            src, dst = synthetic_graph(n, links)
            break
        except ValueError:  # a small graph has fewer distinct power-law links than that
            links //= 2
    result = pagerank_of_ids(n, src, dst)
    rank = feature_precision_array(result.scores * n)
    np.save(out, np.stack([result.scores, rank]))
    return {"pages": n, "links": int(len(src)), "iterations": result.iterations,
            "max_rank": float(rank.max()), "median_rank": float(np.median(rank)),
            "seconds": time.perf_counter() - started}  # fmt: skip


_worker: dict[str, Any] = {}


def _start_builder(pages: int, ranks_file: str) -> None:
    from bench.sites.scale_corpus import load_corpus, page_event
    from services.indexer.document_builder import build_document

    _worker["corpus"], _worker["pages"] = load_corpus(), pages
    _worker["pagerank"], _worker["rank"] = np.load(ranks_file)
    if len(_worker["rank"]) != pages:
        raise ValueError(f"{ranks_file} ranks {len(_worker['rank'])} pages, not {pages}")
    build_document(page_event(_worker["corpus"], 0, pages))  # the segmenter's dictionary, outside the timing


def _build_batch(start: int, size: int) -> tuple[list[Any], dict[str, float]]:
    """Documents of pages ``start … start+size-1``, and the CPU seconds that making the
    pages and building the documents took in this process."""
    from bench.sites.scale_corpus import page_event
    from services.indexer.document_builder import build_document

    corpus, n, pagerank, rank = _worker["corpus"], _worker["pages"], _worker["pagerank"], _worker["rank"]
    t0 = time.process_time()
    events = [page_event(corpus, i, n) for i in range(start, min(n, start + size))]
    t1 = time.process_time()
    docs = [build_document(e) for e in events]
    t2 = time.process_time()
    # The ranker's fields, as it writes them once the page is indexed (anchors left out).
    docs = [dataclasses.replace(d, pagerank=float(pagerank[start + k]), rank=float(rank[start + k]))
            for k, d in enumerate(docs)]  # fmt: skip
    chars = sum(len(e.title) + len(e.body) + sum(map(len, e.headings)) for e in events)
    return docs, {"pages_cpu_s": t1 - t0, "build_cpu_s": t2 - t1, "chars": chars,
                  "builder_vmhwm_kib": status_kib("VmHWM")}  # fmt: skip


def build(pages_arg: str, data_dir: str, ranks_file: str, at_arg: str = "0", at_dir: str = "",
          builders_arg: str = "2") -> dict[str, Any]:  # fmt: skip
    """Builder processes make the pages and their documents (``build_document``), in
    order; this process writes them (``upsert``, ``commit``) as the indexer does. On
    two shared cores a single process would take hours for a million pages; the CPU
    seconds of each side, not the wall time, say what each costs.

    Resumable: every ``STATE_EVERY`` pages, right after a commit, the figures so far go
    to ``DATA_DIR/build-state.json``; a build started again on the same directory goes
    on from there (pages past it are written again, which an upsert allows) and adds
    to those figures. A million pages can take longer than one sitting."""
    import multiprocessing
    from collections import deque

    from services.common.bootstrap import build_search_index
    from services.common.config import Settings

    n, at, builders = int(pages_arg), int(at_arg), int(builders_arg)
    cfg = Settings(data_dir=Path(data_dir))
    size = cfg.indexer_batch_size
    state_path = cfg.data_dir / "build-state.json"
    state: dict[str, Any] = {
        "done": 0, "chars": 0, "wall_s": 0.0, "cpu_s": 0.0, "vmhwm_kib": 0, "builder_vmhwm_kib": 0, "runs": 0,
        "timed": {"pages_cpu_s": 0.0, "build_cpu_s": 0.0, "wait_s": 0.0, "write_s": 0.0, "commit_s": 0.0},
        "progress": [], "at": {},
    }  # fmt: skip
    if state_path.exists():
        state = json.loads(state_path.read_text())
        print(f"resuming after page {state['done']:,}", file=sys.stderr, flush=True)
    elif (cfg.data_dir / "index").exists():
        shutil.rmtree(cfg.data_dir / "index")  # a build that never reached its first state: start again
    state["runs"] += 1
    pool = multiprocessing.get_context("spawn").Pool(builders, _start_builder, (n, ranks_file))
    rss_before_kib = status_kib("VmRSS")
    index = build_search_index(cfg)
    timed = state["timed"]
    # Elapsed wall and CPU time of the build: what earlier runs recorded, plus this run's.
    wall0, cpu0 = time.perf_counter() - state["wall_s"], time.process_time() - state["cpu_s"]

    def vmhwm() -> int:
        return max(state["vmhwm_kib"], status_kib("VmHWM"))

    # Batches of ``size``, one cut short so that a batch ends at ``at``.
    bounds = sorted({*range(state["done"], n, size), *([at] if state["done"] < at < n else []), n})
    batches = iter(pairwise(bounds))
    # At most two batches a builder in flight: the writer, when slower, holds the builders
    # back instead of queueing documents in memory.
    pending: deque[Any] = deque(
        pool.apply_async(_build_batch, (a, b - a)) for _, (a, b) in zip(range(2 * builders), batches, strict=False)
    )
    done = state["done"]
    try:
        while pending:
            t0 = time.perf_counter()
            docs, costs = pending.popleft().get()
            for a, b in batches:
                pending.append(pool.apply_async(_build_batch, (a, b - a)))
                break
            t1 = time.perf_counter()
            index.upsert(docs)
            t2 = time.perf_counter()
            index.commit()
            t3 = time.perf_counter()
            timed["wait_s"] += t1 - t0
            timed["write_s"] += t2 - t1
            timed["commit_s"] += t3 - t2
            timed["pages_cpu_s"] += costs["pages_cpu_s"]
            timed["build_cpu_s"] += costs["build_cpu_s"]
            state["chars"] += int(costs["chars"])
            state["builder_vmhwm_kib"] = max(state["builder_vmhwm_kib"], int(costs["builder_vmhwm_kib"]))
            before, done = done, done + len(docs)
            if done // PROGRESS_EVERY > before // PROGRESS_EVERY or done == n:
                point = {"docs": done, "wall_s": round(time.perf_counter() - wall0, 1), "vmhwm_kib": vmhwm(),
                         "rss_anon_kib": status_kib("RssAnon"), "rss_file_kib": status_kib("RssFile"),
                         "cpu_s": round(time.process_time() - cpu0, 1), "load1": os.getloadavg()[0],
                         "index_bytes": dir_bytes(cfg.data_dir / "index"), "run": state["runs"],
                         **{k: round(v, 1) for k, v in timed.items()}}  # fmt: skip
                state["progress"].append(point)
                print(json.dumps(point), file=sys.stderr, flush=True)
            if done == at and at < n:
                paused, paused_cpu = time.perf_counter(), time.process_time()
                index.close(finish_merges=True)
                close_s, close_cpu_s = time.perf_counter() - paused, time.process_time() - paused_cpu
                state["vmhwm_kib"] = vmhwm()
                state["at"] = _summary(cfg, done, state, close_s, paused - wall0 + close_s,
                                       paused_cpu - cpu0 + close_cpu_s)  # fmt: skip
                shutil.copytree(cfg.data_dir / "index", Path(at_dir) / "index", dirs_exist_ok=True)
                print(json.dumps({"checkpoint": state["at"]}), file=sys.stderr, flush=True)
                index = build_search_index(cfg)
                # The copy and the reopening are not timed; the merges waited for count as commits.
                wall0 += time.perf_counter() - paused - close_s
                cpu0 += time.process_time() - paused_cpu - close_cpu_s
                timed["commit_s"] += close_s
            if done // STATE_EVERY > before // STATE_EVERY or done == at:
                state.update(done=done, wall_s=time.perf_counter() - wall0, cpu_s=time.process_time() - cpu0,
                             vmhwm_kib=vmhwm())  # fmt: skip
                tmp = state_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(state))
                tmp.replace(state_path)
    except BaseException:
        pool.terminate()  # no builder outlives a failed or interrupted build
        index.close()  # the writer's lock too; what was not committed is not in the saved figures
        raise
    pool.close()
    pool.join()
    t5 = time.perf_counter()
    index.close(finish_merges=True)
    close_s = time.perf_counter() - t5
    state["vmhwm_kib"] = vmhwm()
    summary = _summary(cfg, n, state, close_s, time.perf_counter() - wall0, time.process_time() - cpu0)
    return {**summary, "builders": builders, "rss_before_kib": rss_before_kib, "progress": state["progress"],
            "at": state["at"], "runs": state["runs"], "pid": os.getpid()}  # fmt: skip


def _summary(cfg: Any, pages: int, state: dict[str, Any], close_s: float, wall_s: float,
             cpu_s: float) -> dict[str, Any]:  # fmt: skip
    from services.common.bootstrap import build_search_index

    index_dir = cfg.data_dir / "index"
    return {
        "pages": pages,
        "docs": build_search_index(cfg, read_only=True).count(),
        "chars": state["chars"],
        **state["timed"],
        "close_s": close_s,
        "wall_s": wall_s,
        "cpu_s": cpu_s,  # the writing process, every thread: tantivy's indexing and merge threads too
        "index_bytes": dir_bytes(index_dir),
        "segments": len(json.loads((index_dir / "meta.json").read_text())["segments"]),
        "vmhwm_kib": state["vmhwm_kib"],
        "builder_vmhwm_kib": state["builder_vmhwm_kib"],
        "load1": os.getloadavg()[0],
    }


COMMANDS = {"ranks": ranks, "build": build}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])), flush=True)
