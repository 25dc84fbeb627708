"""Flask application factory for the search API, the web UI and health checks."""

from __future__ import annotations

import logging
import threading

from flask import Flask, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, InternalServerError

from services.analytics.click_links import ClickLinks
from services.analytics.recorder import SearchAnalytics
from services.api import (
    admin_session,
    admin_views,
    analytics_views,
    api_docs,
    cache_views,
    client_address,
    dictionary_views,
    frontier_api,
    health,
    host_actions_api,
    host_settings_views,
    query_encoding,
    report_api,
    request_ids,
    search_api,
    search_rate_limit,
    security_headers,
    seeds_api,
    web_ui,
)
from services.api.auth_failures import FailureLimit
from services.api.context import EXTENSION, ApiContext
from services.api.error_pages import http_error_response
from services.api.ui_messages import http_error as ui_http_error
from services.common import analysis
from services.common.bootstrap import Backends
from services.common.config import Settings
from services.common.errors import BackendUnavailable
from services.common.ports import SearchIndex
from services.common.runtime.health_server import Readiness
from services.common.runtime.metrics import ERRORS
from services.common.runtime.readiness_cache import CachedReadiness
from services.dictionaries.sync import DictionarySync
from services.search.search_service import SearchService
from services.search.searched_runs import SearchedRuns
from services.search.site_choices import SiteChoices
from services.search.suggest_service import SuggestService

log = logging.getLogger(__name__)


def create_app(
    cfg: Settings, index: SearchIndex | None = None, readiness: CachedReadiness | None = None
) -> Flask:
    """The API's composition root: its backends are built here, once, and handed to
    the views through one ``ApiContext``. ``index`` is the index to serve (by default
    the configured one, opened read-only so it can serve while a crawl in another
    process writes); ``readiness`` replaces the index ping as /readyz's answer."""
    app = Flask(__name__)
    # "//admin" would be redirected to an absolute URL built from the Host header,
    # which a client chooses: such paths are simply not found.
    app.url_map.merge_slashes = False
    app.json.ensure_ascii = False  # type: ignore[attr-defined]  # Chinese stays readable in JSON
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep the documented field order
    # Adapters live on the app, not in module globals, so a test can build many apps.
    backends = Backends(cfg, index=index, read_only_index=True)
    index = backends.index
    # The did-you-mean weighs corrections by what users search (the search log, read
    # in the background; services/search/searched_runs.py).
    searched = None
    if cfg.search_typo_log_queries:
        searched = SearchedRuns(lambda: backends.search_log, cfg.search_typo_log_days, cfg.search_typo_log_queries,
                                cfg.search_typo_log_refresh_s).start()  # fmt: skip
    app.extensions[EXTENSION] = ApiContext(
        settings=cfg,
        backends=backends,
        search=SearchService(cfg, index, searched),
        suggest=SuggestService(index),
        sites=SiteChoices(index),
        readiness=readiness or CachedReadiness(Readiness({"index": index.ping})),
        auth_failures=FailureLimit(cfg.api_auth_failures_per_minute),
        # Search analytics and the operator's dictionaries: written and read in the
        # background, so a search never waits for their store (services/analytics/,
        # services/dictionaries/).
        analytics=SearchAnalytics(cfg, lambda: backends.search_log).start(),
        click_links=ClickLinks(lambda: backends.search_log.click_key()),
        dictionaries=DictionarySync(cfg, lambda: backends.dictionaries).start(block=False),
    )
    app.register_blueprint(search_api.bp, url_prefix="/api")
    app.register_blueprint(frontier_api.bp, url_prefix="/api")
    app.register_blueprint(seeds_api.bp, url_prefix="/api")
    app.register_blueprint(report_api.bp, url_prefix="/api")
    app.register_blueprint(host_actions_api.bp, url_prefix="/api")
    app.register_blueprint(api_docs.bp, url_prefix="/api")
    app.register_blueprint(web_ui.bp)
    app.register_blueprint(admin_views.bp)
    app.register_blueprint(analytics_views.bp)
    app.register_blueprint(dictionary_views.bp)
    app.register_blueprint(host_settings_views.bp)
    app.register_blueprint(cache_views.bp)
    admin_session.init_app(app, cfg)
    app.register_blueprint(health.bp)
    request_ids.init_app(app)
    client_address.init_app(app, cfg)
    query_encoding.init_app(app)
    search_rate_limit.init_app(app, cfg)
    security_headers.init_app(app)
    _register_error_handlers(app)
    # Load the segmenter's dictionaries now, off the request path, so the first search
    # does not wait for them; a request arriving earlier simply waits for the load.
    threading.Thread(target=analysis.initialise, name="jieba-warmup", daemon=True).start()
    return app


def _wants_json() -> bool:
    return request.path == "/api" or request.path.startswith("/api/")


def _register_error_handlers(app: Flask) -> None:
    # App-wide rather than on the API blueprint: a 404 or 405 is raised while routing,
    # before Flask knows which blueprint the path belongs to.

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> ResponseReturnValue:
        return http_error_response(exc, _wants_json())

    @app.errorhandler(BackendUnavailable)
    def backend_unavailable(exc: BackendUnavailable) -> ResponseReturnValue:
        # Not a bug but an outage (or a start-up still connecting): 503 says "retry".
        log.warning("%s %s: %s", request.method, request.path, exc)
        message = "the search backend is not reachable right now; try again shortly"
        if _wants_json():
            return jsonify(error=message), 503
        return render_template("error.html", code=503, message=ui_http_error(503)), 503

    @app.errorhandler(Exception)
    def unexpected_error(exc: Exception) -> ResponseReturnValue:
        log.exception("unhandled error on %s %s", request.method, request.path)
        ERRORS.labels(service="api", kind="unhandled").inc()
        message = "internal error: the search backend failed; try again shortly"
        if _wants_json():
            return jsonify(error=message), 500
        return render_template("error.html", code=InternalServerError.code, message=ui_http_error(500)), 500
