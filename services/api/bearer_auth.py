"""The API's bearer token, for every endpoint that reveals or changes a crawl
(GET /api/frontier, GET /api/report, POST /api/seeds); search, suggest, the web UI and
the probes stay open.

One decorator guards them all, so a new crawl endpoint cannot forget a step of the
check. The token comes from the settings object (``TANSUO_API_TOKEN``); with none
configured these endpoints are off (403) rather than open, so forgetting to set it
never exposes the crawl.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from flask import jsonify, request
from flask.typing import ResponseReturnValue

from services.api.context import api_context

View = TypeVar("View", bound=Callable[..., ResponseReturnValue])

# The challenge of RFC 6750: a client (or a person with curl -v) learns which scheme to use.
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="tansuo"'}


def presented_token(authorization: str) -> str:
    """The token of an ``Authorization: Bearer TOKEN`` header, "" for any other header.
    The scheme is matched case-insensitively, as RFC 7235 says auth schemes are."""
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison. Both sides are hashed first so that the time taken
    does not even reveal the expected token's length (compare_digest returns early on
    unequal lengths)."""
    return hmac.compare_digest(hashlib.sha256(given.encode()).digest(), hashlib.sha256(expected.encode()).digest())


def refuse_unauthorised(purpose: str) -> ResponseReturnValue | None:
    """None when the request carries the configured token; else the answer to give:
    403 when no token is configured (the endpoint is off), 401 for a missing or wrong
    one, 429 while the client has presented too many wrong ones (auth_failures.py)."""
    ctx = api_context()
    token = ctx.settings.api_token
    if not token:
        return jsonify(error=f"{purpose} over the API is disabled: set TANSUO_API_TOKEN"), 403
    given = presented_token(request.headers.get("Authorization", ""))
    client = request.remote_addr or ""
    if given and (wait_s := ctx.auth_failures.wait_s(client)):
        retry_after = ctx.auth_failures.refused(client, request.path, wait_s)
        message = "too many wrong tokens from your address; retry after the seconds in Retry-After"
        return jsonify(error=message), 429, {"Retry-After": retry_after}
    if not given or not token_matches(given, token):
        if given:
            ctx.auth_failures.failed(client, request.path)
        return jsonify(error="missing or wrong bearer token"), 401, CHALLENGE
    return None


def requires_token(purpose: str) -> Callable[[View], View]:
    """Decorate a view so that it runs only for a request carrying the API token;
    ``purpose`` names what the endpoint does, for the "disabled" message."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def guarded(*args: Any, **kwargs: Any) -> ResponseReturnValue:
            refused = refuse_unauthorised(purpose)
            return refused if refused is not None else view(*args, **kwargs)

        guarded.tansuo_requires_token = True  # type: ignore[attr-defined]  # read by the OpenAPI check
        return guarded  # type: ignore[return-value]

    return decorate
