"""Server-rendered search page: works without JavaScript."""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, render_template, request
from flask.typing import ResponseReturnValue

from services.common.ports import SearchIndex
from services.search.search_service import BadQuery, SearchService
from services.search.site_choices import SELECT_LIMIT, SiteChoices

log = logging.getLogger(__name__)

bp = Blueprint("web_ui", __name__)

PAGE_SIZE = 10
_PAGE_LINKS = 9  # numbered links shown around the current page


def _count(index: SearchIndex) -> int | None:
    try:
        return index.count()
    except Exception:  # shown on the home page only; the search reports real failures
        log.exception("cannot count indexed pages")
        return None


def page_numbers(current: int, pages: int, width: int = _PAGE_LINKS) -> list[int]:
    """A window of page numbers around ``current``, ``width`` long at most."""
    if pages <= 0:
        return []
    first = max(1, min(current - width // 2, pages - width + 1))
    return list(range(first, min(pages, first + width - 1) + 1))


@bp.get("/")
def index() -> ResponseReturnValue:
    """Home page with the search box, or the results for ``q``."""
    service: SearchService = current_app.extensions["tansuo.search"]
    search_index: SearchIndex = current_app.extensions["tansuo.index"]
    choices: SiteChoices = current_app.extensions["tansuo.sites"]
    q = request.args.get("q", "").strip()
    site = request.args.get("site", "").strip().lower()
    page = request.args.get("page", "1")
    sites = choices.sites()
    context = {"q": q, "site": site, "sites": sites, "list_sites": len(sites) <= SELECT_LIMIT, "result": None,
               "error": "", "pages": []}  # fmt: skip
    if not q:
        return render_template("search.html", pages_indexed=_count(search_index), **context)
    try:
        result = service.search(q, page=page, size=PAGE_SIZE, site=site, as_typed=request.args.get("as_typed", ""))
    except BadQuery as exc:
        context["error"] = str(exc)
        return render_template("search.html", **context), 400
    context["result"] = result
    context["pages"] = page_numbers(result["page"], result["pages"])
    return render_template("search.html", **context)
