"""Known-item query sets for any crawled site, with the page itself as the answer.

For each page whose title no other page shares:

- ``title``: the title verbatim, as someone who saw the page would type it.
- ``title-words``: 2 or 3 of the title's rarest words (fewest documents hold them),
  shuffled, space-separated: a half-remembered title. Left out when another page's
  title yields the same words.
- ``body-quote``: 10 consecutive Han characters of its body that occur on no other
  page (title, headings or body): a pasted sentence fragment, which only that page can
  answer.

Everything random comes from one seeded generator and pages are taken in URL order,
so one seed over one index gives one file.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

from services.api.evaluation.corpus import CorpusDoc, document_frequency
from services.api.evaluation.judgments import Judgment

QUOTE_CHARS = 10
QUOTE_CANDIDATES = 6  # spans tried per page before giving up on a unique one
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HAN_RUN = re.compile(f"[{_HAN}]{{{QUOTE_CHARS},}}")
TYPES = ("title", "title-words", "body-quote")


def generate(docs: Sequence[CorpusDoc], seed: int = 1, max_pages: int = 0) -> list[Judgment]:
    """Judged known-item queries, grouped by type; ``max_pages`` > 0 samples that many
    pages (seeded) for large sites."""
    rng = random.Random(seed)
    titles = Counter(_norm_title(d.title) for d in docs)
    pages = [d for d in docs if _norm_title(d.title) and titles[_norm_title(d.title)] == 1]
    if max_pages and len(pages) > max_pages:
        pages = sorted(rng.sample(pages, max_pages), key=lambda d: d.url)
    df = document_frequency(docs)
    out = [Judgment("title", _norm_title(d.title), (d.url,)) for d in pages]
    out.extend(_title_word_queries(pages, df, rng))
    out.extend(_body_quotes(docs, pages, rng))
    return out


def _title_word_queries(pages: Sequence[CorpusDoc], df: dict[str, int], rng: random.Random) -> list[Judgment]:
    """One per page; a word set that two pages' titles both yield names neither page,
    so it is left out for both."""
    chosen = [(d, _title_words(d, df, rng)) for d in pages]
    uses = Counter(frozenset(words.split()) for _, words in chosen)  # the order is shuffled
    return [Judgment("title-words", w, (d.url,)) for d, w in chosen if w and uses[frozenset(w.split())] == 1]


def _norm_title(title: str) -> str:
    return " ".join(title.split())


def _title_words(doc: CorpusDoc, df: dict[str, int], rng: random.Random) -> str:
    words = list(dict.fromkeys(doc.title_tokens))
    if len(words) < 2:
        return ""
    k = min(len(words), rng.choice((2, 3)))
    # Rarest first; the title's order breaks ties so the choice does not hang on dict order.
    rarest = sorted(words, key=lambda w: (df.get(w, 0), words.index(w)))[:k]
    rng.shuffle(rarest)
    return " ".join(rarest)


def _body_quotes(all_docs: Sequence[CorpusDoc], pages: Sequence[CorpusDoc], rng: random.Random) -> list[Judgment]:
    candidates: dict[str, list[str]] = {}  # url -> spans to try, in order
    for d in pages:
        spans = _spans(d.body)
        if spans:
            candidates[d.url] = rng.sample(spans, min(QUOTE_CANDIDATES, len(spans)))
    holders = _holders({s for spans in candidates.values() for s in spans}, all_docs)
    out = []
    for d in pages:
        for span in candidates.get(d.url, ()):
            if holders.get(span) == {d.url}:
                out.append(Judgment("body-quote", span, (d.url,)))
                break
    return out


def _spans(text: str) -> list[str]:
    """Every distinct 10-character span inside a run of Han characters."""
    spans: dict[str, None] = {}
    for run in _HAN_RUN.findall(text):
        for i in range(len(run) - QUOTE_CHARS + 1):
            spans[run[i : i + QUOTE_CHARS]] = None
    return list(spans)


def _holders(spans: set[str], docs: Sequence[CorpusDoc]) -> dict[str, set[str]]:
    """For each candidate span, the URLs of the pages whose text holds it. One pass over
    every page's Han runs with set lookups: linear in the corpus, not corpus × spans."""
    holders: dict[str, set[str]] = {}
    for d in docs:
        for run in _HAN_RUN.findall(d.text):
            for i in range(len(run) - QUOTE_CHARS + 1):
                span = run[i : i + QUOTE_CHARS]
                if span in spans:
                    holders.setdefault(span, set()).add(d.url)
    return holders
