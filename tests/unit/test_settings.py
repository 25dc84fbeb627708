"""The API token may come from a mounted secret file rather than the environment."""

from __future__ import annotations

import pytest

from services.common.config import Settings


def test_the_api_token_can_come_from_a_file(tmp_path, monkeypatch) -> None:
    (tmp_path / "token").write_text("s3cret-from-a-file\n", encoding="utf-8")
    monkeypatch.setenv("TANSUO_API_TOKEN_FILE", str(tmp_path / "token"))
    assert Settings().api_token == "s3cret-from-a-file"
    monkeypatch.setenv("TANSUO_API_TOKEN", "from-the-environment")
    assert Settings().api_token == "from-the-environment"  # the variable, when set, wins


def test_an_unreadable_token_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TANSUO_API_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="TANSUO_API_TOKEN_FILE: cannot read"):
        Settings()


def test_a_token_shorter_than_16_characters_is_refused_at_start(tmp_path, monkeypatch) -> None:
    for short in ("a", "x" * 15):
        with pytest.raises(ValueError, match="TANSUO_API_TOKEN: at least 16 characters"):
            Settings(api_token=short)
    (tmp_path / "token").write_text("short\n", encoding="utf-8")
    monkeypatch.setenv("TANSUO_API_TOKEN_FILE", str(tmp_path / "token"))
    with pytest.raises(ValueError, match="at least 16"):
        Settings()
    monkeypatch.delenv("TANSUO_API_TOKEN_FILE")
    assert Settings(api_token="x" * 16).api_token == "x" * 16
    assert Settings(api_token="").api_token == ""  # none: the crawl's endpoints are off
