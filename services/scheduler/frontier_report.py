"""What the frontier holds, for people and for tools: `tansuo frontier` and /api/frontier."""

from __future__ import annotations

import time
from typing import Any

from services.common.ports import FrontierState


def frontier_report(state: FrontierState, hosts: int = 50, upcoming: int = 20, now: float | None = None) -> dict[str, Any]:
    """Counts, per-host state (busiest first), blocked hosts and why, next fetches.
    Times are epoch seconds; ``*_in_s`` fields are relative to now for reading."""
    now = time.time() if now is None else now
    counts = state.counts(now)
    host_rows = state.hosts(limit=hosts)
    counters = state.counters()
    return {
        "queued": counts.queued,
        "in_flight": counts.leased,
        "due_now": counts.due,
        "fetched": counts.fetched,
        "done": counts.done,
        "failed": counts.failed,
        "excluded": counts.excluded,
        "hosts_total": counts.hosts,
        # How often each crawl limit cut something (docs/crawl-limits.md).
        "limits": {name.removeprefix("limit:"): n for name, n in sorted(counters.items())
                   if name.startswith("limit:") and "@" not in name},
        "hosts_given_up": counters.get("hosts_given_up", 0),
        "hosts": [
            {
                "host": h.host,
                "queued": h.queued,
                "in_flight": h.inflight,
                "admitted": h.admitted,
                "delay_s": h.delay_s,
                "robots": h.robots_state,
                "next_fetch_in_s": round(max(h.next_allowed_at - now, 0.0), 3),
                "paused": h.paused,
            }
            for h in host_rows
        ],
        "blocked_hosts": [
            {"host": h.host, "until": h.blocked_until, "in_s": round(h.blocked_until - now, 3), "reason": h.block_reason}
            for h in host_rows
            if h.blocked_until > now
        ],
        "upcoming": [
            {"url": url, "state": st, "due_at": due, "in_s": round(due - now, 3)}
            for url, st, due in state.upcoming(upcoming)
        ],
    }
