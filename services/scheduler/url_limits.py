"""Crawler-trap limits on a URL's shape: the infinite URL spaces real sites have.

A calendar whose every page links the next month, a relative link that makes paths
ever deeper (/a/b/a/b/a/b/...), a session id in every link: each is a finite site
that looks infinite. Scope says which sites to crawl; these limits say which of a
site's URLs are not worth a fetch, whatever the site. The defaults follow Heritrix
(maxPathDepth 20, maxRepetitions 2); depth itself is the frontier's (it knows hops).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.common.config import Settings


@dataclass(frozen=True)
class UrlLimits:
    max_path_depth: int
    max_path_repetitions: int
    max_query_params: int

    @classmethod
    def from_settings(cls, cfg: Settings) -> UrlLimits:
        return cls(cfg.frontier_max_path_depth, cfg.frontier_max_path_repetitions, cfg.frontier_max_query_params)

    def exceeded(self, url: str) -> str:
        """The name of the limit a canonical URL is past, or "" when it is within all."""
        parts = urlsplit(url)
        segments = [s for s in parts.path.split("/") if s]
        if len(segments) > self.max_path_depth:
            return "path_depth"
        # Any segment more than max_path_repetitions times, in a row or not: /a/b/a/b/a/b/.
        if segments and max(Counter(segments).values()) > self.max_path_repetitions:
            return "path_repetition"
        if parts.query and parts.query.count("&") + 1 > self.max_query_params:
            return "query_params"
        return ""
