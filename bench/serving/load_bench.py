"""Load on the search API: `tansuo serve` and `tansuo api` under closed-loop clients
(1 to 1,024, keep-alive) and a fixed arrival rate, next to the bare index query.

    .venv/bin/python -m bench.serving.load_bench                 # full run, prints markdown
    .venv/bin/python -m bench.serving.load_bench --quick         # fewer levels, 4 s each
    .venv/bin/python -m bench.serving.load_bench --compare       # also granian, waitress, worker counts
    .venv/bin/python -m bench.serving.load_bench --profile       # py-spy on one worker under load
    .venv/bin/python -m bench.serving.load_bench --slow-clients --baseline REV   # slow clients, against REV's server

The index is the demo site's pages repeated under nine hosts (about 2,300 pages, the
size of a real documentation site), built by the indexer's own code. Every server
process and the load client run as separate processes on this machine, so the client
takes part of a core: the figures are a floor, and only ratios between lines of the
same run compare (docs/benchmarks.md says on which machine).

Every client runs on 127.0.0.1, which the servers are told to exempt from the
per-address rate limit (TANSUO_API_RATE_LIMIT_EXEMPT=127.0.0.0/8): no address is
exempt by default, and the benchmark measures the server, not its limit.

``--slow-clients`` measures 64 and 256 closed-loop clients with and without 48 slow
clients beside them (each sends its request a byte every 2 s, and starts again on a
new connection when cut), with /healthz probed four times a second, then one client
alone right after: `tansuo serve` of this tree and, with ``--baseline REV``, of REV
(a git worktree of it), in the same run; with ``--compare``, granian and waitress too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.indexing.index_bench import index_tansuo
from bench.measure import machine
from bench.measure.profile_summary import summarise
from bench.serving import load_report, query_stream
from bench.serving.search_bench import draw_queries
from bench.sites.corpus import repeated, site_pages
from services.cli.demo_site import build_demo_site, default_cache

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]
CLOSED_LEVELS = (1, 4, 16, 64, 256, 1024)
QUICK_LEVELS = (1, 64, 1024)
# Every query answered by the index: what the search path costs, not what repeats save.
NO_CACHE = {"TANSUO_SEARCH_CACHE_ENTRIES": "0"}
# Each level reads its own stretch of the query stream, so that the new queries of one
# level are not repeats of an earlier level's on the same server.
STREAM_PER_LEVEL = 25_000
COPIES = 9  # 255 pages x 9 hosts: the size of the documentation site of issue 18
# The load clients all come from loopback; no address is exempt from the rate limit
# unless the server is told (docs/deploy.md, "Security").
LOOPBACK_EXEMPT = {"TANSUO_API_RATE_LIMIT_EXEMPT": "127.0.0.0/8"}
SLOW_CLIENTS = 48  # the count: as many froze two workers of 8 threads
SLOW_LEVELS = (64, 256)
SLOW_REQUEST_TIMEOUT_S = 10.0  # a search unanswered this long counts as "timeout"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Target:
    """A server command line to measure, and the environment it needs."""

    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None  # another revision's tree, whose modules the server runs


def server_env(data_dir: Path, port: int) -> dict[str, str]:
    """A measured server's environment: the index, the port, and /metrics on port 0 (any
    free port, never colliding with another server on the machine)."""
    return {"TANSUO_DATA_DIR": str(data_dir), "TANSUO_API_PORT": str(port), "TANSUO_API_HOST": "127.0.0.1",
            "TANSUO_HEALTH_HOST": "127.0.0.1", "TANSUO_HEALTH_PORT": "0", **LOOPBACK_EXEMPT}  # fmt: skip


def targets(data_dir: Path, port: int, workers: int) -> list[Target]:
    base = server_env(data_dir, port)
    return [
        Target("tansuo serve", [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port),
                                "--workers", str(workers)], base),
        Target("tansuo api", [PY, "-m", "services.cli.main", "api", "--workers", str(workers)], base),
        Target("tansuo serve, result cache off", [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir),
                "--port", str(port), "--workers", str(workers)], {**base, **NO_CACHE}),
    ]  # fmt: skip


def comparison_targets(data_dir: Path, port: int) -> list[Target]:
    """Other servers on the same app, and gunicorn with other worker shapes."""
    base = server_env(data_dir, port)
    serve = [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port)]
    bin_dir = Path(PY).parent
    return [
        Target("gunicorn 1 worker x 8 threads", [*serve, "--workers", "1"], {**base, "TANSUO_API_THREADS": "8"}),
        Target("gunicorn 2 workers x 1 thread", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "1"}),
        Target("gunicorn 2 workers x 4 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "4"}),
        Target("gunicorn 2 workers x 8 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "8"}),
        Target("gunicorn 2 workers x 16 threads", [*serve, "--workers", "2"], {**base, "TANSUO_API_THREADS": "16"}),
        Target("granian 2 workers x 4 threads", [str(bin_dir / "granian"), "--interface", "wsgi", "--workers", "2",
                "--blocking-threads", "4", "--port", str(port), "--factory", "bench.serving.server_targets:make_app"], base),
        Target("waitress 1 process x 8 threads", [str(bin_dir / "waitress-serve"), "--threads", "8",
                f"--port={port}", "--call", "bench.serving.server_targets:make_app"], base),
    ]  # fmt: skip


@contextmanager
def running(target: Target, port: int, log_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSUO_", "PROMETHEUS_"))}
    env.update(target.env)
    if target.cwd is not None:
        env["PYTHONPATH"] = str(target.cwd)
    log_path = log_dir / ("".join(c if c.isalnum() else "_" for c in target.name) + ".log")
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(target.argv, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=target.cwd)  # fmt: skip
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


def load(
    mode: str,
    port: int,
    queries: Path,
    seconds: float,
    clients: int = 1,
    rate: float = 0,
    start_at: int = 0,
    warmup_s: float = 0.0,
    extra: Sequence[str] = (),
) -> dict[str, object]:
    """One level: ``seconds`` measured, after ``warmup_s`` in which closed-loop clients
    arrive (over half of it) and the server settles; ``extra``: more load_client options."""
    argv = [PY, "-m", "bench.serving.load_client", mode, f"http://127.0.0.1:{port}", str(queries),
            "--seconds", str(seconds + warmup_s), "--start-at", str(start_at), *extra]  # fmt: skip
    if mode == "closed":
        argv += ["--clients", str(clients), "--ramp", str(warmup_s / 2), "--warmup", str(warmup_s)]
    else:
        argv += ["--rate", str(rate)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + warmup_s + 120, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def bare_query(data_dir: Path, queries: Sequence[str]) -> dict[str, float]:
    """The search path without HTTP and without the result cache: SearchService, and
    the index adapter's search of the planned query alone."""
    code = (
        "import json,sys,time\n"
        "from services.search.query_plan import QueryPlanner\n"
        "from services.search.search_service import SearchService\n"
        "from services.common.bootstrap import build_search_index\n"
        "from services.common.domain.search_types import SearchQuery\n"
        "from services.common.config import Settings\n"
        "cfg=Settings(); index=build_search_index(cfg, read_only=True); service=SearchService(cfg, index)\n"
        "qs=[q for q in open(sys.argv[1], encoding='utf-8').read().splitlines() if q.strip()]\n"
        "for q in qs[:50]: service.search(q)\n"
        "t=time.perf_counter()\n"
        "for q in qs: service.search(q)\n"
        "full=(time.perf_counter()-t)/len(qs)\n"
        "planner=QueryPlanner(cfg, index.term_stats)\n"
        "trees=[planner.plan(service.parse(q)).tree for q in qs]\n"
        "t=time.perf_counter()\n"
        "for tree in trees: index.search(SearchQuery(tree=tree, offset=0, limit=10))\n"
        "raw=(time.perf_counter()-t)/len(qs)\n"
        "print(json.dumps({'service_ms': full*1000, 'index_ms': raw*1000}))\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write("\n".join(queries))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    env["TANSUO_DATA_DIR"] = str(data_dir)
    env["TANSUO_SEARCH_CACHE_ENTRIES"] = "0"
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
               rates: Sequence[float], log_dir: Path, warmup_s: float = 0.0) -> dict[str, list[dict[str, object]]]:  # fmt: skip
    out: dict[str, list[dict[str, object]]] = {"closed": [], "open": []}
    with running(target, port, log_dir):
        load("closed", port, queries, 3, clients=4)  # warm-up: jieba, page cache, every worker
        for level, clients in enumerate(levels, start=1):
            result = load("closed", port, queries, seconds, clients=clients, start_at=level * STREAM_PER_LEVEL,
                          warmup_s=warmup_s)  # fmt: skip
            _log(f"  {target.name}: {clients} clients: {result}")
            out["closed"].append(result)
            time.sleep(1)
        for level, rate in enumerate(rates, start=len(levels) + 1):
            result = load("open", port, queries, seconds, rate=rate, start_at=level * STREAM_PER_LEVEL)
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


def scaling_targets(data_dir: Path, port: int, cores: int) -> list[Target]:
    """`tansuo serve` with 1 .. cores workers, for throughput per worker."""
    serve = [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port)]
    base = {"TANSUO_DATA_DIR": str(data_dir), **NO_CACHE, **LOOPBACK_EXEMPT}
    return [Target(f"tansuo serve, {n} worker{'s' if n > 1 else ''}", [*serve, "--workers", str(n)], base)
            for n in range(1, cores + 1)]  # fmt: skip


@contextmanager
def baseline_tree(rev: str, work: Path) -> Iterator[tuple[Path, str]]:
    """A git worktree of ``rev`` (removed afterwards) and its short commit name."""
    short = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True,
                           check=True).stdout.strip()  # fmt: skip
    path = work / f"baseline-{short}"
    if path.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], capture_output=True)
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), rev], capture_output=True, check=True
    )
    try:
        yield path, short
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], capture_output=True)


def slow_client_targets(data_dir: Path, port: int, workers: int, baseline: tuple[Path, str] | None,
                        compare: bool) -> list[Target]:  # fmt: skip
    """`tansuo serve` of this tree and of the baseline; other servers with ``compare``."""
    base = server_env(data_dir, port)
    serve = [PY, "-m", "services.cli.main", "serve", "--data", str(data_dir), "--port", str(port), "--workers",
             str(workers)]  # fmt: skip
    out = []
    if baseline is not None:
        out.append(Target(f"tansuo serve at `{baseline[1]}` (before)", serve, base, cwd=baseline[0]))
    out.append(Target("tansuo serve (this tree)", serve, base))
    if compare:
        out += [t for t in comparison_targets(data_dir, port) if t.name.startswith(("granian", "waitress"))]
    return out


def run_slow_levels(target: Target, port: int, queries: Path, seconds: float, warmup_s: float,
                    log_dir: Path) -> list[dict[str, Any]]:  # fmt: skip
    """Each level with and without the slow clients, /healthz probed throughout; after
    a level with slow clients, one client alone for 5 s (is the server still "busy"?)."""
    out: list[dict[str, Any]] = []
    with running(target, port, log_dir):
        load("closed", port, queries, 3, clients=4)  # warm-up: jieba, page cache, every worker
        level = 0
        for clients in SLOW_LEVELS:
            for slow in (0, SLOW_CLIENTS):
                level += 1
                extra = ["--probe", "/healthz", "--timeout", str(SLOW_REQUEST_TIMEOUT_S)]
                if slow:
                    extra += ["--slow", str(slow), "--slow-interval", "2"]
                result: dict[str, Any] = load("closed", port, queries, seconds, clients=clients, warmup_s=warmup_s,
                                              start_at=level * STREAM_PER_LEVEL, extra=extra)  # fmt: skip
                result["slow_clients"] = slow
                if slow:
                    result["after"] = load("closed", port, queries, 5, clients=1, start_at=level * STREAM_PER_LEVEL + 20_000,
                                           extra=["--timeout", str(SLOW_REQUEST_TIMEOUT_S)])  # fmt: skip
                _log(f"  {target.name}: {clients} clients, {slow} slow: {result}")
                out.append(result)
                time.sleep(1)
    return out


def measure_slow(args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    port = 18_481
    args.work.mkdir(parents=True, exist_ok=True)
    queries_path = args.work / "queries.txt"
    queries = build_index(default_cache().parent / "zh-docs-site", args.work / "data", 500)
    sent = query_stream.stream(queries, STREAM_PER_LEVEL * 8)
    queries_path.write_text("\n".join(sent) + "\n", encoding="utf-8")
    workers = args.workers or len(os.sched_getaffinity(0))
    results: dict[str, Any] = {
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"), "load_start": os.getloadavg()[0],
        "machine": asdict(machine.describe()), "seconds": seconds, "warmup_s": args.warmup, "workers": workers,
        "slow_clients": SLOW_CLIENTS, "targets": {},
    }  # fmt: skip
    with contextlib.ExitStack() as stack:
        baseline = stack.enter_context(baseline_tree(args.baseline, args.work)) if args.baseline else None
        if baseline is not None and args.ab_rounds:
            results["ab"] = ab_rounds(
                args.work / "data", port, workers, baseline, queries_path, args.ab_rounds, args.work
            )
        if not args.ab_only:
            for target in slow_client_targets(args.work / "data", port, workers, baseline, args.compare):
                _log(f"{target.name} ...")
                results["targets"][target.name] = run_slow_levels(
                    target, port, queries_path, seconds, args.warmup, args.work
                )
    results["load_end"] = os.getloadavg()[0]
    return results


AB_SECONDS = 10.0


def ab_rounds(data_dir: Path, port: int, workers: int, baseline: tuple[Path, str], queries: Path, rounds: int,
              log_dir: Path) -> dict[str, list[float]]:  # fmt: skip
    """The baseline's server and this tree's, both running, measured in turn (the order
    swapped every round) at 64 and 256 clients without slow clients: this tree's
    answered/s over the baseline's, and its CPU seconds per answered request over the
    baseline's, per round. On a machine that other work shares, a level's throughput
    moves by half from one minute to the next; side by side, both servers meet the same
    moments, and CPU per request hardly depends on them."""
    before = slow_client_targets(data_dir, port, workers, baseline, False)[0]
    now = slow_client_targets(data_dir, port + 1, workers, baseline, False)[-1]
    ratios: dict[str, list[float]] = {}
    with running(before, port, log_dir) as proc_before, running(now, port + 1, log_dir) as proc_now:
        pids = {port: proc_before.pid, port + 1: proc_now.pid}
        for p in (port, port + 1):
            load("closed", p, queries, 3, clients=4)
        for r in range(rounds):
            for clients in SLOW_LEVELS:
                answered, cpu = {}, {}
                for p in (port, port + 1) if r % 2 == 0 else (port + 1, port):
                    cpu_start = _cpu_seconds(pids[p])
                    result = load("closed", p, queries, AB_SECONDS, clients=clients, warmup_s=3.0,
                                  start_at=(r * 2 + clients % 7) * 1000, extra=["--timeout", "10"])  # fmt: skip
                    answered[p] = float(result["ok_per_s"])  # type: ignore[arg-type]
                    whole = result["whole"]
                    served = sum(v for k, v in whole["statuses"].items() if k.isdigit())  # type: ignore[index]
                    cpu[p] = (_cpu_seconds(pids[p]) - cpu_start) / max(1, served)
                ratio = answered[port + 1] / answered[port] if answered[port] else float("inf")
                ratios.setdefault(f"{clients} clients, answered/s", []).append(round(ratio, 3))
                ratios.setdefault(f"{clients} clients, CPU per request", []).append(round(cpu[port + 1] / cpu[port], 3))
                _log(f"  A/B round {r + 1}, {clients} clients: {answered} -> {ratio:.2f}; CPU/request {cpu}")
    return ratios


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a server: its arbiter and worker processes."""
    ticks = 0
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for process in [str(pid), *children]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def slow_markdown(results: dict[str, Any]) -> str:
    """The docs/benchmarks.md section of a --slow-clients run."""
    m = results["machine"]
    out = [
        "## Load with slow clients (issue 39)",
        "",
        f"{results['started']} UTC, Tansuo `{m['commit']}`, {m['cpu']}, {m['cores']} cores, Python {m['python']}. "
        f"Load average (1 min) {results['load_start']:.1f} at the start, {results.get('load_end', 0):.1f} at the end. "
        f"`python -m bench.serving.load_bench --slow-clients --baseline REV --write`, {results['seconds']:g} s measured "
        f"per level after {results['warmup_s']:g} s of warm-up, {results['workers']} worker processes of 8 threads, the "
        "index and query stream of the load benchmark above.",
        "",
        f"Each level runs its closed-loop clients alone, then beside {results['slow_clients']} slow clients: each "
        "opens a connection and sends a search request one byte every 2 s, never the last one, and when the server "
        "answers or closes, starts again on a new connection. A probe asks `/healthz` on a new connection four times a "
        f"second, and counts no answer within 5 s as a timeout; a search unanswered after {SLOW_REQUEST_TIMEOUT_S:g} s "
        "is a timeout too. *After*: one client alone for 5 s once the slow clients have gone.",
        "",
        "| server | clients | slow clients | answered/s (200) | p50 ms | p99 ms | refused (503) | timeouts | /healthz "
        "answered | /healthz p99 ms | slow requests cut (408) | after: answered/s, refused |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, levels in results["targets"].items():
        for r in levels:
            probe = r.get("probe", {})
            answered = probe.get("statuses", {}).get("200", 0)
            slow = r.get("slow", {})
            after = r.get("after")
            after_text = f"{after['ok_per_s']:.0f}/s, {after['refused_share'] * 100:.0f}%" if after else "—"
            out.append(f"| {name} | {r['clients']} | {r['slow_clients']} | {r['ok_per_s']:.0f} | {r['p50_ms']} | "
                       f"{r['p99_ms']} | {r['statuses'].get('503', 0)} | {r['statuses'].get('timeout', 0)} | "
                       f"{answered} of {probe.get('sent', 0)} | {probe.get('p99_ms')} | "
                       f"{slow.get('answers', {}).get('408', 0) if slow else '—'} | {after_text} |")  # fmt: skip
    if results.get("ab"):
        out += ["", "Without slow clients, side by side (both servers running, measured in turn, the order swapped "
                f"every round; {AB_SECONDS:g} s after 3 s of warm-up each): this tree's answered/s, and its CPU seconds "
                "(arbiter and workers) per request, over the baseline's, per round, and the medians:", ""]  # fmt: skip
        for what, ratios in results["ab"].items():
            ordered = sorted(ratios)
            median = ordered[len(ordered) // 2] if len(ordered) % 2 else sum(ordered[len(ordered) // 2 - 1 :][:2]) / 2
            out.append(f"- {what}: {', '.join(f'{r:.2f}' for r in ratios)}; median {median:.2f}×.")
    names = list(results["targets"])
    if len(names) >= 2 and "(before)" in names[0]:
        before, now = results["targets"][names[0]], results["targets"][names[1]]
        out += ["", "This tree against the baseline, level by level (answered/s, ratio):", ""]
        for old, new in zip(before, now, strict=True):
            ratio = f"{new['ok_per_s'] / old['ok_per_s']:.2f}×" if old["ok_per_s"] else "the baseline answered none"
            out.append(f"- {new['clients']} clients, {new['slow_clients']} slow: {new['ok_per_s']:.0f} against "
                       f"{old['ok_per_s']:.0f}/s, {ratio}.")  # fmt: skip
    return "\n".join(out) + "\n"


def measure(args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    port = 18_480
    args.work.mkdir(parents=True, exist_ok=True)
    queries_path = args.work / "queries.txt"
    queries = build_index(default_cache().parent / "zh-docs-site", args.work / "data", 500)
    sent = query_stream.stream(queries, STREAM_PER_LEVEL * (len(CLOSED_LEVELS) + 4))
    queries_path.write_text("\n".join(sent) + "\n", encoding="utf-8")
    data_dir = args.work / "data"
    cores = len(os.sched_getaffinity(0))
    workers = args.workers or cores
    results: dict[str, Any] = {
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"), "load_start": os.getloadavg()[0],
        "machine": asdict(machine.describe()), "seconds": seconds, "warmup_s": args.warmup, "workers": workers,
        "bare": bare_query(data_dir, queries), "targets": {}, "scaling": {}, "compare": {},
        "repeat_share": query_stream.repeat_share(sent[STREAM_PER_LEVEL : 2 * STREAM_PER_LEVEL]),
    }  # fmt: skip
    _log(f"bare query: {results['bare']}")
    if args.profile:
        profile(targets(data_dir, port, args.workers)[0], port, queries_path, seconds, args.profile, args.work)
        results["profile"] = summarise(args.profile, 20, within="BoundedThreadWorker._serve")
    if args.compare:
        for target in comparison_targets(data_dir, port):
            _log(f"{target.name} ...")
            results["compare"][target.name] = run_target(
                target, port, queries_path, (1, 64, 256), seconds, [], args.work
            )
    levels = QUICK_LEVELS if args.quick else CLOSED_LEVELS
    one_core = 1000 / float(results["bare"]["service_ms"])
    rates = [round(one_core * workers * f) for f in (0.5, 1.0, 2.0)]
    for target in targets(data_dir, port, args.workers):
        _log(f"{target.name} ...")
        results["targets"][target.name] = run_target(target, port, queries_path, levels, seconds, rates, args.work,
                                                     args.warmup)  # fmt: skip
    for target in scaling_targets(data_dir, port, cores):
        _log(f"{target.name} ...")
        results["scaling"][target.name] = run_target(target, port, queries_path, (64,), seconds, [], args.work)
    results["load_end"] = os.getloadavg()[0]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving.load_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1, 64 and 1,024 clients only")
    parser.add_argument("--compare", action="store_true", help="also granian, waitress and other worker shapes")
    parser.add_argument("--profile", type=Path, help="also profile one worker with py-spy; raw profile written here")
    parser.add_argument("--seconds", type=float, help="measured per level (default 20, quick 4)")
    parser.add_argument(
        "--warmup",
        type=float,
        help="closed-loop levels: seconds before the measurement, in the first half of which "
        "the clients arrive (default 10, quick 2)",
    )
    parser.add_argument("--workers", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "tansuo-load-bench")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument(
        "--from-json",
        type=Path,
        action="append",
        default=[],
        help="render earlier raw results (repeatable: later files add their parts) instead of measuring",
    )
    parser.add_argument("--write", action="store_true", help="put the section into docs/benchmarks.md")
    parser.add_argument(
        "--slow-clients",
        action="store_true",
        help="measure with slow clients present instead (see the module's docstring)",
    )
    parser.add_argument("--baseline", metavar="REV", help="--slow-clients: also measure this revision's server")
    parser.add_argument(
        "--ab-rounds",
        type=int,
        default=0,
        help="--slow-clients with --baseline: also this many rounds of both servers side by side",
    )
    parser.add_argument("--ab-only", action="store_true", help="--slow-clients: only the side-by-side rounds")
    args = parser.parse_args(argv)
    if args.slow_clients:
        return _slow_main(args)
    if args.from_json:
        results: dict[str, Any] = {}
        for path in args.from_json:
            for key, value in json.loads(path.read_text(encoding="utf-8")).items():
                if value or key not in results:
                    results[key] = value
    else:
        if args.warmup is None:
            args.warmup = 2.0 if args.quick else 10.0
        results = measure(args, args.seconds or (4.0 if args.quick else 20.0))
        if args.json:
            args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    section = markdown(results)
    if args.write:
        load_report.write(REPO / "docs" / "benchmarks.md", section)
    else:
        print(section)
    return 0


def _slow_main(args: argparse.Namespace) -> int:
    if args.from_json:
        results: dict[str, Any] = {}
        for path in args.from_json:  # later files add their parts (the side-by-side rounds, say)
            results.update(
                {k: v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if v or k not in results}
            )
    else:
        if args.warmup is None:
            args.warmup = 5.0
        results = measure_slow(args, args.seconds or 20.0)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    load_report.SLOW_BLOCK.publish(slow_markdown(results), args.write)
    return 0


def _row(name: str, r: dict[str, Any]) -> str:
    load_desc = f"{r['clients']} clients" if r["mode"] == "closed" else f"{r['rate']:g}/s arrivals"
    other = {k: v for k, v in r["statuses"].items() if k not in ("200", "503")}
    refused = f"{r['refused_share'] * 100:.1f}%"
    whole = r.get("whole")
    arrival = f"{whole['refused_share'] * 100:.1f}%" if isinstance(whole, dict) else "—"
    other_text = ", ".join(f"{k}: {v}" for k, v in other.items()) or "—"
    return (f"| {name} | {load_desc} | {r['ok_per_s']:.0f} | {r['p50_ms']} | {r['p99_ms']} | {refused} | {arrival} "
            f"| {other_text} |")  # fmt: skip


_HEAD = ("| server | load | answered/s (200) | p50 ms | p99 ms | refused (503) | refused, arrival included | other |\n"
         "|---|---|---|---|---|---|---|---|")  # fmt: skip


def _against_the_goals(targets: dict[str, Any]) -> list[str]:
    """Issue 18's targets, read off the closed-loop levels of each command."""
    lines = ["Against the goals (throughput at 256 and 1,024 clients at least 0.8× the best level, p99 at 256 "
             "clients at most 2 s, refusals at 1,024 clients at most 5%):", ""]  # fmt: skip
    for name, runs in targets.items():
        by_clients = {r["clients"]: r for r in runs["closed"]}
        best = max(r["ok_per_s"] for r in runs["closed"]) or 1.0
        parts = []
        for clients in (256, 1024):
            r = by_clients.get(clients)
            if r is not None:
                parts.append(f"{clients:,} clients {r['ok_per_s'] / best:.2f}× the best")
        if 256 in by_clients:
            parts.append(f"p99 at 256 clients {by_clients[256]['p99_ms'] / 1000:.2f} s")
        if 1024 in by_clients:
            parts.append(f"refused at 1,024 clients {by_clients[1024]['refused_share'] * 100:.0f}%")
        every = runs["closed"] + runs["open"]
        other = sum(v for r in every for k, v in r["statuses"].items() if k not in ("200", "503"))
        bare = sum(r["refusals_without_retry_after"] for r in every)
        parts.append(f"{other} requests got neither 200 nor 503, {bare} refusals had no Retry-After"
                     if other or bare else "every answer a 200 or a 503 with Retry-After")  # fmt: skip
        lines.append(f"- {name}: " + "; ".join(parts) + ".")
    return lines


def markdown(results: dict[str, Any]) -> str:
    """The docs/benchmarks.md section of one run."""
    bare, m = results["bare"], results["machine"]
    out = [
        "## Load: the search API under many clients",
        "",
        f"{results['started']} UTC, Tansuo `{m['commit']}`, {m['cpu']}, {m['cores']} cores, Python {m['python']}. "
        f"Load average (1 min) {results['load_start']:.1f} at the start, {results.get('load_end', 0):.1f} at the end"
        + (
            ": other work shared the machine, so every figure is a floor and only lines of this run compare."
            if max(results["load_start"], results.get("load_end", 0)) > 0.5 * m["cores"]
            else "."
        )
        + f" `python -m bench.serving.load_bench --write`, {results['seconds']:g} s measured per level"
        + (f" after {results['warmup_s']:g} s of warm-up" if results.get("warmup_s") else "")
        + ", "
        f"{results['workers']} worker processes (one per core, the default) of 8 threads.",
        "",
        "The index: the demo site's pages under nine host names (about 2,300 documents). Queries: 500 drawn as "
        "in the search benchmark (titles, one to three words, words of two pages, English). The load client "
        "(`bench/serving/load_client.py`) runs as its own process on the same cores. *Closed loop*: each client keeps "
        "one connection alive and sends its next query when the answer comes; after a 503 it waits the "
        "Retry-After. The clients of a closed-loop level arrive evenly over the first half of its warm-up (a "
        "search box's users do not press Enter in the same millisecond), and its figures are those of the "
        "requests sent after the warm-up, the steady state; *refused, arrival included* counts every "
        "request of the level. *Open loop*: requests start at a fixed rate (half, once and twice what the bare query "
        "does on all cores) whatever the answers, latency counted from the planned start. p50/p99 are over "
        "all answers, 200 and 503. The stream (`bench/serving/query_stream.py`) mixes new queries and repeats as a "
        "search log does: half are new, the rest drawn from the 500 with Zipf weights; "
        f"{results.get('repeat_share', 0) * 100:.0f}% of one level's queries were sent before in it, the most "
        "the result cache (services/search/result_cache.py) could answer. The line with the cache off, the "
        "worker scaling and the bare query show the search path itself.",
        "",
        f"**Bare query, same run, no HTTP:** SearchService {bare['service_ms']:.2f} ms a query "
        f"({1000 / bare['service_ms']:.0f}/s on one core); the index adapter's search alone "
        f"{bare['index_ms']:.2f} ms.",
        "",
        _HEAD,
    ]
    for name, runs in results["targets"].items():
        out += [_row(name, r) for r in runs["closed"] + runs["open"]]
    out += ["", *_against_the_goals(results["targets"])]
    if results.get("scaling"):
        out += ["", "**Workers**, 64 closed-loop clients on `tansuo serve`, result cache off:", "", _HEAD]
        for name, runs in results["scaling"].items():
            r = runs["closed"][0]
            out.append(_row(name, r))
        rates = [runs["closed"][0]["ok_per_s"] for runs in results["scaling"].values()]
        out += [
            "",
            "Throughput relative to one worker: "
            + ", ".join(f"{i + 1} → {rate / rates[0]:.2f}×" for i, rate in enumerate(rates))
            + ".",
        ]
    if results.get("compare"):
        out += [
            "",
            "**Servers and worker shapes compared** (the same app; granian and waitress without the "
            "admission middleware, which needs gunicorn's arrival stamps):",
            "",
            _HEAD,
        ]
        for name, runs in results["compare"].items():
            out += [_row(name, r) for r in runs["closed"]]
    if results.get("profile"):
        out += [
            "",
            "**Profile** of one `tansuo serve` worker under 64 clients (py-spy, 200 samples/s; shares of "
            "the samples of threads inside a request, waits for Python's lock and for other locks "
            "included; docs/serving.md reads it):",
            "",
            results["profile"],
        ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
