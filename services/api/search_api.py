"""JSON search endpoint."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from services.search.search_service import BadQuery, SearchService
from services.search.suggest_service import MAX_PREFIX_CHARS, SuggestService

bp = Blueprint("search_api", __name__)


@bp.get("/search")
def search() -> ResponseReturnValue:
    """``GET /api/search?q=&page=&size=&site=&as_typed=``: one page of results (with
    ``as_typed=1``, no spelling correction); 400 with ``{"error": ...}`` for bad parameters."""
    service: SearchService = current_app.extensions["tansuo.search"]
    args = request.args
    try:
        result = service.search(
            args.get("q", ""),
            page=args.get("page", "1"),
            size=args.get("size", "10"),
            site=args.get("site", ""),
            as_typed=args.get("as_typed", ""),
        )
    except BadQuery as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(result)


@bp.get("/suggest")
def suggest() -> ResponseReturnValue:
    """``GET /api/suggest?q=``: titles and headings that hold what was typed, for the
    search box; an empty list when nothing matches."""
    service: SuggestService = current_app.extensions["tansuo.suggest"]
    q = request.args.get("q", "")
    if len(q) > MAX_PREFIX_CHARS:
        return jsonify(error=f"q is too long for suggestions: at most {MAX_PREFIX_CHARS} characters"), 400
    return jsonify(query=q, suggestions=service.suggest(q))
