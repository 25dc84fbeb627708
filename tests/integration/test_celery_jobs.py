"""Periodic jobs through a real Celery worker on a real Redis broker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.common.config import Settings
from services.tasks.celery_app import beat_schedule, broker_url, create_celery

pytestmark = pytest.mark.integration


def test_the_beat_schedule_comes_from_settings_and_zero_turns_a_job_off():
    cfg = Settings(tasks_recrawl_sweep_interval_s=0, tasks_reindex_interval_s=86400)
    plan = beat_schedule(cfg)
    assert plan == {"reindex": {"task": "services.tasks.reindex", "schedule": 86400}}


def test_pagerank_is_no_celery_job_the_ranker_service_schedules_it():
    # Two schedulers would rank the same graph twice, the second from an empty memory
    # of what was written, so rewriting every page (services/ranker/rank_writes.py).
    plan = beat_schedule(Settings(tasks_recrawl_sweep_interval_s=60, tasks_reindex_interval_s=60))
    assert not [job for job in plan.values() if "pagerank" in job["task"]]
    app = create_celery(Settings(tasks_broker="redis://127.0.0.1:1/0"))
    assert not [name for name in app.tasks if "pagerank" in name]
    assert "ranker_interval_s" in Settings.model_fields and "tasks_pagerank_interval_s" not in Settings.model_fields


def test_the_broker_defaults_to_the_state_redis_and_says_so_when_missing():
    assert broker_url(Settings(state="redis://cache:6379/2?prefix=x")) == "redis://cache:6379/2"
    with pytest.raises(ValueError, match="TANSUO_TASKS_BROKER"):
        broker_url(Settings())
    with pytest.raises(ValueError, match="Redis Cluster.*TANSUO_TASKS_BROKER"):
        broker_url(Settings(state="redis+cluster://r1:6379,r2:6379/0"))
    assert broker_url(Settings(state="redis+cluster://r1:6379", tasks_broker="redis://queue:6379/0")) == "redis://queue:6379/0"


def test_a_worker_runs_a_job_sent_through_the_redis_broker(redis_url: str, tmp_path: Path):
    broker = redis_url.split("?", 1)[0]  # the fixture's ?prefix= is for our adapters, not kombu
    cfg = Settings(data_dir=tmp_path, tasks_broker=broker)
    env = {**os.environ, "TANSUO_DATA_DIR": str(tmp_path), "TANSUO_TASKS_BROKER": broker}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "services.tasks.celery_app", "worker",
         "--pool", "solo", "-Q", "tansuo", "--loglevel", "WARNING", "--without-heartbeat", "--without-gossip"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        app = create_celery(cfg)
        result = app.send_task("services.tasks.reindex", queue="tansuo").get(timeout=60)
        assert result == "the embedded index needs no reindex"
    finally:
        worker.terminate()
        worker.wait(30)
