"""The operator console's login: the API token, typed once into a form, becomes a signed
session cookie; every form the console shows carries a per-session CSRF token.

The cookie is Flask's signed session, with a secret derived from the API token
(HMAC-SHA256 of a fixed label, keyed by the token), not a setting of its own:

- every gunicorn worker and every api pod derives the same key from the one secret
  they already share, so a login holds whichever worker answers, with no session store;
- changing the token (after a leak, say) ends every console session at once;
- the key is not the token, so even a leaked signing key opens no API endpoint.

The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page or
form sends it), limited to /admin, Secure when TANSUO_API_ADMIN_COOKIE_SECURE is set,
and expires ``api_admin_session_s`` after the login: the session is saved only at
login, so its signed timestamp is the login time and Flask refuses it after that.
SameSite=Strict already stops cross-site posts in current browsers; the CSRF token
also covers older ones and same-site pages on other ports.
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

_LABEL = b"tansuo operator console session v1"


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
        # Not re-signed on every request: the expiry counts from the login.
        SESSION_REFRESH_EACH_REQUEST=False,
    )


def log_in(cfg: Settings, given: str) -> bool:
    """Start a session if ``given`` is the API token (compared in constant time)."""
    if not cfg.api_token or not given or not token_matches(given, cfg.api_token):
        return False
    session.clear()
    session.permanent = True
    session["operator"] = True
    session["csrf"] = secrets.token_urlsafe(32)
    session["since"] = time.time()
    return True


def log_out() -> None:
    session.clear()


def logged_in() -> bool:
    return bool(session.get("operator"))


def csrf_token() -> str:
    return str(session.get("csrf", ""))


def csrf_ok(given: str) -> bool:
    """The form's CSRF token is this session's (constant time)."""
    expected = csrf_token()
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())
