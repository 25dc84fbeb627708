"""A quoted phrase copied across a break of a page's text, on both index backends.

Pages that hold the whole phrase, across the break, rank before pages that hold only a
part of it (its inner characters, most of its bigrams): several pages of a help site
hold such a part alike, and one of them in its title outscored the page copied from.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.common.config import Settings
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService
from tests.page_events import page_event
from tests.search_backends import BACKENDS, service_over

CFG = Settings()
SITE = "https://help.example.cn"
PAGES = [
    # The operator's page: its description, then the heading of the next block.
    ("/basic/and", "AND 运算符", "对两个表达式执行逻辑合并运算\n语法说明：结果 = 表达式1 AND 表达式2"),
    # Pages that hold the phrase's inner part (合并运算语法) whole, one in its title.
    ("/basic/syntax", "合并运算语法", "合并运算语法一览：合并运算语法见各运算符的页面。"),
    ("/basic/or", "OR 运算符", "对两个表达式执行逻辑析取运算。合并运算语法见上一页。"),
    # Taiwan's help: 函式 folds to 函数 and 程式碼 to 程式码 on the page, but 式 and 程 cut
    # from them fold to themselves.
    ("/tw/lcase", "LCase 函式", "傳回轉換為小寫的字串。此函式不區分大小寫。\n錯誤程式碼：5 無效的程序呼叫"),
    ("/tw/case", "區分大小寫", "搜尋時區分大小寫。區分大小寫的選項位於對話方塊中。"),
    ("/tw/match", "區分大小寫的比對", "比對文字時區分大小寫。"),
]


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest) -> Iterator[SearchService]:
    docs = [build_document(page_event(SITE + path, title, body)) for path, title, body in PAGES]
    with service_over(request, docs, CFG) as service:
        yield service


def test_the_page_holding_the_whole_phrase_across_a_break_comes_first(service: SearchService) -> None:
    out = service.search('"逻辑合并运算语法说明"')
    urls = [r["url"] for r in out["results"]]
    assert urls[0] == SITE + "/basic/and"
    assert SITE + "/basic/syntax" in urls  # a part of the phrase still finds its pages, after
    assert out["unquoted"] is False


def test_a_side_of_one_character_is_matched_as_the_start_of_the_next_word(service: SearchService) -> None:
    # 语 begins 语法 on the page, which holds no bigram 语 alone: the cut 执行逻辑合并运算 | 语
    # is read as the phrase before the break, with the pages holding a part.
    urls = [r["url"] for r in service.search('"执行逻辑合并运算语"')["results"]]
    assert urls[0] == SITE + "/basic/and"


def test_a_traditional_phrase_cut_inside_a_word_at_either_end_finds_its_page_first(service: SearchService) -> None:
    # Without its edge characters the phrase is held whole, across the break, by one page.
    urls = [r["url"] for r in service.search('"式不區分大小寫錯誤程"')["results"]]
    assert urls[0] == SITE + "/tw/lcase"
