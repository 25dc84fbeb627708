"""Liveness and readiness probes.

Kept apart on purpose: an unreachable index should take the pod out of rotation
(``/readyz`` 503), not get it restarted forever (``/livez`` stays 200).
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from services.common.ports import SearchIndex

log = logging.getLogger(__name__)

bp = Blueprint("health", __name__)


@bp.get("/livez")
@bp.get("/healthz")
def live() -> ResponseReturnValue:
    """200 while the process can answer at all."""
    return jsonify(status="ok")


@bp.get("/readyz")
def ready() -> ResponseReturnValue:
    """200 when the search index answers a ping, else 503."""
    index: SearchIndex = current_app.extensions["tansuo.index"]
    try:
        index.ping()
    except Exception as exc:  # any backend failure means "not ready", whatever its type
        log.warning("readiness check failed: %s", exc)
        return jsonify(status="unavailable", error=str(exc)), 503
    return jsonify(status="ready")
