"""The wire format: every message encodes as ``dataclasses.asdict`` would give it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from services.common.domain.messages import (
    FetchJob,
    IndexedDocuments,
    LinkBatch,
    Outlink,
    PageEvent,
    PageRemoval,
    SeedRequest,
    WireMessage,
)

MESSAGES: list[WireMessage] = [
    FetchJob(url="https://例子.中国/a", host="例子.中国", lease_id="l1", depth=2, kind="robots", etag='"e"'),
    PageEvent(url="https://h/a", host="h", lease_id="l2", status=200, title="标题", headings=["一", "二"],
              body="正文 text", limits=["max_links"], noindex=True, fetched_at=1.5),
    PageEvent(url="https://h/b", host="h", lease_id="l3"),
    LinkBatch(source="https://h/a", depth=1, links=[Outlink("https://h/b", "链接"), Outlink("https://h/c", "", "2026-01-01")],
              sitemaps=["https://h/s.xml"], canonical="https://h/"),
    LinkBatch(source="https://h/a", depth=0),
    SeedRequest(urls=["https://h/"], allow_domains=["h"], submitted_at=2.0, source="cli"),
    PageRemoval(url="https://h/gone", reason="gone 404", at=3.0),
    IndexedDocuments(urls=["https://h/a", "https://h/b"], at=4.0),
]


def _ids() -> list[str]:
    return [type(m).__name__ for m in MESSAGES]


@pytest.mark.parametrize("message", MESSAGES, ids=_ids())
def test_encoding_equals_the_plain_dataclass_form(message: WireMessage) -> None:
    expected = json.dumps(dataclasses.asdict(message), ensure_ascii=False).encode("utf-8")  # type: ignore[call-overload]
    assert message.to_bytes() == expected


@pytest.mark.parametrize("message", MESSAGES, ids=_ids())
def test_a_message_survives_its_round_trip(message: WireMessage) -> None:
    assert type(message).from_bytes(message.to_bytes()) == message


def test_every_message_type_is_covered() -> None:
    assert set(WireMessage.__subclasses__()) <= {type(m) for m in MESSAGES} | {Outlink}


def test_a_field_from_a_newer_sender_is_ignored_and_the_rest_decoded() -> None:
    raw = json.dumps({"url": "https://h/a", "host": "h", "lease_id": "l", "status": 200, "new_field": [1, 2]}).encode()
    event = PageEvent.from_bytes(raw)
    assert event == PageEvent(url="https://h/a", host="h", lease_id="l", status=200)
