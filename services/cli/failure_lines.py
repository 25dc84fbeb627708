"""The one line `tansuo` prints for an error that is not a user's mistake (a disk, a
database, a backend, a bug), and its exit status: a traceback helps a developer and
tells an operator nothing, so it is printed only with ``-v``.
"""

from __future__ import annotations

import sqlite3
import traceback
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version

from services.common.errors import BackendUnavailable, IndexWriterBusy

EXIT_FAILED = 1
EXIT_BUSY = 75  # sysexits.h EX_TEMPFAIL: another process holds what this one needs; try later
EXIT_UNAVAILABLE = 69  # sysexits.h EX_UNAVAILABLE: a backend cannot be reached


def version() -> str:
    try:
        return package_version("tansuo")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def failure_line(exc: BaseException, verbose: bool) -> tuple[str, int]:
    """(what went wrong in one line, exit status); with ``verbose`` the traceback is
    printed first."""
    if verbose:
        traceback.print_exception(exc)
    hint = "" if verbose else " (run with -v for details)"
    if isinstance(exc, IndexWriterBusy):
        return f"{exc}", EXIT_BUSY
    if isinstance(exc, BackendUnavailable):
        return f"{exc}", EXIT_UNAVAILABLE
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}", EXIT_FAILED
    if isinstance(exc, sqlite3.Error):
        return f"the crawl's database cannot be used ({exc}): is the data directory writable?{hint}", EXIT_FAILED
    return f"internal error: {type(exc).__name__}: {exc}{hint}", EXIT_FAILED
