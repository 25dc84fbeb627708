"""The operator console's login: the API token, typed once into a form, becomes a signed
session cookie; every form the console shows carries a per-session CSRF token.

The cookie is Flask's signed session, with a secret derived from the API token
(HMAC-SHA256 of a fixed label, keyed by the token), not a setting of its own:

- every gunicorn worker and every api pod derives the same key from the one secret
  they already share, so a login holds whichever worker answers, with no session store;
- changing the token (after a leak, say) ends every console session at once;
- the key is not the token, so even a leaked signing key opens no API endpoint.

The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page or
form sends it), limited to /admin, and Secure when TANSUO_API_ADMIN_COOKIE_SECURE is
set. SameSite=Strict already stops cross-site posts in current browsers; the CSRF
token also covers older ones and same-site pages on other ports.

A session ends, whatever the cookie says:

- ``api_admin_session_s`` after the login (the login time is signed into the cookie);
- ``api_admin_idle_s`` after its last request (so is the last request's time, at most
  a minute old);
- at any logout: the cookie carries the console's session generation of its login, a
  counter in the shared frontier state (SQLite beside the data, or Redis) that a
  logout increments. Every worker and every pod reads the same counter, so a copied
  cookie is worth nothing after logging out. The console has one identity, the
  token's holder, so a logout ends every console session, on every device.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from datetime import timedelta

from flask import Flask, session

from services.api.bearer_auth import token_matches
from services.common.config import Settings
from services.common.ports import FrontierState

_LABEL = b"tansuo operator console session v1"
# The frontier counter that a logout increments (services/common/ports.py, bump).
GENERATION = "console:logouts"
# The last-request time in the cookie is refreshed at most this often, so that a page
# of the console is not a new cookie on every click.
_SEEN_EVERY_S = 60.0


def session_secret(token: str) -> bytes:
    """The signing key of console sessions, derived from the API token."""
    return hmac.new(token.encode(), _LABEL, hashlib.sha256).digest()


def init_app(app: Flask, cfg: Settings) -> None:
    """Cookie settings; no secret (and so no session) while no token is configured."""
    if cfg.api_token:
        app.secret_key = session_secret(cfg.api_token)
    app.config.update(
        SESSION_COOKIE_NAME="tansuo_admin",
        SESSION_COOKIE_PATH="/admin",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_SECURE=cfg.api_admin_cookie_secure,
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=cfg.api_admin_session_s),
        # Re-signed only when the last-request time moves: the limits are checked on
        # the times inside, not on the cookie's own expiry.
        SESSION_REFRESH_EACH_REQUEST=False,
    )


def log_in(cfg: Settings, given: str, state: FrontierState) -> bool:
    """Start a session if ``given`` is the API token (compared in constant time)."""
    if not cfg.api_token or not given or not token_matches(given, cfg.api_token):
        return False
    now = time.time()
    session.clear()
    session.permanent = True
    session["operator"] = True
    session["csrf"] = secrets.token_urlsafe(32)
    session["since"] = now
    session["seen"] = now
    session["generation"] = generation(state)
    return True


def log_out(cfg: Settings, state: FrontierState) -> None:
    """End this session and every other one (see the module's docstring); a cookie
    that has already ended changes nothing."""
    if logged_in(cfg, state):
        state.bump(GENERATION)
    session.clear()


def logged_in(cfg: Settings, state: FrontierState, now: float | None = None) -> bool:
    """Whether the request carries a session that has not ended; refreshes its
    last-request time."""
    if not session.get("operator"):
        return False
    now = time.time() if now is None else now
    since, seen = float(session.get("since", 0)), float(session.get("seen", 0))
    if now - since > cfg.api_admin_session_s or now - seen > cfg.api_admin_idle_s:
        session.clear()
        return False
    if session.get("generation") != generation(state):
        session.clear()
        return False
    if now - seen >= _SEEN_EVERY_S:
        session["seen"] = now
    return True


def generation(state: FrontierState) -> int:
    return int(state.counters().get(GENERATION, 0))


def csrf_token() -> str:
    return str(session.get("csrf", ""))


def csrf_ok(given: str) -> bool:
    """The form's CSRF token is this session's (constant time)."""
    expected = csrf_token()
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())
