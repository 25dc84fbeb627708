"""GET /api/report: the crawl report (same as `tansuo report --json`); bearer token required,
as it lists every host a crawl touched and why pages were skipped or failed."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.context import api_context
from services.scheduler.crawl_report import crawl_report

bp = Blueprint("report_api", __name__)


@bp.get("/report")
@requires_token("the crawl report")
def report() -> ResponseReturnValue:
    """Per host: fetched by status, skipped and why, failed and why, limits hit, given up."""
    return jsonify(crawl_report(api_context().backends.frontier))
