"""POST /api/seeds: start or widen a crawl on a running cluster (bearer token required)."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.context import api_context
from services.api.site_param import off_contract_seed
from services.scheduler.seed_submission import BadSeeds, PrivateSeed, seed_request, submit

bp = Blueprint("seeds_api", __name__)


@bp.post("/seeds")
@requires_token("seeding")
def seeds() -> ResponseReturnValue:
    """Body: {"urls": [...], "allow_domains": [...]}; answers 202 once the seeds are queued."""
    ctx = api_context()
    cfg = ctx.settings
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("urls"), list):
        return jsonify(error='expected a JSON object {"urls": [...], "allow_domains": [...]}'), 400
    domains = body.get("allow_domains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        return jsonify(error="allow_domains must be a list of strings"), 400
    urls = body["urls"]
    if not all(isinstance(u, str) for u in urls):
        return jsonify(error="urls must be a list of strings"), 400
    refused = off_contract_seed(urls, domains)
    if refused:
        return jsonify(error=f"not an http(s) URL or host name of the form the API takes: {refused!r}"), 400
    try:
        # The crawler would refuse a private address at fetch time; refuse it here too,
        # as `tansuo crawl` does, so the caller hears why instead of seeing nothing crawled.
        req = seed_request(body["urls"], domains, source="api", allow_private_networks=cfg.crawler_allow_private_networks)
    except PrivateSeed as exc:
        # Well formed, refused by this server's settings (`serve --allow-private-networks`).
        return jsonify(error=str(exc)), 403
    except BadSeeds as exc:
        return jsonify(error=str(exc)), 400
    submit(ctx.backends.bus, req)
    return jsonify(accepted=len(req.urls), urls=req.urls, allow_domains=req.allow_domains), 202
