"""Per-host crawl settings as the crawl applies them (the settings themselves:
services/common/domain/host_settings.py).

The console or the API writes them into the frontier state (``save``), which also
brings the host's queue in line at once: queued URLs the new rules exclude leave it
(excluded, note ``host_settings``), URLs an earlier rule excluded that the new one
allows come back, and the host's delay changes. Every scheduler reads them through a
``HostSettingsView``, a copy renewed every few seconds, and applies them as URLs are
admitted and leased (services/scheduler/frontier.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from services.common.config import Settings
from services.common.domain.frontier_types import HostUpdate
from services.common.domain.host_settings import BadHostSettings, HostSettings
from services.common.ports import FrontierState
from services.scheduler.robots_rules import RobotsRules
from services.scheduler.scope import DomainRule

# The note of a URL excluded by a host's settings, so that looser settings can bring
# exactly those back (FrontierState.readmit).
NOTE = "host_settings"
# How stale a scheduler's copy of the settings may be: a change from the console
# reaches every scheduler within this; a read is one small hash or table.
REFRESH_S = 2.0


class HostSettingsView:
    """The frontier state's host settings, read at most every ``ttl_s`` seconds."""

    def __init__(self, state: FrontierState, ttl_s: float = REFRESH_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._state = state
        self._ttl_s = ttl_s
        self._clock = clock
        self._settings: dict[str, HostSettings] = {}
        self._read_at: float | None = None
        self.version = 0  # changes whenever the settings read differ from the last ones

    def _current(self) -> dict[str, HostSettings]:
        now = self._clock()
        if self._read_at is None or now - self._read_at >= self._ttl_s:
            self.refresh()
        return self._settings

    def refresh(self) -> None:
        """Read the settings now."""
        settings = self._state.host_settings()
        self._read_at = self._clock()
        if settings != self._settings:
            self._settings = settings
            self.version += 1

    def of(self, host: str) -> HostSettings | None:
        return self._current().get(host)

    def allowed_domains(self) -> list[str]:
        """Every domain some host's settings let the crawl follow links to."""
        return sorted({d for s in self._current().values() for d in s.allow_domains})

    def any_depth(self) -> bool:
        """Whether some host has a depth limit of its own."""
        return any(s.max_depth is not None for s in self._current().values())


def host_delay(cfg: Settings, settings: HostSettings | None) -> float:
    """The host's delay before robots.txt has its say."""
    if settings is not None and settings.delay_s is not None:
        return settings.delay_s
    return cfg.frontier_host_delay_s


def parse_form(include: str, exclude: str, max_depth: str, delay_s: str, allow_domains: str,
               now: float) -> HostSettings:  # fmt: skip
    """Settings from the console's form fields: rules one a line, domains separated by
    spaces, commas or lines, numbers as typed (empty: the crawl-wide setting)."""
    domains = allow_domains.replace(",", " ").replace("，", " ").split()
    try:
        depth = int(max_depth) if max_depth.strip() else None
    except ValueError:
        raise BadHostSettings(f"最大深度应是整数，而不是 {max_depth.strip()[:20]!r}") from None
    try:
        delay = float(delay_s) if delay_s.strip() else None
    except ValueError:
        raise BadHostSettings(f"抓取间隔应是秒数，而不是 {delay_s.strip()[:20]!r}") from None
    return checked(HostSettings(
        include=tuple(line.strip() for line in include.splitlines() if line.strip()),
        exclude=tuple(line.strip() for line in exclude.splitlines() if line.strip()),
        max_depth=depth, delay_s=delay, allow_domains=tuple(domains), updated_at=now,
    ))  # fmt: skip


def checked(settings: HostSettings) -> HostSettings:
    """``settings`` with its domains written as the scope reads them, or BadHostSettings."""
    domains = []
    for text in settings.allow_domains:
        try:
            rule = DomainRule.parse(text)
        except ValueError:
            raise BadHostSettings(f"域名写法不对：{text[:60]}（应写 example.cn、*.example.cn 或 主机:端口）") from None
        port = f":{rule.port}" if rule.port is not None else ""
        domains.append(("*." if rule.wildcard else "") + rule.suffix + port)
    return HostSettings(settings.include, settings.exclude, settings.max_depth, settings.delay_s,
                        tuple(dict.fromkeys(domains)), settings.updated_at)  # fmt: skip


@dataclass(frozen=True)
class Saved:
    """What saving a host's settings did to its queue."""

    excluded: int  # queued URLs the new rules keep out
    readmitted: int  # URLs an earlier rule kept out, queued again
    delay_s: float | None  # the host's delay now, None if the frontier does not know the host


def save(cfg: Settings, state: FrontierState, host: str, settings: HostSettings | None, now: float) -> Saved:
    """Store ``settings`` for ``host`` (None or empty settings: back to the crawl-wide
    ones) and apply them to what the frontier already holds of the host."""
    if settings is not None:
        settings = checked(settings)
        if settings.empty:
            settings = None
    state.set_host_settings(host, settings)
    rules = settings or HostSettings()
    doomed = [u for u in state.queued_urls(host) if rules.rejects(u)]
    excluded = state.drop_queued(doomed, "excluded", NOTE) if doomed else 0
    back = [u for u in state.excluded_urls(host, NOTE) if not rules.rejects(u)]
    readmitted = state.readmit(back, NOTE, now) if back else 0
    info = state.get_host(host)
    if info is None:
        return Saved(excluded, readmitted, None)
    robots = RobotsRules(cfg.crawler_user_agent).crawl_delay(host, info.robots_txt) if info.robots_state == "ready" else None
    delay = max(host_delay(cfg, settings), robots or 0.0)
    if delay != info.delay_s:
        state.update_host(host, HostUpdate(delay_s=delay), now, release=False)
    return Saved(excluded, readmitted, delay)
