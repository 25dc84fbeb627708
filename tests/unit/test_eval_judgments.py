"""The judgments TSV: what it accepts, and errors that name the line."""

from __future__ import annotations

import pytest

from services.evaluation.judgments import (
    Judgment,
    JudgmentsError,
    format_judgments,
    parse_judgments,
    read_judgments,
)


def test_types_queries_and_several_urls():
    text = "# a comment\n\ntitle\t设置页面格式\thttp://a.cn/x.html\n" "question\t怎么 安装\thttps://a.cn/1\thttps://a.cn/2\n"
    got = parse_judgments(text)
    assert got == [
        Judgment("title", "设置页面格式", ("http://a.cn/x.html",), 3),
        Judgment("question", "怎么 安装", ("https://a.cn/1", "https://a.cn/2"), 4),
    ]


def test_site_relative_urls_resolve_against_the_base():
    got = parse_judgments("topic\tapt\t/faq/a.html\n", base_url="http://127.0.0.1:8000/")
    assert got[0].relevant == ("http://127.0.0.1:8000/faq/a.html",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("title 设置 http://a.cn/\n", "q.tsv:1: expected type<TAB>query<TAB>URL..., found 1 field(s) (fields must be separated by tabs"),
        ("# c\ntitle\t设置\n", "q.tsv:2: expected type<TAB>query<TAB>URL..., found 2 field(s)"),
        ("ti tle\tq\thttp://a.cn/\n", "q.tsv:1: query type 'ti tle'"),
        ("title\t \thttp://a.cn/\n", "q.tsv:1: empty query"),
        ("title\tq\t\t\n", "q.tsv:1: no relevant URL"),
        ("title\tq\ta.cn/x\n", "q.tsv:1: 'a.cn/x' is not a URL"),
        ("title\tq\t/x.html\n", "q.tsv:1: site-relative URL '/x.html' needs a base URL"),
        ("title\tq\thttp:///x\n", "q.tsv:1: URL 'http:///x' has no host"),
        ("title\tq\thttp://a.cn/\n\ntitle\tq\thttp://b.cn/\n", "q.tsv:3: query 'q' of type title is already judged on line 1"),
        ("# only comments\n", "no judged queries"),
    ],
)
def test_bad_lines_are_named(text, message):
    with pytest.raises(JudgmentsError) as err:
        parse_judgments(text, source="q.tsv")
    assert message in str(err.value)
    assert str(err.value).startswith("q.tsv")


def test_the_same_query_may_have_two_types():
    got = parse_judgments("a\tq\thttp://a.cn/\nb\tq\thttp://a.cn/\n")
    assert [j.qtype for j in got] == ["a", "b"]


def test_written_files_read_back(tmp_path):
    items = [Judgment("title", "软件包 管理", ("http://a.cn/1",)), Judgment("body-quote", "破折号替换一个或两个", ("http://a.cn/2",))]
    path = tmp_path / "q.tsv"
    path.write_text(format_judgments(items, ["made by a test"]), encoding="utf-8")
    assert [(j.qtype, j.query, j.relevant) for j in read_judgments(path)] == [(j.qtype, j.query, j.relevant) for j in items]


def test_files_that_are_not_utf8_or_missing(tmp_path):
    bad = tmp_path / "gbk.tsv"
    bad.write_bytes("title\t软件\thttp://a.cn/\n".encode("gbk"))
    with pytest.raises(JudgmentsError, match="not UTF-8"):
        read_judgments(bad)
    with pytest.raises(JudgmentsError, match="no such file"):
        read_judgments(tmp_path / "none.tsv")
