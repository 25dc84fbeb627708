"""Server-rendered search page: works without JavaScript."""

from __future__ import annotations

import logging

from flask import Blueprint, render_template, request
from flask.typing import ResponseReturnValue

from services.api.context import api_context
from services.api.site_param import checked_site
from services.api.ui_messages import query_error
from services.common.ports import SearchIndex
from services.search.search_service import BadQuery
from services.search.site_choices import SELECT_LIMIT

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
    ctx = api_context()
    service, search_index, choices = ctx.search, ctx.backends.index, ctx.sites
    q = request.args.get("q", "").strip()
    site = request.args.get("site", "")
    page = request.args.get("page", "1")
    sites = choices.sites()
    context = {"q": q, "site": site, "sites": sites, "list_sites": len(sites) <= SELECT_LIMIT, "result": None,
               "error": "", "pages": []}  # fmt: skip
    try:
        site = checked_site(site)
        if not q:
            if "page" in request.args:  # a page number alone must still be one (the schema's minimum: 1)
                service.validate("-", page, PAGE_SIZE, site)
            return render_template("search.html", pages_indexed=_count(search_index), **context)
        result = service.search(q, page=page, size=PAGE_SIZE, site=site)
    except BadQuery as exc:
        context["error"] = query_error(str(exc))
        return render_template("search.html", **context), 400
    context["result"] = result
    context["pages"] = page_numbers(result["page"], result["pages"])
    return render_template("search.html", **context)
