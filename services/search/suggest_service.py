"""Search-box suggestions from the titles and headings of indexed pages.

What a user has typed so far is matched as a phrase whose last token may be
unfinished (``设置页`` → 设置页面格式, ``vlook`` → VLOOKUP 函数), over the bigram
fields, so partial Chinese words and traditional script work as in search. The
suggestions are the titles and headings of the best-ranked matching pages that hold
the typed text, in their own script, each once.
"""

from __future__ import annotations

from services.common.analysis import fold, grams
from services.common.domain.query_tree import Bool, Phrase
from services.common.domain.search_types import SearchQuery
from services.common.ports import SearchIndex
from services.search.query_plan import BODY_GRAMS, TITLE_GRAMS

MAX_PREFIX_CHARS = 100
SUGGESTIONS = 8
_CANDIDATES = 40  # pages read for suggestions: titles and headings of the best ones
_MAX_SUGGESTION_CHARS = 80


class SuggestService:
    def __init__(self, index: SearchIndex) -> None:
        self._index = index

    def suggest(self, typed: str, limit: int = SUGGESTIONS) -> list[str]:
        """Up to ``limit`` titles and headings that contain what was typed; [] when
        nothing was typed that could match."""
        typed = typed.strip()[:MAX_PREFIX_CHARS]
        values = tuple(grams(typed))
        if not values:
            return []
        tree = Bool(
            should=(Phrase(TITLE_GRAMS, values, 3.0, prefix=True), Phrase(BODY_GRAMS, values, prefix=True)),
            minimum_should_match=1,
        )
        hits = self._index.search(SearchQuery(tree=tree, limit=_CANDIDATES)).hits
        wanted = "".join(fold(typed).split())
        seen: set[str] = set()
        out: list[str] = []
        for hit in hits:
            for text in (hit.title, *hit.headings.split("\n")):
                text = " ".join(text.split())
                key = "".join(fold(text).split())
                if wanted in key and key not in seen and len(text) <= _MAX_SUGGESTION_CHARS:
                    seen.add(key)
                    out.append(text)
        return sorted(out, key=lambda t: (not "".join(fold(t).split()).startswith(wanted)))[:limit]
