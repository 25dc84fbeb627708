"""What a page of results shows: near-duplicates folded, no site crowding the page.

The index keeps every distinct page, near-duplicates included, so each stays
findable by its own text; the answer folds them instead. Among the hits of the
result window, a hit whose text is nearly the same as a better one's (MinHash
similarity at or above the indexer's threshold, or the same content hash) becomes one
of that result's "similar pages", as web search engines do.

Site diversity is host crowding as web engines do it: a site's results beyond
``per_site`` on one page move to a later page rather than disappearing, so an index
of one site keeps its order, and an index of thirty sub-sites shows several of them
on the first page. The answer says which sites had results moved, for "more from
this site".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.common.domain import minhash
from services.common.domain.search_types import SearchHit


@dataclass
class Result:
    hit: SearchHit
    rank: int  # position in the backend's ranking, for a stable order within a page
    similar: list[SearchHit] = field(default_factory=list)


def fold_near_duplicates(hits: Sequence[SearchHit]) -> list[Result]:
    """Hits in rank order, each near-duplicate of a better hit folded into it.

    A hit's lead is the best-ranked earlier result that shares a band with it and
    is similar enough by the whole signature; a result is listed under each of its
    bands in rank order, so the first similar one found per band is that band's best.
    """
    results: list[Result] = []
    by_band: list[dict[tuple[int, ...], list[Result]]] = [{} for _ in range(minhash.BANDS)]
    by_hash: dict[str, Result] = {}
    for rank, hit in enumerate(hits):
        copy = hit.content_hash if hit.copy_key is None else hit.copy_key
        lead = by_hash.get(copy) if copy else None
        keys = minhash.band_rows(hit.minhash)
        if lead is None and keys:
            lead = _similar_lead(hit.minhash, keys, by_band)
        if lead is not None:
            lead.similar.append(hit)
            continue
        result = Result(hit, rank)
        results.append(result)
        if copy:
            by_hash.setdefault(copy, result)
        for band, key in zip(by_band, keys, strict=False):  # no keys: a hit with no signature
            band.setdefault(key, []).append(result)
    return results


def _similar_lead(
    sig: tuple[int, ...], keys: list[tuple[int, ...]], by_band: list[dict[tuple[int, ...], list[Result]]]
) -> Result | None:
    """The best-ranked earlier result sharing a band with ``sig`` and similar to it."""
    best: Result | None = None
    seen: set[int] = set()
    for band, key in zip(by_band, keys, strict=False):  # no keys: a hit with no signature
        for r in band.get(key, ()):
            if best is not None and r.rank >= best.rank:
                break  # each list is in rank order: the rest rank lower still
            if r.rank in seen:
                continue
            seen.add(r.rank)
            if minhash.similarity(r.hit.minhash, sig) >= minhash.THRESHOLD:
                best = r
                break
    return best


@dataclass
class Page:
    results: list[Result]
    crowded: set[str]  # sites with results moved off this page by the per-site limit


def paginate(results: Sequence[Result], size: int, per_site: int, pages: int, lookahead: int = 20) -> list[Page]:
    """The first ``pages`` pages, each with at most ``per_site`` results of one site
    while other sites have results to show; within a page, backend rank order.

    Each page is chosen from the next ``size + lookahead`` results only, so that
    page k comes out the same whether it was asked for or a later page was (whose
    request reads more hits): choosing from the whole window would let a site deeper
    in a longer window reorder the earlier pages, showing some results twice and
    others never."""
    out: list[Page] = []
    pending = list(results)
    while pending and len(out) < pages:
        window, later = pending[: size + lookahead], pending[size + lookahead :]
        page, rest = _fill(window, size, per_site)
        last = max(r.rank for r in page)
        crowded = {r.hit.site for r in rest if r.rank < last}
        page.sort(key=lambda r: r.rank)
        out.append(Page(page, crowded))
        pending = rest + later
    return out


def _fill(window: list[Result], size: int, per_site: int) -> tuple[list[Result], list[Result]]:
    """(one page, the rest of the window in order): at most ``per_site`` results of a
    site while the window holds other sites, then the crowded ones fill the page."""
    if per_site <= 0 or len({r.hit.site for r in window}) < 2:
        return window[:size], window[size:]
    page: list[Result] = []
    counts: Counter[str] = Counter()
    rest: list[Result] = []
    for r in window:
        if len(page) < size and counts[r.hit.site] < per_site:
            page.append(r)
            counts[r.hit.site] += 1
        else:
            rest.append(r)
    if len(page) < size:  # too few other sites: the crowded ones fill the page
        take = size - len(page)
        page.extend(rest[:take])
        rest = rest[take:]
    return page, rest
