"""Known-item searches through `tansuo api` on the Elasticsearch-API test server, one
client, one query after another: how many are refused as "busy" (issue 39).

    python -m bench.serving.slow_backend_eval --baseline REV      # this tree and REV's server

The LibreOffice help site (bench/sites/libreoffice_help_site.py, about 2,580 pages, the
held-out site of the ranking work) is indexed into noida-db (the test suite's
Elasticsearch API, slow by nature: see INFRA.md) and into an embedded index, a
known-item set is generated from the embedded one
(`tansuo eval --generate`), and each server answers every query of it in turn
(`GET /api/search`, one request at a time). Then `tansuo eval --url` scores this
tree's server. Before issue 39 the worker refused on arrival whenever its mean search
time passed the 2 s deadline, with every thread idle.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.indexing.index_bench import index_tansuo
from bench.serving.load_bench import LOOPBACK_EXEMPT, Target, baseline_tree, running
from bench.sites.corpus import site_pages
from bench.sites.libreoffice_help_site import build_libreoffice_help_site
from services.cli.demo_site import default_cache
from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document

PY = sys.executable
SITE = default_cache().parent / "zh-lo-help-site"


def _pages() -> list[PageEvent]:
    build_libreoffice_help_site(SITE)
    return site_pages(SITE)


def index_es(pages: list[PageEvent], index_url: str) -> None:
    index = ElasticsearchSearchIndex.from_url(index_url, Settings(index_replicas=0))
    for start in range(0, len(pages), 200):
        index.upsert([build_document(page) for page in pages[start : start + 200]])
    index.commit()
    index.close()


def ask_all(port: int, queries: list[str]) -> dict[str, Any]:
    """Every query once, one after another: statuses and seconds per request."""
    statuses: Counter[str] = Counter()
    took: list[float] = []
    for query in queries:
        url = f"http://127.0.0.1:{port}/api/search?" + urllib.parse.urlencode({"q": query, "size": 10})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=120) as resp:
                resp.read()
                statuses[str(resp.status)] += 1
        except urllib.error.HTTPError as exc:
            statuses[str(exc.code)] += 1
        except OSError:
            statuses["error"] += 1
        took.append(time.monotonic() - started)
    took.sort()
    return {"statuses": dict(statuses), "mean_s": round(sum(took) / len(took), 3),
            "p99_s": round(took[int(0.99 * (len(took) - 1))], 3)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from tests.servers.es_server import EsServer

    parser = argparse.ArgumentParser(
        prog="python -m bench.serving.slow_backend_eval", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--baseline", metavar="REV", help="also run REV's server")
    parser.add_argument("--sample-pages", type=int, default=150)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "tansuo-slow-backend-eval")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    data = args.work / "data"
    pages = _pages()
    if not (data / "index").exists():
        index_tansuo(pages, data)
    judged = args.work / "known.tsv"
    env = {"PATH": "/usr/bin:/bin"}
    subprocess.run([PY, "-m", "services.cli.main", "eval", "--data", str(data), "--generate", str(judged),
                    "--sample-pages", str(args.sample_pages), "--no-progress"], check=True, env=env)  # fmt: skip
    queries = [line.split("\t")[1] for line in judged.read_text(encoding="utf-8").splitlines()
               if line and not line.startswith("#")]  # fmt: skip
    results: dict[str, Any] = {"queries": len(queries)}
    with ExitStack() as stack:
        es = EsServer(args.work / "noida-db")
        stack.callback(es.stop)
        es.start()
        index_url = es.url.replace("http://", "elasticsearch://", 1) + "/tansuo"
        index_es(pages, index_url)
        port = 18_482
        server_env = {"TANSUO_INDEX": index_url, "TANSUO_API_PORT": str(port), "TANSUO_API_HOST": "127.0.0.1",
                      "TANSUO_HEALTH_HOST": "127.0.0.1", "TANSUO_HEALTH_PORT": "0", **LOOPBACK_EXEMPT}  # fmt: skip
        api = [PY, "-m", "services.cli.main", "api"]
        targets = [Target("tansuo api (this tree)", api, server_env)]
        if args.baseline:
            tree, short = stack.enter_context(baseline_tree(args.baseline, args.work))
            targets.insert(0, Target(f"tansuo api at `{short}` (before)", api, server_env, cwd=tree))
        for target in targets:
            with running(target, port, args.work):
                results[target.name] = ask_all(port, queries)
                if "(this tree)" in target.name:
                    done = subprocess.run([PY, "-m", "services.cli.main", "eval", str(judged), "--url",
                                           f"http://127.0.0.1:{port}", "--no-baselines", "--json", "--no-progress"],
                                          capture_output=True, text=True, env=env)  # fmt: skip
                    results[target.name]["eval"] = json.loads(done.stdout)["rankers"]["tansuo"] if done.returncode == 0 \
                        else done.stderr.strip()[-300:]  # fmt: skip
            print(target.name, json.dumps(results[target.name], ensure_ascii=False), file=sys.stderr, flush=True)
    print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
