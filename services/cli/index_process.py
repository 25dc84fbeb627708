"""The embedded crawl's index process: the indexer and ranker beside the crawler's process.

Segmentation and page extraction are the two largest costs of a crawl, and in one
process they share one core through the GIL. This process owns the writable tantivy
index (tantivy allows one writer; the ranker writes link fields into it) and the link
graph, and reads the same SQLite bus as the crawler's process. The crawler's process
reads the index read-only.

How the two talk, over one pipe: the child says ``ready`` once it holds the index
writer; the parent says ``finish`` when the crawl stops, and the child drains, ranks
and answers with the PageRank run's page count, or ``stop`` to end without draining.
The indexed count travels in shared memory, read on every progress tick.

Started with the ``spawn`` context: the parent runs threads (the scheduler, the
watcher), and a fork with threads running can copy a lock some thread holds.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

from services.cli.indexing_result import Finished
from services.cli.parent_watch import parent_gone, watch_parent
from services.common.bootstrap import build_bus, build_search_index
from services.common.config import Settings
from services.common.errors import IndexWriterBusy, TansuoError
from services.common.ports import SearchIndex
from services.common.runtime import multiprocess_metrics

if TYPE_CHECKING:
    from services.cli.index_side import IndexSide

log = logging.getLogger(__name__)

READY, FINISH, STOP = "ready", "finish", "stop"
TICK_S = 0.2
# A crawl killed a moment ago may have left its index process finishing its last
# commit, holding the writer lock: the new one waits for it this long.
WRITER_WAIT_S = 60.0
STOP_WAIT_S = 30.0


class IndexProcessDied(TansuoError, RuntimeError):
    """The index process ended without being asked to."""


class IndexProcess:
    """Parent side: start the child, read its progress, ask it to finish or stop."""

    def __init__(self, cfg: Settings) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child_conn = ctx.Pipe()
        self._indexed = ctx.RawValue("q", 0)
        self._process = ctx.Process(
            target=child_main, args=(cfg, os.getpid(), child_conn, self._indexed, logging.getLogger().level),
            name="tansuo-index", daemon=True,
        )  # fmt: skip
        self._child_conn = child_conn
        self._ready = False

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def indexed(self) -> int:
        return int(self._indexed.value)

    def alive(self) -> bool:
        return self._process.is_alive()

    def start(self) -> None:
        """Start the child; it loads while the crawler starts."""
        with _sigint_ignored():  # inherited through exec: no Ctrl-C lands mid-import
            self._process.start()
        self._child_conn.close()  # so that the child's exit reads as EOF here

    def wait_ready(self) -> None:
        """Wait until the child holds the index writer (the index exists from then on)."""
        if not self._ready:
            self._receive()
            self._ready = True

    def finish(self) -> Finished:
        """Ask the child to drain and rank. It answers once the last commit is made,
        then closes its writer and exits while the caller goes on; ``close`` waits."""
        self.wait_ready()
        self._conn.send(FINISH)
        finished = self._receive()
        assert isinstance(finished, Finished)
        return finished

    def close(self) -> None:
        """Stop the child if it still runs (an error or a second Ctrl-C in the parent):
        it commits what it holds; one that does not end in time is killed."""
        if self._process.pid is None:
            return
        if self._process.is_alive():
            try:
                self._conn.send(STOP)
            except OSError:
                pass
            self._process.join(STOP_WAIT_S)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        self._forget()

    def _receive(self) -> object:
        while not self._conn.poll(TICK_S):
            if not self._process.is_alive():
                break
        try:
            return self._conn.recv()
        except EOFError:
            self._process.join()
            raise IndexProcessDied(f"the index process exited with code {self._process.exitcode}") from None

    def _forget(self) -> None:
        if self._process.exitcode is not None:
            multiprocess_metrics.worker_exited(self._process.pid or 0)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def child_main(cfg: Settings, parent_pid: int, conn: Connection, indexed: ctypes.c_longlong, log_level: int) -> None:
    """Entry point of the child: Ctrl-C reaches the whole process group, and the
    parent decides when this process finishes, so SIGINT stays ignored here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_level or logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    gone = threading.Event()
    watch_parent(parent_pid, gone)

    def orphaned() -> bool:
        return gone.is_set() or parent_gone(parent_pid)

    index = _open_writer(cfg, orphaned)
    if index is None:
        return
    # Imported here, not at the top: the crawler's process imports this module to start
    # the child, and the indexer and ranker (rjieba, OpenCC, scipy) would cost it a
    # third of a second of start-up for nothing.
    from services.cli.index_side import IndexSide

    side = IndexSide(cfg, build_bus(cfg), index)
    side.start()
    finished = False
    try:
        conn.send(READY)
        finished = _serve(side, conn, indexed, orphaned)
    finally:
        # A crawl that ended (done, or drained after one Ctrl-C) leaves its index to
        # searches: its last merges are worth the wait, which the parent bounds
        # (STOP_WAIT_S) once it has its answer. Without ``finish`` it is a stop: prompt.
        index.close(finish_merges=finished)


def _serve(side: IndexSide, conn: Connection, indexed: ctypes.c_longlong, orphaned: Callable[[], bool]) -> bool:
    """Publish progress until the parent says what to do, or dies; True once the
    parent's ``finish`` was carried out."""
    while True:
        indexed.value = side.indexed
        if orphaned():
            side.stop()
            return False
        try:
            if not conn.poll(TICK_S):
                continue
            command = conn.recv()
        except (EOFError, OSError):  # the parent's end closed: it is gone
            side.stop()
            return False
        if command == FINISH:
            finished = side.finish()
            indexed.value = side.indexed
            try:
                conn.send(finished)
            except OSError:
                pass
            return True
        side.stop()
        return False


def _open_writer(cfg: Settings, orphaned: Callable[[], bool]) -> SearchIndex | None:
    """The writable index, once an earlier run's index process has let go of it."""
    deadline = time.monotonic() + WRITER_WAIT_S
    while True:
        try:
            return build_search_index(cfg)
        except IndexWriterBusy:
            if orphaned():
                return None
            if time.monotonic() >= deadline:
                raise
            time.sleep(TICK_S)
