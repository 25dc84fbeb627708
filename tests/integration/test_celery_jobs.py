"""Periodic jobs through a real Celery worker on a real Redis broker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.common.bootstrap import build_link_graph, build_search_index
from services.common.settings import Settings
from services.tasks.celery_app import beat_schedule, broker_url, create_celery
from tests.page_events import index_doc

pytestmark = pytest.mark.integration


def test_the_beat_schedule_comes_from_settings_and_zero_turns_a_job_off():
    cfg = Settings(tasks_pagerank_interval_s=120, tasks_recrawl_sweep_interval_s=0, tasks_reindex_interval_s=86400)
    plan = beat_schedule(cfg)
    assert plan["recompute-pagerank"] == {"task": "services.tasks.recompute_pagerank", "schedule": 120}
    assert "sweep-recrawl" not in plan and plan["reindex"]["schedule"] == 86400


def test_the_broker_defaults_to_the_state_redis_and_says_so_when_missing():
    assert broker_url(Settings(state="redis://cache:6379/2?prefix=x")) == "redis://cache:6379/2"
    with pytest.raises(ValueError, match="TANSUO_TASKS_BROKER"):
        broker_url(Settings())


def test_a_worker_recomputes_pagerank_into_the_index(redis_url: str, tmp_path: Path):
    broker = redis_url.split("?", 1)[0]  # the fixture's ?prefix= is for our adapters, not kombu
    cfg = Settings(data_dir=tmp_path, tasks_broker=broker)
    index = build_search_index(cfg)
    index.upsert([index_doc(f"http://a.cn/{n}", title=f"页面 {n}") for n in range(3)])
    index.commit()
    index.close()
    graph = build_link_graph(cfg)
    graph.set_outlinks("http://a.cn/0", [("http://a.cn/1", "第一"), ("http://a.cn/2", "第二")])
    graph.set_outlinks("http://a.cn/1", [("http://a.cn/2", "第二页")])
    graph.set_outlinks("http://a.cn/2", [("http://a.cn/0", "首页")])
    env = {**os.environ, "TANSUO_DATA_DIR": str(tmp_path), "TANSUO_TASKS_BROKER": broker}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "services.tasks.celery_app", "worker",
         "--pool", "solo", "-Q", "tansuo", "--loglevel", "WARNING", "--without-heartbeat", "--without-gossip"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        app = create_celery(cfg)
        result = app.send_task("services.tasks.recompute_pagerank", queue="tansuo").get(timeout=60)
        assert result["nodes"] == 3 and result["edges"] == 4
    finally:
        worker.terminate()
        worker.wait(30)
    reader = build_search_index(cfg, read_only=True)
    ranks = {u: reader.get(u).pagerank for u in reader.urls()}
    assert sum(ranks.values()) == pytest.approx(1.0, abs=1e-6)
    assert ranks["http://a.cn/2"] > ranks["http://a.cn/1"]
    assert "首页" in reader.get("http://a.cn/0").anchors
