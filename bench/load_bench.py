"""Load on the search API: `tansuo serve` and `tansuo api` under closed-loop clients
(1 to 1,024, keep-alive) and a fixed arrival rate, next to the bare index query.

    .venv/bin/python -m bench.load_bench                 # full run, prints markdown
    .venv/bin/python -m bench.load_bench --quick         # fewer levels, 4 s each
    .venv/bin/python -m bench.load_bench --compare       # also granian, waitress, worker counts
    .venv/bin/python -m bench.load_bench --profile       # py-spy on one worker under load

The index is the demo site's pages repeated under nine hosts (about 2,300 pages, the
size of a real documentation site), built by the indexer's own code. Every server
process and the load client run as separate processes on this machine, so the client
takes part of a core: the figures are a floor, and only ratios between lines of the
same run compare (docs/benchmarks.md says on which machine).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import repeated, site_pages
from bench.index_bench import index_tansuo
from bench.search_bench import draw_queries
from services.cli.demo_site import build_demo_site, default_cache

PY = sys.executable
CLOSED_LEVELS = (1, 4, 16, 64, 256, 1024)
QUICK_LEVELS = (1, 64, 1024)
COPIES = 9  # 255 pages x 9 hosts: the size of the documentation site of issue 18


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Target:
    """A server command line to measure, and the environment it needs."""

    name: str
    argv: list[str]
    env: dict[str, str]


def targets(data_dir: Path, port: int, workers: int) -> list[Target]:
    base = {"TANSUO_DATA_DIR": str(data_dir), "TANSUO_API_PORT": str(port), "TANSUO_API_HOST": "127.0.0.1"}
    return [
        Target("tansuo serve", [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port),
                                "--workers", str(workers)], base),
        Target("tansuo api", [PY, "-m", "services.cli.main", "api", "--workers", str(workers)], base),
    ]  # fmt: skip


def comparison_targets(data_dir: Path, port: int) -> list[Target]:
    """Other servers on the same app, and gunicorn with other worker shapes."""
    base = {"TANSUO_DATA_DIR": str(data_dir), "TANSUO_API_PORT": str(port), "TANSUO_API_HOST": "127.0.0.1"}
    serve = [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port)]
    bin_dir = Path(PY).parent
    return [
        Target("gunicorn 1 worker x 8 threads", [*serve, "--workers", "1"], {**base, "TANSUO_API_THREADS": "8"}),
        Target("gunicorn 2 workers x 1 thread", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "1"}),
        Target("gunicorn 2 workers x 4 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "4"}),
        Target("gunicorn 2 workers x 8 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "8"}),
        Target("gunicorn 2 workers x 16 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "16"}),
        Target("granian 2 workers x 4 threads", [str(bin_dir / "granian"), "--interface", "wsgi", "--workers", "2",
                "--blocking-threads", "4", "--port", str(port), "--factory", "bench.server_targets:make_app"], base),
        Target("waitress 1 process x 8 threads", [str(bin_dir / "waitress-serve"), "--threads", "8",
                f"--port={port}", "--call", "bench.server_targets:make_app"], base),
    ]  # fmt: skip


@contextmanager
def running(target: Target, port: int, log_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSUO_", "PROMETHEUS_"))}
    env.update(target.env)
    log_path = log_dir / (target.name.replace(" ", "_") + ".log")
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(target.argv, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_ready(port, proc, log_path)
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_ready(port: int, proc: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log_path.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?q=debian", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server not answering after 60 s:\n{log_path.read_text(errors='replace')}")


def load(mode: str, port: int, queries: Path, seconds: float, clients: int = 1, rate: float = 0) -> dict[str, object]:
    argv = [PY, "-m", "bench.load_client", mode, f"http://127.0.0.1:{port}", str(queries), "--seconds", str(seconds)]
    argv += ["--clients", str(clients)] if mode == "closed" else ["--rate", str(rate)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def bare_query(data_dir: Path, queries: Sequence[str]) -> dict[str, float]:
    """The search path without HTTP: SearchService, and the index adapter's search alone."""
    code = (
        "import json,sys,time\n"
        "from services.api.search_service import SearchService\n"
        "from services.common.bootstrap import build_search_index\n"
        "from services.common.model import SearchQuery\n"
        "from services.common.settings import Settings\n"
        "cfg=Settings(); index=build_search_index(cfg, read_only=True); service=SearchService(cfg, index)\n"
        "qs=[q for q in open(sys.argv[1], encoding='utf-8').read().splitlines() if q.strip()]\n"
        "for q in qs[:50]: service.search(q)\n"
        "t=time.perf_counter()\n"
        "for q in qs: service.search(q)\n"
        "full=(time.perf_counter()-t)/len(qs)\n"
        "terms=[service.search(q)['terms'] for q in qs]\n"
        "t=time.perf_counter()\n"
        "for ts in terms: index.search(SearchQuery(terms=tuple(ts), limit=10))\n"
        "raw=(time.perf_counter()-t)/len(qs)\n"
        "print(json.dumps({'service_ms': full*1000, 'index_ms': raw*1000}))\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write("\n".join(queries))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    env["TANSUO_DATA_DIR"] = str(data_dir)
    done = subprocess.run([PY, "-c", code, f.name], capture_output=True, text=True, env=env, check=True)
    os.unlink(f.name)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def build_index(site: Path, data_dir: Path, n_queries: int) -> list[str]:
    build_demo_site(site)
    pages = site_pages(site)
    if not (data_dir / "index").exists():
        index_tansuo(repeated(pages, COPIES), data_dir)
    return [q.text for q in draw_queries(pages, n_queries)]


def run_target(target: Target, port: int, queries: Path, levels: Sequence[int], seconds: float,
               rates: Sequence[float], log_dir: Path) -> dict[str, list[dict[str, object]]]:  # fmt: skip
    out: dict[str, list[dict[str, object]]] = {"closed": [], "open": []}
    with running(target, port, log_dir):
        load("closed", port, queries, 3, clients=4)  # warm-up: jieba, page cache, every worker
        for clients in levels:
            result = load("closed", port, queries, seconds, clients=clients)
            _log(f"  {target.name}: {clients} clients: {result}")
            out["closed"].append(result)
            time.sleep(1)
        for rate in rates:
            result = load("open", port, queries, seconds, rate=rate)
            _log(f"  {target.name}: {rate:g}/s open loop: {result}")
            out["open"].append(result)
            time.sleep(1)
    return out


def profile(target: Target, port: int, queries: Path, seconds: float, out: Path, log_dir: Path) -> None:
    """py-spy on one worker of ``target`` while 64 clients load it."""
    with running(target, port, log_dir) as proc:
        load("closed", port, queries, 3, clients=4)
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        spy = subprocess.Popen([str(Path(PY).parent / "py-spy"), "record", "-p", children[0], "-o", str(out),
                                "-f", "raw", "-r", "200", "-d", str(int(seconds))])  # fmt: skip
        load("closed", port, queries, seconds, clients=64)
        spy.wait(seconds + 30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--compare", action="store_true", help="other servers and worker shapes at 1, 64, 256 clients")
    parser.add_argument("--profile", type=Path, help="write a py-spy raw profile of one worker here, then stop")
    parser.add_argument("--seconds", type=float, help="per level (default 10, quick 4)")
    parser.add_argument("--workers", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "tansuo-load-bench")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    seconds = args.seconds or (4.0 if args.quick else 10.0)
    port = 18_480
    args.work.mkdir(parents=True, exist_ok=True)
    queries_path = args.work / "queries.txt"
    queries = build_index(default_cache().parent / "zh-docs-site", args.work / "data", 500)
    queries_path.write_text("\n".join(queries) + "\n", encoding="utf-8")
    data_dir = args.work / "data"
    if args.profile:
        profile(targets(data_dir, port, args.workers)[0], port, queries_path, seconds, args.profile, args.work)
        return 0
    results: dict[str, object] = {"bare": bare_query(data_dir, queries), "seconds": seconds, "targets": {}}
    _log(f"bare query: {results['bare']}")
    levels = QUICK_LEVELS if args.quick else CLOSED_LEVELS
    workers = args.workers or len(os.sched_getaffinity(0))
    bare_rate = 1000 / float(results["bare"]["service_ms"])  # type: ignore[index]
    rates = [round(bare_rate * workers * f) for f in (0.5, 1.0, 2.0)]
    chosen = targets(data_dir, port, args.workers)
    if args.compare:
        chosen = comparison_targets(data_dir, port)
        levels, rates = (1, 64, 256), []
    for target in chosen:
        _log(f"{target.name} ...")
        results["targets"][target.name] = run_target(  # type: ignore[index]
            target, port, queries_path, levels, seconds, rates, args.work
        )
    results["workers"] = workers
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(markdown(results))
    return 0


def markdown(results: dict) -> str:  # type: ignore[type-arg]
    """Tables of one run: per target, closed-loop levels then open-loop rates."""
    bare = results["bare"]
    lines = [
        f"Bare query in one process, no HTTP: SearchService {bare['service_ms']:.2f} ms a query "
        f"({1000 / bare['service_ms']:.0f}/s on one core), the index adapter's search alone {bare['index_ms']:.2f} ms.",
        "",
        "| server | load | answered/s (200) | p50 ms | p99 ms | refused (503) | other |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in results["targets"].items():
        for r in runs["closed"] + runs["open"]:
            load_desc = f"{r['clients']} clients" if r["mode"] == "closed" else f"{r['rate']:g}/s arrivals"
            other = {k: v for k, v in r["statuses"].items() if k not in ("200", "503")}
            refused = f"{r['refused_share'] * 100:.1f}%"
            lines.append(f"| {name} | {load_desc} | {r['ok_per_s']:.0f} | {r['p50_ms']} | {r['p99_ms']} | {refused} | "
                         f"{', '.join(f'{k}: {v}' for k, v in other.items()) or '—'} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
