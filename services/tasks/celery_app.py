"""Celery for cluster mode: recrawl sweeps and reindexing, on a beat schedule set by
configuration.

PageRank is not among them: the ranker service (``tansuo ranker``) is its one scheduler.
It holds the state a run needs (the last run's fields, what it wrote, which documents
wait) and runs early when the crawl goes quiet; a second scheduler here would rank the
same graph twice and rewrite every page from an empty memory of what was written.

    celery -A services.tasks.celery_app worker --loglevel=INFO
    celery -A services.tasks.celery_app beat

The broker is TANSUO_TASKS_BROKER, or else the Redis of TANSUO_STATE. Tasks take no
arguments: each worker reads its settings from the environment, like every service,
and builds its adapters once.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery

from services.common.bootstrap import Backends
from services.common.config import Settings
from services.tasks import jobs


def broker_url(cfg: Settings) -> str:
    if cfg.tasks_broker:
        return cfg.tasks_broker
    if cfg.state.startswith(("redis://", "rediss://")):
        return cfg.state.split("?", 1)[0]
    if cfg.state.startswith(("redis+cluster://", "rediss+cluster://")):
        # Celery's Redis transport (kombu) speaks to one Redis, not to a cluster.
        raise ValueError("Celery cannot use Redis Cluster as its broker: set TANSUO_TASKS_BROKER (a single Redis)")
    raise ValueError("Celery needs a broker: set TANSUO_TASKS_BROKER or a redis:// TANSUO_STATE")


def beat_schedule(cfg: Settings) -> dict[str, dict[str, Any]]:
    """An interval of 0 turns a job off."""
    plan = {
        "sweep-recrawl": ("services.tasks.sweep_recrawl", cfg.tasks_recrawl_sweep_interval_s),
        "reindex": ("services.tasks.reindex", cfg.tasks_reindex_interval_s),
    }
    return {name: {"task": task, "schedule": every} for name, (task, every) in plan.items() if every > 0}


def create_celery(cfg: Settings | None = None) -> Celery:
    cfg = cfg or Settings()
    app = Celery("tansuo", broker=broker_url(cfg), backend=broker_url(cfg))
    app.conf.update(
        beat_schedule=beat_schedule(cfg),
        task_acks_late=True,  # a worker killed mid-task leaves it for another worker
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,  # a reindex is long: one task at a time per process
        broker_connection_retry_on_startup=True,
        task_default_queue="tansuo",
        timezone="UTC",
    )

    # The worker's composition root: adapters are built on a task's first use, in the
    # worker process that runs it (never before Celery forks its pool), and kept.
    backends = Backends(cfg)

    @app.task(name="services.tasks.sweep_recrawl")
    def sweep_recrawl() -> int:
        return jobs.sweep_recrawl(cfg, backends.frontier)

    @app.task(name="services.tasks.reindex")
    def reindex() -> str:
        return jobs.reindex(backends.index)

    return app


@cache
def _default_app() -> Celery:
    return create_celery()


def __getattr__(name: str) -> Celery:
    # `celery -A services.tasks.celery_app` looks up `app`/`celery` on this module;
    # building it lazily keeps importing the module free of broker settings.
    if name in ("app", "celery"):
        return _default_app()
    raise AttributeError(name)
