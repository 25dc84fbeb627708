"""Query-biased snippets and highlighted titles are safe HTML."""

from __future__ import annotations

import re

from services.search.snippets import ELLIPSIS, snippet_html, title_html


def _plain(html: str) -> str:
    return re.sub(r"</?em>", "", html)


def test_page_markup_comes_out_escaped_and_only_em_is_added() -> None:
    html = snippet_html('安装前请阅读 <script>alert("x")</script> & 说明', ["安装", "script"])
    assert "<script>" not in html
    assert "&lt;<em>script</em>&gt;alert(\"x\")&lt;/<em>script</em>&gt;" in html
    assert "&amp;" in html
    assert re.sub(r"</?em>", "", html).count("<") == 0


def test_matches_are_wrapped_in_em_case_insensitively() -> None:
    html = snippet_html("用 APT-GET 安装 Debian 软件包", ["apt-get", "debian"])
    assert "<em>APT-GET</em>" in html
    assert "<em>Debian</em>" in html


def test_a_latin_term_matches_only_whole_words() -> None:
    html = snippet_html("an apt answer about apt", ["a", "apt"])
    assert html == "an <em>apt</em> answer about <em>apt</em>"


def test_the_longest_term_wins_where_terms_overlap() -> None:
    assert snippet_html("中华人民共和国", ["中华", "中华人民共和国"]) == "<em>中华人民共和国</em>"


def test_the_window_covering_most_distinct_terms_is_chosen_and_cut_with_ellipses() -> None:
    filler = "无关的文字。" * 40
    body = f"开头提到安装。{filler}这里同时讲安装、配置和网络。{filler}结尾"
    html = snippet_html(body, ["安装", "配置", "网络"])
    assert html.startswith(ELLIPSIS) and html.endswith(ELLIPSIS)
    assert "<em>安装</em>、<em>配置</em>和<em>网络</em>" in html
    assert len(_plain(html)) <= 150 + 2


def test_without_matches_the_snippet_is_the_start_of_the_body() -> None:
    body = "第一句话。" + "后面的内容。" * 50
    html = snippet_html(body, ["不存在"])
    assert html.startswith("第一句话。")
    assert html.endswith(ELLIPSIS)
    assert "<em>" not in html


def test_a_short_body_is_not_cut() -> None:
    assert snippet_html("  短短的\n\n正文  ", ["正文"]) == "短短的 <em>正文</em>"
    assert snippet_html("", ["x"]) == ""


def test_the_cut_does_not_split_a_latin_word_when_a_space_is_near() -> None:
    body = "word " * 100 + "目标 target"
    html = snippet_html(body, ["目标"])
    first = _plain(html).removeprefix(ELLIPSIS)
    assert first.startswith("word ")


def test_the_title_is_highlighted_escaped_and_cut() -> None:
    assert title_html("Debian <b>参考</b> 手册", ["参考"]) == "Debian &lt;b&gt;<em>参考</em>&lt;/b&gt; 手册"
    long = "很长的标题" * 30
    html = title_html(long, ["标题"], width=20)
    assert _plain(html) == long[:20] + ELLIPSIS


def test_a_term_deep_in_a_long_body_still_gets_its_window() -> None:
    body = "开头的文字。" * 5000 + "这里提到了<关键词>和更多内容。" + "结尾。" * 100
    html = snippet_html(body, ["关键词"])
    assert "<em>关键词</em>" in html and "&lt;" in html
    assert html.startswith("…") and html.endswith("…")


def test_a_long_body_without_the_terms_shows_its_start() -> None:
    body = "开头的文字。" * 10000
    html = snippet_html(body, ["不存在"])
    assert html.startswith("开头的文字") and html.endswith("…")


def test_a_latin_word_refused_inside_a_longer_one_leaves_a_later_term_findable() -> None:
    # "apt-get" starts inside "xapt-get" and is refused there; "get" after the hyphen
    # is a word of its own and is marked, as a look-behind would have it.
    assert snippet_html("xapt-get 和 Ａpt-get", ["apt-get", "get"]) == "xapt-<em>get</em> 和 <em>Ａpt-get</em>"
