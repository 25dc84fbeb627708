"""Which URLs belong to the crawl: allowed domains, include/exclude patterns, length."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.common.config import Settings


@dataclass(frozen=True)
class DomainRule:
    """``example.cn`` matches that host only; ``*.example.cn`` matches the apex and every
    sub-domain (all sub-sites of one university), never ``badexample.cn``.

    Scope is keyed by host and port: ``example.cn`` means the web's ports (80 for http,
    443 for https, so a site moving to https stays in scope) and ``127.0.0.1:8000``
    that port only. Another port of one address is another service: a crawl of a
    local site must not wander into every server on that machine.
    """

    suffix: str
    wildcard: bool
    port: int | None = None  # None: the scheme's default port

    @classmethod
    def parse(cls, text: str) -> DomainRule:
        text = text.strip().lower().rstrip(".")
        if "://" in text:  # a pasted URL: keep its host and port
            text = _host_and_port(text)
        host, port = _split_port(text)
        wildcard = host.startswith("*.")
        suffix = host[2:] if wildcard else host
        if not suffix or "/" in suffix or "*" in suffix:
            raise ValueError(f"bad domain {text!r}: use example.cn, *.example.cn or host:port")
        return cls(suffix, wildcard, port)

    def matches(self, hostname: str, port: int | None = None) -> bool:
        """``port`` is the URL's explicit port (None for the scheme's default)."""
        if port != self.port:
            return False
        if hostname == self.suffix:
            return True
        return self.wildcard and hostname.endswith("." + self.suffix)


def _split_port(text: str) -> tuple[str, int | None]:
    """"a.cn:8080" -> ("a.cn", 8080); IPv6 literals keep their brackets."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or (":" in host and not host.endswith("]")):
        return text.strip("[]"), None  # no port, or a bare IPv6 address
    return host.strip("[]"), int(port)


def _host_and_port(url: str) -> str:
    """The scope key of a URL: host, plus the port when it is not the scheme's default."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        return host
    if port is None or port == {"http": 80, "https": 443}.get(parts.scheme.lower()):
        return host
    return f"{host}:{port}"


def seed_domains(urls: Iterable[str]) -> list[str]:
    """The scope of seeds given without allowed domains: their hosts, with their ports."""
    return sorted({_host_and_port(u) for u in urls} - {""})


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
    def from_settings(cls, cfg: Settings, seeds: Iterable[str] = ()) -> Scope:
        """With no allowed domains configured, the seeds' hosts are the scope."""
        domains = list(cfg.frontier_allow_domains) or seed_domains(seeds)
        return cls(domains, cfg.frontier_include_patterns, cfg.frontier_exclude_patterns, cfg.frontier_max_url_length)

    def with_domains(self, domains: Iterable[str]) -> Scope:
        """This scope plus more allowed domains (seeds submitted to a running crawl)."""
        known = set(self.domains)
        extra = [d for d in map(DomainRule.parse, domains) if d not in known]
        if not extra:
            return self
        wider = Scope([], max_url_length=self.max_url_length)
        wider.domains, wider.include, wider.exclude = self.domains + extra, self.include, self.exclude
        return wider

    def rejects(self, url: str, check_include: bool = True) -> str:
        """Why a canonical URL is out of scope, or "" when it is in; without
        ``check_include``, the include patterns are left to the caller (a host's own)."""
        if len(url) > self.max_url_length:
            return "url_length"
        parts = urlsplit(url)
        # Canonical URLs carry no default port, so a port left is explicit.
        hostname, port = (parts.hostname or "").lower(), parts.port
        if self.domains and not any(d.matches(hostname, port) for d in self.domains):
            return "off_domain"
        if check_include and self.include and not any(p.search(url) for p in self.include):
            return "not_included"
        if any(p.search(url) for p in self.exclude):
            return "excluded_pattern"
        return ""
