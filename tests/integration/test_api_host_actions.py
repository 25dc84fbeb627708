"""Per-host actions over the API change the frontier exactly as `tansuo host` does, on
both frontier backends: one frontier holds two hosts crawled alike, the API acts on
one and the CLI on the other, and after each action the two hosts look the same."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.api.app import create_app
from services.cli.main import main as tansuo
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.bootstrap import build_frontier_state, build_search_index
from services.common.config import Settings
from services.common.domain.messages import (
    TOPIC_REMOVALS,
    LinkBatch,
    Outlink,
    PageRemoval,
)
from services.common.ports import FrontierState
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope
from tests.unit.test_frontier import answer

TOKEN = "host-actions-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
A, B = "a.example.cn", "b.example.cn"  # A through the API, B through the CLI


def crawl_two_alike_hosts(cfg: Settings, state: FrontierState) -> None:
    now = [1_000_000.0]
    seeds = [f"http://{h}/" for h in (A, B)]
    frontier = Frontier(cfg, state, Scope.from_settings(cfg, seeds), clock=lambda: now[0])
    frontier.add_seeds(seeds)
    for host in (A, B):
        frontier.offer_links(LinkBatch(source=f"http://{host}/", depth=0, links=[Outlink(f"http://{host}/{p}") for p in "xyz"]))
    for _ in range(20):
        for job in frontier.dispatch():
            status = 404 if job.kind == "robots" or job.url.endswith("/z") else 200
            frontier.complete(answer(job, status, fetched_at=now[0]))
        now[0] += 10


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.integration)])
def cfg(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    for name in ("TANSUO_STATE", "TANSUO_BUS", "TANSUO_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    state_url = request.getfixturevalue("redis_url") if request.param == "redis" else ""
    if state_url:
        monkeypatch.setenv("TANSUO_STATE", state_url)  # what the CLI reads
    settings = Settings(data_dir=tmp_path, state=state_url, api_token=TOKEN, frontier_sitemaps=False,
                        frontier_host_delay_s=0.0)  # fmt: skip
    state = build_frontier_state(settings)
    crawl_two_alike_hosts(settings, state)
    state.close()
    yield settings


def _same_but_name(state: FrontierState) -> None:
    a, b = state.get_host(A), state.get_host(B)
    fields = {f.name for f in dataclasses.fields(a)} - {"host", "next_allowed_at"}
    assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}
    assert [state.url_state(u.replace(A, B)) for u in state.host_urls(A)] == [state.url_state(u) for u in state.host_urls(B)]


def test_each_action_over_the_api_does_what_the_cli_does(cfg: Settings) -> None:
    client = create_app(cfg, index=build_search_index(cfg)).test_client()
    state = build_frontier_state(cfg)
    for action in ("pause", "recrawl", "resume", "recrawl", "purge", "resume"):
        answer_ = client.post(f"/api/hosts/{A}/{action}", headers=AUTH)
        assert answer_.status_code == 200, answer_.get_json()
        assert tansuo(["host", action, B, "--data", str(cfg.data_dir)]) == 0
        result = answer_.get_json()
        assert result["action"] == action and result["host"] == A
        assert result["paused"] == state.get_host(A).paused
        _same_but_name(state)
    assert state.get_host(A).paused is False
    bus = SqliteBus(cfg.data_dir / "bus.sqlite3")
    removed = [PageRemoval.from_bytes(m.payload) for m in bus.poll(TOPIC_REMOVALS, "test", 0.0, max_messages=100)]
    assert sorted(r.url for r in removed) == sorted(f"http://{h}/{p}" for h in (A, B) for p in ("", "x", "y", "z"))
    bus.close()
    state.close()


def test_what_each_action_answers(cfg: Settings) -> None:
    client = create_app(cfg, index=build_search_index(cfg)).test_client()
    assert client.post(f"/api/hosts/{A}/pause", headers=AUTH).get_json() == {"host": A, "action": "pause", "paused": True, "urls": 0}
    assert client.post(f"/api/hosts/{A}/recrawl", headers=AUTH).get_json()["urls"] == 4
    assert client.post(f"/api/hosts/{A}/purge", headers=AUTH).get_json()["urls"] == 4
    assert client.post(f"/api/hosts/{A}/resume", headers=AUTH).get_json()["paused"] is False


@pytest.mark.parametrize("action", ["pause", "resume", "recrawl", "purge"])
def test_an_action_needs_the_token_and_a_known_host(tmp_path: Path, action: str) -> None:
    settings = Settings(data_dir=tmp_path, api_token=TOKEN)
    client = create_app(settings, index=build_search_index(settings)).test_client()
    refused = client.post(f"/api/hosts/{A}/{action}")
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.post(f"/api/hosts/{A}/{action}", headers={"Authorization": "Bearer wrong"}).status_code == 401
    unknown = client.post(f"/api/hosts/nowhere.cn/{action}", headers=AUTH)
    assert unknown.status_code == 404 and "nowhere.cn" in unknown.get_json()["error"]


def test_the_cli_says_when_a_host_is_unknown(cfg: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert tansuo(["host", "pause", "nowhere.cn", "--data", str(cfg.data_dir)]) == 2
    assert "nowhere.cn" in capsys.readouterr().err
