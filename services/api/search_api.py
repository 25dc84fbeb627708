"""JSON search endpoint."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from services.api.context import api_context
from services.api.result_links import with_links
from services.api.site_param import checked_site
from services.search.search_service import BadQuery
from services.search.suggest_service import MAX_PREFIX_CHARS

bp = Blueprint("search_api", __name__)


@bp.get("/search")
def search() -> ResponseReturnValue:
    """``GET /api/search?q=&page=&size=&site=&sort=&as_typed=``: one page of results
    (with ``as_typed=1``, no spelling correction); 400 with ``{"error": ...}`` for bad
    parameters."""
    ctx = api_context()
    args = request.args
    try:
        result = ctx.search.search(
            args.get("q", ""),
            page=args.get("page", "1"),
            size=args.get("size", "10"),
            site=checked_site(args.get("site", "")),
            sort=args.get("sort", "relevance"),
            as_typed=args.get("as_typed"),
        )
    except BadQuery as exc:
        return jsonify(error=str(exc)), 400
    ctx.analytics.searched(result["query"], result["total"], result["page"], result["took_ms"], "api", result["sort"])
    return jsonify(with_links(result, result["query"], ctx.click_links if ctx.analytics.enabled else None))


@bp.get("/suggest")
def suggest() -> ResponseReturnValue:
    """``GET /api/suggest?q=``: titles and headings that hold what was typed, for the
    search box; an empty list when nothing matches."""
    service = api_context().suggest
    q = request.args.get("q", "")
    if len(q) > MAX_PREFIX_CHARS:
        return jsonify(error=f"q is too long for suggestions: at most {MAX_PREFIX_CHARS} characters"), 400
    return jsonify(query=q, suggestions=service.suggest(q))
