"""`tansuo eval --generate`: four query types, uniqueness rules, determinism."""

from __future__ import annotations

import dataclasses

from services.evaluation.corpus import CorpusDoc
from services.evaluation.generate import generate
from services.evaluation.tokens import tokenize


def doc(url: str, title: str, body: str) -> CorpusDoc:
    return CorpusDoc(url, title, f"{title}\n{body}", body, tuple(tokenize(title)), tuple(tokenize(body)), 1.0)


SHARED = "这一句话在每个页面上都出现过一次而已"  # 17 Han characters on every page

DOCS = [
    doc("http://a.cn/1", "软件包管理工具 apt-get", f"{SHARED}。使用高级软件包工具可以自动解决依赖关系并下载安装"),
    doc("http://a.cn/2", "防火墙配置与网络安全", f"{SHARED}。内核的包过滤功能由网络过滤框架提供给管理员使用"),
    doc("http://a.cn/3", "同一个标题", f"{SHARED}。这个页面的标题与另一个页面完全一样所以会被跳过"),
    doc("http://a.cn/4", "同一个标题", f"{SHARED}。第二个同名页面同样不能作为已知条目查询的答案"),
    doc("http://a.cn/5", "English only page", "no Han characters here at all"),
]


def by_type(judgments):
    out: dict[str, dict[str, str]] = {}
    for j in judgments:
        assert len(j.relevant) == 1
        out.setdefault(j.qtype, {})[j.relevant[0]] = j.query
    return out


def test_titles_verbatim_only_for_unique_titles():
    got = by_type(generate(DOCS, seed=3))
    assert got["title"] == {
        "http://a.cn/1": "软件包管理工具 apt-get",
        "http://a.cn/2": "防火墙配置与网络安全",
        "http://a.cn/5": "English only page",
    }
    pages = {url for queries in got.values() for url in queries}
    assert "http://a.cn/3" not in pages and "http://a.cn/4" not in pages


def test_title_words_are_two_or_three_of_the_title_words():
    got = by_type(generate(DOCS, seed=3))["title-words"]
    assert set(got) == {"http://a.cn/1", "http://a.cn/2", "http://a.cn/5"}
    for url, query in got.items():
        title_words = set(tokenize(next(d.title for d in DOCS if d.url == url)))
        words = query.split()
        assert 2 <= len(words) <= 3 and len(set(words)) == len(words)
        assert set(words) <= title_words


def test_title_words_prefer_the_rarest():
    docs = [doc(f"http://a.cn/{i}", f"安装 指南 第{i}部分", "正文") for i in range(5)]
    docs.append(doc("http://a.cn/x", "安装 指南 防火墙 内核", "正文"))
    got = by_type(generate(docs, seed=1))["title-words"]
    # 防火墙 and 内核 are on one page each; 安装 and 指南 on all six.
    assert set(got["http://a.cn/x"].split()) >= {"防火墙", "内核"}


def test_body_quotes_are_ten_han_characters_found_on_no_other_page():
    judgments = generate(DOCS, seed=3)
    quotes = by_type(judgments)["body-quote"]
    assert set(quotes) == {"http://a.cn/1", "http://a.cn/2"}  # /5 has no Han body
    for url, span in quotes.items():
        assert len(span) == 10 and all("\u4e00" <= c <= "\u9fff" for c in span)
        holders = [d.url for d in DOCS if span in d.text]
        assert holders == [url]
        assert span not in SHARED


def test_a_page_with_only_shared_text_gets_no_body_quote():
    docs = [doc("http://a.cn/1", "甲", SHARED), doc("http://a.cn/2", "乙", SHARED)]
    assert "body-quote" not in by_type(generate(docs))


def test_same_seed_same_set_other_seed_other_choices():
    assert generate(DOCS, seed=7) == generate(DOCS, seed=7)
    quotes = {s: by_type(generate(DOCS, seed=s))["body-quote"]["http://a.cn/1"] for s in range(20)}
    assert len(set(quotes.values())) > 1


def test_word_sets_shared_by_two_titles_are_left_out():
    docs = [doc("http://a.cn/1", "内核 模块", "甲"), doc("http://a.cn/2", "模块 内核", "乙")]
    assert "title-words" not in by_type(generate(docs))


def test_sampling_keeps_that_many_pages():
    docs = [doc(f"http://a.cn/{i}", f"页面{i} 标题", "正文") for i in range(30)]
    got = by_type(generate(docs, seed=2, max_pages=10))
    assert len(got["title"]) == 10


def test_a_large_index_is_read_in_passes_not_held():
    docs = [doc(f"http://a.cn/{i}", f"页面{i} 标题", f"第{i}页的正文说明这里有十个以上的汉字可以引用") for i in range(30)]
    calls = []

    def read(tokens=True, only=None):
        calls.append((tokens, None if only is None else len(only)))
        return (d for d in docs if only is None or d.url in only)  # single use, as an index scan

    assert generate(read, seed=2, max_pages=10) == generate(docs, seed=2, max_pages=10)
    # All pages with tokens (titles, frequencies), the ten chosen, all pages' text (quotes).
    assert calls == [(True, None), (True, 10), (False, None)]


def _document(url: str, body: str, link_text: str, title: str = "") -> CorpusDoc:
    return dataclasses.replace(doc(url, title, body), filetype="pdf", link_text=link_text)


def test_a_document_gets_its_link_text_as_a_query_when_no_other_document_shares_it():
    docs = [
        _document("http://x/a.pdf", "北京大学二〇二六年硕士研究生招生简章报名时间", "2026年硕士研究生招生简章"),
        _document("http://x/b.pdf", "清华大学今年博士研究生招生目录公布于此处", "招生目录"),
        _document("http://x/c.pdf", "复旦大学今年博士研究生招生目录公布于此处", "招生目录"),
        doc("http://x/page.html", "首页", "各类文件下载"),
    ]
    links = [j for j in generate(docs) if j.qtype == "link-text"]
    assert [(j.query, j.relevant) for j in links] == [("2026年硕士研究生招生简章", ("http://x/a.pdf",))]
    # An untitled document still gets its body quote, and no title query.
    made = generate(docs)
    assert any(j.qtype == "body-quote" and j.relevant == ("http://x/a.pdf",) for j in made)
    assert not any(j.qtype == "title" and j.relevant == ("http://x/a.pdf",) for j in made)
def test_the_forgiving_types_are_what_their_pages_say_slightly_wrong():
    from services.common.analysis.pinyin_keys import pinyin_of
    from services.evaluation.generate import ALL_TYPES

    docs = [*DOCS, doc("http://a.cn/6", "打印预览", "打印之前先看预览。\n打印范围\n设置纸张大小和方向。")]
    got = by_type(generate(docs, seed=3, types=ALL_TYPES))
    assert "title" in got and "typo-title" in got
    for url, typo in got["typo-title"].items():
        title = next(d.title for d in docs if d.url == url)
        wrong = [(a, b) for a, b in zip(typo, title) if a != b]  # noqa: B905 - same length
        assert len(typo) == len(title) and len(wrong) == 1 and pinyin_of(wrong[0][0]) == pinyin_of(wrong[0][1])
    assert got["pinyin"]["http://a.cn/6"] == "dayinyulan"
    assert got["quoted"]["http://a.cn/1"] == f'"{got["body-quote"]["http://a.cn/1"]}"'
    # 10 characters across the heading 打印范围 and the paragraph after it, as copied.
    assert "印范围设置" in got["quoted-across"]["http://a.cn/6"]
    assert set(generate(DOCS, seed=3)) == set(generate(DOCS, seed=3, types=("title", "title-words", "body-quote", "link-text")))


def test_typos_are_typed_with_the_mainlands_words_or_character_by_character_as_read():
    from services.evaluation.generate_forgiving import simplified

    assert simplified("安裝軟體套件 apt") == "安装软件套件 apt"  # as a page is folded
    assert simplified("安裝軟體套件 apt", "characters") == "安装软体套件 apt"  # as read, one by one
    docs = [*DOCS, doc("http://a.cn/7", "安裝軟體套件的方法", "在終端機中安裝軟體套件，然後更新套件清單與設定檔")]
    as_read = by_type(generate(docs, seed=3, types=("typo-title",), typed="characters"))["typo-title"]["http://a.cn/7"]
    as_folded = by_type(generate(docs, seed=3, types=("typo-title",)))["typo-title"]["http://a.cn/7"]
    assert "软体" in as_read and as_read.replace("软体", "软件") == as_folded  # the same slip, the same place
