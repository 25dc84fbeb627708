"""A document site crawled end to end, embedded: time, the crawl's memory, what the report
says of each hostile file, and search quality per format.

The site (bench/sites/document_site.py) is served on loopback with each document's
declared type; ``tansuo crawl`` runs as a child process; the memory of its process tree
(the crawler's process, the index process, the extraction workers) is sampled from
/proc every 0.2 s and its largest sum reported. Quality: ``tansuo eval --generate``'s
queries (services/evaluation/generate.py: 10-character quotes and link texts), run
through the search service on the crawl's index, MRR@10 per query type and per format.

    python -m bench.documents.document_crawl SITE DATA [--out FILE.json] [--env K=V ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench.sites.document_site import document_site_routes, load_manifest
from services.cli.static_site_server import SiteServer


def tree_rss_kib(root: int) -> int:
    """Resident memory of a process and all its descendants, in KiB."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


class TreeMemory:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.peak_kib = 0
        self._proc = proc
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while self._proc.poll() is None:
            self.peak_kib = max(self.peak_kib, tree_rss_kib(self._proc.pid))
            time.sleep(0.2)


def crawl(site: Path, data: Path, env: dict[str, str]) -> dict[str, object]:
    with SiteServer(site, extra_routes=document_site_routes(site)) as server:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "services.cli.main", "crawl", server.url, "--data", str(data),
                                 "--allow-private-networks", "--delay", "0", "--no-progress"],
                                env={**os.environ, **env})  # fmt: skip
        memory = TreeMemory(proc)
        code = proc.wait()
        seconds = time.perf_counter() - started
        base = server.url
    report = json.loads(subprocess.run([sys.executable, "-m", "services.cli.main", "report", "--data", str(data), "--json"],
                                       capture_output=True, text=True, check=True, env={**os.environ, **env}).stdout)  # fmt: skip
    return {"exit": code, "seconds": round(seconds, 1), "peak_tree_rss_mb": round(memory.peak_kib / 1024, 1),
            "base": base, "report_totals": report["totals"]}  # fmt: skip


def quality(site: Path, data: Path, base: str) -> dict[str, object]:
    from services.common.bootstrap import build_search_index
    from services.common.config import Settings
    from services.evaluation.corpus import corpus_reader
    from services.evaluation.generate import generate
    from services.evaluation.metrics import reciprocal_rank
    from services.search.search_service import SearchService

    cfg = Settings(data_dir=data)
    index = build_search_index(cfg, read_only=True)
    formats = {base + d.path: d.format for d in load_manifest(site)}
    judgments = [j for j in generate(corpus_reader(index)) if j.relevant[0] in formats]
    service = SearchService(cfg, index)
    rr: dict[tuple[str, str], list[float]] = defaultdict(list)
    misses = []
    for j in judgments:
        found = [r["url"] for r in service.search(j.query, size=10)["results"]]
        score = reciprocal_rank(found, set(j.relevant))
        fmt = formats[j.relevant[0]]
        rr[(j.qtype, fmt)].append(score)
        rr[(j.qtype, "all")].append(score)
        if score < 1:
            misses.append({"type": j.qtype, "query": j.query, "want": j.relevant[0], "got": found[:3]})
    table = {f"{t}/{f}": {"queries": len(v), "mrr10": round(sum(v) / len(v), 4)} for (t, f), v in sorted(rr.items())}
    indexed = sum(1 for u in index.urls() if u in formats)
    return {"documents_in_site": len(formats), "documents_indexed": indexed, "mrr": table, "misses": misses[:50]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--env", action="append", default=[], metavar="K=V")
    args = parser.parse_args(argv)
    env = dict(kv.split("=", 1) for kv in args.env)
    result = crawl(args.site, args.data, env)
    base = str(result.pop("base"))
    result |= quality(args.site, args.data, base)
    text = json.dumps(result, ensure_ascii=False, indent=1)
    if args.out:
        args.out.write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
