"""Is a fetch job still wanted? Asked by a crawler just before it fetches.

A job message can outlive its lease: redelivered after a crash or a rebalance, after
the frontier already recorded the page (the crawler commits jobs in batches). Fetching
it again would waste a request and could break the host's politeness, so the crawler
drops jobs whose lease the frontier no longer holds.
"""

from __future__ import annotations

from collections.abc import Callable

from services.common.domain.messages import FetchJob
from services.common.ports import FrontierState


def lease_checker(state: FrontierState) -> Callable[[FetchJob], bool]:
    def is_current(job: FetchJob) -> bool:
        if job.kind == "robots":
            host = state.get_host(job.host)
            return host is not None and host.robots_state == "fetching"
        return state.is_leased(job.url, job.lease_id)

    return is_current
