"""Extraction worker processes: one document at a time each, killed when it takes
more than ``documents_timeout_s`` of CPU time.

A parser that loops, or a PDF whose object graph sends PDFium round in circles,
holds its worker until the timeout, never the crawl: the worker is killed (SIGKILL:
a parser stuck in C does not see a signal it could catch) and a new one takes its
slot. Each worker reads the document's bytes from the page store itself, so that a
50 MB file is never piped through the process that hands out the work, runs at a
lower priority than the crawl (``documents_worker_nice``; on Linux also under
SCHED_IDLE, ``documents_worker_idle``), and within an address-space limit
(``documents_worker_memory_mb``). Workers are started with the ``spawn`` context:
the crawler's process runs threads.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

from services.common.config import Settings
from services.extractor.busy_throttle import BusyThrottle
from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText

log = logging.getLogger(__name__)
START_TIMEOUT_S = 60.0
# A document's CPU time is looked at this often while it is extracted; its wall time
# may run to WALL_FACTOR times the timeout (a worker blocked, not computing).
POLL_SLICE_S = 0.25
WALL_FACTOR = 10
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a live process from /proc/<pid>/stat; None where
    there is no /proc (not Linux) or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class ExtractionJob:
    store_key: str
    url: str
    content_type: str


@dataclass(frozen=True)
class ExtractionOutcome:
    """``text`` when the document was read, else ``skipped`` names why."""

    text: ExtractedText | None = None
    skipped: str = ""
    detail: str = ""
    seconds: float = 0.0


def limits_of(cfg: Settings) -> DocumentLimits:
    return DocumentLimits(cfg.documents_max_pages, cfg.documents_max_chars, cfg.documents_max_unzipped_bytes)


class ExtractionWorker:
    """One worker process and the pipe to it; ``extract`` is called by one thread."""

    def __init__(self, cfg: Settings) -> None:
        self._cfg = cfg
        self._ctx = multiprocessing.get_context("spawn")
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        self.close()
        parent, child = self._ctx.Pipe()
        self._process = self._ctx.Process(target=worker_main, args=(self._cfg, child), name="tansuo-extract", daemon=True)
        self._process.start()
        if self._process.pid is not None:
            lower_priority(self._process.pid, self._cfg)
        child.close()
        self._conn = parent
        # Starting a worker (a new interpreter, its imports) is not the document's time.
        if not parent.poll(START_TIMEOUT_S):
            self.kill()
            raise OSError("the extraction worker did not start")
        parent.recv()
        return parent

    def extract(self, job: ExtractionJob) -> ExtractionOutcome:
        try:
            conn = self._start()
        except (EOFError, OSError) as exc:
            return ExtractionOutcome(skipped="extractor_crashed", detail=str(exc))
        started = time.monotonic()
        try:
            conn.send(job)
            if self._wait(conn, started):
                kind, value = conn.recv()
                seconds = time.monotonic() - started
                if kind == "ok":
                    return ExtractionOutcome(text=value, seconds=seconds)
                reason, detail = value
                return ExtractionOutcome(skipped=reason, detail=detail, seconds=seconds)
        except (EOFError, OSError, BrokenPipeError):
            # The worker died under the document (a crash in a parser's C or Rust code,
            # or the address-space limit): that document is the one to blame.
            code = self._process.exitcode if self._process is not None else None
            self.close()
            return ExtractionOutcome(skipped="extractor_crashed", detail=f"exit code {code}",
                                     seconds=time.monotonic() - started)  # fmt: skip
        self.kill()
        return ExtractionOutcome(skipped="timeout", detail=f"over {self._cfg.documents_timeout_s:g} s",
                                 seconds=time.monotonic() - started)  # fmt: skip

    def _wait(self, conn: Connection, started: float) -> bool:
        """True once the reply is there; False when the worker has spent
        ``documents_timeout_s`` of CPU on this document, or ``WALL_FACTOR`` times that
        of wall time. CPU time, not wall time: a worker under SCHED_IDLE may wait long
        for a core on a busy machine without looping, and only a loop is to be cut."""
        limit = self._cfg.documents_timeout_s
        pid = self.pid
        cpu_start = cpu_seconds(pid) if pid is not None else None
        wall_end = started + limit * WALL_FACTOR
        throttle = BusyThrottle(pid, self._cfg.documents_busy_share, cpu_seconds) if pid is not None else None
        while True:
            cpu_now = cpu_seconds(pid) if pid is not None else None
            if cpu_start is None or cpu_now is None:  # no /proc: wall time alone
                used = time.monotonic() - started
            else:
                used = cpu_now - cpu_start
            left = min(limit - used, wall_end - time.monotonic())
            if left <= 0:
                return False
            if conn.poll(min(left, POLL_SLICE_S)):
                return True
            if throttle is not None:
                throttle.after_slice()

    def kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.kill()
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


class ExtractionPool:
    """``documents_workers`` workers; ``extract_all`` runs a batch on them at once."""

    def __init__(self, cfg: Settings) -> None:
        self.workers = [ExtractionWorker(cfg) for _ in range(cfg.documents_workers)]
        self._free = list(self.workers)
        self._lock = threading.Condition()

    def extract_all(self, jobs: list[ExtractionJob]) -> list[ExtractionOutcome]:
        """Each job on a free worker, in threads that only wait on pipes; in order."""
        results: list[ExtractionOutcome | None] = [None] * len(jobs)

        def run(i: int, job: ExtractionJob) -> None:
            worker = self._take()
            try:
                results[i] = worker.extract(job)
            finally:
                self._give(worker)

        threads = [threading.Thread(target=run, args=(i, j), name="extract-wait", daemon=True) for i, j in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [r if r is not None else ExtractionOutcome(skipped="extractor_crashed") for r in results]

    def _take(self) -> ExtractionWorker:
        with self._lock:
            while not self._free:
                self._lock.wait()
            return self._free.pop()

    def _give(self, worker: ExtractionWorker) -> None:
        with self._lock:
            self._free.append(worker)
            self._lock.notify()

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


def lower_priority(pid: int, cfg: Settings) -> None:
    """The worker ``pid``'s nice value and policy, set by the process that started it,
    at once: a new worker's interpreter first imports the crawler's modules and reads
    its settings, about half a second of CPU, before any code of its own runs."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, pid) + cfg.documents_worker_nice))
    except OSError:
        pass
    if cfg.documents_worker_idle:
        run_when_idle(pid)


def run_when_idle(pid: int = 0) -> bool:
    """Put process ``pid`` (0: this one) under SCHED_IDLE, so that the crawl beside it keeps its CPU.
    Nice 10 alone still takes about a tenth of a core from a busy process at nice 0
    (scheduler weights 110 to 1024), and a waking crawler thread waits for its slice;
    an idle-class process weighs 3 and is preempted at once by any other. False where
    the policy does not exist (not Linux) or is refused."""
    setter = getattr(os, "sched_setscheduler", None)
    policy = getattr(os, "SCHED_IDLE", None)
    if setter is None or policy is None:
        return False
    try:
        setter(pid, policy, os.sched_param(0))
    except (OSError, PermissionError):
        return False
    return True


def worker_main(cfg: Settings, conn: Connection) -> None:
    """A worker's loop: a job in, ("ok", ExtractedText) or ("skipped", (reason, detail)) out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers end
    # Its nice value and policy were set by the parent as it started (``lower_priority``).
    memory = cfg.documents_worker_memory_mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ValueError, OSError):
        pass
    from services.common.bootstrap import build_page_store
    from services.extractor.extract_document import extract_document
    from services.extractor.ocr import page_ocr

    store = build_page_store(cfg)
    limits = limits_of(cfg)
    ocr = page_ocr(cfg) if cfg.documents_ocr else None
    conn.send(("ready", None))
    while True:
        try:
            job: ExtractionJob = conn.recv()
        except (EOFError, OSError):
            return
        try:
            page = store.get(job.store_key)
            if page is None:
                reply: tuple[str, object] = ("skipped", ("not_stored", "the page store has no copy"))
            else:
                reply = ("ok", extract_document(page.body, job.content_type, job.url, limits, ocr))
        except DocumentSkipped as exc:
            reply = ("skipped", (exc.reason, str(exc)[:300]))
        except MemoryError:
            reply = ("skipped", ("too_large", "over the worker's memory limit"))
        except Exception as exc:
            log.exception("extraction of %s failed", job.url)
            reply = ("skipped", ("extractor_error", f"{type(exc).__name__}: {exc}"[:300]))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
