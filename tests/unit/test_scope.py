"""Scope: allowed domains keyed by host and port, patterns and URL length."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.config import Settings
from services.scheduler.scope import DomainRule, Scope, seed_domains


def scope(seeds: list[str], **overrides: object) -> Scope:
    return Scope.from_settings(Settings(data_dir=Path("unused"), **overrides), seeds)  # type: ignore[arg-type]


def test_a_local_seed_does_not_reach_other_ports_of_its_address() -> None:
    s = scope(["http://127.0.0.1:8000/"])
    assert s.rejects("http://127.0.0.1:8000/a") == ""
    assert s.rejects("http://127.0.0.1:9200/_cat/indices") == "off_domain"
    assert s.rejects("http://127.0.0.1/") == "off_domain"


def test_a_seed_on_the_default_port_keeps_http_and_https_but_not_other_ports() -> None:
    s = scope(["http://www.example.cn/"])
    assert s.rejects("https://www.example.cn/a") == ""
    assert s.rejects("http://www.example.cn:8080/admin") == "off_domain"


def test_allowed_domains_may_name_a_port() -> None:
    s = scope(["http://a.example.cn:8080/"], frontier_allow_domains=("*.example.cn:8080",))
    assert s.rejects("http://b.example.cn:8080/") == ""
    assert s.rejects("http://b.example.cn/") == "off_domain"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("example.cn", DomainRule("example.cn", False, None)),
        ("*.Example.cn", DomainRule("example.cn", True, None)),
        ("127.0.0.1:8000", DomainRule("127.0.0.1", False, 8000)),
        ("http://127.0.0.1:8000/x", DomainRule("127.0.0.1", False, 8000)),
        ("https://example.cn:443/", DomainRule("example.cn", False, None)),
        ("[::1]:8000", DomainRule("::1", False, 8000)),
        ("::1", DomainRule("::1", False, None)),
        ("http://[::1]:8000/", DomainRule("::1", False, 8000)),
    ],
)
def test_domain_rules_parse_host_and_port(text: str, rule: DomainRule) -> None:
    assert DomainRule.parse(text) == rule


def test_seed_domains_keep_non_default_ports() -> None:
    assert seed_domains(["http://a.cn/", "https://a.cn:443/", "http://127.0.0.1:8000/x"]) == ["127.0.0.1:8000", "a.cn"]
