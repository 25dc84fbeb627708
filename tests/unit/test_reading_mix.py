"""A query of initials read as several words: the first page shared among them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.domain.search_types import SearchHit
from services.search.reading_mix import MIX_HEAD, mix_own_rankings, own_in_query_order, places, readings_held

WORDS = ["经济", "解决", "积极"]


def _hit(url: str, body: str, title: str = "") -> SearchHit:
    return SearchHit(url, "a.cn", title or url, "", body, 1.0, 0.0)


def test_each_reading_gets_a_place_on_the_first_page_however_low_it_ranks() -> None:
    # Ranked by score, 经济's pages fill the first page; 积极's best is 30th.
    hits = [_hit(f"/jingji{i}", "经济") for i in range(25)] + [_hit(f"/jiejue{i}", "解决") for i in range(4)]
    hits.append(_hit("/jiji", "积极"))
    own = [hits[:10], hits[25:29], hits[29:]]
    mixed = mix_own_rankings(hits, own_in_query_order(own, hits, WORDS), [900, 300, 50], size=10)
    first = [h.url for h in mixed[:10]]
    # Each reading's best first, in the readings' order; then places by pages held.
    assert first[:3] == ["/jingji0", "/jiejue0", "/jiji"]
    assert sum(u.startswith("/jingji") for u in first) > sum(u.startswith("/jiejue") for u in first) > 1
    # Nothing is lost or repeated: the others follow in rank order.
    assert sorted(h.url for h in mixed) == sorted(h.url for h in hits)
    rest = [h.url for h in mixed[10:]]
    assert rest == [h.url for h in hits if h.url in set(rest)]


def test_a_readings_best_page_is_one_with_it_in_its_title() -> None:
    # The OR ranks first a page holding both readings; 选择's own page is titled so.
    hits = [_hit("/rotate", "旋转：选择对象后旋转。", title="旋转"), _hit("/select", "如何选择。", title="选择对象")]
    own = own_in_query_order([hits, hits], hits, ["选择", "旋转"])
    assert [h.url for h in mix_own_rankings(hits, own, [10, 5], size=2)] == ["/select", "/rotate"]


def test_a_reading_is_given_a_page_of_its_own_first_page_that_holds_it() -> None:
    # 解决's own search ranks first a page found through a synonym; the OR ranks first a
    # page 解决's own first page does not show: neither is given to it.
    hits = [_hit("/or-only", "解决"), _hit("/both", "经济 解决"), _hit("/synonym", "处理")]
    own = own_in_query_order([[hits[1]], [hits[2], hits[1]]], hits, ["经济", "解决"])
    assert [[h.url for h in ranked] for ranked in own] == [["/both"], ["/both"]]


def test_a_reading_on_a_traditional_page_is_found_in_its_forms() -> None:
    assert readings_held(_hit("/a", "軟體下載", title="說明"), ["软件", "下载", "说明", "经济"]) == [0, 1, 2]


def test_places_go_one_each_then_by_pages_held_never_past_the_hits_there_are() -> None:
    assert places([900, 300, 50], [20, 20, 20], 10) == [7, 2, 1]  # 7.2 : 2.4 : 0.4
    assert places([900, 300, 50], [2, 20, 20], 10) == [2, 7, 1]
    assert places([5, 4, 3], [1, 1, 1], 2) == [1, 1, 0]  # more readings than places: the most held
    assert places([5, 4], [1, 1], 10) == [1, 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["经济", "解决", "积极", "经济 解决", "其他"]), max_size=150), st.integers(1, 30))
def test_the_first_page_is_the_same_whichever_page_is_asked(bodies: list[str], size: int) -> None:
    # A later page reads more hits of the query: the first page must not change with them.
    hits = [_hit(f"/{i}", b) for i, b in enumerate(bodies)]
    pages = [50, 20, 5]
    own = [[h for h in reversed(hits) if w in h.body][:size] for w in WORDS]  # each reading's own order
    short = hits[: min(len(hits), MIX_HEAD)]
    first = mix_own_rankings(short, own_in_query_order(own, short, WORDS), pages, size)
    later = mix_own_rankings(hits, own_in_query_order(own, hits, WORDS), pages, size)
    assert [h.url for h in first[:size]] == [h.url for h in later[:size]]
    assert sorted(h.url for h in later) == sorted(h.url for h in hits)


def test_each_reading_is_given_its_own_best_pages_the_ones_its_link_shows_first() -> None:
    # The OR ranks first pages holding several readings; each reading's place goes to
    # its own best page instead, and a page taken for one is not taken again.
    hits = [_hit("/both", "经济 解决"), _hit("/jingji", "经济"), _hit("/jiejue", "解决"), _hit("/jiji", "积极")]
    own = [[hits[1], hits[0]], [hits[0], hits[2]], [hits[3]]]
    mixed = mix_own_rankings(hits, own, [900, 300, 50], size=4)
    assert [h.url for h in mixed] == ["/jingji", "/both", "/jiji", "/jiejue"]
    # Nothing lost or repeated; past the first page, the OR's order.
    mixed = mix_own_rankings(hits, own, [900, 300, 50], size=2)
    assert [h.url for h in mixed] == ["/jingji", "/both", "/jiejue", "/jiji"]
