"""GET /metrics: every metric of this process in Prometheus' text format."""

from __future__ import annotations

from flask import Blueprint, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    """The default registry, where services/common/metrics.py puts the catalog."""
    return Response(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
