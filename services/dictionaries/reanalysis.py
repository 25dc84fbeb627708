"""Re-segmenting the indexed pages after the user words changed, without fetching them.

The console (or POST /api/reanalysis) asks for it; an indexer does it, since only an
indexer may write the index (tantivy's one writer, embedded; any indexer pod in a
cluster, one at a time by the store's claim). Every few seconds the indexer claims the
job, reads the next batch of documents in URL order, rebuilds their token fields from
their stored text with the analysis in use (services/indexer/document_builder.py,
``reanalysed``), writes and commits them, and records how far it got, so that another
indexer can take over from there if this one stops.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import os
import socket
import time
from collections.abc import Callable

from services.common.config import Settings
from services.common.domain.dictionaries import ReanalysisJob
from services.common.errors import BackendUnavailable
from services.common.ports import DictionaryStore, SearchIndex
from services.dictionaries.sync import DictionarySync
from services.indexer.document_builder import reanalysed

log = logging.getLogger(__name__)

# Documents rewritten per step: about a second of analysis on the demo site's pages,
# so the indexer's own work waits little.
BATCH = 200
INTERVAL_S = 2.0


class Reanalysis:
    """The reanalysis job as one indexer process works on it, a step at a time."""

    def __init__(self, cfg: Settings, store: DictionaryStore, index: SearchIndex, dictionaries: DictionarySync,
                 clock: Callable[[], float] = time.time, batch: int = BATCH) -> None:  # fmt: skip
        self._cfg = cfg
        self._store = store
        self._index = index
        self._dictionaries = dictionaries
        self._clock = clock
        self._batch = batch
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._urls: list[str] | None = None  # the job's URLs, sorted, listed when this process took it
        self._job_id = ""
        self._next_at = 0.0

    def due(self) -> bool:
        """Whether to look for the job now (every ``INTERVAL_S``, from the caller's loop)."""
        return time.monotonic() >= self._next_at

    def step(self) -> int:
        """Claim the job if there is one and rewrite its next batch; documents done."""
        self._next_at = time.monotonic() + INTERVAL_S
        try:
            job = self._store.claim_reanalysis(self.owner, self._clock(), self._cfg.analysis_reanalysis_stale_s)
            if job is None:
                self._urls = None
                return 0
            return self._work(job)
        except BackendUnavailable as exc:  # the store or the index away: the next step tries again
            log.warning("reanalysis: waiting for a backend: %s", exc)
            return 0

    def _work(self, job: ReanalysisJob) -> int:
        try:
            if self._urls is None or self._job_id != job.job_id:
                self._dictionaries.refresh()  # the words asked for may be a few seconds old here
                self._urls, self._job_id = sorted(self._index.urls()), job.job_id
                job = dataclasses.replace(job, total=len(self._urls), user_words=self._dictionaries.installed.user_words)
                log.info("reanalysis %s: %d documents to split again", job.job_id, len(self._urls))
            urls = self._urls
            start = bisect.bisect_right(urls, job.cursor) if job.cursor else 0
            batch = urls[start : start + self._batch]
            docs = [reanalysed(doc) for doc in map(self._index.get, batch) if doc is not None]
            if docs:
                self._index.upsert(docs)
                self._index.commit()
        except BackendUnavailable:
            raise
        except Exception as exc:  # a bug or a broken document: say so in the console, do not loop on it
            log.exception("reanalysis %s failed", job.job_id)
            self._store.update_reanalysis(dataclasses.replace(job, state="failed", error=str(exc)[:500],
                                                              finished_at=self._clock()))  # fmt: skip
            self._urls = None
            return 0
        now = self._clock()
        finished = start + len(batch) >= len(urls)
        job = dataclasses.replace(
            job, done=min(job.total, start + len(batch)), cursor=batch[-1] if batch else job.cursor, heartbeat_at=now,
            state="done" if finished else "running", finished_at=now if finished else 0.0,
        )  # fmt: skip
        if not self._store.update_reanalysis(job):
            self._urls = None  # a new request replaced it, or another indexer took it over
        elif finished:
            log.info("reanalysis %s: done, %d documents", job.job_id, job.done)
        return len(batch)
