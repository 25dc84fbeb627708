"""robots.txt is read up to its own cap, not refused at the page size cap.

RFC 9309 2.5: a crawler must parse at least 500 KiB of a robots.txt and may ignore what
follows. The page size cap (``DOWNLOAD_MAXSIZE``) would instead cancel a larger one
before a byte is read (a Content-Length over the cap) or midway, and a host whose
robots.txt cannot be read is given up. So a robots.txt request has no size cap on the
transfer; the spider stops it once ``crawler_max_robots_bytes`` have come
(TansuoSpider._count_bytes) and reads what came. The cap is put back before Scrapy's
HttpCompressionMiddleware decompresses the body (this middleware sits closer to the
downloader, so its process_response runs first), so that a compressed file still
cannot unpack into more than a page may hold.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.http import Response

ROBOTS_KIND = "tansuo_robots"  # request meta: set by the spider on robots.txt requests
_PAGE_CAP = "tansuo_page_cap"


class RobotsSizeMiddleware:
    """At 595 in DOWNLOADER_MIDDLEWARES_BASE: after HttpCompressionMiddleware (590) on the
    way out, before it on the way back."""

    def process_request(self, request: Request) -> None:
        if request.meta.get(ROBOTS_KIND):
            request.meta.setdefault(_PAGE_CAP, request.meta.get("download_maxsize"))
            request.meta["download_maxsize"] = 0  # no cap on the transfer: the spider stops it
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get(ROBOTS_KIND):
            cap = request.meta.get(_PAGE_CAP)
            if cap is None:
                request.meta.pop("download_maxsize", None)  # the setting's cap again
            else:
                request.meta["download_maxsize"] = cap
        return response
