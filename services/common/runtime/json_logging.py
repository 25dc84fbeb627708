"""One JSON object per log line, for log collectors (``TANSUO_LOG_FORMAT=json``).

Each line carries the time, level, logger, message and service, plus the
``job_id`` (crawler: the fetch job's lease) or ``request_id`` (API) of the work
being done when it was logged, so that every line about one page or one request can
be found with one query. The ids live in a ContextVar rather than a thread-local:
the crawler handles many jobs on one reactor thread, one callback at a time.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

_context: ContextVar[dict[str, str]] = ContextVar("tansuo_log_context", default={})  # noqa: B039 - never mutated

# Attributes every LogRecord has; anything else came in through ``extra=`` and is logged.
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


@contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """Add ``fields`` (e.g. ``job_id=lease_id``) to every line logged inside the block.

    Only around synchronous code: a block spanning a ``yield`` or an ``await`` would
    lend its ids to whatever runs in between.
    """
    token = _context.set({**_context.get(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, str]:
    """The ids set by the enclosing ``log_context`` blocks."""
    return dict(_context.get())


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", "service", [ids], [extra], [exception]}``.

    Non-ASCII stays as is (a Chinese title in a message is readable in the raw log),
    and json.dumps escapes newlines, so one record is always one line.
    """

    def __init__(self, service: str) -> None:
        super().__init__()
        self._service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "service": self._service,
        }
        entry.update(_context.get())
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRS and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)
