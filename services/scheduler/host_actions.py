"""An operator's per-host actions on a crawl: pause, resume, recrawl now, purge.

One implementation for the console, the API and `tansuo host`, so the three cannot
drift. Each action talks to the ports only (FrontierState, and the Bus for purges),
so it works the same on SQLite and Redis, and it reaches a crawl that runs in another
process: the frontier state is the one the scheduler reads on every dispatch, and
removals go the way the scheduler's own do, over ``pages.removed`` to the indexer.

Why purges travel over the bus and are not deleted here: the index has one writer,
the indexer (tantivy allows one writer per directory, held by `tansuo crawl`; in a
cluster the api opens Elasticsearch read-only too), and removals and page events must
meet in one place to be ordered: a removal carries ``at``, and the indexer drops a
document only if it was fetched before then. A purge sent while no crawl runs (embedded
mode) waits on the durable bus and is applied when the next `tansuo crawl` or `run`
starts its indexer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from services.common.domain.messages import TOPIC_REMOVALS, PageRemoval
from services.common.errors import NotFound
from services.common.ports import Bus, FrontierState

ACTIONS = ("pause", "resume", "recrawl", "purge")


class UnknownHost(NotFound):
    """The frontier has never seen this host."""


@dataclass(frozen=True)
class HostActionResult:
    host: str
    action: str
    paused: bool  # the host's state after the action
    urls: int  # recrawl: URLs now due; purge: URLs sent for removal; else 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _paused(state: FrontierState, host: str) -> bool:
    info = state.get_host(host)
    if info is None:
        raise UnknownHost(host)
    return info.paused


def pause(state: FrontierState, host: str, now: float | None = None) -> HostActionResult:
    """No fetch job for the host until resumed; fetches in flight finish."""
    if not state.set_paused(host, True, time.time() if now is None else now):
        raise UnknownHost(host)
    return HostActionResult(host, "pause", True, 0)


def resume(state: FrontierState, host: str, now: float | None = None) -> HostActionResult:
    """Undo a pause (or the pause a purge left): its due URLs are fetched again."""
    if not state.set_paused(host, False, time.time() if now is None else now):
        raise UnknownHost(host)
    return HostActionResult(host, "resume", False, 0)


def recrawl(state: FrontierState, host: str, now: float | None = None) -> HostActionResult:
    """Every known URL of the host is due now. A paused host stays paused: its URLs
    wait, due, until it is resumed."""
    paused = _paused(state, host)
    n = state.recrawl_host(host, time.time() if now is None else now)
    return HostActionResult(host, "recrawl", paused, n)


def purge(state: FrontierState, bus: Bus, host: str, now: float | None = None) -> HostActionResult:
    """Pause the host first, so that nothing fetched after the removals brings a page
    back, then send a removal for each of its URLs and flush: durable on return."""
    now = time.time() if now is None else now
    if not state.set_paused(host, True, now):
        raise UnknownHost(host)
    urls = state.host_urls(host)
    for url in urls:
        bus.publish(TOPIC_REMOVALS, PageRemoval(url, "purged", now).to_bytes(), key=host)
    bus.flush()
    return HostActionResult(host, "purge", True, len(urls))


def run_action(state: FrontierState, bus_factory: Callable[[], Bus], host: str, action: str) -> HostActionResult:
    """Dispatch by name; ``bus_factory`` is called only for a purge, so the other
    actions need no bus (a read-only API pod, a CLI without TANSUO_BUS)."""
    if action == "pause":
        return pause(state, host)
    if action == "resume":
        return resume(state, host)
    if action == "recrawl":
        return recrawl(state, host)
    if action == "purge":
        return purge(state, bus_factory(), host)
    raise ValueError(f"unknown host action {action!r}: one of {', '.join(ACTIONS)}")
