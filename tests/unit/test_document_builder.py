"""PageEvent -> IndexDoc."""

from __future__ import annotations

from services.indexer.document_builder import build_document
from tests.page_events import page_event


def test_a_canonical_url_on_the_same_host_names_the_document() -> None:
    event = page_event("http://Docs.Example.cn/a?print=1", "标题", "正文", canonical="https://docs.example.CN/a")
    doc = build_document(event)
    assert doc.url == "https://docs.example.CN/a"
    assert doc.site == "docs.example.cn"


def test_a_canonical_url_on_another_host_is_ignored() -> None:
    # Otherwise any page could overwrite another site's document by naming its URL.
    event = page_event("https://mirror.example.cn/a", "标题", "正文", canonical="https://bank.example.cn/")
    doc = build_document(event)
    assert (doc.url, doc.site) == ("https://mirror.example.cn/a", "mirror.example.cn")


def test_without_a_canonical_the_fetched_url_is_used_and_the_port_is_part_of_the_site() -> None:
    doc = build_document(page_event("http://Example.cn:8080/a", "标题", "正文"))
    assert doc.url == "http://Example.cn:8080/a"
    assert doc.site == "example.cn:8080"


def test_raw_text_is_kept_for_display_and_tokens_are_segmented() -> None:
    event = page_event(
        "https://example.cn/",
        title="Debian 软件包管理",
        headings=["安装软件", "", "中华人民共和国"],
        body="使用 APT-GET 安装软件包。",
    )
    doc = build_document(event)
    assert doc.title == "Debian 软件包管理"
    assert doc.headings == "安装软件\n中华人民共和国"
    assert doc.body == "使用 APT-GET 安装软件包。"
    assert doc.title_tokens == "debian 软件包 管理"
    assert doc.headings_tokens.split() == ["安装", "软件", "中华人民共和国"]
    assert doc.body_tokens.split() == ["使用", "apt-get", "安装", "软件包"]
    subwords = doc.subword_tokens.split()
    assert {"软件", "人民", "共和国", "apt", "get"} <= set(subwords)
    assert doc.content_hash == event.content_hash
    assert doc.fetched_at == event.fetched_at


def test_link_fields_are_left_to_the_ranker() -> None:
    doc = build_document(page_event("https://example.cn/", "标题", "正文"))
    assert (doc.pagerank, doc.rank, doc.anchors, doc.anchors_tokens) == (0.0, 0.0, "", "")
