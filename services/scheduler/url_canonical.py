"""One spelling per URL, so that dedup, politeness and the index agree on identity."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

_DEFAULT_PORTS = {"http": 80, "https": 443}


class BadUrl(ValueError):
    """Not an absolute http(s) URL we could ever fetch."""


def canonicalize(url: str) -> str:
    """Fragment dropped, query sorted, scheme and host lower-cased, default port removed,
    percent-encoding normalised (w3lib). Idempotent: canonicalize(canonicalize(u)) == canonicalize(u)."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise BadUrl(f"not an absolute http(s) URL: {url!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"bad port in {url!r}") from exc
    scheme = parts.scheme.lower()
    host = parts.hostname.rstrip(".")
    if ":" in host:  # IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    rebuilt = urlunsplit((scheme, netloc, path, parts.query, ""))
    return canonicalize_url(rebuilt, keep_fragments=False)


def host_of(url: str) -> str:
    """The politeness key: host plus non-default port, lower-case, as in canonical URLs."""
    return urlsplit(url).netloc.lower()


def canonical_preference(url: str) -> tuple[int, int, int, str]:
    """Sort key among URLs of one content, most canonical first: no query string,
    then fewer path segments, then shorter, then alphabetical (so ties are stable)."""
    parts = urlsplit(url)
    segments = len([p for p in parts.path.split("/") if p])
    return (1 if parts.query else 0, segments, len(url), url)
