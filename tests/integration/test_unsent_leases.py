"""A lease whose job never reached the bus goes back to the queue at once, not after
the lease timeout: when the bus refuses the job, and when a killed embedded crawl left
it behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from services.cli.embedded_crawl import EmbeddedCrawl
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.bootstrap import build_bus, build_frontier_state
from services.common.config import Settings
from services.common.domain.frontier_types import HostUpdate, NewUrl
from services.scheduler.frontier import Frontier
from services.scheduler.scheduler import Scheduler
from services.scheduler.scope import Scope

HOST = "a.example.cn"


def _ready_host_with(state: SqliteFrontierState, *paths: str, now: float) -> None:
    state.ensure_host(HOST, "http", 0.0)
    state.update_host(HOST, HostUpdate(robots_state="ready", robots_txt=""), now, release=False)
    state.add_urls([NewUrl(f"http://{HOST}{p}", HOST, 0) for p in paths], now, 1000)


def test_jobs_the_bus_refused_are_queued_again_at_once(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path, frontier_host_delay_s=0, frontier_sitemaps=False)
    state = build_frontier_state(cfg)
    _ready_host_with(state, "/1", "/2", now=time.time())
    bus = build_bus(cfg)
    scheduler = Scheduler(Frontier(cfg, state, Scope.from_settings(cfg, [f"http://{HOST}/"])), bus)
    bus.close()  # the bus now refuses every publish
    with pytest.raises(Exception):  # noqa: B017 - whatever the bus raises, the step fails
        scheduler.step(0)
    assert {state.url_state(f"http://{HOST}{p}")[0] for p in ("/1", "/2")} == {"queued"}
    assert state.get_host(HOST).inflight == 0


def test_a_resumed_embedded_crawl_queues_the_leases_a_killed_run_never_sent(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path, frontier_host_delay_s=0, frontier_sitemaps=False)
    state = build_frontier_state(cfg)
    before = time.time() - 60
    _ready_host_with(state, "/orphan", now=before)
    (lease,) = state.lease_due(before, 10, 1, 10)  # leased by the run that was killed
    state.close()

    crawl = EmbeddedCrawl(cfg, [f"http://{HOST}/"])
    state = crawl.frontier.state
    _ready_host_with(state, "/fresh", now=time.time())
    (fresh,) = state.lease_due(time.time(), 10, 2, 10)  # leased by this run: left alone
    crawl._release_orphaned_leases()
    assert state.url_state(lease.url)[0] == "queued"
    assert state.url_state(fresh.url)[0] == "leased"


def test_a_resumed_embedded_crawl_asks_again_for_the_robots_txt_a_killed_run_never_sent(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path, frontier_host_delay_s=0, frontier_sitemaps=False)
    state = build_frontier_state(cfg)
    before = time.time() - 60
    state.ensure_host(HOST, "http", 0.0)
    state.add_urls([NewUrl(f"http://{HOST}/", HOST, 0)], before, 1000)
    (claimed,) = state.claim_robots(before, 10)  # claimed by the run that was killed
    state.close()

    crawl = EmbeddedCrawl(cfg, [f"http://{HOST}/"])
    crawl._release_orphaned_leases()
    host = crawl.frontier.state.get_host(HOST)
    assert (host.robots_state, host.inflight) == ("unknown", 0)
