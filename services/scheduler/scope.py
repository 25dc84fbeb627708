"""Which URLs belong to the crawl: allowed domains, include/exclude patterns, length."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.common.settings import Settings


@dataclass(frozen=True)
class DomainRule:
    """``example.cn`` matches that host only; ``*.example.cn`` matches the apex and every
    sub-domain (all sub-sites of one university), never ``badexample.cn``."""

    suffix: str
    wildcard: bool

    @classmethod
    def parse(cls, text: str) -> "DomainRule":
        text = text.strip().lower().rstrip(".")
        if "://" in text:  # a pasted URL: keep its host
            text = urlsplit(text).hostname or ""
        wildcard = text.startswith("*.")
        suffix = text[2:] if wildcard else text
        if not suffix or "/" in suffix or "*" in suffix:
            raise ValueError(f"bad domain {text!r}: use example.cn or *.example.cn")
        return cls(suffix, wildcard)

    def matches(self, hostname: str) -> bool:
        if hostname == self.suffix:
            return True
        return self.wildcard and hostname.endswith("." + self.suffix)


class Scope:
    def __init__(
        self,
        domains: Iterable[str],
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        max_url_length: int = 2048,
    ) -> None:
        self.domains = [DomainRule.parse(d) for d in domains]
        self.include = [re.compile(p) for p in include]
        self.exclude = [re.compile(p) for p in exclude]
        self.max_url_length = max_url_length

    @classmethod
    def from_settings(cls, cfg: Settings, seeds: Iterable[str] = ()) -> "Scope":
        """With no allowed domains configured, the seeds' hosts are the scope."""
        domains = list(cfg.frontier_allow_domains) or sorted(
            {urlsplit(s).hostname or "" for s in seeds} - {""}
        )
        return cls(domains, cfg.frontier_include_patterns, cfg.frontier_exclude_patterns, cfg.frontier_max_url_length)

    def with_domains(self, domains: Iterable[str]) -> "Scope":
        """This scope plus more allowed domains (seeds submitted to a running crawl)."""
        known = {(d.suffix, d.wildcard) for d in self.domains}
        extra = [d for d in map(DomainRule.parse, domains) if (d.suffix, d.wildcard) not in known]
        if not extra:
            return self
        wider = Scope([], max_url_length=self.max_url_length)
        wider.domains, wider.include, wider.exclude = self.domains + extra, self.include, self.exclude
        return wider

    def rejects(self, url: str) -> str:
        """Why a canonical URL is out of scope, or "" when it is in."""
        if len(url) > self.max_url_length:
            return "url_too_long"
        hostname = (urlsplit(url).hostname or "").lower()
        if self.domains and not any(d.matches(hostname) for d in self.domains):
            return "off_domain"
        if self.include and not any(p.search(url) for p in self.include):
            return "not_included"
        if any(p.search(url) for p in self.exclude):
            return "excluded_pattern"
        return ""
