"""The API server's ``/metrics`` (and ``/livez``, ``/readyz``) on the health port,
as every other Tansuo service has them, and not beside the public API.

The API port faces users; the metrics name hosts, queue depths and error counts
that are the operator's business, and Prometheus should not need the crawl token to
read them. So gunicorn's arbiter, the one process that outlives every worker,
serves them on ``TANSUO_HEALTH_HOST:TANSUO_HEALTH_PORT`` (one endpoint per server, not
per worker), summing the workers' multiprocess files on each scrape. Its ``/livez``
and ``/readyz`` only say that the arbiter answers; the API's own ``/readyz`` on the
API port is the one that checks the index, and the one the chart probes.
"""

from __future__ import annotations

import logging

from services.common.runtime import multiprocess_metrics
from services.common.runtime.health_server import HealthServer, serve_health

log = logging.getLogger(__name__)


def serve_metrics_port(host: str, port: int, required: bool) -> HealthServer | None:
    """Start the health server, or None when the port cannot be bound and ``required``
    is false (`tansuo serve` next to another server on one machine goes on serving
    searches; `tansuo api` in a cluster, where Prometheus expects the port, stops)."""

    try:
        server = serve_health(port, host, registry=multiprocess_metrics.registry)
    except OSError as exc:
        if required:
            raise
        log.warning("metrics: cannot listen on %s:%d (%s); serving without /metrics", host, port, exc)
        return None
    log.info("metrics, livez and readyz on http://%s:%d/", host, server.port)
    return server
