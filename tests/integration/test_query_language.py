"""The query language and exact matching, on both index backends.

Every check runs through the search service against a real tantivy index and a real
Elasticsearch-API server holding the same pages (tests/search_pages.py), so an
operator or a matching rule that one backend honours alone fails here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis import fold
from services.common.config import Settings
from services.indexer.document_builder import build_document
from services.search.search_service import BadQuery, SearchService
from services.search.suggest_service import SuggestService
from tests.search_backends import BACKENDS, service_over
from tests.search_pages import page_events, url

CFG = Settings()
BLOG, WIKI, TW = "blog.example.com.cn", "wiki.example.cn", "tw.example.com.tw"


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest) -> Iterator[SearchService]:
    with service_over(request, [build_document(e) for e in page_events()], CFG) as service:
        yield service


def _urls(service: SearchService, q: str, size: int = 50) -> list[str]:
    return [r["url"] for r in service.search(q, size=size)["results"]]


def test_a_fragment_cut_across_words_finds_its_page_first(service: SearchService) -> None:
    # The page segments 破折号 / 替换 / … / 减号; the fragment segments 折号 / … / 减.
    assert _urls(service, "折号替换一个或两个减")[0] == url(1, "/typography")
    assert _urls(service, '"折号替换一个或两个减"') == [url(1, "/typography")]


def test_a_quoted_phrase_must_occur_verbatim(service: SearchService) -> None:
    found = _urls(service, '"装镜像"')
    assert found == [url(0, "/install")]  # 下载安装镜像: no page holds 装镜像 split into words
    # No page holds 镜像安装: what the same words find without quotes, and the answer says so.
    unquoted = service.search('"镜像安装"', size=50)
    assert unquoted["unquoted"] is True and unquoted["matched_all"] is False
    assert [r["url"] for r in unquoted["results"]] == _urls(service, "镜像安装")
    assert service.search('"装镜像"')["unquoted"] is False
    assert _urls(service, '"apt-get install"') == [url(0, "/apt")]


def test_excluded_words_and_phrases_leave_their_pages_out(service: SearchService) -> None:
    with_debian = set(_urls(service, "安装"))
    without = set(_urls(service, "安装 -Debian"))
    assert without and without < with_debian
    for r in service.search("安装 -Debian", size=50)["results"]:
        assert "debian" not in (r["title"] + r["snippet"]).lower()
    assert url(0, "/network") not in _urls(service, '网络 -"无线网络"')


def test_site_terms_in_the_query_are_ored_and_minus_site_excludes(service: SearchService) -> None:
    hosts = {r["site"] for r in service.search(f"安装 site:{BLOG} site:{WIKI}", size=50)["results"]}
    assert hosts == {BLOG, WIKI}
    assert WIKI not in {r["site"] for r in service.search(f"网络 -site:{WIKI}", size=50)["results"]}
    assert set(_urls(service, f"site:{TW}")) == {url(3, "/software"), url(3, "/network")}


def test_or_takes_either_word(service: SearchService) -> None:
    found = set(_urls(service, "rsync OR nftables"))
    assert {url(0, "/backup"), url(0, "/firewall")} <= found
    assert service.search("rsync OR nftables")["matched_all"] is True
    # Without OR both are wanted; no page has both, so the answer says it fell back.
    assert service.search("rsync nftables")["matched_all"] is False


def test_traditional_and_simplified_find_each_other_both_ways(service: SearchService) -> None:
    assert _urls(service, "软件套件")[0] == url(3, "/software")  # simplified query, Taiwan page
    assert url(0, "/network") in _urls(service, "有線網路")  # Taiwan query, simplified page (有线网络)
    assert url(3, "/network") in _urls(service, "网络设置")


def test_highlighting_marks_the_page_in_its_own_script(service: SearchService) -> None:
    (first, *_) = service.search("软件套件", size=1)["results"]
    assert "<em>軟體</em>" in first["title_html"] and "<em>套件</em>" in first["title_html"]
    assert "软" not in first["title_html"] + first["snippet"]  # folded text is never shown


@pytest.mark.parametrize("q", ['"', '""', "-", "OR", "？！", '"。"'])
def test_odd_queries_get_an_answer_or_a_clear_error_never_a_crash(service: SearchService, q: str) -> None:
    try:
        out = service.search(q)
    except BadQuery as exc:
        assert str(exc)
    else:
        assert out["total"] >= 0


@pytest.fixture(scope="module")
def suggest(service: SearchService) -> SuggestService:
    return SuggestService(service._index)  # the same index, whichever backend


def test_suggestions_complete_titles_and_headings_from_a_partial_word(suggest: SuggestService) -> None:
    assert "SSH 远程登录" in suggest.suggest("SSH 远")
    assert "SSH 远程登录" in suggest.suggest("ss")  # an unfinished Latin word
    assert "禁止密码登录" in suggest.suggest("禁止密")  # a heading
    assert "軟體套件管理" in suggest.suggest("软件套")  # simplified typing, Taiwan title, shown as written


def test_suggestions_put_what_starts_with_the_typed_text_first(suggest: SuggestService) -> None:
    found = suggest.suggest("网络")
    assert found and all(fold(t).startswith("网络") for t in found[:2])  # 網路設定 starts so too
    assert len(found) <= 8
    assert suggest.suggest("") == [] and suggest.suggest("，。") == []


def test_a_long_question_finds_the_answer_that_lacks_one_of_its_words(service: SearchService) -> None:
    # Five wanted words. Only the tag cloud holds all five; the backup pages hold all but
    # Debian. Requiring every word would answer with the tag cloud alone.
    out = service.search("Debian 怎么用 rsync 备份 到 远程 硬盘？", size=5)
    found = [r["url"] for r in out["results"]]
    assert {url(0, "/backup"), url(2, "/2024/backup")} <= set(found)
    assert out["matched_all"] is False  # not every result holds every word, and it says so


def test_question_words_are_not_required(service: SearchService) -> None:
    assert _urls(service, "如何配置防火墙")[0] in {url(0, "/firewall"), url(2, "/2024/firewall")}
    assert service.search("如何配置防火墙")["matched_all"] is True  # 如何 was never wanted
    assert service.search("为什么")["total"] == 0  # only question words: searched for, none here


def test_short_queries_keep_and_like_precision(service: SearchService) -> None:
    # Two words: both required.
    assert set(_urls(service, "神经网络 GPU")) == {url(1, "/ml/deep")}
    assert service.search("神经网络 GPU")["matched_all"] is True
    # Three (机器 / 学习 / 神经网络): two will do, but the pages with all of them lead;
    # /ml/intro, without 神经网络, comes after them.
    found = _urls(service, "机器学习 神经网络")
    assert set(found[:2]) == {url(1, "/ml/deep"), url(2, "/2024/ml-notes")}
    assert url(1, "/ml/intro") in found[2:]


def test_a_mistyped_word_still_finds_its_page_through_its_parts(service: SearchService) -> None:
    out = service.search("远程登陆", as_typed=True)  # 远程登录 on the page: jieba keeps 远程登陆 whole
    assert url(0, "/ssh") in [r["url"] for r in out["results"]][:3] and out["matched_all"] is False
    # Searched as typed by default, the query is corrected to what the pages say.
    out = service.search("远程登陆")
    assert out["did_you_mean"] == {"query": "远程登录", "shown": True}
    assert [r["url"] for r in out["results"]][0] == url(0, "/ssh") and out["query"] == "远程登陆"
    out = service.search("防火墙配制")  # 配置, mistyped: no page holds both words
    assert out["results"][0]["url"] in {url(0, "/firewall"), url(2, "/2024/firewall")}


def test_other_names_of_a_word_find_its_pages(service: SearchService) -> None:
    # Nicknames users type for office modules, and Taiwan words that differ in length.
    assert _urls(service, "excel 排序")[0] == url(1, "/office/sort")
    assert _urls(service, "試算表 排序")[0] == url(1, "/office/sort")  # 試算表 is 电子表格
    assert _urls(service, "ppt 动画")[0] == url(1, "/office/slides")
    assert _urls(service, "簡報 動畫")[0] == url(1, "/office/slides")  # 簡報 is 演示文稿


def _qa_site(tmp_path: Path, settings: Settings, question: str) -> list[str]:
    return list(_qa_scores(tmp_path, settings, question))


def _qa_scores(tmp_path: Path, settings: Settings, question: str) -> dict[str, float]:
    """InsuranceQA in small: a front page titled 保险问答 with nothing but links, 300
    answers that mention 保险 (common in bodies, in no title but the front page's), and
    two answers to questions. Every page has the same rank, as measured on the real
    site (the front page's PageRank equals an answer's), so only the text decides."""
    from services.common.domain.documents import LinkFields
    from tests.page_events import page_event

    links = "\n".join(f"答案 {i}" for i in range(300))
    hub = dataclasses.replace(page_event("https://qa.example.cn/", "保险问答", links), link_page=True, own_text="")
    filler = [page_event(f"https://qa.example.cn/a/{i}", f"答案 {i}", f"第 {i} 种保险产品的说明，保险期间与保费。")
              for i in range(2, 302)]  # fmt: skip
    answers = [
        page_event("https://qa.example.cn/a/0", "答案 0", "残疾保险不是法律要求的，但许多雇主为员工提供残疾保险。"),
        page_event("https://qa.example.cn/a/1", "答案 1", "私家车的车险保费一般不能扣税，除非汽车用于经营。"),
    ]
    pages = [hub, *answers, *filler]
    index = TantivySearchIndex(tmp_path / "index", settings)
    index.upsert([build_document(e) for e in pages])
    same = LinkFields(pagerank=1 / len(pages), rank=1.0, anchors="", anchors_tokens="")
    index.set_link_fields({e.url: same for e in pages})
    index.commit()
    found = {r["url"]: r["score"] for r in SearchService(settings, index).search(question)["results"]}
    index.close()
    return found


def test_a_page_of_links_with_the_word_in_its_title_ranks_below_the_answer(tmp_path: Path) -> None:
    found = _qa_site(tmp_path, CFG, "法律是否要求雇主购买残疾保险？")
    assert found[0] == "https://qa.example.cn/a/0"
    assert "https://qa.example.cn/" not in found[:3]


def test_a_word_rare_in_titles_alone_does_not_lift_a_page_of_links_over_the_answer(tmp_path: Path) -> None:
    # No page holds both 汽车保险 and 扣税, so any of the words and their parts will do
    # (汽车, 保险); 保险 is in one title only. With per-field idf unbounded, that title
    # outweighs the answer's 汽车 and 扣税, as it did on InsuranceQA.
    question = "汽车保险是否可以扣税？"
    # The bound holds for the word's title bigrams too: 保险 matched there alone had
    # lifted the page to 3.2 where its title term was bounded to 0.08 (an earlier
    # version of this test passed only because the word's idf had come out negative,
    # its document frequency counting versions the ranker's rewrites had deleted).
    unbounded = _qa_site(tmp_path / "unbounded", Settings(search_field_idf_cap=0), question)
    assert unbounded[0] == "https://qa.example.cn/"
    scores = _qa_scores(tmp_path / "bounded", CFG, question)
    assert list(scores)[0] == "https://qa.example.cn/a/1"
    # What is left of the front page's score is the rank feature every page has (0.75).
    assert scores["https://qa.example.cn/"] < 0.9 < 16 < scores["https://qa.example.cn/a/1"]


def test_a_taiwan_word_typed_in_simplified_finds_its_pages(service: SearchService) -> None:
    # 軟體 folds to 软件 on the page; 软体 typed alone is Taiwan's word in simplified
    # characters, and its other region's name (OpenCC's phrase tables) finds the page.
    assert _urls(service, "软体")[0] == url(3, "/software")
    assert url(3, "/network") in _urls(service, "网络设定")[:3]


def test_a_quoted_phrase_copied_across_a_heading_into_its_paragraph_finds_its_page(service: SearchService) -> None:
    # The heading 分区 and the paragraph 本文介绍… are two blocks: no bigram spans them.
    out = service.search('"分区本文介绍"')
    assert [r["url"] for r in out["results"]] == [url(0, "/install")] and out["unquoted"] is False


def test_a_taiwan_title_typed_in_simplified_one_character_at_a_time_with_a_slip_finds_its_page(
    service: SearchService,
) -> None:
    # 網路設定 folds to 网络设置 on the page (Taiwan's phrase table); typed as read, 网路,
    # with 订 for 定: its bigrams match as the page's once the line is read as Taiwan's.
    assert _urls(service, "无线网路设订")[0] == url(3, "/network")


def test_a_slip_on_a_taiwan_word_typed_as_read_is_corrected_as_the_page_folded_it(service: SearchService) -> None:
    # 連線 is held folded as 连接; typed as read, 连线, with 先 for 线: neither the line
    # nor its Taiwan reading shows the word, so the slip is looked for where the reading
    # of a corrected character changes.
    out = service.search("如何检查网路连先是否正常")
    assert out["did_you_mean"] == {"query": "如何检查网路连线是否正常", "shown": True}
    assert out["results"][0]["url"] == url(3, "/network")


def test_a_nickname_steers_the_ranking_but_never_drops_a_page(service: SearchService) -> None:
    found = _urls(service, "excel 排序")
    assert found[0] == url(1, "/office/sort")
    assert url(1, "/search/bm25") in found  # 排序 without a word of Excel's: still found


def test_a_mistyped_query_shows_what_its_correction_finds_unless_asked_as_typed(service: SearchService) -> None:
    out = service.search("防火墙配制")  # 配置, mistyped
    assert out["did_you_mean"] == {"query": "防火墙配置", "shown": True}
    assert out["results"][0]["url"] in {url(0, "/firewall"), url(2, "/2024/firewall")}
    assert service.search("防火墙配制", as_typed=True)["did_you_mean"] is None
    assert service.search("防火墙配置")["did_you_mean"] is None


def test_a_question_holding_a_taiwan_word_is_searched_word_by_word(service: SearchService) -> None:
    # 软体 has other names (软件, 軟體), and the whole run 如何安装软体套件 had them too:
    # kept as one word, the question had to be on a page verbatim and found nothing.
    for q in ("如何安装软体套件", "怎样更新软体套件清单", "使用滑鼠设定网路"):
        assert service.search(q)["total"] > 0, q
    assert _urls(service, "如何安装软体套件")[0] == url(3, "/software")
    assert _urls(service, "使用滑鼠设定网路")[0] == url(3, "/network")


def test_a_line_copied_with_one_wrong_character_shows_its_correction_though_the_line_as_typed_finds_pages(
    service: SearchService,
) -> None:
    # 程需 for 程序: the words left find two pages, the corrected line one, verbatim, so
    # "finds more" would not hold; no page holds the line as typed and one does the
    # correction, which is what a line copied with a slip looks like.
    typed = "安装程需会引导你完成"
    assert service.search(typed, as_typed=True)["total"] >= 2
    out = service.search(typed)
    assert out["did_you_mean"] == {"query": "安装程序会引导你完成", "shown": True}
    assert out["results"][0]["url"] == url(0, "/install")


def test_a_query_of_initials_searches_the_words_pages_hold_most_each_with_a_place_on_the_first_page(
    service: SearchService,
) -> None:
    out = service.search("xz", size=5)
    # The five words of initials xz the pages hold most, 选择 (3 pages) first: all searched.
    readings = ["选择", "下载", "寻找", "选中", "卸载"]
    assert out["did_you_mean"] == {"query": " OR ".join(readings), "shown": True, "readings": readings}
    # Ranked by score alone, pages holding two of them would come first; each reading
    # has its best page on the first page, in the readings' order.
    pages = [fold(r["title"]) + _body(service, r["url"]) for r in out["results"]]
    assert len(pages) == 5 and all(w in page for w, page in zip(readings, pages, strict=True)), pages
    assert service.search("xz", size=5, page=2)["results"][0]["url"] not in {r["url"] for r in out["results"]}


def test_the_line_names_each_reading_of_initials_and_its_link_shows_the_page_it_was_given(
    service: SearchService,
) -> None:
    # Their OR (选择 OR 下载 OR …) searched as typed ranks by score alone, so a link to it
    # would show other pages first: each word is named, for a link that searches it
    # alone, and the page it had on the first page is on its own first page.
    out = service.search("xz", size=5)
    readings = out["did_you_mean"]["readings"]
    assert readings == ["选择", "下载", "寻找", "选中", "卸载"]
    assert out["did_you_mean"]["query"] == " OR ".join(readings)  # the meaning clients read is kept
    for word, shown in zip(readings, out["results"], strict=True):
        alone = service.search(word)
        assert alone["did_you_mean"] is None
        assert shown["url"] in [r["url"] for r in alone["results"]], word
    # A correction that is not a set of readings has none; one word read has none.
    assert "readings" not in service.search("fanghuoqiang")["did_you_mean"]


def test_a_query_of_initials_of_two_words_in_a_row_finds_the_pages_holding_them_so(service: SearchService) -> None:
    # No dictionary word spells zdgx or sjpx: 自动 + 更新, 数据 + 排序, as pages hold them.
    out = service.search("zdgx")
    assert out["did_you_mean"] == {"query": "自动更新", "shown": True}
    assert out["results"][0]["url"] == url(0, "/security")
    out = service.search("sjpx")
    assert out["did_you_mean"] == {"query": "数据排序", "shown": True}
    assert out["results"][0]["url"] == url(1, "/office/sort")
    assert service.search("hello")["did_you_mean"] is None


def _body(service: SearchService, url: str) -> str:
    return fold(service._index.get(url).body)  # type: ignore[union-attr]  # a result's page is in the index


def test_a_query_in_pinyin_finds_the_words_it_spells_but_a_latin_word_pages_hold_is_searched_as_typed(
    service: SearchService,
) -> None:
    out = service.search("fanghuoqiang")  # no page holds it: read as the Chinese it spells
    assert out["did_you_mean"] == {"query": "防火墙", "shown": True}
    assert out["results"][0]["url"] in {url(0, "/firewall"), url(2, "/2024/firewall")}
    assert service.search("rsync")["did_you_mean"] is None
