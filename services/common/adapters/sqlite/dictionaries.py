"""Embedded dictionary store: the operator's dictionaries and the reanalysis job in one
SQLite file (WAL), read by the API's workers and the crawl's index process alike."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from services.common.domain.dictionaries import EditedText, ReanalysisJob

_SCHEMA = """
CREATE TABLE IF NOT EXISTS texts (name TEXT PRIMARY KEY, text TEXT NOT NULL, saved_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def job_json(job: ReanalysisJob) -> str:
    return json.dumps(dataclasses.asdict(job), ensure_ascii=False)


def job_from_json(text: str) -> ReanalysisJob:
    return ReanalysisJob(**json.loads(text))


def claimable(job: ReanalysisJob, owner: str, now: float, stale_s: float) -> bool:
    """The claim rule both stores apply (DictionaryStore.claim_reanalysis)."""
    if job.state == "pending" or (job.state == "running" and job.owner == owner):
        return True
    return job.state == "running" and now - job.heartbeat_at >= stale_s


class SqliteDictionaryStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

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

    def _meta(self, db: sqlite3.Connection, name: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def _bump(self, db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO meta(name, value) VALUES ('version', '1') "
            "ON CONFLICT(name) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    def version(self) -> str:
        with self._lock:
            return self._meta(self._db, "version") or "0"

    def load(self) -> dict[str, EditedText]:
        with self._lock:
            rows = self._db.execute("SELECT name, text, saved_at FROM texts").fetchall()
        return {name: EditedText(name, text, saved_at) for name, text, saved_at in rows}

    def save(self, name: str, text: str, now: float) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO texts(name, text, saved_at) VALUES (?, ?, ?)", (name, text, now))
            self._bump(db)

    def remove(self, name: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM texts WHERE name = ?", (name,))
            self._bump(db)

    def request_reanalysis(self, now: float, user_words: str) -> ReanalysisJob:
        job = ReanalysisJob(uuid.uuid4().hex[:12], now, "pending", user_words=user_words)
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('job', ?)", (job_json(job),))
        return job

    def reanalysis(self) -> ReanalysisJob | None:
        with self._lock:
            text = self._meta(self._db, "job")
        return None if text is None else job_from_json(text)

    def claim_reanalysis(self, owner: str, now: float, stale_s: float) -> ReanalysisJob | None:
        with self._tx() as db:
            text = self._meta(db, "job")
            job = None if text is None else job_from_json(text)
            if job is None or not claimable(job, owner, now, stale_s):
                return None
            job = dataclasses.replace(job, state="running", owner=owner, heartbeat_at=now)
            db.execute("UPDATE meta SET value = ? WHERE name = 'job'", (job_json(job),))
        return job

    def update_reanalysis(self, job: ReanalysisJob) -> bool:
        with self._tx() as db:
            text = self._meta(db, "job")
            current = None if text is None else job_from_json(text)
            if current is None or current.job_id != job.job_id or current.owner != job.owner or not current.active:
                return False
            db.execute("UPDATE meta SET value = ? WHERE name = 'job'", (job_json(job),))
        return True

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()
