"""Query words' document frequencies are asked of the index once per index view."""

from __future__ import annotations

from collections.abc import Sequence

from services.search.term_stats_cache import CachedTermStats
from tests.manual_clock import ManualClock


class Index:
    def __init__(self) -> None:
        self.asked: list[list[tuple[str, str]]] = []
        self.version: object | None = 1
        self.docs = 100

    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        self.asked.append(list(terms))
        return self.docs, [len(token) for _, token in terms]


def _stats(index: Index, clock: ManualClock | None = None) -> CachedTermStats:
    return CachedTermStats(index.term_stats, lambda: index.version, 100, 1.0, clock or ManualClock())


def test_only_words_not_asked_before_on_this_view_are_fetched() -> None:
    index = Index()
    stats = _stats(index)
    assert stats([("title_tokens", "保险"), ("body_tokens", "汽车保险")]) == (100, [2, 4])
    assert stats([("body_tokens", "汽车保险"), ("title_tokens", "年金")]) == (100, [4, 2])
    assert index.asked == [[("title_tokens", "保险"), ("body_tokens", "汽车保险")], [("title_tokens", "年金")]]


def test_a_new_index_view_is_asked_afresh() -> None:
    index = Index()
    stats = _stats(index)
    stats([("title_tokens", "保险")])
    index.version, index.docs = 2, 101
    assert stats([("title_tokens", "保险")]) == (101, [2])
    assert len(index.asked) == 2


def test_a_backend_that_cannot_tell_its_view_is_asked_again_after_the_ttl() -> None:
    index, clock = Index(), ManualClock()
    index.version = None
    stats = _stats(index, clock)
    stats([("title_tokens", "保险")])
    stats([("title_tokens", "保险")])
    assert len(index.asked) == 1
    clock.now += 1.5
    stats([("title_tokens", "保险")])
    assert len(index.asked) == 2
