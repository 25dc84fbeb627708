"""JSON search endpoint."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from services.api.search_service import BadQuery, SearchService

bp = Blueprint("search_api", __name__)


@bp.get("/search")
def search() -> ResponseReturnValue:
    """``GET /api/search?q=&page=&size=&site=``: one page of results; 400 with
    ``{"error": ...}`` for bad parameters."""
    service: SearchService = current_app.extensions["tansuo.search"]
    args = request.args
    try:
        result = service.search(
            args.get("q", ""),
            page=args.get("page", "1"),
            size=args.get("size", "10"),
            site=args.get("site", ""),
        )
    except BadQuery as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(result)
