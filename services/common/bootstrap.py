"""The one place that picks concrete adapters, each from its own setting's URL scheme.

An empty setting means the embedded backend under ``data_dir``. Imports of adapters
happen inside the builders so that the embedded mode never imports a cluster client.
``Backends`` holds the adapters of one process: each entrypoint (the CLI, the API app,
the Celery app) makes one and hands what it holds down.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from services.common.config import Settings
from services.common.errors import ConfigError
from services.common.ports import (
    Bus,
    DictionaryStore,
    FrontierState,
    LinkGraph,
    PageStore,
    SearchIndex,
    SearchLog,
)

__all__ = [
    "Backends",
    "ConfigError",
    "build_bus",
    "build_dictionary_store",
    "build_frontier_state",
    "build_link_graph",
    "build_page_store",
    "build_search_index",
    "build_search_log",
    "embedded_index",
]

A = TypeVar("A")


def _scheme(value: str) -> str:
    return urlsplit(value).scheme if value else ""


def build_bus(cfg: Settings) -> Bus:
    scheme = _scheme(cfg.bus)
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.bus import SqliteBus

        return SqliteBus(cfg.data_dir / "bus.sqlite3")
    if scheme == "kafka":
        from services.common.adapters.kafka.bus import KafkaBus

        try:
            return KafkaBus.from_url(cfg.bus, cfg)
        except ValueError as exc:
            raise ConfigError(f"TANSUO_BUS: {exc}") from exc
    raise ConfigError(f"TANSUO_BUS: unknown scheme {scheme!r} (docs/architecture.md: empty for embedded)")


def build_page_store(cfg: Settings) -> PageStore:
    scheme = _scheme(cfg.store)
    if scheme in ("", "file"):
        from services.common.adapters.packs.page_store import PackPageStore

        return PackPageStore(cfg.data_dir / "pages")
    if scheme in ("s3", "s3+http", "s3+https"):
        from services.common.adapters.s3.page_store import S3PageStore

        try:
            return S3PageStore.from_url(cfg.store, cfg)
        except ValueError as exc:
            raise ConfigError(f"TANSUO_STORE: {exc}") from exc
    raise ConfigError(f"TANSUO_STORE: unknown scheme {scheme!r} (docs/architecture.md: empty for embedded)")


def embedded_index(cfg: Settings) -> bool:
    """Whether the search index is the data directory's own (tantivy), not a server's."""
    return _scheme(cfg.index) in ("", "tantivy")


def build_search_index(cfg: Settings, read_only: bool = False) -> SearchIndex:
    """``read_only`` opens the index without taking the writer lock, so `tansuo serve`
    can answer queries while `tansuo crawl` writes in another process."""
    scheme = _scheme(cfg.index)
    if embedded_index(cfg):
        from services.common.adapters.tantivy.search_index import TantivySearchIndex

        return TantivySearchIndex(cfg.data_dir / "index", cfg, read_only=read_only)
    if scheme in ("elasticsearch", "elasticsearchs"):
        from services.common.adapters.elasticsearch.search_index import (
            ElasticsearchSearchIndex,
        )
        from services.common.runtime.metrics import INDEX_REQUESTS

        def count(endpoint: str) -> None:
            INDEX_REQUESTS.labels(endpoint=endpoint).inc()

        try:
            return ElasticsearchSearchIndex.from_url(cfg.index, cfg, read_only=read_only, count_request=count)
        except ValueError as exc:  # a malformed TANSUO_INDEX
            raise ConfigError(f"TANSUO_INDEX: {exc}") from exc
    raise ConfigError(f"TANSUO_INDEX: unknown scheme {scheme!r} (docs/architecture.md: empty for embedded)")


def build_link_graph(cfg: Settings) -> LinkGraph:
    scheme = _scheme(cfg.state)
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.link_graph import SqliteLinkGraph

        return SqliteLinkGraph(cfg.data_dir / "links.sqlite3")
    if scheme in ("redis", "rediss", "redis+cluster", "rediss+cluster"):
        from services.common.adapters.redis.link_graph import RedisLinkGraph

        return RedisLinkGraph.from_url(cfg.state)
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (docs/architecture.md: empty for embedded)")


def build_frontier_state(cfg: Settings) -> FrontierState:
    scheme = _scheme(cfg.state)
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.frontier import SqliteFrontierState

        return SqliteFrontierState(cfg.data_dir / "frontier.sqlite3")
    if scheme in ("redis", "rediss", "redis+cluster", "rediss+cluster"):
        from services.common.adapters.redis.frontier import (
            FrontierLayoutError,
            RedisFrontierState,
        )

        try:
            # A new frontier gets a shard per partition of the bus's topics, so that a
            # scheduler's partitions name its shards (services/common/domain/host_partition.py).
            return RedisFrontierState.from_url(cfg.state, shards=cfg.bus_partitions)
        except FrontierLayoutError as exc:
            raise ConfigError(f"TANSUO_STATE: {exc}") from exc
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (docs/architecture.md: empty for embedded)")


_REDIS_SCHEMES = ("redis", "rediss", "redis+cluster", "rediss+cluster")


def build_search_log(cfg: Settings) -> SearchLog:
    """Search analytics live where the crawl state does (TANSUO_STATE)."""
    scheme = _scheme(cfg.state)
    limits = {"retention_days": cfg.analytics_retention_days, "recent_limit": cfg.analytics_recent_searches,
              "max_queries_per_day": cfg.analytics_max_queries_per_day}  # fmt: skip
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.search_log import SqliteSearchLog

        return SqliteSearchLog(cfg.data_dir / "search_log.sqlite3", **limits)
    if scheme in _REDIS_SCHEMES:
        from services.common.adapters.redis.search_log import RedisSearchLog

        return RedisSearchLog.from_url(cfg.state, **limits)
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (see README: empty for embedded)")


def build_dictionary_store(cfg: Settings) -> DictionaryStore:
    """The operator's dictionaries live where the crawl state does (TANSUO_STATE)."""
    scheme = _scheme(cfg.state)
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.dictionaries import SqliteDictionaryStore

        return SqliteDictionaryStore(cfg.data_dir / "dictionaries.sqlite3")
    if scheme in _REDIS_SCHEMES:
        from services.common.adapters.redis.dictionaries import RedisDictionaryStore

        return RedisDictionaryStore.from_url(cfg.state)
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (see README: empty for embedded)")


class Backends:
    """The adapters of one process, each built from the settings on first use (a
    search-only server never opens the frontier) and at most once, then closed
    together. ``index`` may be given (the crawl's own index in `tansuo run`, a stand-in
    while `tansuo api` connects); ``read_only_index`` opens the index without its
    writer lock, for processes that only search."""

    def __init__(self, settings: Settings, *, index: SearchIndex | None = None, read_only_index: bool = False) -> None:
        self.settings = settings
        self._read_only_index = read_only_index
        self._lock = threading.Lock()
        self._built: dict[str, Any] = {} if index is None else {"index": index}
        self._owned: list[Any] = []  # built here, so closed here

    def _get(self, name: str, build: Callable[[], A]) -> A:
        with self._lock:  # two request threads must not open two frontiers
            if name not in self._built:
                adapter = build()
                self._built[name] = adapter
                self._owned.append(adapter)
            return self._built[name]  # keyed by name, typed by build

    @property
    def index(self) -> SearchIndex:
        return self._get("index", lambda: build_search_index(self.settings, read_only=self._read_only_index))

    @property
    def frontier(self) -> FrontierState:
        return self._get("frontier", lambda: build_frontier_state(self.settings))

    @property
    def bus(self) -> Bus:
        return self._get("bus", lambda: build_bus(self.settings))

    @property
    def page_store(self) -> PageStore:
        return self._get("page_store", lambda: build_page_store(self.settings))

    @property
    def link_graph(self) -> LinkGraph:
        return self._get("link_graph", lambda: build_link_graph(self.settings))

    @property
    def search_log(self) -> SearchLog:
        return self._get("search_log", lambda: build_search_log(self.settings))

    @property
    def dictionaries(self) -> DictionaryStore:
        return self._get("dictionaries", lambda: build_dictionary_store(self.settings))

    def close(self) -> None:
        """Close every adapter built here, newest first; given ones stay open."""
        with self._lock:
            owned, self._owned = self._owned, []
            self._built = {k: v for k, v in self._built.items() if not any(v is o for o in owned)}
        for adapter in reversed(owned):
            close = getattr(adapter, "close", None)
            if close is not None:
                close()
