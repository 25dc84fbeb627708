"""The site server with a fixed delay before every answer, standing in for a network.

On loopback a response comes back in well under a millisecond, so a crawl is bound
by CPU alone; real sites answer in tens of milliseconds, which is what concurrent
fetching is for. The server is threaded, so the delays of concurrent requests
overlap as they would on a real server.
"""

from __future__ import annotations

import time
from pathlib import Path

from services.cli.static_site_server import RequestRecord, Response, SiteServer


class SlowSiteServer(SiteServer):
    """``SiteServer`` that waits ``latency_s`` before answering each request.

    The request log still stamps arrival, before the wait, so a politeness check on
    it would see the requests as the crawler sent them.
    """

    def __init__(self, root: Path, latency_s: float, **kwargs: object) -> None:
        super().__init__(root, **kwargs)  # type: ignore[arg-type]
        self.latency_s = latency_s

    # Overrides the one method every answer (files, robots.txt, routes) goes through;
    # SiteServer has no public hook for this, and wrapping every path in extra_routes
    # would bypass its file serving.
    def _route(self, request: RequestRecord) -> Response:
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        return super()._route(request)
