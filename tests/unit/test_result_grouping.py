"""Folding near-duplicates and spreading sites over result pages."""

from __future__ import annotations

from services.api.result_grouping import fold_near_duplicates, paginate
from services.common.model import SearchHit


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
