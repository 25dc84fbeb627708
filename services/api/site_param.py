"""Inputs the server accepts exactly as services/api/openapi.json describes them, with
the patterns read from that document: a request the contract calls invalid is refused,
and one it calls valid is taken (schemathesis checks both ways).

- the ``site`` parameter of /api/search and the web UI: a host name in ASCII (a Chinese
  domain name in its ``xn--`` form, as the index spells it and the UI's site list offers
  it), with a port if not the default; ``site:`` inside the query takes any spelling
  (services/search/query_syntax.py);
- the URLs and domains of POST /api/seeds: an absolute http(s) URL on such a host.
"""

from __future__ import annotations

import re
from functools import cache

from services.api.api_docs import openapi_document
from services.search.search_service import BadQuery


@cache
def _site_pattern() -> tuple[re.Pattern[str], int]:
    for param in openapi_document()["paths"]["/api/search"]["get"]["parameters"]:
        if param["name"] == "site":
            return re.compile(param["schema"]["pattern"]), int(param["schema"]["maxLength"])
    raise LookupError("openapi.json: /api/search has no site parameter")


@cache
def _seed_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    props = openapi_document()["components"]["schemas"]["SeedRequest"]["properties"]
    return re.compile(props["urls"]["items"]["pattern"]), re.compile(props["allow_domains"]["items"]["pattern"])


def checked_site(raw: str) -> str:
    """``raw``, or BadQuery with the search service's own wording."""
    pattern, longest = _site_pattern()
    if len(raw) > longest or not pattern.search(raw):
        raise BadQuery("site must be a host name such as www.example.cn")
    return raw


def off_contract_seed(urls: list[str], domains: list[str]) -> str:
    """The first URL or domain the contract's patterns refuse, or ""."""
    url_pattern, domain_pattern = _seed_patterns()
    for url in urls:
        if not url_pattern.search(url):
            return url
    for domain in domains:
        if not domain_pattern.search(domain):
            return domain
    return ""
