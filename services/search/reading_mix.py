"""The first page of a query read several ways: each reading gets a place in it.

A query of initials stands for many words alike (jj: 经济, 解决, 积极, 基金 …); all the
likeliest are searched at once, and ranked by score alone one reading's pages would
fill the page. So the page is shared out as an input method's candidate list is, and
as results are spread over sites: each reading's best page first, in the order of the
readings (the most held first), then the page's other places by the pages each
reading holds (Sainte-Laguë's divisors, so a reading held twice as often gets about
twice the places). The rest follow in rank order.

A reading's pages are taken from its own first page, the reading searched alone: the
correction line links each reading so, and whoever clicks it finds there the page the
first page gave it. Among them, those with the reading in their title come first,
then those the query of all the readings ranks higher (a page about 旋转 that says 选择
once is not 选择's best page), of its first ``MIX_HEAD`` hits only, a number that does
not depend on the page asked for: the first page comes out the same whichever page is
asked.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from services.common.analysis.fold import convert
from services.common.domain.search_types import SearchHit

MIX_HEAD = 100  # the hits the first page is chosen from


@functools.lru_cache(maxsize=4096)
def _forms(word: str) -> tuple[str, ...]:
    """A simplified word as a page may write it: as typed, in traditional script, and
    as Taiwan says it (软件, 軟件, 軟體)."""
    return tuple(dict.fromkeys((word, convert("s2t", word), convert("s2twp", word))))


def readings_held(hit: SearchHit, words: Sequence[str], title_only: bool = False) -> list[int]:
    """The indexes of the ``words`` a hit's title, headings or text (or its title
    alone) holds, in any of their forms. The words are converted, not the page: folding
    a hundred pages of traditional text (2,300 characters each) takes some 120 ms, ten
    searches' worth."""
    text = hit.title if title_only else f"{hit.title}\n{hit.headings}\n{hit.body}"
    return [i for i, w in enumerate(words) if any(form in text for form in _forms(w))]


def places(pages: Sequence[int], available: Sequence[int], size: int) -> list[int]:
    """How many of the first ``size`` places each reading gets: one each while places
    last (most held first), then the others by ``pages`` (Sainte-Laguë), never more
    than a reading's ``available`` hits."""
    got = [0] * len(pages)
    left = size
    for i, n in enumerate(available):
        if left and n:
            got[i], left = 1, left - 1
    while left:
        open_ = [i for i in range(len(pages)) if got[i] < available[i]]
        if not open_:
            break
        best = max(open_, key=lambda i: (pages[i] / (2 * got[i] + 1), -i))
        got[best] += 1
        left -= 1
    return got


def mix_own_rankings(
    hits: Sequence[SearchHit], own: Sequence[Sequence[SearchHit]], pages: Sequence[int], size: int
) -> list[SearchHit]:
    """``hits`` (the OR of the readings) with a first ``size`` made of each reading's own
    best hits (``own``: the reading searched alone, best first, as its link on the
    correction line searches it), round by round in the readings' order, the places
    shared by ``pages`` (``places``); then every other hit of ``hits`` in rank order.
    So the page a reading has on the first page is the first its own link shows."""
    quota = places(pages, [len(ranked) for ranked in own], size)
    chosen: list[SearchHit] = []
    taken: set[str] = set()
    for round_ in range(max(quota, default=0)):
        for i, ranked in enumerate(own):
            if round_ >= quota[i] or len(chosen) >= size:
                continue
            best = next((h for h in ranked if h.url not in taken), None)
            if best is not None:
                chosen.append(best)
                taken.add(best.url)
    return chosen + [h for h in hits if h.url not in taken]


def own_in_query_order(
    own: Sequence[Sequence[SearchHit]], hits: Sequence[SearchHit], words: Sequence[str]
) -> list[list[SearchHit]]:
    """Each reading's own first page (``own``), only the pages holding it, ordered as
    ``mix_readings`` prefers: with the reading in their title first, then by the rank
    the query of all the readings (``hits``) gives them, then by their own rank. The
    page a reading is given is then one its link shows on its first page, and the one
    the whole query would have chosen where that is among them."""
    # Only the first MIX_HEAD count, so the order is the same whichever page is asked.
    at = {h.url: i for i, h in enumerate(hits[:MIX_HEAD])}
    out = []
    for ranked, word in zip(own, words, strict=True):
        holding = [(n, h) for n, h in enumerate(ranked) if readings_held(h, (word,))]
        titled = {h.url for _, h in holding if readings_held(h, (word,), title_only=True)}
        holding.sort(key=lambda pair: (pair[1].url not in titled, at.get(pair[1].url, MIX_HEAD), pair[0]))
        out.append([h for _, h in holding])
    return out
