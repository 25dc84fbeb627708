"""Clients that misbehave on purpose, and a health probe, for the load benchmark's
slow-client levels (bench/serving/load_client.py --slow N --probe /healthz).

A slow client opens a connection and sends a search request one byte every
``interval_s``; when the server answers (a 408 once its request deadline passes) or
closes, it opens another and starts again, so N slow connections are present all the
time. The probe asks a path on a new connection every ``interval_s``, as a kubelet
does, and counts an answer slower than ``timeout_s`` as none.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SlowTally:
    connections: int = 0
    bytes_sent: int = 0
    answers: Counter[str] = field(default_factory=Counter)  # the status line's code, or "closed"

    def summary(self) -> dict[str, object]:
        return {"connections": self.connections, "bytes_sent": self.bytes_sent, "answers": dict(self.answers)}


async def slow_client(host: str, port: int, path: str, interval_s: float, end: float, tally: SlowTally) -> None:
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: slow\r\n\r\n".encode()
    while time.monotonic() < end:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(interval_s)
            continue
        tally.connections += 1
        answer = asyncio.ensure_future(reader.read(64))
        try:
            for byte in request[:-1]:  # never the last byte: the request is never whole
                done, _ = await asyncio.wait({answer}, timeout=interval_s)
                if done or time.monotonic() >= end:
                    break
                writer.write(bytes([byte]))
                tally.bytes_sent += 1
            if answer.done():
                head = answer.result()
                tally.answers[head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "closed"] += 1
        except (OSError, IndexError):
            tally.answers["closed"] += 1
        finally:
            answer.cancel()
            writer.close()


async def slow_clients(
    host: str, port: int, path: str, count: int, interval_s: float, seconds: float
) -> dict[str, object]:
    tally = SlowTally()
    end = time.monotonic() + seconds
    await asyncio.gather(*(slow_client(host, port, path, interval_s, end, tally) for _ in range(count)))
    return tally.summary()


async def probe(
    host: str, port: int, path: str, interval_s: float, timeout_s: float, seconds: float
) -> dict[str, object]:
    """``path`` on a new connection every ``interval_s``: answered (200) or not within ``timeout_s``."""
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        try:
            status = await asyncio.wait_for(_get(host, port, path), timeout_s)
        except (TimeoutError, OSError, IndexError, ValueError) as exc:
            statuses["timeout" if isinstance(exc, TimeoutError) else "error"] += 1
        else:
            statuses[str(status)] += 1
            latencies.append(time.monotonic() - started)
        await asyncio.sleep(max(0.0, interval_s - (time.monotonic() - started)))
    ordered = sorted(latencies)

    def ms(q: float) -> float | None:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1) if ordered else None

    return {"path": path, "sent": sum(statuses.values()), "statuses": dict(statuses), "p50_ms": ms(0.5),
            "p99_ms": ms(0.99), "max_ms": round(ordered[-1] * 1000, 1) if ordered else None}  # fmt: skip


async def _get(host: str, port: int, path: str) -> int:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n")
        await reader.read()
        return int(head.split(b" ", 2)[1])
    finally:
        writer.close()
