"""`tansuo eval --generate` writes only queries Tansuo can answer (issue 38, item 6):
its body quotes come from text the index holds, and each finds its page as a quoted
phrase. Pages go through the crawler's own extraction, so a page of links is one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.crawler.extract import extract
from services.evaluation.corpus import corpus_reader
from services.evaluation.generate import generate
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService

SITE = "http://poems.example.cn"
# Titles only the page of links shows: no page of them is in the index.
LISTED = ["上都酬章十八兄寄懷", "送婆羅門歸本國舊作", "早發陝州途中贈別友人", "秋夜宿山寺懷故鄉親友"]
LINK_PAGE = ("<html><head><title>清江詩目錄</title></head><body><h1>清江</h1><ul>"
             + "".join(f"<li><a href='/p/{n}.html'>{t}</a></li>" for n, t in enumerate(LISTED))
             + "</ul></body></html>")  # fmt: skip
POEM = ("<html><head><title>靜夜思</title></head><body><h1>靜夜思</h1><p>李白</p>"
        "<p>牀前明月光疑是地上霜舉頭望明月低頭思故鄉</p><p>此詩作於開元十四年九月十五日揚州旅舍之中</p>"
        "<p><a href='/'>目錄</a></p></body></html>")  # fmt: skip


def _event(url: str, html: str) -> PageEvent:
    c = extract(url, html, {}, encoding="utf-8", max_body_chars=100_000)
    return PageEvent(url=url, host="poems.example.cn", lease_id="l", kind="page", depth=1, status=200, title=c.title,
                     headings=c.headings, body=c.body, content_hash=c.content_hash, fetched_at=1.0,
                     link_page=c.own_text is not None, own_text=c.own_text or "")  # fmt: skip


@pytest.fixture
def service(tmp_path: Path) -> SearchService:
    cfg = Settings(data_dir=tmp_path)
    index = TantivySearchIndex(tmp_path / "index", cfg)
    events = [_event(f"{SITE}/", LINK_PAGE), _event(f"{SITE}/p/poem.html", POEM)]
    assert events[0].link_page and not events[1].link_page
    index.upsert([build_document(e) for e in events])
    index.commit()
    return SearchService(cfg, index)


def test_generated_quotes_are_never_a_page_of_links_link_texts(service: SearchService) -> None:
    quotes = [j for seed in range(5) for j in generate(corpus_reader(service._index), seed=seed)
              if j.qtype == "body-quote"]  # fmt: skip
    assert quotes, "the poem has quotes to give"
    for j in quotes:
        assert not any(j.query in title or title in j.query for title in LISTED), j
        assert j.relevant == (f"{SITE}/p/poem.html",), j


def test_every_generated_quote_finds_its_page_as_a_quoted_phrase(service: SearchService) -> None:
    for j in generate(corpus_reader(service._index), seed=1):
        if j.qtype != "body-quote":
            continue
        result = service.search(f'"{j.query}"')
        assert [r["url"] for r in result["results"]][:1] == list(j.relevant), j


def test_words_a_snippet_shows_are_found_as_a_quoted_phrase(service: SearchService) -> None:
    shown = service.search("清江")["results"][0]
    assert LISTED[0] in shown["snippet"].replace("<em>", "").replace("</em>", "")
    assert service.search(f'"{LISTED[0]}"')["total"] >= 1


def test_a_quoted_phrase_across_a_line_break_is_found(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path)
    index = TantivySearchIndex(tmp_path / "index", cfg)
    index.upsert([build_document(_event(f"{SITE}/br.html", "<html><head><title>唐詩一百四十</title></head><body>"
                                                          "<p>上都<br>酬章十八兄</p><p>每歎經年別，人生有幾年。</p></body></html>"))])  # fmt: skip
    index.commit()
    assert SearchService(cfg, index).search('"上都酬章十八兄"')["total"] == 1
