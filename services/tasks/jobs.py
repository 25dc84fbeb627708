"""Periodic and admin jobs as plain functions of the settings.

Celery (cluster mode) schedules them; the embedded mode runs the same work in its own
threads. Each job builds its adapters through bootstrap, so it never knows the backend.
"""

from __future__ import annotations

import logging

from services.common.bootstrap import build_frontier_state, build_search_index
from services.common.config import Settings
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope

log = logging.getLogger(__name__)


def sweep_recrawl(cfg: Settings, limit: int = 100_000) -> int:
    """Queue every URL whose recrawl time has come."""
    state = build_frontier_state(cfg)
    try:
        return Frontier(cfg, state, Scope.from_settings(cfg)).sweep_recrawl(limit)
    finally:
        state.close()


def reindex(cfg: Settings) -> str:
    """Rebuild the index behind its alias with no downtime (Elasticsearch only: the
    embedded index is rewritten in place and needs no such swap)."""
    index = build_search_index(cfg)
    try:
        rebuild = getattr(index, "reindex_into_new_index", None)
        if rebuild is None:
            return "the embedded index needs no reindex"
        return str(rebuild())
    finally:
        index.close()
