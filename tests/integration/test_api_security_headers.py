"""Security headers on every answer (services/api/security_headers.py), and no
redirect built from the Host header a client sends."""

from __future__ import annotations

from pathlib import Path

import pytest
from werkzeug.test import EnvironBuilder

from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings

TOKEN = "headers-token-0123456789"
PAGES = ["/", "/?q=网络", "/admin", "/api/docs", "/nope"]
OTHER = ["/api/search?q=网络", "/api/openapi.json", "/api/nope", "/static/style.css", "/static/suggest.js", "/healthz",
         "/readyz"]  # fmt: skip


@pytest.fixture
def client(tmp_path: Path):  # a Flask test client
    cfg = Settings(data_dir=tmp_path, api_token=TOKEN)
    return create_app(cfg, index=build_search_index(cfg)).test_client()


@pytest.mark.parametrize("path", PAGES + OTHER)
def test_every_answer_says_nosniff_and_keeps_the_query_from_other_sites(client, path: str) -> None:
    headers = client.get(path).headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert "frame-ancestors" in headers["Content-Security-Policy"]


@pytest.mark.parametrize("path", PAGES)
def test_pages_may_load_only_this_sites_scripts_and_styles(client, path: str) -> None:
    response = client.get(path)
    assert response.mimetype == "text/html"
    policy = dict(part.strip().split(" ", 1) for part in response.headers["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]


def test_the_console_may_not_be_framed_by_anyone(client) -> None:
    for response in (client.get("/admin"), client.post("/admin/login", data={"token": "wrong"})):
        assert response.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
        assert response.headers["Cache-Control"] == "no-store"


def test_the_json_api_allows_nothing_to_load(client) -> None:
    headers = client.get("/api/search?q=网络").headers
    assert headers["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"


@pytest.mark.parametrize("path", ["", "//admin", "//evil.example/", "/api//search", "/static//style.css"])
def test_no_redirect_carries_the_host_header_a_client_sent(client, path: str) -> None:
    """An empty path ("GET http://evil.example HTTP/1.1") is redirected to "/", and
    werkzeug would merge "//" with a redirect: neither names the Host sent."""
    environ = EnvironBuilder(path="/", headers={"Host": "evil.example"}).get_environ()
    environ["PATH_INFO"] = path
    response = client.open(environ)
    assert "evil.example" not in response.headers.get("Location", "")
    if response.status_code in (301, 302, 307, 308):
        assert response.headers["Location"].startswith("/")
