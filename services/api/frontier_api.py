"""GET /api/frontier: the crawl frontier's state as JSON (same as `tansuo frontier --json`);
bearer token required, as it names every host and the URLs fetched next."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.context import api_context
from services.scheduler.frontier_report import frontier_report

bp = Blueprint("frontier_api", __name__)


@bp.get("/frontier")
@requires_token("the frontier report")
def frontier() -> ResponseReturnValue:
    """Queued, in flight, due now, per-host counts, blocked hosts and next fetches."""
    return jsonify(frontier_report(api_context().backends.frontier))
