from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.crawler.charset import decode_html, resolve_label

TEXT = "北京欢迎你，长城很长。探索中文搜索引擎。"


def page(charset_meta: str = "", text: str = TEXT) -> str:
    meta = ""
    if charset_meta:
        meta = f'<meta http-equiv="Content-Type" content="text/html; charset={charset_meta}">'
    return f"<html><head>{meta}<title>测试</title></head><body><p>{text}</p></body></html>"


def test_utf8_with_charset_in_the_header() -> None:
    text, encoding = decode_html(page().encode("utf-8"), "text/html; charset=UTF-8")
    assert encoding == "utf-8" and TEXT in text


def test_gbk_with_charset_only_in_the_header_decodes_as_gb18030() -> None:
    text, encoding = decode_html(page().encode("gbk"), "text/html; charset=GBK")
    assert encoding == "gb18030" and TEXT in text


def test_gb2312_label_decodes_characters_only_gb18030_has() -> None:
    # 𠮷 is outside GB2312 and GBK; pages labelled gb2312 use such characters anyway.
    body = page(text="𠮷野家的牛肉饭").encode("gb18030")
    text, encoding = decode_html(body, "text/html; charset=gb2312")
    assert encoding == "gb18030" and "𠮷野家的牛肉饭" in text


TRADITIONAL = "國立臺灣大學圖書館提供豐富的館藏資源，歡迎各位讀者利用。"


def traditional_page() -> str:
    return f"<html><head><title>圖書館</title></head><body><p>{TRADITIONAL}</p></body></html>"


def test_undeclared_big5_is_not_taken_for_gb18030() -> None:
    # These bytes decode without error as GB18030 too, into 瓣ミ籓芖厩瓜繻...
    body = traditional_page().encode("big5")
    text, encoding = decode_html(body, "text/html")
    assert encoding == "big5hkscs" and TRADITIONAL in text


def test_undeclared_big5_title_alone_is_recognised() -> None:
    body = "<html><title>國立臺灣大學圖書館</title></html>".encode("big5")
    assert decode_html(body, "")[0] == "<html><title>國立臺灣大學圖書館</title></html>"


def test_undeclared_gbk_that_would_also_decode_as_big5_stays_gb18030() -> None:
    body = page().encode("gbk")
    body.decode("big5hkscs")  # the ambiguity this case is about
    text, encoding = decode_html(body, "text/html")
    assert encoding == "gb18030" and TEXT in text


def test_gbk_bytes_under_a_utf8_meta_tag_are_read_as_gbk() -> None:
    text, encoding = decode_html(page("utf-8").encode("gbk"), "text/html")
    assert encoding == "gb18030" and TEXT in text


def test_big5_bytes_under_a_utf8_header_are_read_as_big5() -> None:
    text, encoding = decode_html(traditional_page().encode("big5"), "text/html; charset=utf-8")
    assert encoding == "big5hkscs" and TRADITIONAL in text


def test_gbk_with_charset_only_in_the_meta_tag() -> None:
    text, encoding = decode_html(page("gbk").encode("gbk"), "text/html")
    assert encoding == "gb18030" and TEXT in text


def test_meta_charset_attribute_form_is_read_too() -> None:
    body = f'<meta charset="gb2312"><p>{TEXT}</p>'.encode("gbk")
    assert decode_html(body) == (f'<meta charset="gb2312"><p>{TEXT}</p>', "gb18030")


def test_gbk_without_any_declaration_is_detected() -> None:
    text, encoding = decode_html(page().encode("gbk"), "")
    assert encoding == "gb18030" and TEXT in text


def test_utf8_without_any_declaration_is_detected() -> None:
    text, encoding = decode_html(page().encode("utf-8"), "text/html")
    assert encoding == "utf-8" and TEXT in text


def test_header_wins_when_header_and_meta_disagree() -> None:
    # "中文" in UTF-8 is also valid GB18030 byte pairs, so either label decodes strictly
    # and only precedence decides.
    body = '<meta charset="gbk"><title>中文</title>'.encode()
    assert body.decode("gb18030")  # precondition: the meta's label would work too
    assert decode_html(body, "text/html; charset=utf-8")[1] == "utf-8"
    body = '<meta charset="utf-8"><title>中文</title>'.encode()
    assert decode_html(body, "text/html; charset=gbk") == (body.decode("gb18030"), "gb18030")


def test_a_label_the_bytes_contradict_gives_way_to_the_next_evidence() -> None:
    # Labelled UTF-8 by a server default, but the page is GBK and says so in <meta>.
    text, encoding = decode_html(page("gbk").encode("gbk"), "text/html; charset=utf-8")
    assert encoding == "gb18030" and TEXT in text


def test_a_few_bad_bytes_do_not_override_the_declared_charset() -> None:
    body = page().encode().replace(b"<body>", b"<body>\xff")
    text, encoding = decode_html(body, "text/html; charset=utf-8")
    assert encoding == "utf-8" and TEXT in text


def test_utf8_bom_wins_over_the_header_and_is_stripped() -> None:
    text, encoding = decode_html(b"\xef\xbb\xbf" + page().encode(), "text/html; charset=gbk")
    assert encoding == "utf-8" and text.startswith("<html>") and TEXT in text


def test_utf16_bom_is_respected() -> None:
    text, encoding = decode_html(b"\xff\xfe" + page().encode("utf-16-le"), "")
    assert encoding == "utf-16-le" and TEXT in text


def test_labels_resolve_to_python_codecs() -> None:
    assert [resolve_label(x) for x in ("GB2312", "x-gbk", "GBK", "cp936")] == ["gb18030"] * 4
    assert resolve_label("UTF8") == "utf-8"
    assert resolve_label("big5") == "big5hkscs"
    assert resolve_label("no-such-charset") is None and resolve_label("") is None


@given(st.binary(max_size=400), st.sampled_from(["", "text/html", "text/html; charset=gbk",
                                                 "text/html; charset=bogus", "text/html; charset=utf-16"]))
def test_never_raises_on_any_bytes(body: bytes, content_type: str) -> None:
    text, encoding = decode_html(body, content_type)
    assert isinstance(text, str) and encoding
