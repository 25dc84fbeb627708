"""`tansuo serve --data DIR` on an index of the million-page benchmark: latency of the
benchmark's queries over HTTP, one at a time on one keep-alive connection (the JSON
API, then the first ``UI_QUERIES`` on the web UI's results page), and the memory of the
server's processes after it has answered them.

Memory is read from /proc for the gunicorn master and each worker: VmHWM (the peak
resident set), and of the resident set at the end how much is anonymous memory (the
Python heap, tantivy's caches) and how much is mapped files (the index, which tantivy
memory-maps: pages the kernel may drop and read again, shared by the workers).
"""

from __future__ import annotations

import http.client
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.measure.resource_use import status_kib
from bench.scale.scale_latency import WARM_UP
from bench.serving.load_bench import PY, Target, running, server_env
from bench.serving.memory_cgroup import MemoryCgroup, drop_cached_pages

UI_QUERIES = 100  # of the same queries, also asked of the web UI's results page
# Under a memory limit too small for the index's working set the server may page for
# minutes a query: the run then stops asking after this long and says how far it got.
LIMITED_DEADLINE_S = 180.0


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _memory(pid: int) -> dict[str, int]:
    return {f: status_kib(f, pid) for f in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_latency(
    data_dir: Path, queries: Sequence[str], log_dir: Path, memory_limit: int | None = None
) -> dict[str, Any]:
    """Answers to ``queries`` over HTTP (the first ``WARM_UP`` untimed) and the server's
    processes' memory afterwards. With ``memory_limit`` (bytes), the server runs in a
    memory cgroup of that limit, its index evicted from the page cache first (see
    bench/serving/memory_cgroup.py); {"unavailable": reason} when no cgroup can be made here."""
    port = _free_port()
    env = server_env(data_dir, port)
    argv = [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port)]
    if memory_limit is None:
        return _measure(Target("tansuo serve (scale)", argv, env), port, queries, log_dir)
    group = MemoryCgroup.create(f"tansuo-bench-{os.getpid()}", memory_limit)
    if group is None:
        return {"unavailable": "no memory cgroup could be made (root and a memory controller are needed)"}
    try:
        evicted = drop_cached_pages(data_dir / "index")
        target = Target("tansuo serve (scale, limited)", group.wrap(argv), env)
        result = _measure(target, port, queries, log_dir, deadline_s=LIMITED_DEADLINE_S)
        result.update(memory_limit=group.limit_bytes(), cgroup_peak=group.peak_bytes(),
                      oom_kills=group.oom_kills(), evicted_bytes=evicted)  # fmt: skip
        return result
    finally:
        group.remove()


def _measure(
    target: Target, port: int, queries: Sequence[str], log_dir: Path, deadline_s: float | None = None
) -> dict[str, Any]:
    """``deadline_s``: stop asking after this long (``stopped_after_s`` then says so)."""
    times: list[float] = []
    stopped = 0.0
    statuses: dict[int, int] = {}
    with running(target, port, log_dir) as proc:
        # VmHWM counts the index pages a process has touched through its memory map; the
        # anonymous part has no high-water mark of its own, so it is sampled.
        peak_anon = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.25):
                pids = [proc.pid, *_children(proc.pid)]
                peak_anon[0] = max(peak_anon[0], sum(status_kib("RssAnon", p) for p in pids))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        began = time.monotonic()
        for n, q in enumerate(queries):
            if deadline_s is not None and time.monotonic() - began > deadline_s:
                stopped = time.monotonic() - began
                break
            path = "/api/search?" + urllib.parse.urlencode({"q": q, "size": 10})
            started = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if n >= WARM_UP:
                times.append((time.perf_counter() - started) * 1000)
                statuses[response.status] = statuses.get(response.status, 0) + 1
        # The web UI's results page also lists every site for its filter (index.sites()).
        ui_times: list[float] = []
        ui_bytes = 0
        for q in queries[WARM_UP : WARM_UP + UI_QUERIES] if not stopped else ():
            started = time.perf_counter()
            connection.request("GET", "/?" + urllib.parse.urlencode({"q": q}))
            response = connection.getresponse()
            ui_bytes = max(ui_bytes, len(response.read()))
            ui_times.append((time.perf_counter() - started) * 1000)
        connection.close()
        done.set()
        sampler.join()
        processes = {"master": _memory(proc.pid)}
        for k, child in enumerate(_children(proc.pid)):
            processes[f"worker {k + 1}"] = _memory(child)
    return {"ms": times, "statuses": statuses, "processes": processes, "load1": os.getloadavg()[0],
            "ui_ms": ui_times, "ui_bytes": ui_bytes, "peak_anon_kib": peak_anon[0],
            "asked": len(queries) - WARM_UP, "stopped_after_s": stopped}  # fmt: skip
