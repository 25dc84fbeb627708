"""The ranker as its own process: build the adapters, loop until SIGTERM, rank once more."""

from __future__ import annotations

import logging
import signal
import threading

from services.common.bootstrap import build_bus, build_link_graph, build_search_index
from services.common.settings import Settings
from services.ranker.ranker import Ranker

log = logging.getLogger(__name__)


def run(cfg: Settings) -> None:
    """Consume ``links.discovered`` and rank every ``ranker_interval_s`` until SIGTERM or
    SIGINT; the final run means a stopped ranker leaves the index with current ranks."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    bus, graph, index = build_bus(cfg), build_link_graph(cfg), build_search_index(cfg)
    try:
        Ranker(cfg, bus, graph, index).run(stop)
    finally:
        index.close()
        bus.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    run(Settings())


if __name__ == "__main__":
    main()
