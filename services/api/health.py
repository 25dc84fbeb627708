"""Liveness and readiness probes.

Kept apart on purpose: an unreachable index should take the pod out of rotation
(``/readyz`` 503), not get it restarted forever (``/livez`` stays 200).
"""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from services.api.context import api_context

bp = Blueprint("health", __name__)


@bp.get("/livez")
@bp.get("/healthz")
def live() -> ResponseReturnValue:
    """200 while the process can answer at all."""
    return jsonify(status="ok")


@bp.get("/readyz")
def ready() -> ResponseReturnValue:
    """200 when the search index answered its last ping, else 503 with what failed.
    The ping runs in the background (services/common/runtime/readiness_cache.py): a probe never
    waits behind searches."""
    status, body = api_context().readiness.response()
    return jsonify(body), status
