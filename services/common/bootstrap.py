"""The one place that picks concrete adapters, each from its own setting's URL scheme.

An empty setting means the embedded backend under ``data_dir``. Imports of adapters
happen inside the builders so that the embedded mode never imports a cluster client.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from services.common.config import Settings
from services.common.ports import Bus, FrontierState, LinkGraph, PageStore, SearchIndex


class ConfigError(ValueError):
    """A setting names a backend that does not exist or is malformed."""


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
    raise ConfigError(f"TANSUO_BUS: unknown scheme {scheme!r} (see README: empty for embedded)")


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
    raise ConfigError(f"TANSUO_STORE: unknown scheme {scheme!r} (see README: empty for embedded)")


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

        try:
            return ElasticsearchSearchIndex.from_url(cfg.index, cfg, read_only=read_only)
        except ValueError as exc:  # a malformed TANSUO_INDEX
            raise ConfigError(f"TANSUO_INDEX: {exc}") from exc
    raise ConfigError(f"TANSUO_INDEX: unknown scheme {scheme!r} (see README: empty for embedded)")


def build_link_graph(cfg: Settings) -> LinkGraph:
    scheme = _scheme(cfg.state)
    if scheme in ("", "sqlite"):
        from services.common.adapters.sqlite.link_graph import SqliteLinkGraph

        return SqliteLinkGraph(cfg.data_dir / "links.sqlite3")
    if scheme in ("redis", "rediss", "redis+cluster", "rediss+cluster"):
        from services.common.adapters.redis.link_graph import RedisLinkGraph

        return RedisLinkGraph.from_url(cfg.state)
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (see README: empty for embedded)")


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
    raise ConfigError(f"TANSUO_STATE: unknown scheme {scheme!r} (see README: empty for embedded)")
