"""robots.txt answers through protego, parsed once per host and robots.txt version."""

from __future__ import annotations

from protego import Protego


class RobotsRules:
    def __init__(self, user_agent: str) -> None:
        # protego matches on the product token, e.g. "TansuoBot" of "TansuoBot/0.1 (+…)".
        self.agent = user_agent.split("/")[0].strip() or user_agent
        self._parsed: dict[str, tuple[int, Protego]] = {}

    def _rules(self, host: str, robots_txt: str) -> Protego:
        key = hash(robots_txt)
        cached = self._parsed.get(host)
        if cached is None or cached[0] != key:
            cached = (key, Protego.parse(robots_txt))
            self._parsed[host] = cached
        return cached[1]

    def allowed(self, host: str, robots_txt: str | None, url: str) -> bool:
        """No robots.txt (404 and friends) allows everything."""
        if not robots_txt:
            return True
        return bool(self._rules(host, robots_txt).can_fetch(url, self.agent))

    def crawl_delay(self, host: str, robots_txt: str | None) -> float | None:
        if not robots_txt:
            return None
        delay = self._rules(host, robots_txt).crawl_delay(self.agent)
        return float(delay) if delay is not None else None

    def sitemaps(self, host: str, robots_txt: str | None) -> list[str]:
        if not robots_txt:
            return []
        return list(self._rules(host, robots_txt).sitemaps)
