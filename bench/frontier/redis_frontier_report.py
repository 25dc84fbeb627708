"""The Redis frontier block of docs/benchmarks.md (``python -m bench.frontier.redis_frontier_bench --write``):
admitted and scheduled URLs/s and bytes per queued URL, SQLite, one Redis and Redis Cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.measure.marked_block import MarkedBlock

if TYPE_CHECKING:
    from bench.frontier.redis_frontier_bench import FrontierRun

BLOCK = MarkedBlock(
    "<!-- redis-frontier:start (bench/frontier/redis_frontier_bench.py --write) -->", "<!-- redis-frontier:end -->"
)
# The marks: at least half of SQLite's scheduling rate, at most 250 bytes a queued URL.
RATE_MARK = 0.5
BYTES_MARK = 250


def render(r: FrontierRun) -> str:
    from bench.frontier.redis_frontier_bench import BACKENDS

    m, sqlite = r.machine, BACKENDS[0]
    rounds = len(r.rounds) // len(BACKENDS)
    rows = []
    for backend in BACKENDS:
        admitted, scheduled = r.median(backend, "admitted_per_s"), r.median(backend, "scheduled_per_s")
        size = r.median(backend, "bytes_per_url")
        big = "–" if backend == sqlite else f"{r.median(backend, 'big_host_bytes_per_url'):.0f}"
        fetched = "–" if backend == sqlite else f"{r.median(backend, 'fetched_bytes_per_url'):.0f}"
        rows.append(
            f"| {backend} | {admitted:,.0f} | {admitted / r.median(sqlite, 'admitted_per_s'):.2f} "
            f"| {scheduled:,.0f} | **{scheduled / r.median(sqlite, 'scheduled_per_s'):.2f}** "
            f"| {size:.0f}{' (disk)' if backend == sqlite else ''} | {big} | {fetched} |"
        )
    worst_rate = min(r.median(b, "scheduled_per_s") for b in BACKENDS[1:]) / r.median(sqlite, "scheduled_per_s")
    worst_bytes = max(r.median(b, "bytes_per_url") for b in BACKENDS[1:])
    worst_big = max(r.median(b, "big_host_bytes_per_url") for b in BACKENDS[1:])
    per_host = r.urls // r.hosts
    verdict = (
        f"Against the issue's marks: the Redis frontier scheduled **{worst_rate:.2f}** of SQLite's URLs/s at worst "
        f"(mark: {RATE_MARK}, {'met' if worst_rate >= RATE_MARK else '**not met**'}) and kept a queued URL in "
        f"**{worst_bytes:.0f} bytes** with {per_host} URLs a host, {worst_big:.0f} with {r.urls // r.big_hosts:,} "
        f"(mark: {BYTES_MARK}, {'met' if max(worst_bytes, worst_big) <= BYTES_MARK else '**not met**'})."
    )
    return "\n".join([
        "## The Redis frontier against SQLite (issue 13)\n",
        f"{r.started:%Y-%m-%d %H:%M} UTC, Tansuo `{m.commit}`, {r.duration_s / 60:.1f} minutes in all, "
        f"{m.cores} cores ({m.cpu}), {m.ram_gib:g} GiB, Python {m.python}, Redis 7 (Debian's `redis-server`). "
        f"Load average (1 min): {r.load[0]:.1f} at the start, {r.load[1]:.1f} at the end"
        + (" (other work shared the machine)." if max(r.load) > 0.5 * m.cores else ".") + "\n",
        f"`python -m bench.frontier.redis_frontier_bench --write`. {r.urls:,} URLs (mean length {r.url_chars:.0f} "
        f"characters) over {r.hosts:,} hosts, robots.txt known and delay 0, in each backend in turns, "
        f"{rounds} rounds, a fresh frontier each; medians. *Admitted*: offered through `Frontier.offer_links` as "
        f"pages of 50 links to their own host. *Scheduled*: {r.cycles:,} URLs leased and completed through "
        "`Frontier.dispatch` (512 at a time) and `Frontier.complete`. *Bytes per queued URL*: `MEMORY USAGE … "
        "SAMPLES 0` of every key of the frontier, on every node, over the URLs queued (SQLite: its files on disk); "
        f"the last column holds the same URLs over {r.big_hosts} hosts, {r.urls // r.big_hosts:,} each, past the "
        "128 entries where Redis keeps a hash or a sorted set as a compact listpack. *Bytes per fetched URL*: "
        f"{r.urls // 5:,} URLs over {max(1, r.hosts // 5)} hosts on a frontier of their own, every one leased and "
        "completed (each outcome holding a sha1 content hash, an ETag and a Last-Modified). The cluster is three primaries "
        "on this machine, each shard a slot (`frontier_redis.py`); ratios are to SQLite in the same run.\n",
        "| backend | admitted URLs/s | ÷ SQLite | scheduled URLs/s | ÷ SQLite | bytes per queued URL "
        f"| … {r.urls // r.big_hosts:,} URLs a host | bytes per fetched URL |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        verdict,
        "",
        "Before the shards (one Redis only, a hash of fields per URL, a global sorted set of every queued URL "
        "and a set per host), a queued URL took about 500 bytes; the Redis frontier's rate was never measured.",
    ])
