"""Folding near-duplicates and spreading sites over result pages."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.domain import minhash
from services.common.domain.search_types import SearchHit
from services.search.result_grouping import fold_near_duplicates, paginate


def _hit(url: str, site: str = "a.cn", sig: tuple[int, ...] = (), content_hash: str = "") -> SearchHit:
    return SearchHit(url, site, url, "", "", 1.0, 0.0, content_hash=content_hash or url, minhash=sig)


SIG = tuple(range(64))
NEAR = tuple(range(56)) + tuple(1000 + i for i in range(8))  # 56 of 64 agree: 0.875
FAR = tuple(2000 + i for i in range(64))


def test_a_near_duplicate_folds_into_the_better_result() -> None:
    results = fold_near_duplicates([_hit("/guide", sig=SIG), _hit("/other", sig=FAR), _hit("/print", sig=NEAR)])
    assert [r.hit.url for r in results] == ["/guide", "/other"]
    assert [h.url for h in results[0].similar] == ["/print"]


def test_same_content_folds_even_without_a_signature() -> None:
    results = fold_near_duplicates([_hit("/a", content_hash="h"), _hit("/b", content_hash="h"), _hit("/c")])
    assert [(r.hit.url, [h.url for h in r.similar]) for r in results] == [("/a", ["/b"]), ("/c", [])]


def test_no_site_has_more_than_two_results_on_a_page_while_others_wait() -> None:
    hits = [_hit(f"/a{i}", "a.cn") for i in range(5)] + [_hit(f"/b{i}", "b.cn") for i in range(2)]
    pages = paginate(fold_near_duplicates(hits), size=4, per_site=2, pages=3)
    assert [r.hit.url for r in pages[0].results] == ["/a0", "/a1", "/b0", "/b1"]
    assert pages[0].crowded == {"a.cn"}
    # Nothing is lost: the crowded site's results come next.
    assert [r.hit.url for p in pages for r in p.results] == ["/a0", "/a1", "/b0", "/b1", "/a2", "/a3", "/a4"]


def test_one_site_reads_in_plain_rank_order() -> None:
    hits = [_hit(f"/a{i}") for i in range(7)]
    pages = paginate(fold_near_duplicates(hits), size=3, per_site=2, pages=3)
    assert [[r.hit.url for r in p.results] for p in pages] == [["/a0", "/a1", "/a2"], ["/a3", "/a4", "/a5"], ["/a6"]]
    assert all(not p.crowded for p in pages)


def test_when_other_sites_run_out_the_crowded_one_fills_the_page() -> None:
    hits = [_hit(f"/a{i}", "a.cn") for i in range(4)] + [_hit("/b0", "b.cn")]
    (page,) = paginate(fold_near_duplicates(hits), size=5, per_site=2, pages=1)
    assert [r.hit.url for r in page.results] == ["/a0", "/a1", "/a2", "/a3", "/b0"]


def _fold_by_definition(hits: list[SearchHit]) -> list[tuple[str, list[str]]]:
    """Each hit against every result before it: the same content, else the
    best-ranked result that shares an LSH band and is similar enough."""
    results: list[tuple[SearchHit, list[str]]] = []
    for hit in hits:
        same = [r for r in results if hit.content_hash and r[0].content_hash == hit.content_hash]
        near = [
            r for r in results
            if hit.minhash and r[0].minhash
            and any(r[0].minhash[b * 4 : b * 4 + 4] == hit.minhash[b * 4 : b * 4 + 4] for b in range(16))
            and minhash.similarity(r[0].minhash, hit.minhash) >= minhash.THRESHOLD
        ]  # fmt: skip
        lead = (same or near or [None])[0]
        if lead is None:
            results.append((hit, []))
        else:
            lead[1].append(hit.url)
    return [(h.url, similar) for h, similar in results]


_CHANGES = st.lists(st.integers(0, 63), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), _CHANGES, st.booleans()), max_size=30))
def test_folding_matches_its_definition(specs: list[tuple[int, int, list[int], bool]]) -> None:
    # Copies of three pages, each with some of its 64 values changed: pairs land on
    # both sides of the threshold, sharing bands or not. A few hits share content,
    # a few have no signature (a short page).
    hits = []
    for i, (group, base, changes, signed) in enumerate(specs):
        sig = [base * 1000 + pos for pos in range(64)]
        for pos in changes:
            sig[pos] = 10_000 + i * 64 + pos
        content = f"h{group}" if group < 2 else f"/p{i}"
        hits.append(_hit(f"/p{i}", sig=tuple(sig) if signed else (), content_hash=content))
    assert [(r.hit.url, [h.url for h in r.similar]) for r in fold_near_duplicates(hits)] == _fold_by_definition(hits)
