"""GET /api/report: the crawl report (same as `tansuo report --json`); bearer token required,
as it lists every host a crawl touched and why pages were skipped or failed."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.context import api_context
from services.api.index_documents import index_documents
from services.scheduler.crawl_report import crawl_report

bp = Blueprint("report_api", __name__)


@bp.get("/report")
@requires_token("the crawl report")
def report() -> ResponseReturnValue:
    """Per host: fetched by status, skipped and why, failed and why, limits hit, given up;
    the URLs that went wrong and the pages linking to them."""
    backends = api_context().backends
    return jsonify(crawl_report(backends.frontier, backends.link_graph, index_documents(backends.index)))
