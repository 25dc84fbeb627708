"""POST /api/hosts/{host}/pause|resume|recrawl|purge: an operator's per-host actions
(bearer token required), the same as `tansuo host ACTION HOST` and the console's buttons."""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, jsonify
from flask.typing import ResponseReturnValue

from services.api.bearer_auth import requires_token
from services.common.ports import Bus, FrontierState
from services.scheduler import host_actions

bp = Blueprint("host_actions_api", __name__)


def frontier_state(app: Flask) -> FrontierState:
    """The app's frontier state, opened on first use (search-only servers never open it)."""
    state = app.extensions.get("tansuo.frontier")
    if state is None:
        from services.common.bootstrap import build_frontier_state

        state = app.extensions["tansuo.frontier"] = build_frontier_state(app.extensions["tansuo.settings"])
    return state


def bus(app: Flask) -> Bus:
    """The app's bus, opened on first use: only seeds and purges publish."""
    opened = app.extensions.get("tansuo.bus")
    if opened is None:
        from services.common.bootstrap import build_bus

        opened = app.extensions["tansuo.bus"] = build_bus(app.extensions["tansuo.settings"])
    return opened


def act(host: str, action: str) -> ResponseReturnValue:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    try:
        result = host_actions.run_action(frontier_state(app), lambda: bus(app), host, action)
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
