"""Cluster frontier state: URLs and hosts in Redis or Redis Cluster, shared by every scheduler.

Method by method this keeps the semantics of frontier_sqlite.py. Every call that writes
is one Lua script (frontier_scripts.py, lua/) per shard it touches, which Redis runs
atomically, so racing schedulers never lease one URL twice, admit one URL twice or
start one host's clock twice.

**Shards, and why the hash tag is the shard, not the host.** The frontier is split in
``shards`` shards (``TANSUO_BUS_PARTITIONS`` when it is created, 12 by default, then
fixed: ``P{m}:layout``), and a host lives in shard ``host_partition(host, shards)``,
the partition Kafka gives the host's fetch jobs and page events. Every key of a shard,
the host keys and the cross-host indexes alike, carries the shard's hash tag
(``P{s7}:…``), so on Redis Cluster a shard is one slot. Tagging each host's keys with
the host itself (``{host}``) would put one host's URLs, robots.txt and clock in one
slot too, but the indexes that say which hosts are due, which leases expired and how
many URLs each state holds would then sit in other slots, and no script could change a
host and the indexes that list it together: a crash between the two would leave a
host leasable twice, or never. With the shard as tag, one script moves a URL from the
queue to the leases, starts its host's clock and counts it, atomically, on one node;
the cluster spreads the shards, not the hosts (``shard_tag`` spreads them evenly over
the primaries). A shard is also what a scheduler owns: the one whose consumer of
``pages.fetched`` is handed partition ``p`` dispatches from the shards of ``p``
(services/common/domain/host_partition.py), and reads over the whole frontier (counts, host
listings, the report and the console) gather every shard.

Key layout (``P`` is the prefix, ``tansuo:`` by default; ``S`` is ``P{<shard tag>}:``):

- ``S h:<host>`` hash: the host row (scheme, delay, robots state, clock, in flight,
  block, budget, queued, paused) and ``due``, its queue's earliest due_at. Short values
  only, so Redis keeps it as a compact listpack; the robots.txt text, which can be
  500 KB, is its own string ``S r:<host>``.
- ``S u:<host>`` hash, field: the URL without ``http://<host>`` (``+`` for https),
  value: the URL record packed in one string (state letter, depth, kind, due_at,
  failures, note, lease id, fetch results; frontier_redis_layout.py). A field per URL
  ever seen: its presence is the seen-set, and a host of up to 128 URLs with short
  records stays a listpack.
- ``S q:<host>`` zset: the host's queued URLs, all at score 0, each member its level,
  due_at and URL (frontier_scripts.py, lua/), so one key holds the whole queue in
  SQL's lease order. One URL string in the record hash and one in the queue is all a
  queued URL costs: there is no global zset of every queued URL (counts come from
  per-shard counters) and no per-host URL set (the record hash is it).
- ``S ready`` zset, score next_allowed_at: hosts with robots.txt ready and a URL due;
  ``S robots``: hosts whose robots.txt is needed, nothing in flight; ``S parked``, score
  blocked_until or the first due_at: hosts of either index that wait for that time, so
  thousands of blocked or backing-off hosts are not read on every call. A selection
  promotes the parked hosts whose time has come, reads its index up to now, reads those
  hosts' rows, picks exactly as the SQL query does (across shards: merged by
  next_allowed_at, then name), and then leases or claims through a script that checks
  each host again.
- ``S hosts`` zset, score -queued (hosts() order: queued desc, then name); ``S blocked``
  (score blocked_until), ``S rttl`` (robots_fetched_at), ``S claims`` (claim time),
  ``S leased`` (URL, leased_at), ``S recrawl`` (done or failed URL, due_at), ``S waiting``
  (queued URLs given a later due_at than when they were queued: retries): each the
  range a call takes.
- ``S n`` hash: URLs per state, hosts fetching robots.txt, pages fetched; ``S minutes``:
  pages fetched per minute for a day, for the console's chart.
- ``P{m}:layout`` (version, shards), ``P{m}:counters`` (``bump()``), ``P{m}:scope`` (domains
  submitted with seeds), ``P{m}:host_settings`` (operators' crawl settings per host): the
  few keys of no host.

A paused host (``paused`` 1) is in no index but ``hosts`` and ``blocked``, so no
selection sees it until it is resumed.

Memory: 83 bytes of Redis a queued URL with 100 URLs a host, 230 with 5,000 (a host
past 128 URLs leaves the listpack encodings), for 44-character URLs (docs/benchmarks.md,
'The Redis frontier against SQLite'). ``counts().due`` counts every queued URL but the
retries still waiting, so a scheduler whose clock runs behind the one that queued a
URL counts it due a little early.

Where SQL leaves an order open, this adapter picks its own: equal next_allowed_at or
equal (depth, due_at) are broken by name (SQLite: by insertion), and a limited
``sweep_recrawl`` takes the soonest due first. ``max_in_flight`` is checked against one
reading of the shards' counts, not inside the script that leases (no script sees every
shard): a scheduler given some of the shards keeps to their share of it, so schedulers
on disjoint shards stay within it together, but schedulers selecting from the same
shards at once each fill the room they saw, and can pass it by one dispatch each. A frontier written by an older
version (keys ``P hosts``, ``P u:<url>``) is refused with a message saying how to move on.
"""

from __future__ import annotations

import dataclasses
import types
import typing
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

from services.common.adapters.redis import frontier_scripts as lua
from services.common.adapters.redis.connection import (
    DEFAULT_PREFIX,
    connect,
    ping,
    translate_errors,
)
from services.common.adapters.redis.frontier_layout import (
    LAYOUT_VERSION,
    Layout,
    Shard,
    full_url,
    info_of_fields,
    record_fields,
    split_url,
    state_of,
    update_pairs,
    url_info,
    url_rest,
)
from services.common.adapters.redis.slots import (
    Call,
    load_scripts,
    run_calls,
    script_call,
)
from services.common.domain.frontier_types import (
    FrontierCounts,
    HostInfo,
    HostUpdate,
    Lease,
    NewUrl,
    UrlInfo,
    UrlUpdate,
    needs_attention,
)
from services.common.domain.host_settings import HostSettings
from services.common.domain.url_canonical import host_of
from services.common.errors import ConfigError

# add_urls and drop_queued run in chunks, so that no script holds Redis (and so every
# other scheduler) for longer than a chunk of URLs takes, whatever the sitemap. Each
# chunk is atomic and the calls are idempotent (a URL is admitted or dropped once), so
# retrying after a failure finishes the job.
_CHUNK = 250
DEFAULT_SHARDS = 12
_SCRIPTS = (
    "ENSURE_HOST", "GET_HOSTS", "PROMOTE", "CLAIM_ROBOTS", "EXPIRE_ROBOTS_CLAIMS", "EXPIRE_ROBOTS", "UPDATE_HOST",
    "ADD_URLS", "REQUEUE", "LEASE", "FINISH", "UNLEASE", "EXPIRE_LEASES", "DROP_QUEUED", "SWEEP_RECRAWL",
    "UPCOMING", "SET_PAUSED", "RECRAWL_URLS", "PICK_INFO", "READMIT", "NOTE_FETCHED",
)  # fmt: skip


class FrontierLayoutError(ConfigError):
    """The Redis holds a frontier this version cannot use as it is."""


def _arg(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parser(hint: Any) -> Any:
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if bool in args:
        return lambda value: value == "1"
    if float in args:
        return float
    if int in args:
        return lambda value: int(float(value))
    return str


def _reader(cls: type) -> Any:
    """Build ``cls`` from a hash, an absent field being None (SQL's NULL). The field
    types come from the dataclass, so a column added there needs no change here."""
    hints = typing.get_type_hints(cls)
    fields = [(f.name, _parser(hints[f.name]), f.default) for f in dataclasses.fields(cls)]

    def read(row: dict[str, str]) -> Any:
        return cls(*(
            (None if default is dataclasses.MISSING else default) if row.get(name) is None else parse(row[name])
            for name, parse, default in fields
        ))

    return read


_host = _reader(HostInfo)


def _host_info(pairs: list[str], robots_txt: str | None) -> HostInfo | None:
    row = dict(zip(pairs[::2], pairs[1::2], strict=True))
    if not row:
        return None
    if robots_txt is not None:
        row["robots_txt"] = robots_txt
    return _host(row)


def _host_pairs(update: HostUpdate) -> list[Any]:
    pairs: list[Any] = []
    for f in dataclasses.fields(update):
        value = getattr(update, f.name)
        if value is not None:
            pairs += [f.name, value]
    return pairs


def _number(value: str | None) -> float:
    return float(value) if value else 0.0


class RedisFrontierState:
    """Any number of schedulers may share one Redis or Redis Cluster; each call is atomic
    on each shard it touches."""

    def __init__(self, client: redis.Redis | RedisCluster, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis",
                 shards: int = DEFAULT_SHARDS) -> None:  # fmt: skip
        # redis-py types every reply as a union over its sync/async and bytes/str modes;
        # this client decodes replies to str (connection.connect), which Any lets stand.
        self._r: Any = client
        self._p = prefix
        self._where = where
        self._scripts = {name: client.register_script(getattr(lua, name)) for name in _SCRIPTS}
        self._layout = self._open_layout(shards)
        self._load_scripts()

    @classmethod
    def from_url(cls, url: str, shards: int = DEFAULT_SHARDS) -> RedisFrontierState:
        """``shards``: how many a new frontier gets (TANSUO_BUS_PARTITIONS); an existing
        one keeps its own."""
        target = connect(url)
        return cls(target.client, target.prefix, target.where, shards)

    @translate_errors
    def _load_scripts(self) -> None:
        load_scripts(self._r, self._scripts.values())

    @translate_errors
    def _open_layout(self, shards: int) -> Layout:
        meta = f"{self._p}{{m}}:layout"
        stored = self._r.hgetall(meta)
        if not stored:
            old = [k for k in (f"{self._p}hosts", f"{self._p}urls:by_state", f"{self._p}counters") if self._r.exists(k)]
            if old:
                raise FrontierLayoutError(
                    f"Redis at {self._where} holds a frontier written by an older Tansuo (key {old[0]}), whose "
                    "layout cannot be read by this one nor run on Redis Cluster. Finish that crawl with the older "
                    "version, or start this one on a new key prefix (TANSUO_STATE=…?prefix=tansuo2) and seed it "
                    "again: the index and its documents stay as they are, and pages are fetched once more."
                )
            self._r.hsetnx(meta, "version", LAYOUT_VERSION)
            self._r.hsetnx(meta, "shards", shards)  # the first scheduler to start decides
            stored = self._r.hgetall(meta)
        if stored.get("version") != LAYOUT_VERSION:
            raise FrontierLayoutError(f"Redis at {self._where}: frontier layout {stored.get('version')!r} is unknown")
        return Layout(self._p, int(stored["shards"]))

    def shards(self) -> int:
        return self._layout.count

    # --- calling scripts ---------------------------------------------------------------

    def _call(self, script: str, shard: Shard, hosts: Sequence[str], *args: Any) -> Call:
        keys = shard.keys + [key for h in hosts for key in shard.host_keys(h)]
        argv = [len(hosts), *hosts, *map(_arg, args)]
        return keys[0], script_call(self._scripts[script], keys, argv)

    def _run(self, script: str, host: str, *args: Any) -> Any:
        """A script about one host, on its shard."""
        _, call = self._call(script, self._layout.of(host), [host], *args)
        return call(self._r)

    def _many(self, calls: Sequence[Call]) -> list[Any]:
        return run_calls(self._r, calls)

    def _read(self, shards: Sequence[Shard], command: Callable[[Any, Shard], object]) -> list[Any]:
        """One command on each shard, in as few round trips as the deployment allows."""
        return self._many([(s.base, lambda c, s=s: command(c, s)) for s in shards])  # type: ignore[misc]  # mypy cannot infer a lambda that binds its loop variable by default

    def _owned(self, shards: Collection[int] | None) -> list[Shard]:
        if shards is None:
            return self._layout.shards
        return [s for s in self._layout.shards if s.number in shards]

    def _by_shard(self, hosts: Sequence[str]) -> dict[int, list[str]]:
        grouped: dict[int, list[str]] = defaultdict(list)
        for h in dict.fromkeys(hosts):
            grouped[self._layout.of(h).number].append(h)
        return grouped

    # --- hosts -------------------------------------------------------------------------

    @translate_errors
    def ensure_host(self, host: str, scheme: str, delay_s: float) -> None:
        self._run("ENSURE_HOST", host, scheme, float(delay_s))

    @translate_errors
    def get_host(self, host: str) -> HostInfo | None:
        pairs, robots = self._run("GET_HOSTS", host)
        return _host_info(pairs, robots)

    def _get_hosts(self, hosts: Sequence[str]) -> dict[str, HostInfo]:
        found: dict[str, HostInfo] = {}
        groups = list(self._by_shard(hosts).items())
        replies = self._many([self._call("GET_HOSTS", self._layout.shards[s], names) for s, names in groups])
        for (_, names), reply in zip(groups, replies, strict=True):
            for name, pairs, robots in zip(names, reply[::2], reply[1::2], strict=True):
                info = _host_info(pairs, robots)
                if info is not None:
                    found[name] = info
        return found

    @translate_errors
    def hosts(self, limit: int = 1000) -> list[HostInfo]:
        if limit == 0:
            return []
        stop = limit - 1 if limit > 0 else -1
        ranked = sorted(
            (score, name)
            for rows in self._read(self._layout.shards, lambda c, s: c.zrange(s.key("hosts"), 0, stop, withscores=True))
            for name, score in rows
        )
        names = [name for _, name in (ranked[:limit] if limit > 0 else ranked)]
        infos = self._get_hosts(names)
        return [infos[n] for n in names if n in infos]

    def _promote(self, now: float, shards: Sequence[Shard]) -> None:
        """Parked hosts whose time has come go back to their index, before a selection."""
        while True:
            parked = self._read(shards, lambda c, s: c.zrangebyscore(s.key("parked"), "-inf", _arg(now), start=0, num=500))
            calls = [self._call("PROMOTE", s, names, float(now)) for s, names in zip(shards, parked, strict=True) if names]
            self._many(calls)
            if all(len(names) < 500 for names in parked):
                return

    def _candidates(self, index: str, now: float, shards: Sequence[Shard], want: int, cap: int,
                    eligible: Callable[[dict[str, Any]], bool]) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
        """The first ``want`` hosts (all, if negative) of an index up to ``now`` that
        ``eligible`` accepts, merged over the shards by (score, name), with their
        fields and their URLs due (counted up to ``cap``). The index holds hosts at
        full parallelism too (that depends on the call), which are few (at most the
        leases in flight), so a page a bit larger than ``want`` nearly always
        suffices; else the next page is read."""
        page = want + 64 if want >= 0 else -1
        offset = 0
        chosen: list[tuple[str, dict[str, Any]]] = []
        while True:
            # _read runs the lambda before the loop moves on, so binding offset late is right.
            rows = self._read(shards, lambda c, s: c.zrangebyscore(
                s.key(index), "-inf", _arg(now), start=offset, num=page, withscores=True) if page >= 0  # noqa: B023
                else c.zrangebyscore(s.key(index), "-inf", _arg(now), withscores=True))  # fmt: skip
            groups = [(s, [name for name, _ in found]) for s, found in zip(shards, rows, strict=True) if found]
            replies = self._many([self._call("PICK_INFO", s, names, float(now), cap) for s, names in groups])
            # A Lua reply stops at its first nil, so a row may be shorter than its fields.
            info = {name: dict(zip(lua.PICK_FIELDS, values, strict=False))
                    for (_, names), reply in zip(groups, replies, strict=True) for name, values in zip(names, reply, strict=False)}  # fmt: skip
            for _, name in sorted((score, name) for found in rows for name, score in found):
                row = info[name]
                if row["robots_state"] is not None and eligible(row):
                    chosen.append((name, row))
                    if 0 <= want == len(chosen):
                        return chosen
            if page < 0 or all(len(found) < page for found in rows):
                return chosen
            offset += page

    @translate_errors
    def claim_robots(self, now: float, limit: int, shards: Collection[int] | None = None) -> list[HostInfo]:
        """Hosts whose robots.txt is unknown and that may be fetched now; each comes back
        as it was (robots unknown), and is left marked as fetching, with one fetch in
        flight and its politeness clock started."""
        if limit == 0:
            return []
        owned = self._owned(shards)
        self._promote(now, owned)

        def eligible(row: dict[str, Any]) -> bool:  # "due" is a count, the rest strings
            wanted = row["robots_state"] == "unknown" or (
                row["robots_state"] == "failed" and _number(row["robots_retry_at"]) <= now)
            return (wanted and int(row["inflight"]) == 0 and row["paused"] != "1"
                    and _number(row["blocked_until"]) <= now and int(row["queued"]) > 0
                    and _number(row["next_allowed_at"]) <= now)  # fmt: skip

        chosen = [name for name, _ in self._candidates("robots", now, owned, limit, 0, eligible)]
        groups = list(self._by_shard(chosen).items())
        replies = self._many([self._call("CLAIM_ROBOTS", self._layout.shards[s], names, float(now)) for s, names in groups])
        claimed: dict[str, HostInfo] = {}
        for (_, names), reply in zip(groups, replies, strict=True):
            for i, pairs, robots in reply:
                info = _host_info(pairs, robots)
                if info is not None:
                    claimed[names[int(i) - 1]] = info
        return [claimed[n] for n in chosen if n in claimed]

    def _expire(self, script: str, index: str, cutoff: float, shards: Sequence[Shard], *args: Any) -> list[Any]:
        """Hosts of ``index`` up to ``cutoff``, handed shard by shard to ``script``."""
        found = self._read(shards, lambda c, s: c.zrangebyscore(s.key(index), "-inf", _arg(cutoff)))
        return self._many([self._call(script, s, names, *args) for s, names in zip(shards, found, strict=True) if names])

    @translate_errors
    def expire_robots(self, now: float, shards: Collection[int] | None = None) -> list[str]:
        """Hosts whose cached robots.txt was fetched at or before ``now`` go back to unknown."""
        replies = self._expire("EXPIRE_ROBOTS", "rttl", now, self._owned(shards), float(now))
        return [h for reply in replies for h in reply]

    @translate_errors
    def expire_robots_claims(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> list[str]:
        """Hosts claimed for robots.txt at or before ``now - timeout_s`` whose outcome never
        came back go back to unknown, their slot freed: the claim is a lease too."""
        cutoff = float(now - timeout_s)
        replies = self._expire("EXPIRE_ROBOTS_CLAIMS", "claims", cutoff, self._owned(shards), cutoff, float(now))
        return [h for reply in replies for h in reply]

    @translate_errors
    def update_host(self, host: str, update: HostUpdate, now: float, release: bool) -> None:
        """Apply the scheduler's decision about a host; ``release`` ends one in-flight fetch
        and restarts the politeness clock from now."""
        self._run("UPDATE_HOST", host, float(now), release, *_host_pairs(update))

    @translate_errors
    def get_hosts(self, hosts: Sequence[str]) -> dict[str, HostInfo]:
        return self._get_hosts(hosts)

    # --- urls --------------------------------------------------------------------------

    @translate_errors
    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]:
        """Insert URLs never seen before; returns the ones queued, in the order given. A
        URL past its host's budget is recorded as excluded, so it is not offered again."""
        by_shard: dict[int, list[int]] = defaultdict(list)
        for n, u in enumerate(urls):
            if host_of(u.url) != u.host:
                raise ValueError(f"{u.url} is not of host {u.host!r}: the frontier keys a URL by host_of(url)")
            by_shard[self._layout.of(u.host).number].append(n)
        calls, chunks = [], []
        for s, members in by_shard.items():
            for start in range(0, len(members), _CHUNK):
                chunk = members[start : start + _CHUNK]
                hosts = list(dict.fromkeys(urls[n].host for n in chunk))
                at = {h: i for i, h in enumerate(hosts, start=1)}
                args: list[Any] = [float(now), int(host_budget)]
                for n in chunk:
                    u = urls[n]
                    args += [at[u.host], url_rest(u.url, u.host), int(u.depth), u.kind, lua.STATE_LETTERS[u.state], u.note]
                calls.append(self._call("ADD_URLS", self._layout.shards[s], hosts, *args))
                chunks.append(chunk)
        added = sorted(chunk[int(p) - 1] for chunk, positions in zip(chunks, self._many(calls), strict=True) for p in positions)
        return [urls[n] for n in added]

    @translate_errors
    def requeue_seed(self, url: str, now: float) -> bool:
        """A seed given again that failed earlier gets another chance."""
        host, rest = split_url(url)
        return bool(self._run("REQUEUE", host, rest, float(now), "f", True))

    @translate_errors
    def lease_due(self, now: float, limit: int, parallelism: int, max_in_flight: int,
                  shards: Collection[int] | None = None) -> list[Lease]:  # fmt: skip
        """Hand out due URLs, filling each host's free parallel slots (at most
        ``parallelism`` in flight per host, one for a host with a delay); each lease
        starts its host's politeness clock."""
        owned = self._owned(shards)
        if limit <= 0 or not owned:
            return []
        # Schedulers that own some of the shards keep to their share of max_in_flight,
        # counted over those shards, so that their leases together stay within it.
        if len(owned) < self._layout.count:
            max_in_flight = max(1, max_in_flight * len(owned) // self._layout.count)
        counts = self._read(owned, lambda c, s: c.hget(s.key("n"), "l"))
        room = min(limit, max_in_flight - sum(int(n or 0) for n in counts))
        if room <= 0:
            return []
        self._promote(now, owned)

        def host_par(row: dict[str, Any]) -> int:
            return 1 if _number(row["delay_s"]) > 0 else parallelism

        def eligible(row: dict[str, Any]) -> bool:  # "due" is a count, the rest strings
            return (row["robots_state"] == "ready" and row["paused"] != "1" and _number(row["next_allowed_at"]) <= now
                    and _number(row["blocked_until"]) <= now and int(row["inflight"]) < host_par(row)
                    and int(row["queued"]) > 0 and row["due"] > 0)  # fmt: skip

        slots: dict[str, int] = {}
        total = 0
        for name, row in self._candidates("ready", now, owned, room, parallelism, eligible):
            take = min(host_par(row) - int(row["inflight"]), room - total, row["due"])
            if take <= 0:
                break
            slots[name] = take
            total += take
        groups = list(self._by_shard(list(slots)).items())
        calls = [
            self._call("LEASE", self._layout.shards[s], names, float(now), int(parallelism), uuid.uuid4().hex[:12],
                       *(slots[n] for n in names))  # fmt: skip
            for s, names in groups
        ]
        by_host: dict[str, list[Lease]] = defaultdict(list)
        for reply in self._many(calls):
            for url, host, lease_id, depth, etag, lm, kind in reply:
                by_host[host].append(Lease(url, host, lease_id, int(depth), etag, lm, kind))
        return [lease for name in slots for lease in by_host[name]]

    @translate_errors
    def finish(
        self, url: str, lease_id: str, update: UrlUpdate, host_update: HostUpdate | None = None, now: float = 0.0
    ) -> bool:
        """Record a fetch outcome for a leased URL. Returns False for a stale or repeated
        outcome (the lease is gone), which the caller then ignores. ``host_update`` goes
        to the URL's host, releasing the fetch, in the same script."""
        host, rest = split_url(url)
        pairs = update_pairs(update)
        host_pairs = [] if host_update is None else _host_pairs(host_update)
        when = "" if host_update is None else float(now)
        return bool(self._run("FINISH", host, rest, lease_id, when, len(pairs) // 2, *pairs, *host_pairs))

    @translate_errors
    def unlease(self, url: str, now: float, state: str, note: str) -> None:
        """Take back a lease the scheduler decided not to send (e.g. robots changed)."""
        host, rest = split_url(url)
        self._run("UNLEASE", host, rest, float(now), lua.STATE_LETTERS[state], note)

    def _by_url(self, urls: Sequence[str]) -> dict[int, tuple[list[str], list[Any]]]:
        """Per shard: its hosts, and (host index, rest) pairs of its URLs."""
        grouped: dict[int, tuple[list[str], list[Any]]] = {}
        for url in urls:
            host, rest = split_url(url)
            hosts, pairs = grouped.setdefault(self._layout.of(host).number, ([], []))
            if host not in hosts:
                hosts.append(host)
            pairs += [hosts.index(host) + 1, rest]
        return grouped

    @translate_errors
    def expire_leases(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> int:
        """Leases older than the timeout return to the queue (a worker died with them)."""
        cutoff = float(now - timeout_s)
        owned = self._owned(shards)
        found = self._read(owned, lambda c, s: c.zrangebyscore(s.key("leased"), "-inf", _arg(cutoff)))
        calls = []
        for shard, urls in zip(owned, found, strict=True):
            for hosts, pairs in self._by_url(urls).values():
                calls.append(self._call("EXPIRE_LEASES", shard, hosts, cutoff, float(now), *pairs))
        return sum(int(n) for n in self._many(calls))

    def _records(self, host: str) -> dict[str, str]:
        return self._r.hgetall(self._layout.of(host).key(f"u:{host}"))

    @translate_errors
    def queued_urls(self, host: str) -> list[str]:
        return [full_url(host, rest) for rest, record in self._records(host).items() if record[0] == "q"]

    @translate_errors
    def drop_queued(self, urls: Sequence[str], state: str, note: str, due_at: float | None = None) -> int:
        """Move queued URLs to a final state (robots disallow, host given up); ``due_at``
        is when a failed URL may be tried again."""
        due = "" if due_at is None else float(due_at)
        calls = []
        for start in range(0, len(urls), _CHUNK):
            for s, (hosts, pairs) in self._by_url(urls[start : start + _CHUNK]).items():
                calls.append(self._call("DROP_QUEUED", self._layout.shards[s], hosts, lua.STATE_LETTERS[state], note, due,
                                        *pairs))  # fmt: skip
        return sum(int(n) for n in self._many(calls))

    def _record(self, url: str) -> tuple[str, str | None]:
        key, rest = self._record_key(url)
        return host_of(url), self._r.hget(key, rest)

    @translate_errors
    def is_leased(self, url: str, lease_id: str) -> bool:
        _, record = self._record(url)
        if record is None:
            return False
        fields = record_fields(record)
        return fields[0] == "l" and fields[6] == lease_id

    @translate_errors
    def add_scope_domains(self, domains: Sequence[str]) -> None:
        """``P{m}:scope`` set: domains submitted with seeds, kept across restarts."""
        if domains:
            self._r.sadd(f"{self._layout.meta}scope", *domains)

    @translate_errors
    def scope_domains(self) -> list[str]:
        return sorted(self._r.smembers(f"{self._layout.meta}scope"))

    @translate_errors
    def url_state(self, url: str) -> tuple[str, str, int] | None:
        """(state, note, consecutive failures) of a URL, or None if never seen."""
        _, record = self._record(url)
        if record is None:
            return None
        fields = record_fields(record)
        return state_of(fields), fields[5], int(fields[4] or 0)

    @translate_errors
    def url_info(self, url: str) -> UrlInfo | None:
        host, record = self._record(url)
        return None if record is None else url_info(url, host, record)

    @translate_errors
    def sweep_recrawl(self, now: float, limit: int, shards: Collection[int] | None = None) -> int:
        """Fetched (and failed) URLs whose recrawl time has come go back to the queue,
        soonest due first."""
        if limit == 0:
            return 0
        owned = self._owned(shards)
        found = self._read(owned, lambda c, s: c.zrangebyscore(
            s.key("recrawl"), "-inf", _arg(now), start=0, num=limit, withscores=True) if limit > 0
            else c.zrangebyscore(s.key("recrawl"), "-inf", _arg(now), withscores=True))  # fmt: skip
        ranked = sorted((score, url) for rows in found for url, score in rows)
        urls = [url for _, url in (ranked[:limit] if limit > 0 else ranked)]
        calls = []
        for start in range(0, len(urls), _CHUNK):
            for s, (hosts, pairs) in self._by_url(urls[start : start + _CHUNK]).items():
                calls.append(self._call("SWEEP_RECRAWL", self._layout.shards[s], hosts, float(now), *pairs))
        return sum(int(n) for n in self._many(calls))

    @translate_errors
    def requeue(self, url: str, now: float) -> bool:
        """Fetch a finished URL again now (its sitemap says it changed)."""
        host, rest = split_url(url)
        return bool(self._run("REQUEUE", host, rest, float(now), "df", False))

    @translate_errors
    def upcoming(self, limit: int) -> list[tuple[str, str, float]]:
        """(url, state, due_at) of the next fetches and recrawls, soonest first.

        Finished URLs come from each shard's recrawl index; queued ones from the queues
        of the hosts whose earliest due_at (their ``due``) comes soonest, read a few
        dozen hosts at a time until no further host can be among the first ``limit``."""
        if limit == 0:
            return []
        shards = self._layout.shards
        rows: list[tuple[float, str, str]] = []
        stop = limit - 1 if limit > 0 else -1
        finished = self._read(shards, lambda c, s: c.zrange(s.key("recrawl"), 0, stop, withscores=True))
        flat = [(url, due) for found in finished for url, due in found]
        states = self._many([(key, lambda c, key=key, rest=rest: c.hget(key, rest))  # type: ignore[misc]  # mypy cannot infer a lambda that binds its loop variable by default
                             for key, rest in (self._record_key(url) for url, _ in flat)])  # fmt: skip
        rows += [(due, url, state_of(record_fields(rec))) for (url, due), rec in zip(flat, states, strict=True) if rec]
        hosts = self._read(shards, lambda c, s: c.zrangebyscore(s.key("hosts"), "-inf", "(0"))
        names = [name for found in hosts for name in found]
        dues = self._many([(self._layout.of(n).key(f"h:{n}"), lambda c, n=n: c.hget(self._layout.of(n).key(f"h:{n}"), "due"))  # type: ignore[misc]  # mypy cannot infer a lambda that binds its loop variable by default
                           for n in names])  # fmt: skip
        order = sorted((float(d), n) for n, d in zip(names, dues, strict=True) if d is not None)
        queued: list[tuple[float, str, str]] = []
        for start in range(0, len(order), 50):
            batch = order[start : start + 50]
            if 0 < limit <= len(queued) and sorted(queued)[limit - 1][0] < batch[0][0]:
                break
            groups = list(self._by_shard([n for _, n in batch]).items())
            replies = self._many([self._call("UPCOMING", shards[s], group, limit) for s, group in groups])
            queued += [(float(due), url, "queued") for reply in replies for url, due in zip(reply[::2], reply[1::2], strict=True)]
        rows += queued
        rows.sort(key=lambda r: (r[0], r[1]))
        return [(url, state, due) for due, url, state in (rows[:limit] if limit > 0 else rows)]

    def _record_key(self, url: str) -> tuple[str, str]:
        """The key of a URL's record hash, and its field there."""
        host, rest = split_url(url)
        return self._layout.of(host).key(f"u:{host}"), rest

    @translate_errors
    def set_host_settings(self, host: str, settings: HostSettings | None) -> None:
        """``P{m}:host_settings`` hash: host -> its settings as JSON."""
        key = f"{self._layout.meta}host_settings"
        if settings is None:
            self._r.hdel(key, host)
        else:
            self._r.hset(key, host, settings.to_json())

    @translate_errors
    def host_settings(self) -> dict[str, HostSettings]:
        rows = self._r.hgetall(f"{self._layout.meta}host_settings")
        return {host: HostSettings.from_json(text) for host, text in rows.items()}

    @translate_errors
    def excluded_urls(self, host: str, note: str) -> list[str]:
        return sorted(
            full_url(host, rest)
            for rest, record in self._records(host).items()
            if record[0] == "x" and record_fields(record)[5] == note
        )

    @translate_errors
    def readmit(self, urls: Sequence[str], note: str, now: float) -> int:
        calls = []
        for start in range(0, len(urls), _CHUNK):
            for s, (hosts, pairs) in self._by_url(urls[start : start + _CHUNK]).items():
                calls.append(self._call("READMIT", self._layout.shards[s], hosts, note, float(now), *pairs))
        return sum(int(n) for n in self._many(calls))

    # --- operator actions ----------------------------------------------------------------

    @translate_errors
    def set_paused(self, host: str, paused: bool, now: float) -> bool:
        return bool(self._run("SET_PAUSED", host, paused, float(now)))

    @translate_errors
    def recrawl_host(self, host: str, now: float) -> int:
        """In chunks, as add_urls: each is atomic, and a retry finishes the job."""
        rests = sorted(self._records(host))
        return sum(
            int(self._run("RECRAWL_URLS", host, float(now), *rests[start : start + _CHUNK]))
            for start in range(0, len(rests), _CHUNK)
        )

    @translate_errors
    def host_urls(self, host: str) -> list[str]:
        return sorted(full_url(host, rest) for rest, record in self._records(host).items() if record[0] != "x")

    @translate_errors
    def fetch_history(self, since: float) -> list[tuple[float, int]]:
        first = int(since // 60)
        minutes: Counter[int] = Counter()
        for rows in self._read(self._layout.shards, lambda c, s: c.hgetall(s.key("minutes"))):
            for m, n in rows.items():
                if int(m) >= first:
                    minutes[int(m)] += int(n)
        return sorted((m * 60.0, n) for m, n in minutes.items())

    # --- counters ----------------------------------------------------------------------

    @translate_errors
    def bump(self, name: str, by: int = 1) -> None:
        self._r.hincrby(f"{self._layout.meta}counters", name, by)

    def _every_record(self) -> Iterator[tuple[str, str, list[str]]]:
        """(host, rest, record fields) of every URL, record hashes found by SCAN and read
        in pipelined batches: O(URLs), for reports only."""
        keys = list(self._r.scan_iter(match=f"{self._p}{{*}}:u:*", count=1000))
        for start in range(0, len(keys), 200):
            batch = keys[start : start + 200]
            for key, records in zip(batch, self._many([(k, lambda c, k=k: c.hgetall(k)) for k in batch]), strict=True):  # type: ignore[misc]  # mypy cannot infer a lambda that binds its loop variable by default
                host = key.split("}:u:", 1)[1]
                for rest, record in records.items():
                    yield host, rest, record_fields(record)

    @translate_errors
    def url_breakdown(self) -> list[tuple[str, str, str, str, int | None, int]]:
        counted: Counter[tuple[str, str, str, str, int | None]] = Counter()
        for host, _, f in self._every_record():
            counted[(host, f[2] or "page", state_of(f), f[5], int(float(f[8])) if f[8] else None)] += 1
        return [(*group, n) for group, n in counted.items()]

    @translate_errors
    def attention_urls(self, limit: int) -> list[UrlInfo]:
        found = []
        for host, rest, f in self._every_record():
            if needs_attention(state_of(f), int(float(f[8])) if f[8] else None, f[5]):
                url = full_url(host, rest)
                found.append(info_of_fields(url, host, f))
        found.sort(key=lambda u: (u.host, u.url))
        return found[:limit] if limit >= 0 else found

    @translate_errors
    def note_fetched(self, url: str, note: str) -> bool:
        host, rest = split_url(url)
        return bool(self._run("NOTE_FETCHED", host, rest, note))

    @translate_errors
    def counters(self) -> dict[str, int]:
        found = {name: int(value) for name, value in self._r.hgetall(f"{self._layout.meta}counters").items()}
        fetched = sum(int(n or 0) for n in self._read(self._layout.shards, lambda c, s: c.hget(s.key("n"), "fetched")))
        if fetched:
            found["fetched"] = found.get("fetched", 0) + fetched
        return found

    @translate_errors
    def counts(self, now: float) -> FrontierCounts:
        now_s = f"({_arg(float(now))}"
        shards = self._layout.shards
        per_shard = self._many([
            call for s in shards for call in (
                (s.base, lambda c, s=s: c.hgetall(s.key("n"))),
                (s.base, lambda c, s=s: c.zcard(s.key("hosts"))),
                (s.base, lambda c, s=s: c.zcount(s.key("blocked"), now_s, "+inf")),
                (s.base, lambda c, s=s: c.zrangebyscore(s.key("dues"), now_s, "+inf")),
            )
        ])  # fmt: skip
        total: Counter[str] = Counter()
        hosts = blocked = 0
        later: list[Call] = []
        for s, start in zip(shards, range(0, len(per_shard), 4), strict=True):
            n, h, b, dues = per_shard[start : start + 4]
            total.update({k: int(v) for k, v in n.items()})
            hosts, blocked = hosts + h, blocked + b
            if dues:  # due_at values still to come: how many queued URLs each holds
                later.append((s.base, lambda c, s=s, dues=dues: c.hmget(s.key("duecount"), dues)))  # type: ignore[misc]  # mypy cannot infer a lambda that binds its loop variable by default
        waiting = sum(int(n or 0) for found in self._many(later) for n in found)
        extra, errors = (int(n or 0) for n in self._r.hmget(f"{self._layout.meta}counters", "fetched", "errors"))
        return FrontierCounts(
            queued=total["q"],
            due=total["q"] - waiting,
            leased=total["l"] + total["rf"],
            done=total["d"],
            failed=total["f"],
            excluded=total["x"],
            hosts=hosts,
            blocked_hosts=blocked,
            fetched=total["fetched"] + extra,
            errors=errors,
        )

    @translate_errors
    def ping(self) -> None:
        ping(self._r)

    def close(self) -> None:
        self._r.close()
