"""The data directory a command works in: usable, and crawled into by one process at a time.

Two crawls writing one directory break the per-host delay (each keeps its own clock
for the same hosts) and fetch URLs twice; the second one's index process then waits
for a writer lock it never gets. So a command that crawls holds an OS lock on
``crawl.lock`` for the life of its process: the kernel releases it when the process
ends, however it ends (a crash, ``kill -9``), so a stale lock file never blocks the
next crawl. ``tansuo serve`` takes no lock: it only reads, beside a crawl or after it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from pathlib import Path
from typing import IO

from services.common.errors import BadInput

LOCK_NAME = "crawl.lock"
# sysexits.h EX_TEMPFAIL: the command may succeed later, once the other crawl ends.
EXIT_DATA_DIR_BUSY = 75

_held: dict[Path, IO[str]] = {}  # directory -> open lock file, for the life of the process


class BadDataDir(BadInput):
    """The data directory cannot be created, read or written."""


class DataDirBusy(BadInput):
    """Another process is crawling into the data directory."""

    exit_status = EXIT_DATA_DIR_BUSY


def _why(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "it is on a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a file is in the way"
    return exc.strerror or str(exc)


def usable(path: Path, writable: bool) -> Path:
    """``path`` as a directory this command can use, created when it must write; else
    BadDataDir saying why in one line."""
    if path.exists() and not path.is_dir():
        raise BadDataDir(f"--data {path} is a file, not a directory: give a directory (it is created if missing)")
    if not writable:
        if path.exists() and not os.access(path, os.R_OK | os.X_OK):
            raise BadDataDir(f"cannot read the data directory {path}: permission denied")
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadDataDir(f"cannot create the data directory {path}: {_why(exc)}") from None
    probe = path / f".write-check-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise BadDataDir(
            f"cannot write in the data directory {path}: {_why(exc)}; give a writable --data directory"
        ) from None
    return path


def crawl_holder(path: Path) -> str | None:
    """Who holds the crawl lock of ``path`` ("pid 123, tansuo crawl"), or None when no
    process does (a lock file left by an ended process holds nothing)."""
    lock = path / LOCK_NAME
    if path.resolve() in _held:
        return f"pid {os.getpid()} (this process)"
    try:
        with lock.open("r") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return f.read().strip() or "another process"
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:
        return None
    return None


def hold_crawl_lock(path: Path, command: str) -> None:
    """Take the crawl lock of ``path`` for the rest of this process's life (taking it
    again is a no-op), or raise DataDirBusy naming the process that holds it. Call it
    before the crawl sends any request."""
    key = path.resolve()
    if key in _held:
        return
    usable(path, writable=True)
    try:
        f = (path / LOCK_NAME).open("a+")
    except OSError as exc:
        raise BadDataDir(f"cannot write in the data directory {path}: {_why(exc)}") from None
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise DataDirBusy(
            f"{path} is being crawled into by {holder}: one crawl per data directory; wait for it to end "
            f"(or stop it with Ctrl-C), use another --data, or `tansuo seed` to send it more URLs"
        ) from None
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}, {command}\n")
    f.flush()
    _held[key] = f  # never closed: the lock lasts as long as the process


def release_all() -> None:
    """Let go of every crawl lock this process holds (tests; a process need not call it)."""
    for f in _held.values():
        f.close()
    _held.clear()


def command_line() -> str:
    """What ``ps`` would show of this command, shortened, for the lock file."""
    args = " ".join(sys.argv[1:3])
    return f"tansuo {args}".strip()
