"""Crawlers drop fetch jobs whose lease the frontier no longer holds."""

from __future__ import annotations

from pathlib import Path

from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.scheduler.frontier import Frontier
from services.scheduler.lease_check import lease_checker
from services.scheduler.scope import Scope


def test_a_job_is_current_until_its_outcome_is_recorded():
    cfg = Settings(data_dir=Path("unused"), frontier_host_delay_s=0, frontier_sitemaps=False)
    state = SqliteFrontierState(Path(":memory:"))
    f = Frontier(cfg, state, Scope.from_settings(cfg, ["http://example.cn/"]))
    f.add_seeds(["http://example.cn/"])
    is_current = lease_checker(state)
    (robots,) = f.dispatch()
    assert is_current(robots)
    f.complete(PageEvent(url=robots.url, host=robots.host, lease_id=robots.lease_id, kind="robots", status=404))
    assert not is_current(robots)
    (page,) = f.dispatch()
    assert is_current(page)
    assert not is_current(type(page)(url=page.url, host=page.host, lease_id="an-older-lease"))
    f.complete(PageEvent(url=page.url, host=page.host, lease_id=page.lease_id, status=200, content_hash="x"))
    assert not is_current(page)  # a redelivered copy of this job is not fetched again
