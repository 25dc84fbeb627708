"""Links are resolved against the page's directory and remembered
(services/crawler/extract.py ``_resolve``): the answer must be what resolving each
link against the whole page URL gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.crawler.extract import _SKIP_SCHEMES, _absolute, _directory, _resolve


def _reference(base: str, href: str, encoding: str) -> str | None:
    """Resolution against the whole base URL, as it was done before the directory."""
    href = "".join(ch for ch in href.strip() if ch not in "\t\n\r")
    if not href or href.lower().startswith(_SKIP_SCHEMES):
        return None
    return _absolute(base, href, encoding)


BASES = [
    "http://h", "http://h/", "http://h/a/b.html", "http://h/a/b.html?x=1#f", "http://h/a/b/", "https://h:8080/a;p/b;q?x",
    "http://h/a/./b/../c.html", "http://h/a//b/c", "http://用户@例子.中国/路径/页.html", "HTTP://H/A/B?Q", "http://h?only=query",
    "https://u@h:81/p/q;r?s#t", "http://h&:?/中",
]  # fmt: skip
HREFS = [
    "d.html", "./d.html", "../d.html", "../../../../d", ".", "..", "./", "?y=2", "?", "#top", "/abs", "//other/x",
    "http://x/y", "https://x", "ftp://x/y", "mailto:a@b", "javascript:void(0)", ";p", "d;p?q#f", " spaced name.html ",
    "中文/页面.html?词=值", "d\\nhtml", "%41%42", "a:b", "../?q", "./?y", "//", "//?q", "///x", "http:", "http:?q",
    "http:d.html", "https:", "HTTP:", "a1+.-:x", "1a:x", ";", ";#x", "//h;p", "x:;",
]  # fmt: skip


def test_every_tricky_pair_resolves_as_against_the_whole_url() -> None:
    for base in BASES:
        for href in HREFS:
            for encoding in ("utf-8", "gbk"):
                assert _resolve(base, href, encoding) == _reference(base, href, encoding), (base, href)
                assert _resolve(base, href, encoding, _directory(base)) == _reference(base, href, encoding)


_SEGMENT = st.sampled_from(["a", "b", ".", "..", "", "x;p", "页", "%20", "c.html"])


@settings(max_examples=400, deadline=None)
@given(
    base_path=st.lists(_SEGMENT, max_size=5),
    base_query=st.sampled_from(["", "?q=1", "?", "?a=b&c"]),
    href_path=st.lists(_SEGMENT, max_size=4),
    href_start=st.sampled_from(["", "/", "./", "../", "//h2/", "?", "http://h3/", "//", "http:", "https:", "x:", ";", "//;"]),
    href_tail=st.sampled_from(["", "?z", "#f", "?z#f"]),
)
def test_random_pairs_resolve_as_against_the_whole_url(
    base_path: list[str], base_query: str, href_path: list[str], href_start: str, href_tail: str
) -> None:
    base = "http://h/" + "/".join(base_path) + base_query
    href = href_start + "/".join(href_path) + href_tail
    assert _resolve(base, href, "utf-8") == _reference(base, href, "utf-8"), (base, href)
