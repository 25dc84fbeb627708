"""Every endpoint that reveals or changes the crawl wants the API token; search,
suggest, the web UI, the probes and the API's own documentation stay open."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.api.app import create_app
from services.api.bearer_auth import presented_token, token_matches
from services.common.bootstrap import build_search_index
from services.common.config import Settings

TOKEN = "auth-test-token-0123456789"

# (method, path, JSON body): every crawl-revealing endpoint of the API.
GUARDED = [
    ("GET", "/api/frontier", None),
    ("GET", "/api/report", None),
    ("POST", "/api/seeds", {"urls": ["https://www.example.edu.cn/"]}),
]
OPEN = ["/api/search?q=x", "/api/suggest?q=x", "/", "/livez", "/healthz", "/readyz", "/api/openapi.json", "/api/docs"]


@pytest.fixture
def client(tmp_path: Path):  # a Flask test client
    cfg = Settings(data_dir=tmp_path, api_token=TOKEN)
    return create_app(cfg, index=build_search_index(cfg)).test_client()


@pytest.mark.parametrize(("method", "path", "body"), GUARDED)
@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer ", "Bearer wrong-token", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}"],
)
def test_a_crawl_endpoint_refuses_a_missing_or_wrong_token_with_401_and_a_challenge(
    client, method: str, path: str, body: dict | None, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    resp = client.open(path, method=method, json=body, headers=headers)
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert resp.get_json() == {"error": "missing or wrong bearer token"}


@pytest.mark.parametrize(("method", "path", "body"), GUARDED)
def test_a_crawl_endpoint_accepts_the_right_token(client, method: str, path: str, body: dict | None) -> None:
    for scheme in ("Bearer", "bearer"):  # auth schemes are case-insensitive (RFC 7235)
        resp = client.open(path, method=method, json=body, headers={"Authorization": f"{scheme} {TOKEN}"})
        assert resp.status_code in (200, 202), resp.get_json()


@pytest.mark.parametrize(("method", "path", "body"), GUARDED)
def test_without_a_configured_token_the_crawl_endpoints_are_off(tmp_path: Path, method: str, path: str, body) -> None:
    cfg = Settings(data_dir=tmp_path)
    client = create_app(cfg, index=build_search_index(cfg)).test_client()
    resp = client.open(path, method=method, json=body, headers={"Authorization": "Bearer anything"})
    assert resp.status_code == 403 and "TANSUO_API_TOKEN" in resp.get_json()["error"]


@pytest.mark.parametrize("path", OPEN)
def test_search_the_ui_probes_and_docs_need_no_token(client, path: str) -> None:
    assert client.get(path).status_code == 200


def test_the_metrics_are_not_on_the_api_port(client) -> None:
    """They are on the health port (services/common/runtime/http/metrics_port.py), as for every service."""
    assert client.get("/metrics").status_code == 404


def test_only_a_bearer_header_presents_a_token() -> None:
    assert presented_token(f"Bearer {TOKEN}") == TOKEN
    assert presented_token(f"  BEARER   {TOKEN} ") == TOKEN
    assert presented_token(f"Basic {TOKEN}") == ""
    assert presented_token(TOKEN) == ""
    assert token_matches(TOKEN, TOKEN) and not token_matches(TOKEN, TOKEN + "x") and not token_matches("", TOKEN)
