"""The first page of a query read several ways: each reading gets a place in it.

A query of initials stands for many words alike (jj: 经济, 解决, 积极, 基金 …); all the
likeliest are searched at once, and ranked by score alone one reading's pages would
fill the page. So the page is shared out as an input method's candidate list is, and
as results are spread over sites: each reading's best page first, in the order of the
readings (the most held first), then the page's other places by the pages each
reading holds (Sainte-Laguë's divisors, so a reading held twice as often gets about
twice the places). The rest follow in rank order.

Only the first ``head`` hits are looked at, a number that does not depend on the page
asked for: the first page then comes out the same whichever page is asked.
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


def mix_readings(hits: Sequence[SearchHit], words: Sequence[str], pages: Sequence[int], size: int) -> list[SearchHit]:
    """``hits`` reordered so that the first ``size`` share their places among the
    readings ``words`` (each held by ``pages`` pages, most first): round by round, each
    reading's next best hit in the readings' order; then every other hit in rank order.

    A reading's best hits are those with it in their title, then the others, each in
    rank order: the OR of the readings ranks first the pages holding several of them,
    and a page about 旋转 that says 选择 once is not 选择's best page."""
    head = list(hits[:MIX_HEAD])
    in_title: list[list[int]] = [[] for _ in words]
    in_text: list[list[int]] = [[] for _ in words]
    for at, hit in enumerate(head):
        titled = set(readings_held(hit, words, title_only=True))
        for i in readings_held(hit, words):
            (in_title if i in titled else in_text)[i].append(at)
    by_reading = [a + b for a, b in zip(in_title, in_text, strict=True)]
    quota = places(pages, [len(b) for b in by_reading], size)
    chosen: list[int] = []
    taken: set[int] = set()
    for round_ in range(max(quota, default=0)):
        for i, ats in enumerate(by_reading):
            if round_ >= quota[i]:
                continue
            # The reading's best hit not already placed for another reading it holds.
            best = next((a for a in ats if a not in taken), None)
            if best is not None and len(chosen) < size:
                chosen.append(best)
                taken.add(best)
    return [head[at] for at in chosen] + [h for at, h in enumerate(hits) if at not in taken]
