"""URL canonicalisation: one spelling per page, tracking and session parameters gone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common.domain.url_canonical import canonicalize


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://a.cn/p?id=3&utm_source=wx&utm_medium=share&UTM_Campaign=x", "http://a.cn/p?id=3"),
        ("https://item.taobao.com/item.htm?spm=a230r.1.14.1&id=42", "https://item.taobao.com/item.htm?id=42"),
        ("http://a.cn/s/x?from=singlemessage&isappinstalled=0", "http://a.cn/s/x"),
        ("http://a.cn/s/x?from=groupmessage", "http://a.cn/s/x"),
        ("http://a.cn/list?from=2020&to=2021", "http://a.cn/list?from=2020&to=2021"),
        ("http://a.cn/shop;jsessionid=0A1B2C?item=1", "http://a.cn/shop?item=1"),
        ("http://a.cn/bbs/forum.php?mod=list&sid=Xy12&PHPSESSID=abc", "http://a.cn/bbs/forum.php?mod=list"),
        ("http://a.cn/a.asp?ASPSESSIONIDQQ=ABC&page=2", "http://a.cn/a.asp?page=2"),
        ("http://a.cn/?gclid=1&fbclid=2", "http://a.cn/"),
        ("http://a.cn/p?b=2&a=1#top", "http://a.cn/p?a=1&b=2"),
    ],
)
def test_tracking_and_session_parameters_are_stripped(url: str, canonical: str) -> None:
    assert canonicalize(url) == canonical


@given(st.lists(st.sampled_from(["utm_source=x", "spm=1.2", "a=1", "from=timeline", "sid=9", "q=中文", "k"]), max_size=6))
def test_canonicalize_is_idempotent(pairs: list[str]) -> None:
    once = canonicalize("http://a.cn/p?" + "&".join(pairs))
    assert canonicalize(once) == once


@pytest.mark.parametrize("value", [None, 42, ["http://a.cn/"], {"url": "http://a.cn/"}])
def test_a_value_that_is_not_a_string_is_a_bad_url(value: object) -> None:
    from services.common.domain.url_canonical import BadUrl

    with pytest.raises(BadUrl):
        canonicalize(value)  # type: ignore[arg-type]


def test_a_remembered_answer_is_the_answer_and_a_rejected_url_stays_rejected() -> None:
    from services.common.domain.url_canonical import BadUrl, _canonical

    url = "HTTP://Example.CN:80/a/../b?utm_source=x&b=2&a=1#top"
    assert canonicalize(url) == canonicalize(url) == _canonical.__wrapped__(url) == "http://example.cn/b?a=1&b=2"
    for _ in range(2):
        with pytest.raises(BadUrl):
            canonicalize("ftp://example.cn/file")
