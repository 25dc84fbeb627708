"""Crawl settings an operator gives one host (in the console or the API): which of its
URLs to crawl, how deep, how fast, and which other domains its links may lead to.

Stored in the frontier state beside the host, so every scheduler of a crawl honours the
same settings; a field left empty means the crawl-wide setting applies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from services.common.errors import BadInput

# Bounds that keep a typo from stalling a host or hammering it: a delay of hours is a
# pause (use pause), and depth past a few hundred links is a crawler trap.
MAX_DELAY_S = 3600.0
MAX_DEPTH = 1000
MAX_PATTERNS = 100
MAX_PATTERN_CHARS = 500


class BadHostSettings(BadInput):
    """A setting that cannot be used; the message says which, in Chinese, for the console."""


@dataclass(frozen=True)
class HostSettings:
    """``include``: regexes a URL of the host must match (any one), instead of the
    crawl-wide include patterns; ``exclude``: regexes it must not match, besides the
    crawl-wide ones; ``max_depth``: links followed from a seed, for URLs of this host;
    ``delay_s``: seconds between two fetches of the host (robots.txt's Crawl-delay
    still wins when longer); ``allow_domains``: domains the crawl may follow this
    host's links to (``example.cn``, ``*.example.cn``)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int | None = None
    delay_s: float | None = None
    allow_domains: tuple[str, ...] = ()
    updated_at: float = 0.0
    _compiled: tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]] = field(
        default=((), ()), compare=False, repr=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", (_compile(self.include, "包含规则"), _compile(self.exclude, "排除规则")))
        if self.max_depth is not None and not 0 <= self.max_depth <= MAX_DEPTH:
            raise BadHostSettings(f"最大深度应在 0 到 {MAX_DEPTH} 之间，而不是 {self.max_depth}")
        if self.delay_s is not None and not 0 <= self.delay_s <= MAX_DELAY_S:
            raise BadHostSettings(f"抓取间隔应在 0 到 {MAX_DELAY_S:g} 秒之间，而不是 {self.delay_s:g}")

    @property
    def empty(self) -> bool:
        return not (self.include or self.exclude or self.allow_domains) and self.max_depth is None and self.delay_s is None

    def rejects(self, url: str) -> str:
        """Why this host's settings keep ``url`` out ("not_included", "excluded_pattern"), or ""."""
        include, exclude = self._compiled
        if include and not any(p.search(url) for p in include):
            return "not_included"
        if any(p.search(url) for p in exclude):
            return "excluded_pattern"
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "include": list(self.include),
            "exclude": list(self.exclude),
            "max_depth": self.max_depth,
            "delay_s": self.delay_s,
            "allow_domains": list(self.allow_domains),
            "updated_at": self.updated_at,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HostSettings:
        """Raises BadHostSettings for a value of the wrong type or out of bounds."""
        try:
            max_depth = data.get("max_depth")
            delay_s = data.get("delay_s")
            return cls(
                include=_strings(data.get("include", ()), "包含规则", strip=False),
                exclude=_strings(data.get("exclude", ()), "排除规则", strip=False),
                max_depth=None if max_depth is None else _integer(max_depth),
                delay_s=None if delay_s is None else _number(delay_s),
                allow_domains=_strings(data.get("allow_domains", ()), "允许的域名"),
                updated_at=float(data.get("updated_at", 0.0)),
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, BadHostSettings):
                raise
            raise BadHostSettings(f"设置格式不对：{exc}") from None

    @classmethod
    def from_json(cls, text: str) -> HostSettings:
        return cls.from_dict(json.loads(text))


def _integer(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise BadHostSettings(f"最大深度应是整数，而不是 {value!r}")
    return int(value)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadHostSettings(f"间隔应是数字，不是 {str(value)[:20]!r}")
    return float(value)


def _strings(value: Any, what: str, strip: bool = True) -> tuple[str, ...]:
    """A pattern is kept as sent (a regex's edge whitespace is part of it); a domain is trimmed."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise BadHostSettings(f"{what}应是字符串列表")
    items = tuple(v.strip() if strip else v for v in value)
    if not all(v.strip() for v in items):
        raise BadHostSettings(f"{what}不能有空的一条")
    if len(items) > MAX_PATTERNS:
        raise BadHostSettings(f"{what}最多 {MAX_PATTERNS} 条")
    return items


def _compile(patterns: tuple[str, ...], what: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for p in patterns:
        if len(p) > MAX_PATTERN_CHARS:
            raise BadHostSettings(f"{what}太长（最多 {MAX_PATTERN_CHARS} 个字符）：{p[:40]}…")
        try:
            compiled.append(re.compile(p))
        except re.error as exc:
            raise BadHostSettings(f"{what}不是有效的正则表达式：{p}（{exc}）") from None
    return tuple(compiled)
