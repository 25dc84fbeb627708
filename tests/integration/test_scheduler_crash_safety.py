"""Killing the scheduler between any two steps of handling a page event loses no
redirect target and no index removal: the event is replayed, and what the first run
did not finish is done then.

A kill is modelled by an exception raised at a chosen call (the process stops there:
nothing after it runs, nothing is committed) and by a bus that, like a Kafka producer,
holds what was published until it is flushed; a kill drops what it holds. The
scheduler is then built afresh on the same frontier file and bus, as a restart would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.messages import (
    TOPIC_PAGES,
    TOPIC_REMOVALS,
    PageEvent,
    PageRemoval,
)
from services.scheduler.frontier import Frontier
from services.scheduler.scheduler import GROUP, Scheduler
from services.scheduler.scope import Scope

SITE = "http://example.cn"


class Killed(Exception):
    """The scheduler process died here."""


class Fuse:
    """Blows at the ``at``-th call of one named method, counted over every wrapper."""

    def __init__(self, method: str, at: int) -> None:
        self.method, self.at, self.calls = method, at, 0

    def check(self, name: str) -> None:
        if name == self.method:
            self.calls += 1
            if self.calls == self.at:
                raise Killed(f"killed before {name}")


class Dying:
    """A FrontierState or Bus whose process may be killed before any call."""

    def __init__(self, inner: Any, fuse: Fuse) -> None:
        self._inner, self._fuse = inner, fuse

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self._fuse.check(name)
            return target(*args, **kwargs)

        return call


class BufferingBus:
    """SqliteBus with a producer buffer: publishes reach the log only on flush."""

    def __init__(self, inner: SqliteBus) -> None:
        self._inner = inner
        self._held: list[tuple[str, bytes, str]] = []

    def publish(self, topic: str, payload: bytes, key: str = "") -> None:
        self._held.append((topic, payload, key))

    def flush(self) -> None:
        for topic, payload, key in self._held:
            self._inner.publish(topic, payload, key)
        self._held.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def answer(job: Any, status: int, **fields: Any) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind, depth=job.depth,
                     status=status, fetched_at=1.0, **fields)  # fmt: skip


def prepare(tmp_path: Path) -> Settings:
    """A host whose robots.txt is read, /old and /gone leased; /gone answered 404
    once already; the events of this fetch round (/old moved, /gone 404 again) on the bus."""
    cfg = Settings(data_dir=tmp_path, frontier_host_delay_s=0, frontier_sitemaps=False, frontier_host_parallelism=4)
    state = SqliteFrontierState(tmp_path / "frontier.sqlite3")
    f = Frontier(cfg, state, Scope.from_settings(cfg, [f"{SITE}/"]))
    f.add_seeds([f"{SITE}/old", f"{SITE}/gone"])
    (robots,) = f.dispatch()
    f.complete(answer(robots, 404))
    jobs = {j.url: j for j in f.dispatch()}
    f.complete(answer(jobs[f"{SITE}/gone"], 404))
    state.requeue(f"{SITE}/gone", 0.0)
    jobs |= {j.url: j for j in f.dispatch()}
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    for group in (GROUP, "test"):
        bus.subscribe(TOPIC_REMOVALS, group)
        bus.subscribe(TOPIC_PAGES, group)
    bus.publish(TOPIC_PAGES, answer(jobs[f"{SITE}/old"], 301, redirect_to=f"{SITE}/new").to_bytes())
    bus.publish(TOPIC_PAGES, answer(jobs[f"{SITE}/gone"], 404).to_bytes())
    bus.close()
    state.close()
    return cfg


def run_scheduler(cfg: Settings, fuse: Fuse | None) -> bool:
    """Runs the scheduler until its work is done or it is killed; True if killed."""
    state = SqliteFrontierState(cfg.data_dir / "frontier.sqlite3")
    raw_bus = SqliteBus(cfg.data_dir / "bus.sqlite3")
    bus: Any = BufferingBus(raw_bus)
    frontier_state: Any = state
    if fuse is not None:
        bus, frontier_state = Dying(bus, fuse), Dying(state, fuse)
    scheduler = Scheduler(Frontier(cfg, frontier_state, Scope.from_settings(cfg, [f"{SITE}/"])), bus)
    try:
        for _ in range(3):
            scheduler.step(0.0)
        bus.flush()
    except Killed:
        return True  # the process is gone: whatever the buffer held is lost with it
    finally:
        raw_bus.close()
        state.close()
    return False


# Every call that changes something durable, at the first and at the second event.
# (commit: the first two are of the empty seed and link polls, the third of the events.)
KILL_POINTS = [
    # (finish also releases the host's slot: one step, so no kill point between them.)
    *[(m, n) for m in ("url_info", "flush", "finish") for n in (1, 2)],
    ("add_urls", 1),  # the redirect target: only the first event has one
    ("commit", 3),
]


@pytest.mark.parametrize(("method", "at"), KILL_POINTS)
def test_a_killed_scheduler_loses_no_redirect_target_and_no_removal(tmp_path: Path, method: str, at: int) -> None:
    cfg = prepare(tmp_path)
    assert run_scheduler(cfg, Fuse(method, at)), "never reached the kill point"
    run_scheduler(cfg, None)  # the restart

    state = SqliteFrontierState(tmp_path / "frontier.sqlite3")
    assert state.url_state(f"{SITE}/new") is not None, "redirect target lost"
    assert state.url_state(f"{SITE}/old")[0] == "done" and state.url_state(f"{SITE}/gone")[0] == "done"
    state.close()
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    sent = {PageRemoval.from_bytes(m.payload).url for m in bus.poll(TOPIC_REMOVALS, "test", 0.0, 100)}
    assert bus.pending(TOPIC_PAGES, GROUP) == 0
    bus.close()
    assert sent == {f"{SITE}/old", f"{SITE}/gone"}, "removal lost"
