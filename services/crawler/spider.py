"""The Scrapy spider: one request per fetch job, and one FetchOutcome item per request,
whether the fetch succeeded or not. It never follows anything by itself: links go to
the scheduler, which decides what is fetched next.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import scrapy
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, StopDownload
from scrapy.http import Headers, Response
from twisted.python.failure import Failure

from services.common.domain.messages import FetchJob
from services.common.ports import Message
from services.common.runtime.json_logging import log_context
from services.common.runtime.metrics import ERRORS, FETCH_DURATION
from services.crawler.crawl_session import CrawlSession
from services.crawler.fetch_errors import error_kind
from services.crawler.fetch_outcome import (
    FetchOutcome,
    outcome_from_error,
    outcome_from_response,
)
from services.crawler.message_caps import OutcomeCaps
from services.crawler.robots_size import ROBOTS_KIND
from services.extractor.document_types import may_be_document

logger = logging.getLogger(__name__)

_JOB = "tansuo_job"
_MESSAGE = "tansuo_message"
_BYTES = "tansuo_bytes_seen"
_HOPS = "tansuo_robots_hops"
_CAP = "tansuo_size_cap"
_TOO_LARGE = "tansuo_too_large"
_REDIRECTS = (301, 302, 303, 307, 308)


class TansuoSpider(scrapy.Spider):
    name = "tansuo"

    def __init__(self, session: CrawlSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self._caps = OutcomeCaps.from_settings(session.cfg)
        self._documents = session.cfg.documents_enabled

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> TansuoSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._keep_alive, signal=signals.spider_idle)
        crawler.signals.connect(spider._count_bytes, signal=signals.bytes_received)
        crawler.signals.connect(spider._size_cap, signal=signals.headers_received)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        """No start requests: jobs arrive through FrontierScheduler."""
        return
        yield  # makes this an async generator that yields nothing

    def request_for(self, job: FetchJob, message: Message) -> Request:
        """The one request for a job. Raises ValueError for a URL Scrapy cannot fetch."""
        if not job.url.lower().startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {job.url!r}")
        headers = {}
        if job.etag:
            headers["If-None-Match"] = job.etag
        if job.last_modified:
            headers["If-Modified-Since"] = job.last_modified
        return Request(
            job.url,
            callback=self.parse,
            errback=self.on_error,
            headers=headers,
            # Recrawls fetch the same URL again; dedup is the scheduler's job.
            dont_filter=True,
            meta={_JOB: job, _MESSAGE: message, "dont_redirect": True, "dont_retry": True,
                  "handle_httpstatus_all": True, "dont_merge_cookies": True, ROBOTS_KIND: job.kind == "robots"},
        )

    def parse(self, response: Response, **kwargs: Any) -> Iterator[FetchOutcome | Request]:
        job, message = response.meta[_JOB], response.meta[_MESSAGE]
        follow = self._robots_redirect(job, response)
        if follow is not None:
            yield follow  # the job's one outcome comes from the end of the chain
            return
        latency = response.meta.get("download_latency")  # set by Scrapy's downloader
        if latency is not None:
            FETCH_DURATION.observe(latency)
        # The outcome is built inside the log context and yielded outside it: a
        # context spanning the yield would tag whatever Scrapy runs in between.
        with log_context(job_id=job.lease_id):
            try:
                outcome = outcome_from_response(job, message, response.status, flat_headers(response.headers),
                                                response.body, self.session.cfg.crawler_max_body_chars, self._caps,
                                                self._documents)  # fmt: skip
            except Exception:  # a parser bug must still report and release the job
                logger.exception("could not parse %s", job.url)
                ERRORS.labels(service="crawler", kind="parse_error").inc()
                outcome = outcome_from_error(job, message, "parse_error")
        yield outcome

    def _robots_redirect(self, job: FetchJob, response: Response) -> Request | None:
        """The next hop of a robots.txt redirect, or None to report this response.

        Pages' redirects are the scheduler's business (the target is a URL like any
        other), but robots.txt must be read where it ends up: http://host/robots.txt
        moved to https://host/robots.txt is the same host's rules (RFC 9309 2.3.1.2).
        """
        if job.kind != "robots" or response.status not in _REDIRECTS:
            return None
        hops = response.meta.get(_HOPS, 0)
        location = response.headers.get("Location")
        if hops >= self.session.cfg.crawler_robots_max_redirects or not location:
            return None
        target = response.urljoin(_header_text(location).strip())
        if not target.lower().startswith(("http://", "https://")):
            return None
        meta = {**response.meta, _HOPS: hops + 1, _BYTES: 0}
        if response.request is None:  # only a response built by hand has none
            return None
        return response.request.replace(url=target, meta=meta, headers={})

    def on_error(self, failure: Failure) -> Iterator[FetchOutcome]:
        request = failure.request  # type: ignore[attr-defined]
        kind = error_kind(cast(BaseException, failure.value))  # an errback's failure always holds one
        if request.meta.get(_TOO_LARGE) or (
            kind == "cancelled" and request.meta.get(_BYTES, 0) > self.session.cfg.crawler_max_page_bytes
        ):
            kind = "too_large"
        yield outcome_from_error(request.meta[_JOB], request.meta[_MESSAGE], kind)

    def _keep_alive(self) -> None:
        # An empty bus is a pause, not the end of the crawl.
        raise DontCloseSpider

    def _count_bytes(self, data: bytes, request: Request, **kwargs: Any) -> None:
        seen = request.meta[_BYTES] = request.meta.get(_BYTES, 0) + len(data)
        if request.meta.get(ROBOTS_KIND) and seen > self._caps.robots_bytes:
            # What came is read (cut at a line end, cap_robots); the rest is ignored.
            raise StopDownload(fail=False)
        if seen > request.meta.get(_CAP, seen):
            request.meta[_TOO_LARGE] = True
            raise StopDownload(fail=True)

    def _size_cap(self, headers: Headers, body_length: int, request: Request, **kwargs: Any) -> None:
        """The response's own size cap, once its type is known: a document may grow to
        ``documents_max_bytes``, anything else stops at the page cap. Scrapy's
        DOWNLOAD_MAXSIZE is the larger of the two (scrapy_settings), and this cap also
        bounds the body once decompressed (HttpCompressionMiddleware reads it from meta)."""
        if request.meta.get(ROBOTS_KIND):
            return  # read up to its own cap (robots_size.py), whatever the page cap
        cfg = self.session.cfg
        declared = _header_text(headers.get(b"Content-Type") or b"")
        cap = cfg.documents_max_bytes if self._documents and may_be_document(declared) else cfg.crawler_max_page_bytes
        request.meta[_CAP] = request.meta["download_maxsize"] = cap
        if body_length and body_length > cap:
            request.meta[_TOO_LARGE] = True
            raise StopDownload(fail=True)


def flat_headers(headers: Headers) -> dict[str, str]:
    """One string per header name, repeated headers joined with ", " (RFC 9110)."""
    flat = {}
    for name, values in headers.items():
        flat[_header_text(name)] = ", ".join(_header_text(v) for v in values)
    return flat


def _header_text(raw: bytes | str) -> str:
    # Servers put raw UTF-8 in Location and Content-Disposition; HTTP says Latin-1.
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
