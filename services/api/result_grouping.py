"""What a page of results shows: near-duplicates folded, no site crowding the page.

The index keeps every distinct page, near-duplicates included, so each stays
findable by its own text; the answer folds them instead. Among the hits of the
result window, a hit whose text is nearly the same as a better one's (MinHash
similarity at or above the indexer's threshold, or the same content hash) becomes one
of that result's "similar pages", as web search engines do.

Site diversity is host crowding as web engines do it: a site's results beyond
``per_site`` on one page move to a later page rather than disappearing, so an index
of one site reads as before, and an index of thirty sub-sites shows several of them
on the first page. The answer says which sites had results moved, for "more from
this site".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.common import minhash
from services.common.model import SearchHit


@dataclass
class Result:
    hit: SearchHit
    rank: int  # position in the backend's ranking, for a stable order within a page
    similar: list[SearchHit] = field(default_factory=list)


def fold_near_duplicates(hits: Sequence[SearchHit]) -> list[Result]:
    """Hits in rank order, each near-duplicate of a better hit folded into it."""
    results: list[Result] = []
    by_band: dict[tuple[int, ...], list[Result]] = {}
    by_hash: dict[str, Result] = {}
    for rank, hit in enumerate(hits):
        lead = by_hash.get(hit.content_hash) if hit.content_hash else None
        keys = minhash.band_keys(hit.minhash) if hit.minhash else []
        if lead is None and keys:
            candidates = {id(r): r for b in keys for r in by_band.get(b, [])}
            lead = next(
                (r for r in sorted(candidates.values(), key=lambda r: r.rank)
                 if minhash.similarity(r.hit.minhash, hit.minhash) >= minhash.THRESHOLD),
                None,
            )  # fmt: skip
        if lead is not None:
            lead.similar.append(hit)
            continue
        result = Result(hit, rank)
        results.append(result)
        if hit.content_hash:
            by_hash.setdefault(hit.content_hash, result)
        for b in keys:
            by_band.setdefault(b, []).append(result)
    return results


@dataclass
class Page:
    results: list[Result]
    crowded: set[str]  # sites with results moved off this page by the per-site limit


def paginate(results: Sequence[Result], size: int, per_site: int, pages: int) -> list[Page]:
    """The first ``pages`` pages, each with at most ``per_site`` results of one site
    while other sites have results to show; within a page, backend rank order."""
    diverse = per_site > 0 and len({r.hit.site for r in results}) >= 2
    out: list[Page] = []
    pending = list(results)
    while pending and len(out) < pages:
        if not diverse:
            out.append(Page(pending[:size], set()))
            pending = pending[size:]
            continue
        page: list[Result] = []
        counts: Counter[str] = Counter()
        rest: list[Result] = []
        for r in pending:
            if len(page) < size and counts[r.hit.site] < per_site:
                page.append(r)
                counts[r.hit.site] += 1
            else:
                rest.append(r)
        if len(page) < size:  # too few other sites: the crowded ones fill the page
            take = size - len(page)
            page.extend(rest[:take])
            rest = rest[take:]
        last = max(r.rank for r in page)
        crowded = {r.hit.site for r in rest if r.rank < last}
        page.sort(key=lambda r: r.rank)
        out.append(Page(page, crowded))
        pending = rest
    return out
