from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.common.domain.messages import Outlink
from services.crawler.extract import extract

URL = "https://news.example.cn/2024/article.html"

ARTICLE = """<!DOCTYPE html><html><head><title>
  探索 新闻：长城 </title>
<style>.x { color: red }</style><script>var tracking = "脚本内容";</script></head>
<body>
<div id="top-nav"><a href="/">首页</a> <a href="/news/">新闻</a></div>
<header><h1>探索新闻网</h1></header>
<ul class="breadcrumb"><li>首页</li><li>新闻</li></ul>
<main><article>
  <header><h1>长城的故事</h1><p class="byline">记者 李明</p></header>
  <p>长城是中国古代的军事防御工程，
  绵延上万里。</p>
  <h2>历史</h2><p>始建于春秋战国时期。</p>
  <h3>修缮</h3><table><tr><td>明代</td><td>清代</td></tr></table>
  <p>Great Wall
  of China</p><p>中<b>华</b>文明</p>
</article></main>
<aside><h2>热门文章</h2><p>侧栏内容</p></aside>
<div class="sidebar-widget">推荐阅读</div>
<div role="navigation"><a href="/a">上一篇</a></div>
<form><input name="q"><button>搜索</button></form>
<noscript>请启用脚本</noscript><template><p>模板</p></template><svg><title>图标</title></svg>
<footer>版权所有 © 探索</footer>
</body></html>"""


def test_title_comes_from_the_title_element_collapsed() -> None:
    assert extract(URL, ARTICLE).title == "探索 新闻：长城"


def test_title_falls_back_to_the_first_h1() -> None:
    assert extract(URL, "<html><body><h1> 只有 标题 </h1><p>正文</p></body></html>").title == "只有 标题"


def test_headings_are_in_document_order_without_page_chrome() -> None:
    assert extract(URL, ARTICLE).headings == ["长城的故事", "历史", "修缮"]


def test_body_keeps_the_article_and_drops_boilerplate() -> None:
    body = extract(URL, ARTICLE).body
    kept_lines = ("长城的故事", "记者 李明", "长城是中国古代的军事防御工程，绵延上万里。",
                  "始建于春秋战国时期。")
    for kept in kept_lines:
        assert kept in body
    for dropped in ("脚本内容", "color", "探索新闻网", "首页", "热门文章", "侧栏内容", "推荐阅读",
                    "上一篇", "搜索", "请启用脚本", "模板", "图标", "版权所有"):
        assert dropped not in body


def test_blocks_are_separated_and_inline_text_is_not_split() -> None:
    lines = extract(URL, ARTICLE).body.split("\n")
    assert "明代" in lines and "清代" in lines  # table cells never glue together
    assert "Great Wall of China" in lines  # an English line wrap is a space
    assert "中华文明" in lines  # inline markup inside a Chinese word adds nothing


def test_preformatted_text_keeps_its_lines() -> None:
    body = extract(URL, "<body><pre>$ ls\nfoo  bar\n</pre></body>").body
    assert body.split("\n") == ["$ ls", "foo bar"]


def test_a_documentation_index_keeps_its_table_of_contents() -> None:
    html = """<body><div class="navheader"><a href="prev.html">上一页</a></div>
    <h1>第 7 章 引导</h1><div class="toc"><p>目录</p><dl>
    <dt><a href="s1.html">7.1. 关键时刻</a></dt><dt><a href="s2.html">7.2. 挂载加密的卷</a></dt></dl></div>
    <div class="navfooter"><a href="next.html">下一页</a> 7.1. 关键时刻</div></body>"""
    assert extract(URL, html).body == "第 7 章 引导\n目录\n7.1. 关键时刻\n7.2. 挂载加密的卷"


def test_a_table_of_contents_beside_a_long_article_is_dropped() -> None:
    html = f"""<body><div id="toc"><a href="#a">一、概述</a></div>
    <div class="content"><p>{"正文内容很长。" * 30}</p></div></body>"""
    assert "概述" not in extract(URL, html).body


def test_body_is_truncated_to_the_limit() -> None:
    html = f"<body><p>{'字' * 5000}</p></body>"
    assert len(extract(URL, html, max_body_chars=1000).body) == 1000


def test_links_are_absolute_in_document_order_and_deduplicated() -> None:
    html = """<body><a href="/b.html">乙</a><a href="c.html#part">
      丙   页面</a><a href="/b.html">乙的第二个锚文本</a>
    <a href="//cdn.example.cn/x"><img alt="图片说明"></a><a href="d.html" title="标题属性"></a>
    <map><area href="/e.html" alt="区域"></map></body>"""
    assert extract(URL, html).links == [
        Outlink("https://news.example.cn/b.html", "乙"),
        Outlink("https://news.example.cn/2024/c.html", "丙 页面"),
        Outlink("https://cdn.example.cn/x", "图片说明"),
        Outlink("https://news.example.cn/2024/d.html", "标题属性"),
        Outlink("https://news.example.cn/e.html", "区域"),
    ]


def test_an_empty_first_anchor_takes_a_later_non_empty_one() -> None:
    html = '<body><a href="/x"></a><a href="/y">Y</a><a href="/x">叉</a></body>'
    assert [(o.url, o.anchor) for o in extract(URL, html).links] == [
        ("https://news.example.cn/x", "叉"), ("https://news.example.cn/y", "Y")]


def test_non_http_and_fragment_only_links_are_dropped() -> None:
    html = """<body><a href="javascript:void(0)">j</a><a href="mailto:a@b.cn">m</a>
    <a href="tel:110">t</a><a href="data:text/html,hi">d</a><a href="#top">f</a>
    <a href="ftp://files.example.cn/a">ftp</a><a>no href</a><a href="">empty</a></body>"""
    assert extract(URL, html).links == []


def test_rel_nofollow_links_are_skipped() -> None:
    html = '<body><a href="/ad" rel="sponsored nofollow">广告</a><a href="/ok">好</a></body>'
    assert [o.url for o in extract(URL, html).links] == ["https://news.example.cn/ok"]


def test_base_href_is_used_to_resolve_links() -> None:
    html = '<head><base href="https://static.example.cn/docs/"></head><body><a href="p.html">文档</a></body>'
    assert extract(URL, html).links == [Outlink("https://static.example.cn/docs/p.html", "文档")]


def test_query_strings_are_encoded_in_the_page_encoding() -> None:
    html = '<body><a href="/search?q=长城">搜</a></body>'
    assert extract(URL, html, encoding="gb18030").links[0].url == "https://news.example.cn/search?q=%B3%A4%B3%C7"
    assert extract(URL, html).links[0].url == "https://news.example.cn/search?q=%E9%95%BF%E5%9F%8E"


def test_canonical_is_absolute_and_only_set_when_it_differs() -> None:
    other = '<head><link rel="canonical" href="/2024/original.html"></head>'
    assert extract(URL, other).canonical == "https://news.example.cn/2024/original.html"
    same = '<head><link rel="canonical" href="HTTPS://news.example.cn:443/2024/article.html#x"></head>'
    assert extract(URL, same).canonical == ""


def test_meta_robots_noindex_and_nofollow() -> None:
    html = '<head><meta name="robots" content="noindex, nofollow"></head><body><a href="/x">x</a></body>'
    content = extract(URL, html)
    assert content.noindex and content.nofollow and content.links == []


def test_meta_robots_none_and_our_own_bot_name() -> None:
    assert extract(URL, '<meta name="ROBOTS" content="none">').noindex
    assert extract(URL, '<meta name="tansuobot" content="noindex">').noindex
    assert not extract(URL, '<meta name="googlebot" content="noindex">').noindex


def test_x_robots_tag_header() -> None:
    page = "<body><a href='/x'>x</a></body>"
    assert extract(URL, page, {"X-Robots-Tag": "noindex"}).noindex
    blocked = extract(URL, page, {"x-robots-tag": "tansuobot: nofollow"})
    assert blocked.nofollow and not blocked.noindex and blocked.links == []
    assert not extract(URL, page, {"X-Robots-Tag": "googlebot: noindex, nofollow"}).noindex


def test_identical_content_under_two_urls_hashes_the_same() -> None:
    a = extract("https://a.example.cn/1", "<title>同一篇</title><p>相同的内容。</p>")
    b = extract("https://b.example.cn/2?utm=x",
                "<html><head><title> 同一篇 </title></head>"
                "<body><div><p>相同的内容。</p></div></body></html>")
    c = extract("https://a.example.cn/1", "<title>同一篇</title><p>不同的内容。</p>")
    assert a.content_hash == b.content_hash != c.content_hash


def test_empty_or_broken_html_does_not_raise() -> None:
    xml_declaration = '<?xml version="1.0" encoding="utf-8"?>'
    for html in ("", "   ", "<<<>>>", "<html", "\x00\x01", f"{xml_declaration}<html><p>x</p></html>"):
        assert extract(URL, html).links == []
    assert extract(URL, f"{xml_declaration}<html><body><p>正文</p></body></html>").body == "正文"


PIECES = ["<p>", "</p>", "<pre>", "</pre>", "<b>", "<a href='/x'>", "</a>", "<br>", "<div class=nav>",
          "</div>", "<title>", "</title>", "\n", " ", "中文", "word", "\x00", "\ue000", "&amp;", "<!-- c -->",
          "<script>", "</script>", "\u3000", "\xa0", "\t"]


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_any_markup_yields_clean_single_spaced_lines(html: str) -> None:
    content = extract(URL, html)
    for line in content.body.split("\n"):
        assert line == line.strip() and "  " not in line and "\ue000" not in line


def test_a_docbook_sidebar_note_is_content_but_a_link_sidebar_is_not() -> None:
    note = "回到基础：软件包是一个包含程序文件和元数据的归档文件，" * 4
    html = (
        '<html><body><ul class="docnav top"><li><a href="/p">上一页</a></li><li><a href="/n">下一页</a></li></ul>'
        f'<div class="sidebar"><p>{note}</p></div>'
        '<div class="sidebar">' + "".join(f'<a href="/{i}">栏目链接{i}号</a> ' for i in range(12)) + "</div>"
        "<p>正文内容</p></body></html>"
    )
    body = extract("http://example.cn/a.html", html).body
    assert "回到基础" in body and "正文内容" in body
    assert "栏目链接" not in body and "上一页" not in body


def test_a_page_of_links_is_indexed_by_its_own_text_and_shown_with_its_links() -> None:
    links = "".join(f'<li><a href="/a/{i}.html">答案 {i}：保险理赔需要哪些材料</a></li>' for i in range(30))
    hub = extract("https://qa.example.cn/", f"<html><head><title>保险问答</title></head><body><p>欢迎。</p><ul>{links}</ul></body></html>")
    assert hub.own_text == "欢迎。"
    assert "保险理赔" in hub.body and len(hub.links) == 30  # shown and followed
    article = extract(
        "https://qa.example.cn/a/1.html",
        "<html><body><p>理赔时需要提交保单、身份证明和医院出具的诊断证明，"
        '详见<a href="/guide">理赔指南</a>。保险公司会在三十天内答复。</p></body></html>',
    )
    assert article.own_text is None  # a few links inside prose: an ordinary page
