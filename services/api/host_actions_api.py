"""POST /api/hosts/{host}/pause|resume|recrawl|purge: an operator's per-host actions
(bearer token required), the same as `tansuo host ACTION HOST` and the console's buttons."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.api.context import api_context
from services.scheduler import host_actions

bp = Blueprint("host_actions_api", __name__)


def act(host: str, action: str) -> ResponseReturnValue:
    backends = api_context().backends
    try:
        result = host_actions.run_action(backends.frontier, lambda: backends.bus, host, action)
    except host_actions.UnknownHost:
        return jsonify(error=f"the frontier knows no host {host!r}"), 404
    return jsonify(result.to_dict())


@bp.post("/hosts/<host>/pause")
@requires_token("host actions")
def pause(host: str) -> ResponseReturnValue:
    """No fetch job for the host until resumed."""
    return act(host, "pause")


@bp.post("/hosts/<host>/resume")
@requires_token("host actions")
def resume(host: str) -> ResponseReturnValue:
    """The host is fetched again."""
    return act(host, "resume")


@bp.post("/hosts/<host>/recrawl")
@requires_token("host actions")
def recrawl(host: str) -> ResponseReturnValue:
    """Every known URL of the host is due now."""
    return act(host, "recrawl")


@bp.post("/hosts/<host>/purge")
@requires_token("host actions")
def purge(host: str) -> ResponseReturnValue:
    """The host's documents leave the index, and the host is paused."""
    return act(host, "purge")
