"""Search analytics over HTTP: the click redirect of results pages (``/go``), the
console's page (``/admin/analytics``) and the JSON export (``/api/analytics``)."""

from __future__ import annotations

import datetime
import logging
import re

from flask import Blueprint, jsonify, redirect, render_template, request
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.console_pages import must_log_in, refuse
from services.api.context import api_context
from services.common.domain.search_analytics import DayTotals, QueryStats, SearchEvent

log = logging.getLogger(__name__)

bp = Blueprint("analytics", __name__)

TOP = 50  # queries and URLs in each of a day's lists
RECENT = 50  # single searches on the console's page
MAX_TOP = 1000


def _day(text: str) -> str | None:
    """A YYYY-MM-DD day, or None for anything else."""
    try:
        return datetime.date.fromisoformat(text.strip()).isoformat() if text.strip() else None
    except ValueError:
        return None


# An absolute http(s) URL in printable ASCII, as openapi.json says.
_URL = re.compile(r"https?://[!-~]+")


@bp.get("/go")
def go() -> ResponseReturnValue:
    """A result's click link: the click is counted, then the browser goes to the page.
    Only signed links are followed (no open redirect); the page is told our origin as
    the referrer, never the query."""
    ctx = api_context()
    url, query, sig = request.args.get("url", ""), request.args.get("q", ""), request.args.get("sig", "")
    try:
        position = int(request.args.get("pos", ""))
    except ValueError:
        position = 0
    if not _URL.fullmatch(url) or position < 1:
        return render_template("error.html", code=400, message="这个结果链接无效：请回到搜索结果页重新点击。"), 400
    if not ctx.click_links.valid(url, query, position, sig):  # well formed, but not a link we made
        return render_template("error.html", code=403, message="这个结果链接无效：请回到搜索结果页重新点击。"), 403
    ctx.analytics.clicked(query, url, position)
    response = redirect(url, code=302)
    response.headers["Referrer-Policy"] = "origin"
    response.headers["Cache-Control"] = "no-store"
    return response


def _day_json(totals: DayTotals) -> dict[str, object]:
    return {"day": totals.day, "searches": totals.searches, "result_pages": totals.result_pages,
            "zero_hit": totals.zero, "clicks": totals.clicks, "zero_hit_share": round(totals.zero_share, 4),
            "click_through": round(totals.click_through, 4), "mean_ms": round(totals.mean_ms, 1)}  # fmt: skip


def _query_json(stats: QueryStats) -> dict[str, object]:
    return {"query": stats.query, "searches": stats.searches, "zero_hit": stats.zero, "clicks": stats.clicks,
            "last_total": stats.last_total, "click_through": round(stats.click_through, 4)}  # fmt: skip


def _search_json(event: SearchEvent) -> dict[str, object]:
    at = datetime.datetime.fromtimestamp(event.at, datetime.UTC).isoformat(timespec="seconds")
    return {"at": at, "query": event.query, "total": event.total, "page": event.page,
            "took_ms": round(event.took_ms, 1), "source": event.source, "sort": event.sort}  # fmt: skip


@bp.get("/api/analytics")
@requires_token("search analytics")
def export() -> ResponseReturnValue:
    """``?day=YYYY-MM-DD&top=N&recent=N``: every kept day's totals, one day's lists
    (today by default) and the newest single searches."""
    ctx = api_context()
    day = _day(request.args["day"]) if "day" in request.args else ctx.analytics.today()
    if day is None:
        return jsonify(error="day must be a date, YYYY-MM-DD"), 400
    try:
        top = int(request.args.get("top", TOP))
        recent = int(request.args.get("recent", 0))
    except ValueError:
        return jsonify(error="top and recent must be integers"), 400
    if not (1 <= top <= MAX_TOP and 0 <= recent <= MAX_TOP):
        return jsonify(error=f"top must be between 1 and {MAX_TOP}, recent between 0 and {MAX_TOP}"), 400
    store = ctx.backends.search_log
    report = store.day(day, top)
    return jsonify(
        enabled=ctx.analytics.enabled,
        days=[_day_json(d) for d in store.days()],
        day=_day_json(report.totals),
        popular=[_query_json(q) for q in report.popular],
        zero_hit=[_query_json(q) for q in report.zero_hit],
        clicked=[{"url": url, "clicks": n} for url, n in report.clicked],
        recent=[_search_json(e) for e in store.recent(recent)] if recent else [],
    )


def _local_time(at: float, offset_hours: float) -> str:
    zone = datetime.timezone(datetime.timedelta(hours=offset_hours))
    return datetime.datetime.fromtimestamp(at, zone).strftime("%m-%d %H:%M:%S")


@bp.get("/admin/analytics")
def console() -> ResponseReturnValue:
    """The console's search analytics: the days kept, and one day's popular queries,
    queries that found nothing, opened results and the newest searches."""
    refused = must_log_in()
    if refused is not None:
        return refused
    ctx = api_context()
    cfg = ctx.settings
    asked = request.args.get("day", "")
    day = _day(asked) or ctx.analytics.today()
    if asked and _day(asked) is None:
        return refuse(400, f"日期格式不对：{asked[:20]}（应为 2026-01-31 这样的日期）")
    ctx.analytics.flush()  # this worker's last second of searches, so the page includes them
    try:
        store = ctx.backends.search_log
        days, report, recent = store.days(), store.day(day, TOP), store.recent(RECENT)
    except Exception as exc:  # Redis away (BackendUnavailable), an unreadable SQLite file (sqlite3.Error)
        log.warning("search analytics: the search log cannot be read: %s", exc)
        return refuse(503, "搜索日志暂时无法读取，请稍后再试。")
    chart = list(reversed(days[:30]))
    peak = max((d.searches for d in chart), default=0)
    return render_template(
        "admin_analytics.html", day=day, days=days, report=report, recent=recent, chart=chart, peak=peak,
        enabled=ctx.analytics.enabled, retention=cfg.analytics_retention_days,
        local_time=lambda at: _local_time(at, cfg.analytics_utc_offset_hours), utc_offset=cfg.analytics_utc_offset_hours,
    )  # fmt: skip

