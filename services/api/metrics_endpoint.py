"""GET /metrics: every metric of this service in Prometheus' text format."""

from __future__ import annotations

from flask import Blueprint, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.common import multiprocess_metrics

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    """The catalog of services/common/metrics.py, summed over the worker processes when
    the API runs several (services/common/multiprocess_metrics.py)."""
    return Response(generate_latest(multiprocess_metrics.registry()), content_type=CONTENT_TYPE_LATEST)
