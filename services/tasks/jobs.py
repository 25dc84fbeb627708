"""Periodic and admin jobs as plain functions of the adapters they work on.

Celery (cluster mode) schedules them; the embedded mode runs the same work in its own
threads. A job is handed its adapters (services/tasks/celery_app.py builds them once
per worker process), so it never knows the backend.
"""

from __future__ import annotations

import logging

from services.common.config import Settings
from services.common.ports import FrontierState, SearchIndex
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope

log = logging.getLogger(__name__)


def sweep_recrawl(cfg: Settings, state: FrontierState, limit: int = 100_000) -> int:
    """Queue every URL whose recrawl time has come."""
    return Frontier(cfg, state, Scope.from_settings(cfg)).sweep_recrawl(limit)


def reindex(index: SearchIndex) -> str:
    """Rebuild the index behind its alias with no downtime (Elasticsearch only: the
    embedded index is rewritten in place and needs no such swap)."""
    rebuild = getattr(index, "reindex_into_new_index", None)  # not a port method: Elasticsearch's own
    if rebuild is None:
        return "the embedded index needs no reindex"
    return str(rebuild())
