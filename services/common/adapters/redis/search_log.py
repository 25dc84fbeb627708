"""Cluster search log: searches and clicks counted per day in Redis (TANSUO_STATE).

Keys, all under one hash tag (``P{an}:``, one slot of a Redis Cluster: the log is
small and a batch is one pipeline), per day ``d:<day>:``:
``t`` hash of totals, ``q`` zset query -> first pages, ``z`` zset query -> zero-hit
ones, ``c`` zset query -> clicks, ``n`` hash query -> last result count, ``u`` zset URL
-> clicks. Besides them: ``days`` zset (day -> its ordinal, to find the old ones),
``recent`` list of single searches (JSON, newest first) and ``key``, the click key.
Every day's keys also expire a day after the retention, should pruning never run.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

from services.common.adapters.redis.connection import DEFAULT_PREFIX, connect, ping, translate_errors
from services.common.domain.search_analytics import (
    ClickEvent,
    DayReport,
    DayTotals,
    QueryStats,
    SearchEvent,
    empty_day,
)

_DAY_KEYS = ("t", "q", "z", "c", "n", "u")


def _ordinal(day: str) -> int:
    return datetime.date.fromisoformat(day).toordinal()


class RedisSearchLog:
    def __init__(self, client: redis.Redis | RedisCluster, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis",
                 retention_days: int = 90, recent_limit: int = 10_000, max_queries_per_day: int = 10_000) -> None:  # fmt: skip
        self._r: Any = client  # decode_responses=True: every reply is str
        self._base = f"{prefix}{{an}}:"
        self._where = where
        self._retention_days = retention_days
        self._recent_limit = recent_limit
        self._max_queries = max_queries_per_day

    @classmethod
    def from_url(cls, url: str, **limits: int) -> RedisSearchLog:
        target = connect(url)
        return cls(target.client, target.prefix, target.where, **limits)

    def _day(self, day: str, kind: str) -> str:
        return f"{self._base}d:{day}:{kind}"

    @translate_errors
    def record(self, searches: Sequence[SearchEvent], clicks: Sequence[ClickEvent]) -> None:
        if not searches and not clicks:
            return
        pipe = self._r.pipeline(transaction=False)
        ttl = (self._retention_days + 1) * 86_400
        days = {s.day for s in searches} | {c.day for c in clicks}
        for day in days:
            pipe.zadd(f"{self._base}days", {day: _ordinal(day)})
        for s in searches:
            totals = self._day(s.day, "t")
            pipe.hincrby(totals, "result_pages", 1)
            pipe.hincrbyfloat(totals, "took_ms", s.took_ms)
            if s.page == 1:
                pipe.hincrby(totals, "searches", 1)
                pipe.zincrby(self._day(s.day, "q"), 1, s.query)
                pipe.hset(self._day(s.day, "n"), s.query, s.total)
                if s.total == 0:
                    pipe.hincrby(totals, "zero", 1)
                    pipe.zincrby(self._day(s.day, "z"), 1, s.query)
        for c in clicks:
            pipe.hincrby(self._day(c.day, "t"), "clicks", 1)
            pipe.zincrby(self._day(c.day, "c"), 1, c.query)
            pipe.zincrby(self._day(c.day, "u"), 1, c.url)
        if searches and self._recent_limit > 0:
            pipe.lpush(f"{self._base}recent", *[json.dumps(_event_json(s), ensure_ascii=False) for s in searches])
            pipe.ltrim(f"{self._base}recent", 0, self._recent_limit - 1)
        elif self._recent_limit == 0:
            pipe.delete(f"{self._base}recent")
        for day in days:
            for kind in _DAY_KEYS:
                pipe.expire(self._day(day, kind), ttl)
        pipe.execute()
        self._bound(days)

    def _bound(self, touched: set[str]) -> None:
        """Drop the days the retention no longer keeps, and the least searched queries
        (and least clicked URLs) of a day past the cap."""
        newest = self._r.zrevrange(f"{self._base}days", 0, 0, withscores=True)
        if newest:
            old = self._r.zrangebyscore(f"{self._base}days", "-inf", newest[0][1] - self._retention_days)
            if old:
                self._r.delete(*[self._day(day, kind) for day in old for kind in _DAY_KEYS])
                self._r.zrem(f"{self._base}days", *old)
        for day in touched:
            for key, also in (("q", ("z", "c")), ("c", ()), ("u", ())):
                extra = self._r.zcard(self._day(day, key)) - self._max_queries
                if extra <= 0:
                    continue
                doomed = self._r.zrange(self._day(day, key), 0, extra - 1)
                pipe = self._r.pipeline(transaction=False)
                pipe.zrem(self._day(day, key), *doomed)
                for kind in also:
                    pipe.zrem(self._day(day, kind), *doomed)
                if key == "q":
                    pipe.hdel(self._day(day, "n"), *doomed)
                pipe.execute()

    @translate_errors
    def days(self) -> list[DayTotals]:
        days = self._r.zrevrange(f"{self._base}days", 0, -1)
        pipe = self._r.pipeline(transaction=False)
        for day in days:
            pipe.hgetall(self._day(day, "t"))
        return [_totals(day, row) for day, row in zip(days, pipe.execute() if days else [], strict=True)]

    def _stats(self, day: str, queries: list[str]) -> list[QueryStats]:
        if not queries:
            return []
        pipe = self._r.pipeline(transaction=False)
        for query in queries:
            pipe.zscore(self._day(day, "q"), query)
            pipe.zscore(self._day(day, "z"), query)
            pipe.zscore(self._day(day, "c"), query)
            pipe.hget(self._day(day, "n"), query)
        values = pipe.execute()
        out = []
        for i, query in enumerate(queries):
            searches, zero, clicks, total = values[4 * i : 4 * i + 4]
            out.append(QueryStats(query, int(searches or 0), int(zero or 0), int(clicks or 0), int(total or 0)))
        return out

    @translate_errors
    def day(self, day: str, top: int = 50) -> DayReport:
        totals = self._r.hgetall(self._day(day, "t"))
        popular = self._stats(day, self._r.zrevrange(self._day(day, "q"), 0, top - 1))
        zero = self._stats(day, self._r.zrevrange(self._day(day, "z"), 0, top - 1))
        clicked = self._r.zrevrange(self._day(day, "u"), 0, top - 1, withscores=True)
        return DayReport(
            _totals(day, totals) if totals else empty_day(day),
            sorted(popular, key=lambda s: (-s.searches, s.query)),
            sorted(zero, key=lambda s: (-s.zero, s.query)),
            sorted(((url, int(n)) for url, n in clicked), key=lambda pair: (-pair[1], pair[0])),
        )

    @translate_errors
    def recent(self, limit: int = 100) -> list[SearchEvent]:
        if limit <= 0:
            return []
        return [SearchEvent(**json.loads(row)) for row in self._r.lrange(f"{self._base}recent", 0, limit - 1)]

    @translate_errors
    def searched(self, days: int, top: int) -> dict[str, int]:
        names = self._r.zrevrange(f"{self._base}days", 0, days - 1)
        if not names or top <= 0:
            return {}
        # First pages less zero-hit ones, summed over the days in one scratch zset
        # (under the log's hash tag, so a Redis Cluster holds it in the same slot).
        weights = {self._day(day, "q"): 1 for day in names} | {self._day(day, "z"): -1 for day in names}
        scratch = f"{self._base}searched:{os.urandom(8).hex()}"
        pipe = self._r.pipeline(transaction=False)
        pipe.zunionstore(scratch, weights)
        pipe.zrevrangebyscore(scratch, "+inf", "(0", start=0, num=top, withscores=True)
        pipe.delete(scratch)
        _, rows, _ = pipe.execute()
        return {query: int(found) for query, found in rows}

    @translate_errors
    def click_key(self) -> bytes:
        self._r.set(f"{self._base}key", os.urandom(32).hex(), nx=True)
        return bytes.fromhex(str(self._r.get(f"{self._base}key")))

    @translate_errors
    def ping(self) -> None:
        ping(self._r)

    def close(self) -> None:
        self._r.close()


def _event_json(event: SearchEvent) -> dict[str, Any]:
    return {"at": event.at, "day": event.day, "query": event.query, "total": event.total, "page": event.page,
            "took_ms": event.took_ms, "source": event.source, "sort": event.sort}  # fmt: skip


def _totals(day: str, row: dict[str, str]) -> DayTotals:
    return DayTotals(day, int(row.get("searches", 0)), int(row.get("result_pages", 0)), int(row.get("zero", 0)),
                     int(row.get("clicks", 0)), float(row.get("took_ms", 0.0)))  # fmt: skip
