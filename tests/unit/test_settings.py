"""The API token may come from a mounted secret file rather than the environment."""

from __future__ import annotations

import pytest

from services.common.config import Settings


def test_the_api_token_can_come_from_a_file(tmp_path, monkeypatch) -> None:
    (tmp_path / "token").write_text("s3cret\n", encoding="utf-8")
    monkeypatch.setenv("TANSUO_API_TOKEN_FILE", str(tmp_path / "token"))
    assert Settings().api_token == "s3cret"
    monkeypatch.setenv("TANSUO_API_TOKEN", "from-env")
    assert Settings().api_token == "from-env"  # the variable, when set, wins


def test_an_unreadable_token_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TANSUO_API_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="TANSUO_API_TOKEN_FILE: cannot read"):
        Settings()
