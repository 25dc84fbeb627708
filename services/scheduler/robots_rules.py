"""robots.txt answers through protego, parsed once per host and robots.txt version.

Groups are matched by product token as RFC 9309 2.2.1 says: a ``User-agent`` line
names a crawler's product token ("TansuoBot" of "TansuoBot/0.1 (+…)"), compared
case-insensitively and whole. protego matches a group's name as the start of the
crawler's name, so ``User-agent: Tansuo`` would bind ``TansuoBot``; the lines of
other crawlers' groups are renamed before protego reads them, so that only our own
token and ``*`` can match.
"""

from __future__ import annotations

import re

from protego import Protego

# "User-agent:" at a line start (CR, LF or CRLF ends a line: RFC 9309 2.1), its value
# up to a comment or the line's end.
_USER_AGENT_LINE = re.compile(r"(^|[\r\n])([ \t]*user-agent[ \t]*:[ \t]*)([^\r\n#]*)", re.IGNORECASE)
# A name no crawler has: protego finds it in no user agent.
_OTHER_CRAWLER = "\x7f"


def product_token(user_agent: str) -> str:
    """"TansuoBot" of "TansuoBot/0.1 (+https://…)"."""
    return user_agent.split("/")[0].strip() or user_agent


def own_groups_only(robots_txt: str, token: str) -> str:
    """``robots_txt`` with each ``User-agent`` line naming ``token`` (whole, any case, a
    version after "/" allowed) written as ``token``, ``*`` kept, and every other one
    renamed to no crawler's name."""
    wanted = token.lower()

    def rename(m: re.Match[str]) -> str:
        value = m.group(3).strip()
        if value == "*":
            return m.group(0)
        name = token if product_token(value).lower() == wanted else _OTHER_CRAWLER
        return f"{m.group(1)}{m.group(2)}{name}"

    return _USER_AGENT_LINE.sub(rename, robots_txt)


class RobotsRules:
    def __init__(self, user_agent: str) -> None:
        self.agent = product_token(user_agent)
        self._parsed: dict[str, tuple[int, Protego]] = {}

    def _rules(self, host: str, robots_txt: str) -> Protego:
        key = hash(robots_txt)
        cached = self._parsed.get(host)
        if cached is None or cached[0] != key:
            cached = (key, Protego.parse(own_groups_only(robots_txt, self.agent)))
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
