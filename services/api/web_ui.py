"""Server-rendered search page: works without JavaScript."""

from __future__ import annotations

import datetime
import logging
from typing import Any

from flask import Blueprint, render_template, request
from flask.typing import ResponseReturnValue

from services.api.context import api_context
from services.api.result_links import with_links
from services.api.site_param import checked_site
from services.api.ui_messages import query_error
from services.common.ports import SearchIndex
from services.search.search_service import AS_TYPED_VALUES, BadQuery
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
    # Anything but "date" is the default order: a hand-edited link still gets results.
    sort = "date" if request.args.get("sort", "") == "date" else "relevance"
    as_typed = AS_TYPED_VALUES.get(request.args.get("as_typed", ""), False)
    sites = choices.sites()
    context = {"q": q, "site": site, "sites": sites, "list_sites": len(sites) <= SELECT_LIMIT, "result": None,
               "error": "", "pages": [], "sort": sort}  # fmt: skip
    try:
        site = checked_site(site)
        if not q:
            if "page" in request.args:  # a page number alone must still be one (the schema's minimum: 1)
                service.validate("-", page, PAGE_SIZE, site)
            return render_template("search.html", pages_indexed=_count(search_index), **context)
        result = service.search(q, page=page, size=PAGE_SIZE, site=site, sort=sort,
                                as_typed=as_typed)
    except BadQuery as exc:
        context["error"] = query_error(str(exc))
        return render_template("search.html", **context), 400
    ctx.analytics.searched(q, result["total"], result["page"], result["took_ms"], "web", sort)
    result = with_links(result, q, ctx.click_links if ctx.analytics.enabled else None)
    offset = ctx.settings.analytics_utc_offset_hours
    result["results"] = [{**r, "date_text": local_date(r.get("date"), offset)} for r in result["results"]]
    context["result"] = result
    context["pages"] = page_numbers(result["page"], result["pages"])
    return render_template("search.html", **context)


def local_date(iso: Any, utc_offset_hours: float) -> str:
    """A result's ISO date as the day it was there (YYYY-MM-DD), "" when unknown."""
    if not iso:
        return ""
    zone = datetime.timezone(datetime.timedelta(hours=utc_offset_hours))
    return datetime.datetime.fromisoformat(str(iso)).astimezone(zone).date().isoformat()
