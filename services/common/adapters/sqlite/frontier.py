"""Embedded frontier state: URLs and hosts in one SQLite file (WAL).

Every method is one transaction, so a crash (even ``kill -9``) leaves the frontier as it
was after the last finished call; a restarted crawl resumes from there.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    depth INTEGER NOT NULL,
    kind TEXT NOT NULL DEFAULT 'page',  -- page | sitemap
    state TEXT NOT NULL,            -- queued | leased | done | failed | excluded
    due_at REAL NOT NULL,           -- earliest fetch (queued) or next recrawl (done)
    discovered_at REAL NOT NULL,
    lease_id TEXT,
    leased_at REAL,
    fetched_at REAL,
    status INTEGER,
    content_hash TEXT,
    etag TEXT,
    last_modified TEXT,
    interval_s REAL,
    fail_count INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS urls_pick ON urls(host, state, depth, due_at);
CREATE INDEX IF NOT EXISTS urls_state ON urls(state);
CREATE INDEX IF NOT EXISTS urls_recrawl ON urls(state, due_at);
-- "does this host have a URL due?" in one probe, not a scan of every due URL
CREATE INDEX IF NOT EXISTS urls_host_due ON urls(host, state, due_at);
CREATE TABLE IF NOT EXISTS hosts (
    host TEXT PRIMARY KEY,
    scheme TEXT NOT NULL,
    delay_s REAL NOT NULL,
    robots_state TEXT NOT NULL DEFAULT 'unknown',   -- unknown | fetching | ready
    robots_txt TEXT,
    robots_fetched_at REAL,
    robots_failures INTEGER NOT NULL DEFAULT 0,
    next_allowed_at REAL NOT NULL DEFAULT 0,
    inflight INTEGER NOT NULL DEFAULT 0,
    blocked_until REAL NOT NULL DEFAULT 0,
    block_reason TEXT NOT NULL DEFAULT '',
    fail_streak INTEGER NOT NULL DEFAULT 0,
    admitted INTEGER NOT NULL DEFAULT 0,            -- URLs ever queued (the per-host budget)
    queued INTEGER NOT NULL DEFAULT 0,              -- URLs in state queued, kept in step
    robots_claimed_at REAL,                         -- when robots.txt was claimed (fetching)
    paused INTEGER NOT NULL DEFAULT 0,              -- 1: an operator paused it, no fetches
    robots_retry_at REAL NOT NULL DEFAULT 0         -- robots_state 'failed': asked again from then
);
CREATE INDEX IF NOT EXISTS hosts_ready ON hosts(robots_state, next_allowed_at);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS scope_domains (domain TEXT PRIMARY KEY);
-- An operator's crawl settings of a host (services/common/domain/host_settings.py), as JSON.
CREATE TABLE IF NOT EXISTS host_settings (host TEXT PRIMARY KEY, settings TEXT NOT NULL);
-- Pages fetched per minute (minute = epoch seconds // 60), for the console's chart.
CREATE TABLE IF NOT EXISTS fetch_minutes (minute INTEGER PRIMARY KEY, n INTEGER NOT NULL);
-- URLs per state, kept in step by triggers on every insert, state change and delete,
-- so counts() does not scan the table however large the frontier grows.
CREATE TABLE IF NOT EXISTS state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS urls_counted_insert AFTER INSERT ON urls BEGIN
    INSERT INTO state_counts(state, n) VALUES (NEW.state, 1) ON CONFLICT(state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS urls_counted_update AFTER UPDATE OF state ON urls WHEN OLD.state != NEW.state BEGIN
    UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
    INSERT INTO state_counts(state, n) VALUES (NEW.state, 1) ON CONFLICT(state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS urls_counted_delete AFTER DELETE ON urls BEGIN
    UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
END;
"""

_HOST_COLUMNS = (
    "host, scheme, delay_s, robots_state, robots_txt, robots_fetched_at, robots_failures, "
    "next_allowed_at, inflight, blocked_until, block_reason, fail_streak, admitted, queued, paused, robots_retry_at"
)
# UrlInfo's fields, in order.
_URL_COLUMNS = (
    "url, host, depth, kind, state, due_at, fetched_at, status, content_hash, etag, "
    "last_modified, interval_s, fail_count, note, lease_id"
)
# Minutes of fetch history kept for the console's chart: a day.
_HISTORY_MINUTES = 24 * 60


def _mine(shards: Collection[int] | None) -> bool:
    """Whether a selection over ``shards`` includes this frontier's one shard."""
    return shards is None or 0 in shards


_HOST_FIELDS = tuple(f.name for f in dataclasses.fields(HostInfo))


def _host(row: tuple[Any, ...]) -> HostInfo:
    """A host row, its columns in HostInfo's field order; ``paused`` is stored as 0/1."""
    values = dict(zip(_HOST_FIELDS, row, strict=True))
    values["paused"] = bool(values["paused"])
    return HostInfo(**values)


class SqliteFrontierState:
    """One writer process (the embedded scheduler); readers such as `tansuo frontier`
    may open the same file at any time thanks to WAL."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._add_missing_columns()
        self._lock = threading.Lock()
        self._count_existing_urls()

    def _add_missing_columns(self) -> None:
        """A frontier written by an older version gets the columns added since."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(hosts)")}
        if "robots_claimed_at" not in columns:
            self._db.execute("ALTER TABLE hosts ADD COLUMN robots_claimed_at REAL")
        if "paused" not in columns:
            self._db.execute("ALTER TABLE hosts ADD COLUMN paused INTEGER NOT NULL DEFAULT 0")
        if "robots_retry_at" not in columns:
            self._db.execute("ALTER TABLE hosts ADD COLUMN robots_retry_at REAL NOT NULL DEFAULT 0")

    def _count_existing_urls(self) -> None:
        """A frontier written before ``state_counts`` existed is counted once, here."""
        with self._tx() as db:
            if db.execute("SELECT 1 FROM state_counts LIMIT 1").fetchone() is None:
                db.execute("INSERT INTO state_counts(state, n) SELECT state, COUNT(*) FROM urls GROUP BY state")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def shards(self) -> int:
        """One: this file is one shard, and ``shards`` arguments either name it (0) or not."""
        return 1

    # --- hosts -------------------------------------------------------------------------

    def ensure_host(self, host: str, scheme: str, delay_s: float) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO hosts(host, scheme, delay_s) VALUES (?, ?, ?)", (host, scheme, delay_s)
            )

    def get_host(self, host: str) -> HostInfo | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_HOST_COLUMNS} FROM hosts WHERE host = ?", (host,)).fetchone()
        return _host(row) if row else None

    def hosts(self, limit: int = 1000) -> list[HostInfo]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_HOST_COLUMNS} FROM hosts ORDER BY queued DESC, host LIMIT ?", (limit,)
            ).fetchall()
        return [_host(r) for r in rows]

    def claim_robots(self, now: float, limit: int, shards: Collection[int] | None = None) -> list[HostInfo]:
        """Hosts whose robots.txt is unknown (or failed, and due again) and that may be
        fetched now; each comes back marked as fetching, with one fetch in flight and
        its politeness clock started."""
        if not _mine(shards):
            return []
        with self._tx() as db:
            rows = db.execute(
                f"SELECT {_HOST_COLUMNS} FROM hosts WHERE (robots_state = 'unknown' OR (robots_state = 'failed' "
                "AND robots_retry_at <= ?)) AND inflight = 0 AND paused = 0 "
                "AND next_allowed_at <= ? AND blocked_until <= ? AND queued > 0 ORDER BY next_allowed_at LIMIT ?",
                (now, now, now, limit),
            ).fetchall()
            for r in rows:
                db.execute(
                    "UPDATE hosts SET robots_state = 'fetching', inflight = inflight + 1, "
                    "next_allowed_at = ? + delay_s, robots_claimed_at = ? WHERE host = ?",
                    (now, now, r[0]),
                )
        return [_host(r) for r in rows]

    def expire_robots(self, now: float, shards: Collection[int] | None = None) -> list[str]:
        """Hosts whose cached robots.txt is older than its TTL go back to unknown."""
        if not _mine(shards):
            return []
        with self._tx() as db:
            rows = db.execute(
                "SELECT host FROM hosts WHERE robots_state = 'ready' AND robots_fetched_at <= ?", (now,)
            ).fetchall()
            db.execute(
                "UPDATE hosts SET robots_state = 'unknown' WHERE robots_state = 'ready' AND robots_fetched_at <= ?",
                (now,),
            )
        return [r[0] for r in rows]

    def expire_robots_claims(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> list[str]:
        """Hosts claimed for robots.txt at or before ``now - timeout_s`` whose outcome never
        came back go back to unknown, their slot freed: the claim is a lease too. A claim
        with no time (an older frontier) counts as expired."""
        if not _mine(shards):
            return []
        cutoff = now - timeout_s
        where = "robots_state = 'fetching' AND COALESCE(robots_claimed_at, 0) <= ?"
        with self._tx() as db:
            rows = db.execute(f"SELECT host FROM hosts WHERE {where}", (cutoff,)).fetchall()
            db.execute(
                f"UPDATE hosts SET robots_state = 'unknown', inflight = MAX(inflight - 1, 0) WHERE {where}", (cutoff,)
            )
        return [r[0] for r in rows]

    def update_host(self, host: str, update: HostUpdate, now: float, release: bool) -> None:
        """Apply the scheduler's decision about a host; ``release`` ends one in-flight fetch
        and restarts the politeness clock from now, so the gap is measured from the end
        of the last response, not from when it was leased."""
        with self._tx() as db:
            self._update_host(db, host, update, now, release)

    @staticmethod
    def _update_host(db: sqlite3.Connection, host: str, update: HostUpdate, now: float, release: bool) -> None:
        sets, args = update.sql()
        if sets:
            db.execute(f"UPDATE hosts SET {', '.join(sets)} WHERE host = ?", (*args, host))
        if release:
            db.execute(
                "UPDATE hosts SET inflight = MAX(inflight - 1, 0), "
                "next_allowed_at = MAX(next_allowed_at, ? + delay_s) WHERE host = ?",
                (now, host),
            )

    def get_hosts(self, hosts: Sequence[str]) -> dict[str, HostInfo]:
        found = {}
        for host in dict.fromkeys(hosts):
            info = self.get_host(host)
            if info is not None:
                found[host] = info
        return found

    # --- urls --------------------------------------------------------------------------

    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]:
        """Insert URLs never seen before; returns the ones inserted. A URL past its host's
        budget is recorded as excluded, so it is not offered again and again."""
        added: list[NewUrl] = []
        with self._tx() as db:
            for u in urls:
                state = u.state
                if state == "queued":
                    row = db.execute("SELECT admitted FROM hosts WHERE host = ?", (u.host,)).fetchone()
                    if row is not None and row[0] >= host_budget:
                        state, u = "excluded", u.with_note("host_budget")
                cur = db.execute(
                    "INSERT OR IGNORE INTO urls(url, host, depth, kind, state, due_at, discovered_at, note) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (u.url, u.host, u.depth, u.kind, state, now, now, u.note),
                )
                if cur.rowcount and state == "queued":
                    db.execute(
                        "UPDATE hosts SET admitted = admitted + 1, queued = queued + 1 WHERE host = ?", (u.host,)
                    )
                    added.append(u)
        return added

    def requeue_seed(self, url: str, now: float) -> bool:
        """A seed given again that failed or was excluded earlier gets another chance."""
        with self._tx() as db:
            row = db.execute("SELECT host, state FROM urls WHERE url = ?", (url,)).fetchone()
            if row is None or row[1] not in ("failed",):
                return False
            db.execute(
                "UPDATE urls SET state = 'queued', due_at = ?, fail_count = 0, note = '' WHERE url = ?", (now, url)
            )
            db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[0],))
        return True

    def lease_due(
        self, now: float, limit: int, parallelism: int, max_in_flight: int, shards: Collection[int] | None = None
    ) -> list[Lease]:
        """Hand out due URLs, filling each host's free parallel slots (at most
        ``parallelism`` in flight per host, one for a host with a delay); each lease
        starts its host's politeness clock."""
        leases: list[Lease] = []
        if not _mine(shards):
            return leases
        with self._tx() as db:
            row = db.execute("SELECT n FROM state_counts WHERE state = 'leased'").fetchone()
            in_flight = row[0] if row else 0
            room = min(limit, max_in_flight - in_flight)
            if room <= 0:
                return []
            # Only hosts with a URL due now: one whose queue is all in retry backoff must
            # not take a place in `room` while hosts with due URLs wait behind it.
            # A host with a delay (its Crawl-delay, say) takes one fetch at a time: a gap
            # between requests means nothing if several are in flight at once.
            hosts = db.execute(
                "SELECT host, inflight, CASE WHEN delay_s > 0 THEN 1 ELSE ? END AS par FROM hosts "
                "WHERE robots_state = 'ready' AND paused = 0 AND next_allowed_at <= ? "
                "AND blocked_until <= ? AND inflight < par AND queued > 0 AND EXISTS (SELECT 1 FROM urls "
                "INDEXED BY urls_host_due WHERE urls.host = hosts.host AND urls.state = 'queued' AND urls.due_at <= ?) "
                "ORDER BY next_allowed_at LIMIT ?",
                (parallelism, now, now, now, room),
            ).fetchall()
            for host, inflight, host_parallelism in hosts:
                slots = min(host_parallelism - inflight, room - len(leases))
                if slots <= 0:
                    break
                # Sitemaps first: they are few and they tell what else to fetch.
                rows = db.execute(
                    "SELECT url, depth, etag, last_modified, kind FROM urls WHERE host = ? AND state = 'queued' "
                    "AND due_at <= ? ORDER BY kind = 'page', depth, due_at LIMIT ?",
                    (host, now, slots),
                ).fetchall()
                for url, depth, etag, last_modified, kind in rows:
                    lease = Lease(url, host, str(uuid.uuid4()), depth, etag or "", last_modified or "", kind)
                    db.execute(
                        "UPDATE urls SET state = 'leased', lease_id = ?, leased_at = ? WHERE url = ?",
                        (lease.lease_id, now, lease.url),
                    )
                    leases.append(lease)
                if rows:
                    db.execute(
                        "UPDATE hosts SET inflight = inflight + ?, queued = queued - ?, "
                        "next_allowed_at = ? + delay_s WHERE host = ?",
                        (len(rows), len(rows), now, host),
                    )
        return leases

    def is_leased(self, url: str, lease_id: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT state, lease_id FROM urls WHERE url = ?", (url,)).fetchone()
        return bool(row) and row[0] == "leased" and row[1] == lease_id

    def finish(
        self, url: str, lease_id: str, update: UrlUpdate, host_update: HostUpdate | None = None, now: float = 0.0
    ) -> bool:
        """Record a fetch outcome for a leased URL. Returns False for a stale or repeated
        outcome (the lease is gone), which the caller then ignores: that keeps a
        redelivered page event from counting twice. ``host_update`` goes to the URL's
        host, releasing the fetch, in the same transaction."""
        with self._tx() as db:
            row = db.execute("SELECT host, state, lease_id, kind FROM urls WHERE url = ?", (url,)).fetchone()
            if row is None or row[1] != "leased" or row[2] != lease_id:
                return False
            sets, args = update.sql()
            db.execute(f"UPDATE urls SET lease_id = NULL, {', '.join(sets)} WHERE url = ?", (*args, url))
            if update.state == "queued":
                db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[0],))
            if update.state == "done" and row[3] == "page":
                self._bump(db, "fetched", 1)
                if update.fetched_at is not None:
                    self._count_fetch_minute(db, int(update.fetched_at // 60))
            if host_update is not None:
                self._update_host(db, row[0], host_update, now, release=True)
        return True

    def unlease(self, url: str, now: float, state: str, note: str) -> None:
        """Take back a lease the scheduler decided not to send (e.g. robots changed)."""
        with self._tx() as db:
            row = db.execute("SELECT host FROM urls WHERE url = ? AND state = 'leased'", (url,)).fetchone()
            if row is None:
                return
            db.execute("UPDATE urls SET state = ?, note = ?, lease_id = NULL WHERE url = ?", (state, note, url))
            db.execute("UPDATE hosts SET inflight = MAX(inflight - 1, 0) WHERE host = ?", (row[0],))
            if state == "queued":
                db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[0],))

    def expire_leases(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> int:
        """Leases older than the timeout return to the queue (a worker died with them)."""
        if not _mine(shards):
            return 0
        with self._tx() as db:
            rows = db.execute(
                "SELECT url, host FROM urls WHERE state = 'leased' AND leased_at <= ?", (now - timeout_s,)
            ).fetchall()
            for url, host in rows:
                db.execute("UPDATE urls SET state = 'queued', lease_id = NULL WHERE url = ?", (url,))
                db.execute(
                    "UPDATE hosts SET inflight = MAX(inflight - 1, 0), queued = queued + 1 WHERE host = ?", (host,)
                )
        return len(rows)

    def queued_urls(self, host: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT url FROM urls WHERE host = ? AND state = 'queued'", (host,)
            ).fetchall()
        return [r[0] for r in rows]

    def drop_queued(self, urls: Sequence[str], state: str, note: str, due_at: float | None = None) -> int:
        """Move queued URLs to a final state (robots disallow, host given up); ``due_at``
        is when a failed URL may be tried again."""
        n = 0
        with self._tx() as db:
            for url in urls:
                row = db.execute("SELECT host FROM urls WHERE url = ? AND state = 'queued'", (url,)).fetchone()
                if row is None:
                    continue
                db.execute(
                    "UPDATE urls SET state = ?, note = ?, due_at = COALESCE(?, due_at) WHERE url = ?",
                    (state, note, due_at, url),
                )
                db.execute("UPDATE hosts SET queued = queued - 1 WHERE host = ?", (row[0],))
                n += 1
        return n

    def url_state(self, url: str) -> tuple[str, str, int] | None:
        """(state, note, consecutive failures) of a URL, or None if never seen."""
        with self._lock:
            row = self._db.execute("SELECT state, note, fail_count FROM urls WHERE url = ?", (url,)).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def url_info(self, url: str) -> UrlInfo | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_URL_COLUMNS} FROM urls WHERE url = ?", (url,)).fetchone()
        return UrlInfo(*row) if row else None

    def sweep_recrawl(self, now: float, limit: int, shards: Collection[int] | None = None) -> int:
        """Fetched (and failed) URLs whose recrawl time has come go back to the queue."""
        if not _mine(shards):
            return 0
        with self._tx() as db:
            rows = db.execute(
                "SELECT url, host FROM urls WHERE state IN ('done', 'failed') AND due_at <= ? LIMIT ?",
                (now, limit),
            ).fetchall()
            for url, host in rows:
                db.execute("UPDATE urls SET state = 'queued', fail_count = 0 WHERE url = ?", (url,))
                db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (host,))
        return len(rows)

    def requeue(self, url: str, now: float) -> bool:
        """Fetch a finished URL again now (its sitemap says it changed)."""
        with self._tx() as db:
            row = db.execute("SELECT host, state FROM urls WHERE url = ?", (url,)).fetchone()
            if row is None or row[1] not in ("done", "failed"):
                return False
            db.execute("UPDATE urls SET state = 'queued', due_at = ?, fail_count = 0 WHERE url = ?", (now, url))
            db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[0],))
        return True

    def upcoming(self, limit: int) -> list[tuple[str, str, float]]:
        """(url, state, due_at) of the next fetches and recrawls, soonest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT url, state, due_at FROM urls WHERE state IN ('queued', 'done', 'failed') "
                "ORDER BY due_at LIMIT ?",
                (limit,),
            ).fetchall()
        return [(u, st, due) for u, st, due in rows]

    def add_scope_domains(self, domains: Sequence[str]) -> None:
        with self._tx() as db:
            db.executemany("INSERT OR IGNORE INTO scope_domains(domain) VALUES (?)", [(d,) for d in domains])

    def scope_domains(self) -> list[str]:
        with self._lock:
            return [d for (d,) in self._db.execute("SELECT domain FROM scope_domains ORDER BY domain")]

    def set_host_settings(self, host: str, settings: HostSettings | None) -> None:
        with self._tx() as db:
            if settings is None:
                db.execute("DELETE FROM host_settings WHERE host = ?", (host,))
            else:
                db.execute("INSERT OR REPLACE INTO host_settings(host, settings) VALUES (?, ?)", (host, settings.to_json()))

    def host_settings(self) -> dict[str, HostSettings]:
        with self._lock:
            rows = self._db.execute("SELECT host, settings FROM host_settings").fetchall()
        return {host: HostSettings.from_json(text) for host, text in rows}

    def excluded_urls(self, host: str, note: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT url FROM urls WHERE host = ? AND state = 'excluded' AND note = ? ORDER BY url", (host, note)
            ).fetchall()
        return [r[0] for r in rows]

    def readmit(self, urls: Sequence[str], note: str, now: float) -> int:
        n = 0
        with self._tx() as db:
            for url in urls:
                cur = db.execute(
                    "UPDATE urls SET state = 'queued', note = '', due_at = ?, fail_count = 0 "
                    "WHERE url = ? AND state = 'excluded' AND note = ? RETURNING host",
                    (now, url, note),
                )
                row = cur.fetchone()
                if row is not None:
                    db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[0],))
                    n += 1
        return n

    # --- operator actions ----------------------------------------------------------------

    def set_paused(self, host: str, paused: bool, now: float) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE hosts SET paused = ? WHERE host = ?", (int(paused), host))
        return cur.rowcount > 0

    def recrawl_host(self, host: str, now: float) -> int:
        with self._tx() as db:
            (finished,) = db.execute(
                "SELECT COUNT(*) FROM urls WHERE host = ? AND state IN ('done', 'failed')", (host,)
            ).fetchone()
            cur = db.execute(
                "UPDATE urls SET state = 'queued', due_at = MIN(due_at, ?), fail_count = 0 "
                "WHERE host = ? AND state IN ('queued', 'done', 'failed')",
                (now, host),
            )
            db.execute("UPDATE hosts SET queued = queued + ? WHERE host = ?", (finished, host))
        return cur.rowcount

    def host_urls(self, host: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT url FROM urls WHERE host = ? AND state != 'excluded' ORDER BY url", (host,)
            ).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _count_fetch_minute(db: sqlite3.Connection, minute: int) -> None:
        db.execute(
            "INSERT INTO fetch_minutes(minute, n) VALUES (?, 1) ON CONFLICT(minute) DO UPDATE SET n = n + 1", (minute,)
        )
        db.execute("DELETE FROM fetch_minutes WHERE minute < ?", (minute - _HISTORY_MINUTES,))

    def fetch_history(self, since: float) -> list[tuple[float, int]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT minute, n FROM fetch_minutes WHERE minute >= ? ORDER BY minute", (int(since // 60),)
            ).fetchall()
        return [(minute * 60.0, n) for minute, n in rows]

    # --- counters ----------------------------------------------------------------------

    @staticmethod
    def _bump(db: sqlite3.Connection, name: str, by: int) -> None:
        db.execute(
            "INSERT INTO counters(name, value) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            (name, by),
        )

    def bump(self, name: str, by: int = 1) -> None:
        with self._tx() as db:
            self._bump(db, name, by)

    def url_breakdown(self) -> list[tuple[str, str, str, str, int | None, int]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT host, kind, state, note, status, COUNT(*) FROM urls GROUP BY host, kind, state, note, status"
            ).fetchall()
        return [(h, kind, st, note, status, n) for h, kind, st, note, status, n in rows]

    def attention_urls(self, limit: int) -> list[UrlInfo]:
        # The SQL narrows to failed and done URLs off the routine path; needs_attention decides.
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_URL_COLUMNS} FROM urls WHERE state = 'failed' OR (state = 'done' AND "
                "(status IS NULL OR status = 0 OR status >= 400 OR note != '')) ORDER BY host, url"
            ).fetchall()
        found = [UrlInfo(*r) for r in rows if needs_attention(r[4], r[7], r[13])]
        return found[:limit] if limit >= 0 else found

    def note_fetched(self, url: str, note: str) -> bool:
        with self._tx() as db:
            return db.execute("UPDATE urls SET note = ? WHERE url = ? AND state = 'done'", (note, url)).rowcount > 0

    def counters(self) -> dict[str, int]:
        with self._lock:
            return dict(self._db.execute("SELECT name, value FROM counters").fetchall())

    def counts(self, now: float) -> FrontierCounts:
        with self._lock:
            by_state = dict(self._db.execute("SELECT state, n FROM state_counts").fetchall())
            # Counted from the other end: queued URLs are nearly all due (only retries
            # in backoff wait), so the few not yet due are the short range to scan.
            (not_due,) = self._db.execute(
                "SELECT COUNT(*) FROM urls WHERE state = 'queued' AND due_at > ?", (now,)
            ).fetchone()
            (robots_inflight,) = self._db.execute(
                "SELECT COUNT(*) FROM hosts WHERE robots_state = 'fetching'"
            ).fetchone()
            (hosts,) = self._db.execute("SELECT COUNT(*) FROM hosts").fetchone()
            (blocked,) = self._db.execute("SELECT COUNT(*) FROM hosts WHERE blocked_until > ?", (now,)).fetchone()
            counters = dict(self._db.execute("SELECT name, value FROM counters").fetchall())
        return FrontierCounts(
            queued=by_state.get("queued", 0),
            due=by_state.get("queued", 0) - not_due,
            leased=by_state.get("leased", 0) + robots_inflight,
            done=by_state.get("done", 0),
            failed=by_state.get("failed", 0),
            excluded=by_state.get("excluded", 0),
            hosts=hosts,
            blocked_hosts=blocked,
            fetched=counters.get("fetched", 0),
            errors=counters.get("errors", 0),
        )

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()
