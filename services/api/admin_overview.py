"""What the operator console shows, gathered from the frontier state: crawl status, the
pages-per-second chart, every host's state and the crawl report.

Built from the same reports as `tansuo frontier` and `tansuo report`, so the console
never says something the CLI and the API do not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from services.api.rate_chart import RateChart, rate_chart
from services.common.domain.frontier_types import FrontierCounts, HostInfo
from services.common.ports import FrontierState, LinkGraph
from services.scheduler.crawl_report import crawl_report

HOSTS_SHOWN = 200
# robots.txt lines that decide something for a crawler; comments and blank lines are not shown.
_RULE_FIELDS = ("user-agent", "allow", "disallow", "crawl-delay", "sitemap")
_GIVEN_UP = "given up: "


@dataclass(frozen=True)
class HostRow:
    host: str
    state: str  # paused | blocked | given_up | waiting_robots | active | idle
    why: str  # the block or give-up reason
    blocked_for_s: float
    delay_s: float
    queued: int
    in_flight: int
    fetched: int
    by_status: dict[str, int]
    errors: dict[str, int]  # HTTP 4xx/5xx by status, and failures by reason
    robots: str  # unknown | fetching | ready
    robots_rules: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Overview:
    counts: FrontierCounts
    chart: RateChart
    hosts: list[HostRow]
    hosts_total: int
    report: dict[str, Any]
    documents: int | None = None  # in the search index; None when it cannot be read


def robots_rules(robots_txt: str | None) -> list[str]:
    """The lines of a robots.txt that are rules, as written (RFC 9309 field names)."""
    rules = []
    for line in (robots_txt or "").splitlines():
        text = line.split("#", 1)[0].strip()
        name = text.partition(":")[0].strip().lower()
        if name in _RULE_FIELDS:
            rules.append(text)
    return rules


def _state(info: HostInfo, now: float) -> tuple[str, str]:
    if info.paused:
        return "paused", ""
    if info.blocked_until > now:
        return "blocked", info.block_reason
    if info.block_reason.startswith(_GIVEN_UP):
        return "given_up", info.block_reason.removeprefix(_GIVEN_UP)
    if info.robots_state != "ready" and info.queued:
        return "waiting_robots", ""
    return ("active", "") if info.queued or info.inflight else ("idle", "")


def _host_row(info: HostInfo, reported: dict[str, Any], now: float) -> HostRow:
    state, why = _state(info, now)
    by_status = dict(reported.get("by_status", {}))
    errors = {status: n for status, n in by_status.items() if status.isdigit() and int(status) >= 400}
    errors.update(reported.get("failed", {}))
    return HostRow(
        host=info.host, state=state, why=why, blocked_for_s=max(info.blocked_until - now, 0.0),
        delay_s=info.delay_s, queued=info.queued, in_flight=info.inflight, fetched=reported.get("fetched", 0),
        by_status=by_status, errors=errors, robots=info.robots_state, robots_rules=robots_rules(info.robots_txt),
    )  # fmt: skip


def overview(
    state: FrontierState, now: float | None = None, links: LinkGraph | None = None, documents: int | None = None
) -> Overview:
    """Everything the console's page shows. The report reads every URL of the frontier
    (as `tansuo report` does): fine for an operator's page, not for a hot path."""
    now = time.time() if now is None else now
    counts = state.counts(now)
    report = crawl_report(state, links, documents)
    per_host = {row["host"]: row for row in report["hosts"]}
    hosts = [_host_row(info, per_host.get(info.host, {}), now) for info in state.hosts(limit=HOSTS_SHOWN)]
    chart = rate_chart(state.fetch_history(now - 3600), now)
    return Overview(counts=counts, chart=chart, hosts=hosts, hosts_total=counts.hosts, report=report,
                    documents=documents)
