"""Standalone indexer process: consume page events until SIGTERM, then drain."""

from __future__ import annotations

import logging
import signal
import threading

from services.common.bootstrap import build_bus, build_search_index
from services.common.settings import Settings
from services.indexer.indexer import Indexer

log = logging.getLogger(__name__)


def run(cfg: Settings, stop: threading.Event | None = None) -> None:
    """Index until SIGTERM or SIGINT (or ``stop``, for callers in another thread).

    The one-second poll means a signal is noticed well within Kubernetes' grace period.
    """
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    bus, index = build_bus(cfg), build_search_index(cfg)
    indexer = Indexer(cfg, bus, index)
    log.info("indexer started: %s documents in the index", index.count())
    try:
        indexer.run(stop)
    finally:
        log.info(
            "indexer stopped: %s indexed, %s duplicates, %s deleted",
            indexer.indexed,
            indexer.duplicates,
            indexer.deleted,
        )
        index.close()
        bus.close()
