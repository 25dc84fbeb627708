"""Applies the per-address token buckets (services/api/rate_limit.py) to the search
endpoints: ``/api/search``, ``/api/suggest`` and the web UI's results page.

The web UI's page runs the same search as ``/api/search``, so it takes from the same
bucket; a script cannot step around the limit by scraping HTML instead. Health,
metrics, documentation and the token-guarded crawl endpoints are not limited.
"""

from __future__ import annotations

from flask import Flask, jsonify, render_template, request
from flask.typing import ResponseReturnValue

from services.api.rate_limit import (
    TokenBuckets,
    is_exempt,
    parse_networks,
    retry_after_header,
)
from services.common.config import Settings
from services.common.runtime.metrics import API_RATE_LIMITED

# Flask endpoint names (blueprint.view) that cost a search.
LIMITED_ENDPOINTS = frozenset({"search_api.search", "search_api.suggest", "web_ui.index"})


def init_app(app: Flask, cfg: Settings) -> None:
    """Limit ``app``'s search endpoints per client address as ``cfg`` says; a rate of 0
    turns limiting off. The address is the client's behind trusted proxies
    (services/api/client_address.py), so that a reverse proxy or an Ingress in front
    does not make every user one client."""
    if cfg.api_rate_limit_per_s <= 0:
        return
    buckets = TokenBuckets(cfg.api_rate_limit_per_s, cfg.api_rate_limit_burst)
    exempt = parse_networks(cfg.api_rate_limit_exempt)

    @app.before_request
    def limit() -> ResponseReturnValue | None:
        if request.endpoint not in LIMITED_ENDPOINTS:
            return None
        if request.endpoint == "web_ui.index" and not request.args.get("q", "").strip():
            return None  # the home page costs no search
        client = request.remote_addr or ""
        if is_exempt(client, exempt):
            return None
        wait_s = buckets.take(client)
        if not wait_s:
            return None
        API_RATE_LIMITED.labels(endpoint=request.endpoint).inc()
        headers = {"Retry-After": retry_after_header(wait_s)}
        message = "too many requests from your address; retry after the seconds in Retry-After"
        if request.path.startswith("/api/"):
            return jsonify(error=message), 429, headers
        return render_template("error.html", code=429, message=message), 429, headers
