"""Cluster frontier state: URLs and hosts in Redis, shared by every scheduler.

Method by method this keeps the semantics of frontier_sqlite.py. Every call that writes
is one Lua script (frontier_redis_scripts.py), which Redis runs atomically, so racing
schedulers never lease one URL twice, admit one URL twice or start one host's clock twice.

Key layout (``P`` is the prefix, ``tansuo:`` by default), and why each structure:

- ``P u:<url>`` hash, one per URL ever seen: the URL row (host, depth, state, due_at,
  lease_id, fetched_at, etag, ...). Its existence is the seen-set, so admitting a URL
  is one EXISTS, and an absent field is SQL's NULL.
- ``P h:<host>`` hash, one per host: the host row, including ``inflight``, ``admitted``
  (the budget) and ``queued``, kept in step by the scripts.
- ``P q:<host>:<level>`` zset of the host's queued URLs at one level, score due_at, and
  ``P ql:<host>`` zset of the levels that hold any. A level is a depth, ``s<depth>``
  for sitemaps, and levels sort sitemaps first, then by depth. Picking "due URLs of
  this host ORDER BY kind = 'page', depth, due_at" walks the few levels present and
  takes a range of each; a zset per level keeps due_at an exact score instead of
  packing three keys into one double.
- ``P hosts:ready`` zset, score next_allowed_at: hosts with robots.txt ready and URLs
  queued. ``lease_due`` takes the range up to now, so it reads the hosts it leases
  from (plus hosts at full parallelism, bounded by the leases in flight), never all hosts.
- ``P hosts:robots`` zset, score next_allowed_at: hosts with robots.txt unknown and URLs
  queued, for ``claim_robots`` in the same way.
- ``P hosts:parked`` zset, score blocked_until: hosts of either index while blocked
  (Retry-After, robots.txt 5xx); they return when a selection's now passes the score,
  so thousands of blocked hosts are not walked on every call.
- ``P hosts`` zset, score -queued: every host, in the order ``hosts()`` lists them
  (queued desc, then host, as equal scores sort by member); its size is the host count.
- ``P hosts:blocked`` zset, score blocked_until: counts blocked hosts in O(log n).
- ``P hosts:robots_ttl`` zset, score robots_fetched_at: ``expire_robots`` takes a range.
- ``P hosts:robots_claims`` zset, score claim time: hosts whose robots.txt is being
  fetched, for ``expire_robots_claims`` as ``urls:leased`` is for ``expire_leases``.
- ``P urls:queued`` zset, score due_at: every queued URL, for ``counts().due`` and
  ``upcoming``.
- ``P urls:recrawl`` zset, score due_at: every done or failed URL, so
  ``sweep_recrawl`` takes the range up to now and ``upcoming`` merges it with the queue.
- ``P urls:leased`` zset, score leased_at: ``expire_leases`` takes a range.
- ``P urls:by_state`` and ``P hosts:by_robots_state`` hashes: counts kept in step with
  every transition, so ``counts()`` and the ``max_in_flight`` check are O(1).
- ``P counters`` hash: ``bump()`` names and ``fetched``.
- ``P hu:<host>`` set: every URL of the host admitted as queued (excluded ones never
  are), for the operator's recrawl and purge of one host, which must not scan every URL.
  ``P hu:complete`` says the sets hold every URL: set when the first host of a new
  frontier is ensured; a frontier written before the sets existed is scanned once.
- ``P fetched:minutes`` hash: pages fetched per minute (epoch seconds // 60), a day of
  them, for the console's chart.
- A paused host (``paused`` 1 in its hash) is in none of the host indexes above but
  ``hosts`` and ``hosts:blocked``, so no selection sees it until it is resumed.

Every URL is in its hash and in the one index of its state (a queued URL in two:
its host queue and ``urls:queued``); excluded URLs are in their hash only. Measured:
25 MB for 50,000 queued URLs, so about 5 GB for 10 million. Scripts build keys from
data, so this needs one Redis primary (standalone, Sentinel or managed), not Cluster.

Where SQL leaves an order open, this adapter picks its own: equal next_allowed_at or
equal (depth, due_at) are broken by name (SQLite: by insertion), and a limited
``sweep_recrawl`` takes the soonest due first.
"""

from __future__ import annotations

import dataclasses
import types
import typing
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

import redis

from services.common.adapters import frontier_redis_scripts as lua
from services.common.adapters.redis_connection import DEFAULT_PREFIX, connect, translate_errors
from services.common.frontier_types import FrontierCounts, HostInfo, HostUpdate, Lease, NewUrl, UrlInfo, UrlUpdate

# add_urls and drop_queued run in chunks: admitting a 50,000-URL sitemap in one script
# held Redis (and so every other scheduler) for 1.9 s here, a 250-URL chunk for about
# 15 ms. Each chunk is atomic and the calls are idempotent (a URL is admitted or
# dropped once), so retrying after a failure finishes the job.
_CHUNK = 250


def _arg(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same double
    return str(value)


def _changes(update: Any) -> list[str]:
    """Field, value pairs of an update whose fields left as None change nothing."""
    pairs: list[str] = []
    for f in dataclasses.fields(update):
        value = getattr(update, f.name)
        if value is not None:
            pairs += [f.name, _arg(value)]
    return pairs


def _parser(hint: Any) -> Any:
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if bool in args:
        return lambda value: value == "1"
    if float in args:
        return float
    if int in args:
        return int
    return str


def _reader(cls: type) -> Any:
    """Build ``cls`` from a hash, an absent field being None (SQL's NULL). The field
    types come from the dataclass, so a column added there needs no change here."""
    hints = typing.get_type_hints(cls)
    fields = [(f.name, _parser(hints[f.name]), f.default) for f in dataclasses.fields(cls)]

    def read(row: dict[str, str]) -> Any:
        # A field added to the dataclass with a default (``paused``) reads as that
        # default from a hash written before it existed.
        return cls(*(
            (None if default is dataclasses.MISSING else default) if row.get(name) is None else parse(row[name])
            for name, parse, default in fields
        ))

    return read


_host = _reader(HostInfo)
_url_info = _reader(UrlInfo)


class RedisFrontierState:
    """Any number of schedulers may share one Redis; each call is atomic on its own."""

    def __init__(self, client: redis.Redis, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis") -> None:
        self._r = client
        self._p = prefix
        self._where = where
        self._scripts = {
            name: client.register_script(getattr(lua, name))
            for name in (
                "ENSURE_HOST", "CLAIM_ROBOTS", "EXPIRE_ROBOTS", "EXPIRE_ROBOTS_CLAIMS", "UPDATE_HOST", "ADD_URLS", "REQUEUE", "LEASE_DUE",
                "FINISH", "UNLEASE", "EXPIRE_LEASES", "QUEUED_URLS", "DROP_QUEUED", "SWEEP_RECRAWL", "UPCOMING",
                "SET_PAUSED", "RECRAWL_URLS",
            )
        }  # fmt: skip

    @classmethod
    def from_url(cls, url: str) -> "RedisFrontierState":
        target = connect(url)
        return cls(target.client, target.prefix, target.where)

    def _run(self, script: str, *args: Any) -> Any:
        return self._scripts[script](args=[self._p, *map(_arg, args)])

    # --- hosts -------------------------------------------------------------------------

    @translate_errors
    def ensure_host(self, host: str, scheme: str, delay_s: float) -> None:
        self._run("ENSURE_HOST", host, scheme, float(delay_s))

    @translate_errors
    def get_host(self, host: str) -> HostInfo | None:
        row = self._r.hgetall(f"{self._p}h:{host}")
        return _host(row) if row else None

    @translate_errors
    def hosts(self, limit: int = 1000) -> list[HostInfo]:
        names = self._r.zrange(f"{self._p}hosts", 0, limit - 1 if limit >= 0 else -1) if limit else []
        pipe = self._r.pipeline(transaction=True)
        for name in names:
            pipe.hgetall(f"{self._p}h:{name}")
        return [_host(row) for row in pipe.execute() if row] if names else []

    @translate_errors
    def claim_robots(self, now: float, limit: int) -> list[HostInfo]:
        """Hosts whose robots.txt is unknown and that may be fetched now; each comes back
        as it was (robots unknown), and is left marked as fetching, with one fetch in
        flight and its politeness clock started."""
        rows = self._run("CLAIM_ROBOTS", float(now), int(limit))
        return [_host(dict(zip(r[::2], r[1::2]))) for r in rows]

    @translate_errors
    def expire_robots(self, now: float) -> list[str]:
        """Hosts whose cached robots.txt was fetched at or before ``now`` go back to unknown."""
        return list(self._run("EXPIRE_ROBOTS", float(now)))

    @translate_errors
    def expire_robots_claims(self, now: float, timeout_s: float) -> list[str]:
        """Hosts claimed for robots.txt at or before ``now - timeout_s`` whose outcome never
        came back go back to unknown, their slot freed: the claim is a lease too."""
        return list(self._run("EXPIRE_ROBOTS_CLAIMS", float(now - timeout_s), float(now)))

    @translate_errors
    def update_host(self, host: str, update: HostUpdate, now: float, release: bool) -> None:
        """Apply the scheduler's decision about a host; ``release`` ends one in-flight fetch
        and restarts the politeness clock from now."""
        self._run("UPDATE_HOST", host, float(now), release, *_changes(update))

    # --- urls --------------------------------------------------------------------------

    @translate_errors
    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]:
        """Insert URLs never seen before; returns the ones queued. A URL past its host's
        budget is recorded as excluded, so it is not offered again and again."""
        added: list[NewUrl] = []
        for start in range(0, len(urls), _CHUNK):
            chunk = urls[start : start + _CHUNK]
            args: list[Any] = [float(now), int(host_budget)]
            for u in chunk:
                args += [u.url, u.host, int(u.depth), u.kind, u.state, u.note]
            added += [chunk[i - 1] for i in self._run("ADD_URLS", *args)]
        return added

    @translate_errors
    def requeue_seed(self, url: str, now: float) -> bool:
        """A seed given again that failed earlier gets another chance."""
        return bool(self._run("REQUEUE", url, float(now), "failed", True))

    @translate_errors
    def lease_due(self, now: float, limit: int, parallelism: int, max_in_flight: int) -> list[Lease]:
        """Hand out due URLs, filling each host's free parallel slots (at most
        ``parallelism`` in flight per host); each lease starts its host's politeness clock."""
        rows = self._run("LEASE_DUE", float(now), int(limit), int(parallelism), int(max_in_flight), uuid.uuid4().hex)
        return [Lease(url, host, lease_id, int(depth), etag, lm, kind) for url, host, lease_id, depth, etag, lm, kind in rows]

    @translate_errors
    def finish(self, url: str, lease_id: str, update: UrlUpdate) -> bool:
        """Record a fetch outcome for a leased URL. Returns False for a stale or repeated
        outcome (the lease is gone), which the caller then ignores."""
        return bool(self._run("FINISH", url, lease_id, *_changes(update)))

    @translate_errors
    def unlease(self, url: str, now: float, state: str, note: str) -> None:
        """Take back a lease the scheduler decided not to send (e.g. robots changed)."""
        self._run("UNLEASE", url, float(now), state, note)

    @translate_errors
    def expire_leases(self, now: float, timeout_s: float) -> int:
        """Leases older than the timeout return to the queue (a worker died with them)."""
        return int(self._run("EXPIRE_LEASES", now - timeout_s, float(now)))

    @translate_errors
    def queued_urls(self, host: str) -> list[str]:
        return list(self._run("QUEUED_URLS", host))

    @translate_errors
    def drop_queued(self, urls: Sequence[str], state: str, note: str, due_at: float | None = None) -> int:
        """Move queued URLs to a final state (robots disallow, host given up); ``due_at``
        is when a failed URL may be tried again."""
        due = "" if due_at is None else float(due_at)
        return sum(
            int(self._run("DROP_QUEUED", state, note, due, *urls[start : start + _CHUNK]))
            for start in range(0, len(urls), _CHUNK)
        )

    @translate_errors
    def is_leased(self, url: str, lease_id: str) -> bool:
        state, current = self._r.hmget(f"{self._p}u:{url}", "state", "lease_id")
        return state == "leased" and current == lease_id

    @translate_errors
    def add_scope_domains(self, domains: Sequence[str]) -> None:
        """``P scope:domains`` set: domains submitted with seeds, kept across restarts."""
        if domains:
            self._r.sadd(f"{self._p}scope:domains", *domains)

    @translate_errors
    def scope_domains(self) -> list[str]:
        return sorted(self._r.smembers(f"{self._p}scope:domains"))

    @translate_errors
    def url_state(self, url: str) -> tuple[str, str, int] | None:
        """(state, note, consecutive failures) of a URL, or None if never seen."""
        state, note, fail_count = self._r.hmget(f"{self._p}u:{url}", "state", "note", "fail_count")
        return None if state is None else (state, note or "", int(fail_count or 0))

    @translate_errors
    def url_info(self, url: str) -> UrlInfo | None:
        row = self._r.hgetall(f"{self._p}u:{url}")
        return _url_info({**row, "url": url}) if row else None

    @translate_errors
    def sweep_recrawl(self, now: float, limit: int) -> int:
        """Fetched (and failed) URLs whose recrawl time has come go back to the queue,
        soonest due first."""
        return int(self._run("SWEEP_RECRAWL", float(now), int(limit)))

    @translate_errors
    def requeue(self, url: str, now: float) -> bool:
        """Fetch a finished URL again now (its sitemap says it changed)."""
        return bool(self._run("REQUEUE", url, float(now), "done failed", False))

    @translate_errors
    def upcoming(self, limit: int) -> list[tuple[str, str, float]]:
        """(url, state, due_at) of the next fetches and recrawls, soonest first."""
        if limit == 0:
            return []
        return [(url, state, float(due)) for url, state, due in self._run("UPCOMING", int(limit))]

    # --- operator actions ----------------------------------------------------------------

    @translate_errors
    def set_paused(self, host: str, paused: bool, now: float) -> bool:
        return bool(self._run("SET_PAUSED", host, paused, float(now)))

    @translate_errors
    def recrawl_host(self, host: str, now: float) -> int:
        """In chunks, as add_urls: each is atomic, and a retry finishes the job."""
        urls = self._host_url_set(host)
        return sum(
            int(self._run("RECRAWL_URLS", host, float(now), *urls[start : start + _CHUNK]))
            for start in range(0, len(urls), _CHUNK)
        )

    @translate_errors
    def host_urls(self, host: str) -> list[str]:
        urls = self._host_url_set(host)
        pipe = self._r.pipeline(transaction=False)
        for url in urls:
            pipe.hget(f"{self._p}u:{url}", "state")
        states = pipe.execute() if urls else []
        return [url for url, state in zip(urls, states) if state is not None and state != "excluded"]

    def _host_url_set(self, host: str) -> list[str]:
        if not self._r.exists(f"{self._p}hu:complete"):
            self._fill_host_url_sets()
        return sorted(self._r.smembers(f"{self._p}hu:{host}"))

    def _fill_host_url_sets(self) -> None:
        """Once, for a frontier written before the per-host URL sets: one scan of every
        URL. URLs admitted meanwhile are added by ADD_URLS itself, so none is missed."""
        keys: list[str] = []
        for key in self._r.scan_iter(match=f"{self._p}u:*", count=1000):
            keys.append(key)
            if len(keys) >= 1000:
                self._file_urls(keys)
                keys = []
        self._file_urls(keys)
        self._r.set(f"{self._p}hu:complete", 1)

    def _file_urls(self, keys: list[str]) -> None:
        if not keys:
            return
        pipe = self._r.pipeline(transaction=False)
        for key in keys:
            pipe.hmget(key, "host", "state")
        rows = pipe.execute()
        pipe = self._r.pipeline(transaction=False)
        for key, (host, state) in zip(keys, rows):
            if host is not None and state != "excluded":
                pipe.sadd(f"{self._p}hu:{host}", key.removeprefix(f"{self._p}u:"))
        pipe.execute()

    @translate_errors
    def fetch_history(self, since: float) -> list[tuple[float, int]]:
        first = int(since // 60)
        rows = self._r.hgetall(f"{self._p}fetched:minutes")
        return sorted((int(m) * 60.0, int(n)) for m, n in rows.items() if int(m) >= first)

    # --- counters ----------------------------------------------------------------------

    @translate_errors
    def bump(self, name: str, by: int = 1) -> None:
        self._r.hincrby(f"{self._p}counters", name, by)

    @translate_errors
    def url_breakdown(self) -> list[tuple[str, str, str, int | None, int]]:
        """A SCAN over every URL hash, in pipelined batches: O(URLs), for reports only."""
        counted: Counter[tuple[str, str, str, int | None]] = Counter()
        keys: list[str] = []
        for key in self._r.scan_iter(match=f"{self._p}u:*", count=1000):
            keys.append(key)
            if len(keys) >= 1000:
                self._count_urls(keys, counted)
                keys = []
        self._count_urls(keys, counted)
        return [(*group, n) for group, n in counted.items()]

    def _count_urls(self, keys: list[str], counted: Counter) -> None:
        pipe = self._r.pipeline(transaction=False)
        for key in keys:
            pipe.hmget(key, "host", "state", "note", "status")
        for host, state, note, status in pipe.execute() if keys else []:
            if host is not None:
                counted[(host, state or "", note or "", int(float(status)) if status else None)] += 1

    @translate_errors
    def counters(self) -> dict[str, int]:
        return {name: int(value) for name, value in self._r.hgetall(f"{self._p}counters").items()}

    @translate_errors
    def counts(self, now: float) -> FrontierCounts:
        p, now_s = self._p, _arg(float(now))
        pipe = self._r.pipeline(transaction=True)  # one consistent snapshot
        pipe.hgetall(f"{p}urls:by_state")
        pipe.zcount(f"{p}urls:queued", "-inf", now_s)
        pipe.hget(f"{p}hosts:by_robots_state", "fetching")
        pipe.zcard(f"{p}hosts")
        pipe.zcount(f"{p}hosts:blocked", f"({now_s}", "+inf")
        pipe.hget(f"{p}counters", "fetched")
        by_state, due, robots_inflight, hosts, blocked, fetched = pipe.execute()

        def n(state: str) -> int:
            return int(by_state.get(state, 0))

        return FrontierCounts(
            queued=n("queued"),
            due=due,
            leased=n("leased") + int(robots_inflight or 0),
            done=n("done"),
            failed=n("failed"),
            excluded=n("excluded"),
            hosts=hosts,
            blocked_hosts=blocked,
            fetched=int(fetched or 0),
        )

    @translate_errors
    def ping(self) -> None:
        self._r.ping()

    def close(self) -> None:
        self._r.close()
