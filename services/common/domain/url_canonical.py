"""One spelling per URL, so that dedup, politeness and the index agree on identity.

Shared by the scheduler (admission), the crawler (rel=canonical), the indexer and the
ranker: if they spelled one URL two ways, a page would be two documents or two nodes.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from services.common.domain.host_names import canonical_host
from services.common.errors import BadInput

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Query parameters that say who shared a link or which session followed it, never
# which page it is: with them, one page is many URLs (and many fetches).
_TRACKING_PARAMS = frozenset({
    "spm", "gclid", "fbclid", "msclkid", "yclid", "dclid", "_hsenc", "_hsmi", "mc_cid", "mc_eid",
    "isappinstalled",  # WeChat share links, with from=
    "jsessionid", "phpsessid", "sid", "sessionid", "session_id",
})  # fmt: skip
_TRACKING_PREFIXES = ("utm_", "aspsessionid")
# WeChat and QQ add from=singlemessage (or groupmessage, timeline) to shared links;
# from= with other values can be part of a page's identity, so only these go.
_SHARE_FROM = frozenset({"singlemessage", "groupmessage", "timeline"})
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sid)=[^/?#]*", re.I)


class BadUrl(BadInput):
    """Not an absolute http(s) URL we could ever fetch."""


def canonicalize(url: str) -> str:
    """Fragment dropped, tracking and session parameters removed (``utm_*``, ``spm``,
    ``from=singlemessage``, ``jsessionid``...), query sorted, scheme lower-cased, host
    in its canonical form (host_names.py: no trailing dot, IPv4 as a dotted quad), default
    port removed, percent-encoding normalised (w3lib).
    Idempotent: canonicalize(canonicalize(u)) == canonicalize(u)."""
    if not isinstance(url, str):  # a message from outside may hold anything
        raise BadUrl(f"not a URL: {url!r}")
    return _canonical(url)


# A site's navigation puts the same few hundred links on every page, and each page's
# links are canonicalised by the frontier and again by the ranker (it takes messages
# from any crawler), a visible share of a crawl's CPU a page (docs/benchmarks.md, 'Fourth
# round (issue 12)'). The function
# is pure, so its answers are remembered; a URL it rejects is not (errors pass through).
_REMEMBERED_URLS = 1 << 14


@functools.lru_cache(maxsize=_REMEMBERED_URLS)
def _canonical(url: str) -> str:
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise BadUrl(f"not an absolute http(s) URL: {url!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"bad port in {url!r}") from exc
    scheme = parts.scheme.lower()
    host = canonical_host(parts.hostname)
    if not host:
        raise BadUrl(f"no host in {url!r}")
    if ":" in host:  # IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _PATH_SESSION.sub("", parts.path) or "/"
    rebuilt = urlunsplit((scheme, netloc, path, strip_tracking(parts.query), ""))
    return canonicalize_url(rebuilt, keep_fragments=False)


def strip_tracking(query: str) -> str:
    """The query string without tracking and session parameters, others untouched."""
    if not query:
        return query
    kept = [pair for pair in query.split("&") if pair and not _is_tracking(pair)]
    return "&".join(kept)


def _is_tracking(pair: str) -> bool:
    name, _, value = pair.partition("=")
    name = unquote(name).strip().lower()
    if name in _TRACKING_PARAMS or name.startswith(_TRACKING_PREFIXES):
        return True
    return name == "from" and unquote(value).lower() in _SHARE_FROM


def host_of(url: str) -> str:
    """The politeness key: host plus non-default port, lower-case, as in canonical URLs."""
    return urlsplit(url).netloc.lower()


def canonical_preference(url: str) -> tuple[int, int, int, str]:
    """Sort key among URLs of one content, most canonical first: no query string,
    then fewer path segments, then shorter, then alphabetical (so ties are stable)."""
    parts = urlsplit(url)
    segments = len([p for p in parts.path.split("/") if p])
    return (1 if parts.query else 0, segments, len(url), url)
