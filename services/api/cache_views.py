"""``/cache``: a result's cached copy, framed under a banner that says it is a copy and
when it was fetched; ``/cache/raw``: the copy itself (services/api/cached_copy.py)."""

from __future__ import annotations

import datetime
import logging

from flask import Blueprint, Response, render_template, request
from flask.typing import ResponseReturnValue

from services.api import cached_copy
from services.api.context import api_context
from services.common.domain.documents import IndexDoc, StoredPage
from services.common.domain.messages import url_fingerprint

log = logging.getLogger(__name__)

bp = Blueprint("cache", __name__)

_MAX_URL_CHARS = 4096


class _NoCopy(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _lookup(url: str) -> tuple[IndexDoc, StoredPage]:
    """The indexed document and its stored page; only indexed pages have a copy, so a
    page the index dropped (gone, noindex) is not shown from the store."""
    if not url.startswith(("http://", "https://")) or len(url) > _MAX_URL_CHARS:
        raise _NoCopy(400, "网址无效：快照只针对搜索结果中的网页。")
    backends = api_context().backends
    doc = backends.index.get(url)
    if doc is None:
        raise _NoCopy(404, "这个网页不在索引中，没有快照。")
    page = backends.page_store.get(doc.store_key or url_fingerprint(url))
    if page is None:
        raise _NoCopy(404, "这个网页的快照不可用（原始网页没有保存）。")
    if not cached_copy.showable(page.headers):
        raise _NoCopy(404, "这种类型的文件没有快照。")
    return doc, page


def _stamp(at: float) -> str:
    zone = datetime.timezone(datetime.timedelta(hours=api_context().settings.analytics_utc_offset_hours))
    return datetime.datetime.fromtimestamp(at, zone).strftime("%Y-%m-%d %H:%M")


@bp.get("/cache")
def page() -> ResponseReturnValue:
    """``?url=``: the copy under a banner with its fetch date and a link to the live page."""
    url = request.args.get("url", "").strip()
    try:
        doc, stored = _lookup(url)
        root = cached_copy.parse(stored.body, stored.headers)
        if cached_copy.refuses_archiving(stored.headers, root):
            raise _NoCopy(404, "这个网页要求搜索引擎不保留快照（noarchive）。")
    except _NoCopy as exc:
        return render_template("error.html", code=exc.code, message=exc.message), exc.code
    modified = doc.modified_at if doc.modified_at and abs(doc.modified_at - stored.fetched_at) >= 1 else 0.0
    response = Response(render_template(
        "cache.html", url=url, title=doc.title or url, fetched=_stamp(stored.fetched_at),
        modified=_stamp(modified) if modified else "",
    ))  # fmt: skip
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.get("/cache/raw")
def raw() -> ResponseReturnValue:
    """``?url=``: the copy alone, sandboxed by its Content-Security-Policy."""
    url = request.args.get("url", "").strip()
    try:
        _, stored = _lookup(url)
        root = cached_copy.parse(stored.body, stored.headers)
        if root is None or cached_copy.refuses_archiving(stored.headers, root):
            raise _NoCopy(404, "这个网页没有可显示的快照。")
    except _NoCopy as exc:
        return render_template("error.html", code=exc.code, message=exc.message), exc.code
    response = Response(cached_copy.safe_copy(root, url), mimetype="text/html")
    response.headers["Content-Security-Policy"] = cached_copy.CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "private, max-age=300"
    return response
