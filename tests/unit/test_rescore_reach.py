"""Rescoring reads the rank of only the hits the rank feature could lift into the page."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.adapters.tantivy.search_index import _reachable, rank_feature

WEIGHT, PIVOT = 1.5, 1.0


def _top(hits: list[tuple[float, int]], ranks: dict[int, float], end: int) -> list[tuple[float, int]]:
    scored = [(bm25 + rank_feature(ranks[doc], WEIGHT, PIVOT), doc) for bm25, doc in hits]
    return sorted(scored, key=lambda pair: (-pair[0], pair[1]))[:end]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 20, width=32), st.floats(0, 1e6)), max_size=80),
    st.integers(1, 40),
)
def test_the_page_is_the_same_as_rescoring_every_hit(specs: list[tuple[float, float]], end: int) -> None:
    hits = sorted(((bm25, doc) for doc, (bm25, _) in enumerate(specs)), key=lambda pair: -pair[0])
    ranks = {doc: rank for doc, (_, rank) in enumerate(specs)}
    kept = _reachable(hits, end, WEIGHT)
    assert _top(kept, ranks, end) == _top(hits, ranks, end)


def test_a_hit_far_below_the_page_is_not_read() -> None:
    hits = [(10.0, 0), (9.0, 1), (7.4, 2), (7.6, 3)][:2] + [(7.6, 3), (7.4, 2)]
    assert _reachable(hits, 2, WEIGHT) == [(10.0, 0), (9.0, 1), (7.6, 3)]
    # A negative weight can lower the page's own scores below a later hit's: all are read.
    assert _reachable(hits, 2, -1.0) == hits
