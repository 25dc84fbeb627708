"""`tansuo crawler`: one crawler worker as its own process (cluster mode).

Same shape as every worker's main: build the adapters, run until SIGTERM/SIGINT,
then drain. Scrapy's shutdown handlers do the signal part: the first signal
finishes the fetches in flight, a second one abandons them.
"""

from __future__ import annotations

from services.common.bootstrap import build_bus, build_page_store
from services.common.settings import Settings
from services.crawler.worker import CrawlerWorker


def run(cfg: Settings) -> None:
    bus, store = build_bus(cfg), build_page_store(cfg)
    store.ping()
    bus.ping()
    worker = CrawlerWorker(cfg, bus, store)
    try:
        worker.run()
    finally:
        bus.flush()
        bus.close()
