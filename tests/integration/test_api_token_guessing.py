"""Guessing the API token: a few wrong tries a minute per client address, then 429
with Retry-After, a metric and a log line; a token under 16 characters is refused
when the server starts (services/api/auth_failures.py, services/common/config.py)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings

TOKEN = "guessing-test-token-0123456789"
ATTACKER = {"REMOTE_ADDR": "203.0.113.7"}
OPERATOR = {"REMOTE_ADDR": "198.51.100.2"}


@pytest.fixture
def client(tmp_path: Path):  # a Flask test client
    cfg = Settings(data_dir=tmp_path, api_token=TOKEN)
    return create_app(cfg, index=build_search_index(cfg)).test_client()


def _throttled() -> float:
    return REGISTRY.get_sample_value("tansuo_api_auth_failures_total", {"outcome": "throttled"}) or 0.0


def test_400_wrong_console_logins_get_five_401s_then_429s(client, caplog: pytest.LogCaptureFixture) -> None:
    before = _throttled()
    with caplog.at_level(logging.WARNING, logger="services.api.auth_failures"):
        answers = [client.post("/admin/login", data={"token": f"guess-{n:04d}-0123456789"}, environ_base=ATTACKER)
                   for n in range(400)]  # fmt: skip
    statuses = [answer.status_code for answer in answers]
    assert statuses[:5] == [401] * 5 and set(statuses[5:]) == {429}
    assert 1 <= int(answers[-1].headers["Retry-After"]) <= 60
    assert "错误次数过多" in answers[-1].get_data(as_text=True)
    assert _throttled() - before == 395
    assert any("wrong API token from 203.0.113.7" in record.getMessage() for record in caplog.records)
    # While it lasts, even the right token is not compared: a guess that hits is no use.
    assert client.post("/admin/login", data={"token": TOKEN}, environ_base=ATTACKER).status_code == 429
    # Another address is not held up.
    assert client.post("/admin/login", data={"token": TOKEN}, environ_base=OPERATOR).status_code == 303


def test_wrong_bearer_tokens_are_limited_too_and_together_with_logins(client) -> None:
    wrong = {"Authorization": "Bearer not-the-token-0123456789"}
    for _ in range(3):
        assert client.post("/admin/login", data={"token": "nope"}, environ_base=ATTACKER).status_code == 401
    assert [client.get("/api/frontier", headers=wrong, environ_base=ATTACKER).status_code for _ in range(3)] == [
        401, 401, 429
    ]  # fmt: skip
    refused = client.get("/api/frontier", headers={"Authorization": f"Bearer {TOKEN}"}, environ_base=ATTACKER)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert client.get("/api/frontier", environ_base=ATTACKER).status_code == 401  # no token is no guess
    ok = client.get("/api/frontier", headers={"Authorization": f"Bearer {TOKEN}"}, environ_base=OPERATOR)
    assert ok.status_code == 200


def test_a_short_token_stops_the_server_at_start_with_one_line(tmp_path: Path) -> None:
    env = {"TANSUO_API_TOKEN": "a", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "services.cli.main", "serve", "--data", str(tmp_path), "--port", "0"],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "TANSUO_API_TOKEN: at least 16 characters" in lines[0], done.stderr
