"""Processes that open one new embedded bus file at the same moment all get it."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from services.common.adapters.sqlite.bus import SqliteBus

PROCESSES, FILES = 4, 20


def _open_each(directory: Path, barrier: object, failures: object) -> None:
    for n in range(FILES):
        barrier.wait()  # type: ignore[attr-defined]
        try:
            SqliteBus(directory / f"bus-{n}.sqlite3").close()
        except Exception as exc:  # reported to the test, which names it
            failures.put(f"{n}: {exc!r}")  # type: ignore[attr-defined]


def test_new_bus_files_opened_by_several_processes_at_once_open_in_each(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, failures = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_open_each, args=(tmp_path, barrier, failures)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    errors = []
    while not failures.empty():
        errors.append(failures.get())
    assert errors == []
