"""The scheduler logs a line a minute while a crawl moves, and says so when it stalls."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.bootstrap import build_bus, build_frontier_state
from services.common.config import Settings
from services.scheduler.frontier import Frontier
from services.scheduler.scheduler import ProgressReport, Scheduler
from services.scheduler.scope import Scope


def _progress_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "jobs dispatched" in r.getMessage()]


def test_progress_is_logged_while_work_is_left_and_not_once_idle(tmp_path: Path, caplog) -> None:
    cfg = Settings(data_dir=tmp_path, frontier_host_delay_s=0)
    frontier = Frontier(cfg, build_frontier_state(cfg), Scope.from_settings(cfg, ["http://a.example.cn/"]))
    scheduler = Scheduler(frontier, build_bus(cfg))
    scheduler._report = ProgressReport(interval_s=0)
    with caplog.at_level("INFO", logger="services.scheduler.scheduler"):
        scheduler.step(0)  # nothing queued: idle, nothing to say
        assert _progress_lines(caplog) == []
        frontier.add_seeds(["http://a.example.cn/"])
        scheduler.step(0)  # the seed waits for robots.txt: a robots job goes out
        scheduler.step(0)  # nothing moved, but work is left: a stall is logged too
    lines = _progress_lines(caplog)
    assert len(lines) == 2
    assert "1 jobs dispatched" in lines[0] and "1 queued" in lines[0]
    assert "0 jobs dispatched, 0 outcomes" in lines[1] and "1 in flight" in lines[1]
