"""The search endpoints answer 429 with Retry-After once a client address has spent
its burst, count it, and answer again after the wait; other clients and the probes
are not held back, loopback only when exempted, and the client behind a trusted proxy
is the one limited."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings

CLIENT = {"REMOTE_ADDR": "203.0.113.20"}
OTHER = {"REMOTE_ADDR": "198.51.100.4"}


def _client(tmp_path: Path, **settings: object):  # a Flask test client
    settings = {"api_rate_limit_per_s": 2.0, "api_rate_limit_burst": 3, **settings}
    cfg = Settings(data_dir=tmp_path, **settings)  # type: ignore[arg-type]
    return create_app(cfg, index=build_search_index(cfg)).test_client()


def _limited(endpoint: str) -> float:
    return REGISTRY.get_sample_value("tansuo_api_rate_limited_total", {"endpoint": endpoint}) or 0.0


@pytest.mark.parametrize(("path", "endpoint"), [
    ("/api/search?q=网络", "search_api.search"),
    ("/api/suggest?q=网", "search_api.suggest"),
    ("/?q=网络", "web_ui.index"),
])  # fmt: skip
def test_past_its_burst_a_client_gets_429_with_retry_after_then_is_answered_after_waiting(
    tmp_path: Path, path: str, endpoint: str
) -> None:
    # One token every 2 s: the burst of three and the fourth request must fit in that
    # time, so the app is warmed up first (the first search loads the segmenter), from
    # an address of its own.
    client = _client(tmp_path, api_rate_limit_per_s=0.5)
    assert client.get(path, environ_base={"REMOTE_ADDR": "192.0.2.9"}).status_code == 200
    before = _limited(endpoint)
    assert [client.get(path, environ_base=CLIENT).status_code for _ in range(3)] == [200, 200, 200]
    refused = client.get(path, environ_base=CLIENT)
    assert refused.status_code == 429
    retry_after = int(refused.headers["Retry-After"])
    assert retry_after in (1, 2)  # whole seconds until the next token, at most two
    if path.startswith("/api/"):
        assert "Retry-After" in refused.get_json()["error"]
    assert _limited(endpoint) == before + 1
    assert client.get(path, environ_base=OTHER).status_code == 200  # another address has its own bucket
    time.sleep(retry_after)
    assert client.get(path, environ_base=CLIENT).status_code == 200


def test_the_search_endpoints_share_one_bucket_and_probes_are_never_limited(tmp_path: Path) -> None:
    client = _client(tmp_path)
    for path in ("/api/search?q=a", "/api/suggest?q=a", "/?q=a"):
        assert client.get(path, environ_base=CLIENT).status_code == 200
    assert client.get("/api/search?q=a", environ_base=CLIENT).status_code == 429
    for path in ("/", "/livez", "/readyz", "/api/openapi.json", "/api/docs"):
        assert client.get(path, environ_base=CLIENT).status_code == 200, path


def test_loopback_is_limited_unless_exempted_and_a_rate_of_zero_turns_limiting_off(tmp_path: Path) -> None:
    """A reverse proxy on the same host is loopback: exempting loopback by default
    made every user behind it unlimited."""
    loopback = {"REMOTE_ADDR": "127.0.0.1"}
    local = _client(tmp_path / "a")
    assert [local.get("/api/search?q=a", environ_base=loopback).status_code for _ in range(4)] == [200, 200, 200, 429]
    exempt = _client(tmp_path / "b", api_rate_limit_exempt=("127.0.0.0/8",))  # as the load benchmark sets it
    assert {exempt.get("/api/search?q=a", environ_base=loopback).status_code for _ in range(10)} == {200}
    off = _client(tmp_path / "c", api_rate_limit_per_s=0)
    assert {off.get("/api/search?q=a", environ_base=CLIENT).status_code for _ in range(10)} == {200}


def _search(client, peer: str, forwarded_for: str | None = None) -> int:  # type: ignore[no-untyped-def]
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    return client.get("/api/search?q=a", environ_base={"REMOTE_ADDR": peer}, headers=headers).status_code


def test_behind_a_trusted_proxy_the_forwarded_client_is_limited_not_the_proxy(tmp_path: Path) -> None:
    client = _client(tmp_path, api_trusted_proxies=("10.0.0.0/8",))
    proxy = "10.0.0.5"
    # The client wrote its own header entry (198.51.100.9); the proxy appended the real peer.
    assert [_search(client, proxy, "198.51.100.9, 203.0.113.7") for _ in range(4)] == [200, 200, 200, 429]
    assert _search(client, proxy, "203.0.113.8") == 200  # another user behind the same proxy
    assert _search(client, proxy, "203.0.113.7, 10.0.0.9") == 429  # two proxies deep: still 203.0.113.7


def test_a_spoofed_x_forwarded_for_from_an_untrusted_peer_changes_nothing(tmp_path: Path) -> None:
    """Without a trusted proxy a client that writes a new X-Forwarded-For on each
    request would get a fresh bucket each time; it is its own address that counts."""
    for cfg in ({}, {"api_trusted_proxies": ("10.0.0.0/8",)}):
        client = _client(tmp_path / str(len(cfg)), **cfg)
        answers = [_search(client, "203.0.113.20", f"192.0.2.{n}") for n in range(4)]
        assert answers == [200, 200, 200, 429], cfg


def test_the_old_hop_count_is_refused_at_start_with_the_way_out() -> None:
    with pytest.raises(ValueError, match="TANSUO_API_TRUSTED_PROXIES"):
        Settings(api_proxy_hops=1)


def test_tansuo_eval_over_http_waits_out_the_rate_limit_instead_of_failing(tmp_path: Path) -> None:
    """`tansuo eval --url` from this machine is one address like any other now that
    loopback is limited: it waits as Retry-After says, as a polite client does."""
    from services.common.runtime.http.inprocess_server import serve
    from services.evaluation.targets import over_http

    cfg = Settings(data_dir=tmp_path, api_rate_limit_per_s=2.0, api_rate_limit_burst=3)
    server = serve(create_app(cfg, index=build_search_index(cfg)), "127.0.0.1", 0)
    waits: list[float] = []
    try:
        search = over_http(server.url, sleep=lambda s: (waits.append(s), time.sleep(s)))
        assert [search(f"网络{n}") for n in range(6)] == [[]] * 6
    finally:
        server.shutdown()
    assert waits and all(1 <= w <= 60 for w in waits)
