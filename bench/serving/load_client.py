"""HTTP load for the search API: closed-loop clients or a fixed arrival rate.

    python -m bench.serving.load_client closed URL_BASE QUERIES_FILE --clients 256 --seconds 10
    python -m bench.serving.load_client open URL_BASE QUERIES_FILE --rate 400 --seconds 10
    python -m bench.serving.load_client closed URL_BASE QUERIES_FILE --clients 64 --slow 48 --probe /healthz

Prints one JSON object: responses by status, successes per second, latency quantiles.
It runs as its own process, beside the server under test, so that its own work does
not share a GIL with anything else of the benchmark; asyncio on raw sockets costs
about 50 µs a request, a few per cent of a core at the rates measured.

Closed loop: each client keeps one connection alive and sends its next query when the
answer comes, as a person would click "search" again. A 503 with Retry-After makes
that client wait as long as asked, as a browser-side retry would; a connection the
server closed is reopened at once (HTTP allows closing an idle connection at any
time). Open loop: requests start at a fixed rate whatever the answers, on idle
connections from a pool, and latency counts from the planned start, so a queue
shows in full rather than slowing the load down (no coordinated omission).

With ``--slow N``, N clients beside these send their requests a byte at a time
(bench/serving/hostile_clients.py); with ``--probe PATH``, a probe asks PATH every
quarter second. A request unanswered after ``--timeout`` seconds counts as "timeout".
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

from bench.serving import hostile_clients

OPEN_LOOP_MAX_CONNECTIONS = 4096
REQUEST_TIMEOUT_S = 30.0  # a closed-loop request unanswered this long counts as "timeout"
DRAIN_TIMEOUT_S = 30.0  # open loop: requests still unanswered this long after the end count as timeouts


@dataclass
class Tally:
    statuses: Counter[str] = field(default_factory=Counter)
    latencies_s: list[float] = field(default_factory=list)  # every answered request, 200 or refusal
    ok_latencies_s: list[float] = field(default_factory=list)
    refusals_without_retry_after: int = 0

    def record(self, status: int, latency_s: float, retry_after: str | None) -> None:
        self.statuses[str(status)] += 1
        self.latencies_s.append(latency_s)
        if status == 200:
            self.ok_latencies_s.append(latency_s)
        elif status in (429, 503) and retry_after is None:
            self.refusals_without_retry_after += 1

    def summary(self, seconds: float) -> dict[str, object]:
        ok = self.statuses.get("200", 0)
        refused = self.statuses.get("503", 0) + self.statuses.get("429", 0)
        answered = sum(v for k, v in self.statuses.items() if k.isdigit())
        return {
            "seconds": round(seconds, 2),
            "statuses": dict(self.statuses),
            "ok_per_s": round(ok / seconds, 1),
            "refused_share": round(refused / answered, 4) if answered else 0.0,
            "refusals_without_retry_after": self.refusals_without_retry_after,
            "p50_ms": _quantile_ms(self.latencies_s, 0.50),
            "p99_ms": _quantile_ms(self.latencies_s, 0.99),
            "ok_p99_ms": _quantile_ms(self.ok_latencies_s, 0.99),
            "max_ms": round(max(self.latencies_s) * 1000, 1) if self.latencies_s else None,
        }


def _quantile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))] * 1000, 1)


class Connection:
    """One keep-alive HTTP/1.1 connection that reads Content-Length responses."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, path: str) -> tuple[int, str | None, bool]:
        """(status, Retry-After, keep-alive) of one GET. On a reused connection that the
        server had closed meanwhile (an idle timeout) it is sent again on a new one, as
        browsers and HTTP libraries do."""
        if self.writer is not None:
            try:
                return await self._send(path)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                if isinstance(exc, asyncio.IncompleteReadError) and exc.partial:
                    raise
                self.close()
        return await self._send(path)

    async def _send(self, path: str) -> tuple[int, str | None, bool]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None and self.writer is not None
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        await self.reader.readexactly(int(headers.get("content-length", "0")))
        keep = headers.get("connection", "").lower() != "close"
        if not keep:
            self.close()
        return status, headers.get("retry-after"), keep

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def closed_loop(
    host: str,
    port: int,
    paths: list[str],
    clients: int,
    seconds: float,
    start_at: int = 0,
    ramp_s: float = 0.0,
    warmup_s: float = 0.0,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> dict[str, object]:
    """``clients`` users, the n-th arriving ``n / clients * ramp_s`` seconds in (a
    search box's users do not all press Enter in the same millisecond), for ``seconds``
    in all. The summary covers requests sent after ``warmup_s``, the steady state;
    ``whole`` covers every request, the arrival included."""
    steady, whole = Tally(), Tally()
    start = time.monotonic()
    end = start + seconds
    steady_from = start + warmup_s
    counter = itertools.count(start_at)

    async def client(n: int) -> None:
        await asyncio.sleep(n / clients * ramp_s)
        conn = Connection(host, port)
        while time.monotonic() < end:
            path = paths[next(counter) % len(paths)]
            sent = time.monotonic()
            tallies = (whole, steady) if sent >= steady_from else (whole,)
            try:
                status, retry_after, _ = await asyncio.wait_for(conn.request(path), timeout_s)
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError, TimeoutError) as exc:
                conn.close()
                for tally in tallies:
                    tally.statuses["timeout" if isinstance(exc, TimeoutError) else "connection error"] += 1
                await asyncio.sleep(0.05)
                continue
            if time.monotonic() <= end + 5:
                for tally in tallies:
                    tally.record(status, time.monotonic() - sent, retry_after)
            if retry_after is not None and status in (429, 503):
                await asyncio.sleep(min(float(retry_after), max(0.0, end - time.monotonic())))
        conn.close()

    await asyncio.gather(*(client(n) for n in range(clients)))
    elapsed = time.monotonic() - start
    return {
        "mode": "closed", "clients": clients, "ramp_s": ramp_s, "warmup_s": warmup_s,
        **steady.summary(elapsed - warmup_s), "whole": whole.summary(elapsed),
    }  # fmt: skip


async def open_loop(
    host: str, port: int, paths: list[str], rate: float, seconds: float, start_at: int = 0
) -> dict[str, object]:
    tally = Tally()
    idle: list[Connection] = []
    opened = 0
    tasks: set[asyncio.Task[None]] = set()
    start = time.monotonic()

    async def one(path: str, planned: float) -> None:
        nonlocal opened
        conn = idle.pop() if idle else None
        if conn is None:
            opened += 1
            conn = Connection(host, port)
        try:
            status, retry_after, keep = await conn.request(path)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            conn.close()
            tally.statuses["connection error"] += 1
            return
        tally.record(status, time.monotonic() - planned, retry_after)
        if keep:
            idle.append(conn)

    total = int(rate * seconds)
    for i in range(total):
        planned = start + i / rate
        delay = planned - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if len(tasks) >= OPEN_LOOP_MAX_CONNECTIONS:
            tally.statuses["not sent (client at its connection cap)"] += 1
            continue
        task = asyncio.create_task(one(paths[(start_at + i) % len(paths)], planned))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    sent_for = time.monotonic() - start
    if tasks:
        _, pending = await asyncio.wait(set(tasks), timeout=DRAIN_TIMEOUT_S)
        if pending:
            tally.statuses["timeout"] += len(pending)
        for task in pending:
            task.cancel()
    for conn in idle:
        conn.close()
    summary = tally.summary(sent_for)
    return {"mode": "open", "rate": rate, "connections_opened": opened, **summary}


def search_paths(queries: list[str]) -> list[str]:
    return [f"/api/search?q={quote(q)}" for q in queries]


async def _run(args: argparse.Namespace, host: str, port: int, paths: list[str]) -> dict[str, object]:
    """The load, with the slow clients and the probe beside it when asked for."""
    if args.mode == "closed":
        load = closed_loop(host, port, paths, args.clients, args.seconds, args.start_at, args.ramp, args.warmup,
                           args.timeout)  # fmt: skip
    else:
        load = open_loop(host, port, paths, args.rate, args.seconds, args.start_at)
    extras: dict[str, object] = {}
    if args.slow:
        extras["slow"] = hostile_clients.slow_clients(host, port, paths[0], args.slow, args.slow_interval, args.seconds)
    if args.probe:
        extras["probe"] = hostile_clients.probe(host, port, args.probe, 0.25, args.probe_timeout, args.seconds)
    done = await asyncio.gather(load, *extras.values())  # type: ignore[arg-type]
    result: dict[str, object] = dict(done[0])
    result.update(zip(extras, done[1:], strict=True))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving.load_client", description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("closed", "open"))
    parser.add_argument("base_url", help="http://host:port")
    parser.add_argument("queries", type=Path, help="one query a line")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--rate", type=float, default=100.0, help="requests per second (open loop)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--start-at", type=int, default=0, help="the line of QUERIES to begin with")
    parser.add_argument("--ramp", type=float, default=0.0, help="closed loop: seconds over which the clients arrive")
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="closed loop: seconds left out of the summary (the arrival and the server settling)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=REQUEST_TIMEOUT_S,
        help="closed loop: seconds before a request counts as a timeout",
    )
    parser.add_argument("--slow", type=int, default=0, help="also this many clients sending a byte at a time")
    parser.add_argument("--slow-interval", type=float, default=2.0, help="seconds between a slow client's bytes")
    parser.add_argument("--probe", default="", help="also ask this path every quarter second (a health probe)")
    parser.add_argument("--probe-timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    url = urlsplit(args.base_url)
    paths = search_paths([q for q in args.queries.read_text(encoding="utf-8").splitlines() if q.strip()])
    result = asyncio.run(_run(args, url.hostname or "", url.port or 80, paths))
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
