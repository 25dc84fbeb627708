"""Security headers on every answer of the API, the web UI and the console.

- ``Content-Security-Policy``: a page may load scripts, styles and images from this
  server only, and run no inline script or style (the templates have none); the
  JSON API allows nothing at all. ``frame-ancestors`` says who may frame a page: no
  one for the console and the API, this site only for the search UI.
- ``X-Frame-Options``, the older form of frame-ancestors, for older browsers:
  ``DENY`` on the console, ``SAMEORIGIN`` elsewhere. A framed console is
  clickjacking: SameSite=Strict still sends the cookie to a page on another port of
  the same host or a sibling sub-domain, and such a page could lay the console
  invisibly over its own buttons.
- ``X-Content-Type-Options: nosniff``: a browser never runs a response as something
  other than its declared type (a crawled snippet taken for a script, say).
- ``Referrer-Policy: same-origin``: a result clicked does not tell the other site
  what was searched.
- ``Cache-Control: no-store`` on the console: after logging out, the back button
  shows nothing from the browser's cache.

And a redirect to this server never names its host: werkzeug builds the ones it makes
itself (a path missing its "/", say) from the Host header, which the client chooses,
so a Location on the request's own host is cut to the path; a browser resolves it
against the URL it asked for. A redirect elsewhere (a clicked result, /go) is left whole.

HSTS is the TLS proxy's job (docs/deploy.md, "Security").
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, request

CONSOLE = "/admin"
API = "/api/"
_PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                "form-action 'self'; base-uri 'none'")  # fmt: skip
_API_POLICY = "default-src 'none'; frame-ancestors 'none'"


def policy_for(path: str, mimetype: str) -> tuple[str, str]:
    """(Content-Security-Policy, X-Frame-Options) for a response to ``path``."""
    console = path == CONSOLE or path.startswith(CONSOLE + "/")
    if path.startswith(API) and mimetype != "text/html":
        return _API_POLICY, "DENY"
    if console:
        return f"{_PAGE_POLICY}; frame-ancestors 'none'", "DENY"
    # The search UI's pages may frame this site's own pages: /cache shows a cached copy
    # (/cache/raw, sandboxed by its own policy) in a frame.
    return f"{_PAGE_POLICY}; frame-src 'self'; frame-ancestors 'self'", "SAMEORIGIN"


def init_app(app: Flask) -> None:
    app.after_request(_add_headers)


def _add_headers(response: Response) -> Response:
    csp, frames = policy_for(request.path, response.mimetype or "")
    headers = response.headers
    headers.setdefault("Content-Security-Policy", csp)
    headers.setdefault("X-Frame-Options", frames)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    if request.path == CONSOLE or request.path.startswith(CONSOLE + "/"):
        headers["Cache-Control"] = "no-store"
    location = headers.get("Location")
    if location:
        headers["Location"] = same_site_location(location, request.host)
    return response


def same_site_location(location: str, host: str) -> str:
    """``location`` without its scheme and host when it names ``host`` (the request's
    Host header): the path, query and fragment. Another host's URL is kept."""
    parts = urlsplit(location)
    if not parts.scheme and not parts.netloc:
        return location
    if parts.netloc.lower() != host.lower():
        return location
    # One leading slash: "//host/path" would be another host again (a network-path reference).
    path = "/" + parts.path.lstrip("/")
    return urlunsplit(("", "", path, parts.query, parts.fragment))
