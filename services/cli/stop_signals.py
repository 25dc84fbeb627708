"""Ctrl-C and SIGTERM stop a command that serves after its crawl (`tansuo run`, `demo`).

Scrapy's reactor replaces Python's SIGINT and SIGTERM handlers with its own, which
stop the reactor; once the crawl is over nothing listens to them, and a `kill -INT`
or a service manager's SIGTERM was ignored while the UI went on serving.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def restore_stop_signals() -> None:
    """Both signals raise KeyboardInterrupt in the main thread again."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop)
