"""The API's bearer token check, for the endpoints that change a crawl or read its
operational detail (POST /api/seeds, GET /api/report); search stays open."""

from __future__ import annotations

import hmac

from flask import current_app, jsonify, request
from flask.typing import ResponseReturnValue


def refuse_unauthorised(purpose: str) -> ResponseReturnValue | None:
    """None when the request carries the configured token; else the answer to give:
    403 when no token is configured (the endpoint is off), 401 for a missing or wrong one."""
    token = current_app.extensions["tansuo.settings"].api_token
    if not token:
        return jsonify(error=f"{purpose} over the API is disabled: set TANSUO_API_TOKEN"), 403
    header = request.headers.get("Authorization", "")
    given = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    if not given or not hmac.compare_digest(given.encode(), token.encode()):
        return jsonify(error="missing or wrong bearer token"), 401, {"WWW-Authenticate": "Bearer"}
    return None
