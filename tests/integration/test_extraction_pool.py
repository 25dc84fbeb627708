"""Extraction worker processes: a document is read from the page store in a worker, a
worker that runs over its time is killed and replaced, and the next document is read
by the new one."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest

from bench.sites.document_site import _pdf
from services.common.adapters.packs.page_store import PackPageStore
from services.common.config import Settings
from services.common.domain.documents import StoredPage
from services.extractor.extraction_pool import ExtractionJob, ExtractionPool, ExtractionWorker

TEXT = "北京大学二〇二六年硕士研究生招生简章，报名时间为十月。"


def _store(tmp_path: Path, key: str, body: bytes) -> None:
    PackPageStore(tmp_path / "pages").put(key, StoredPage(f"http://x/{key}", 200, {}, 0.0, body))


def test_a_worker_reads_the_document_from_the_page_store(tmp_path: Path) -> None:
    _store(tmp_path, "a", (TEXT * 3).encode("gb18030"))
    _store(tmp_path, "b", _pdf([b"BT /F1 24 Tf 72 720 Td (brochure) Tj ET"]))
    pool = ExtractionPool(Settings(data_dir=tmp_path, documents_workers=2))
    try:
        text, pdf, missing = pool.extract_all([ExtractionJob("a", "http://x/a.txt", "text/plain"),
                                               ExtractionJob("b", "http://x/b", "application/octet-stream"),
                                               ExtractionJob("c", "http://x/c.pdf", "application/pdf")])  # fmt: skip
    finally:
        pool.close()
    assert text.text is not None and TEXT in text.text.body
    assert pdf.text is not None and pdf.text.format == "pdf"
    assert missing.text is None and missing.skipped == "not_stored"


def test_a_worker_over_its_time_is_killed_and_the_next_document_gets_a_new_one(tmp_path: Path) -> None:
    # Twenty million characters of CSV take far longer to read than a millisecond.
    _store(tmp_path, "slow", ("甲,乙,丙\n" * 4_000_000).encode())
    _store(tmp_path, "quick", TEXT.encode())
    worker = ExtractionWorker(Settings(data_dir=tmp_path, documents_timeout_s=0.05, documents_max_chars=50_000_000))
    try:
        worker.extract(ExtractionJob("quick", "http://x/q.txt", "text/plain"))  # started, imports done
        first = worker.pid
        slow = worker.extract(ExtractionJob("slow", "http://x/s.csv", "text/csv"))
        assert slow.skipped == "timeout"
        assert first is not None and not _alive(first)
        quick = worker.extract(ExtractionJob("quick", "http://x/q.txt", "text/plain"))
    finally:
        worker.close()
    assert quick.text is not None and TEXT in quick.text.body and worker.pid != first


def test_a_worker_that_waits_for_a_core_is_not_timed_out(tmp_path: Path) -> None:
    # A stopped process gets no CPU, as a worker under SCHED_IDLE on a machine kept busy
    # by others: its wall time runs past the timeout, its CPU time does not.
    _store(tmp_path, "quick", TEXT.encode())
    worker = ExtractionWorker(Settings(data_dir=tmp_path, documents_timeout_s=0.5))
    job = ExtractionJob("quick", "http://x/q.txt", "text/plain")
    try:
        worker.extract(job)  # started, imports done
        pid = worker.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (pid, signal.SIGCONT)).start()
        waited = worker.extract(job)
    finally:
        worker.close()
    assert waited.text is not None and TEXT in waited.text.body and waited.seconds >= 1.4


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_worker_runs_under_sched_idle_unless_told_not_to(tmp_path: Path) -> None:
    # The kernel's own record of the worker process's policy, read while it is alive.
    _store(tmp_path, "a", TEXT.encode())
    policies = []
    for idle in (True, False):
        worker = ExtractionWorker(Settings(data_dir=tmp_path, documents_worker_idle=idle))
        try:
            done = worker.extract(ExtractionJob("a", "http://x/a.txt", "text/plain"))
            assert done.text is not None and worker.pid is not None
            policies.append((os.sched_getscheduler(worker.pid), os.getpriority(os.PRIO_PROCESS, worker.pid)))
        finally:
            worker.close()
    nice = Settings().documents_worker_nice
    assert policies == [(os.SCHED_IDLE, nice), (os.SCHED_OTHER, nice)]


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_worker_starts_its_imports_under_its_low_priority(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A new worker's interpreter imports the crawler's modules (half a second of CPU)
    # before any worker code runs. A sitecustomize, run first by every interpreter
    # started here, records the worker's policy 0.3 s into its start.
    record = """
        import os, time
        if os.environ.get("POLICY_SEEN"):
            time.sleep(0.3)
            seen = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
            open(os.environ["POLICY_SEEN"], "w").write("%d %d" % seen)
    """
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(record))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("POLICY_SEEN", str(tmp_path / "seen"))
    _store(tmp_path, "a", TEXT.encode())
    worker = ExtractionWorker(Settings(data_dir=tmp_path))
    try:
        assert worker.extract(ExtractionJob("a", "http://x/a.txt", "text/plain")).text is not None
    finally:
        worker.close()
    nice = os.getpriority(os.PRIO_PROCESS, 0) + Settings().documents_worker_nice
    assert (tmp_path / "seen").read_text() == f"{os.SCHED_IDLE} {min(19, nice)}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
