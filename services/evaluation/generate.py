"""Known-item query sets for any crawled site, with the page itself as the answer.

For each page whose title no other page shares:

- ``title``: the title verbatim, as someone who saw the page would type it.
- ``title-words``: 2 or 3 of the title's rarest words (fewest documents hold them),
  shuffled, space-separated: a half-remembered title. Left out when another page's
  title yields the same words.
- ``body-quote``: 10 consecutive Han characters of its body that occur on no other
  page (title, headings or body): a pasted sentence fragment, which only that page can
  answer. Only text the index holds is quoted: a page of links is indexed by its own
  text, so its link texts (other pages' titles) are never quoted for it, and a span
  is kept only if its words stand in the page's indexed words in that order.
- ``link-text``: for a document (PDF, Office...), the text of the links to it, when no
  other document is linked by the same text: the title a user knows a document by, which
  is often not in the file at all. Documents take part in ``body-quote`` too, and in
  ``title`` and ``title-words`` when they have a real title of their own.

With ``types``, the query types of ``generate_forgiving`` too (a title or line with
one wrong character, pinyin, the other region's word, quoted spans).

Everything random comes from one seeded generator and pages are taken in URL order,
so one seed over one index gives one file.

The index is read in three passes, none of which holds it: titles and document
frequencies of every page, then the chosen pages, then every page's text for the
quotes' uniqueness, so memory does not grow with the index (a million pages held at
once would take over 20 GB).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from services.evaluation.corpus import (
    CorpusDoc,
    CorpusReader,
    count_tokens,
    sequence_reader,
)
from services.evaluation.generate_forgiving import FORGIVING_TYPES, char_counts, forgiving_queries
from services.evaluation.judgments import Judgment
from services.evaluation.tokens import tokenize

QUOTE_CHARS = 10
QUOTE_CANDIDATES = 6  # spans tried per page before giving up on a unique one
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HAN_RUN = re.compile(f"[{_HAN}]{{{QUOTE_CHARS},}}")
TYPES = ("title", "title-words", "body-quote", "link-text")
ALL_TYPES = TYPES + FORGIVING_TYPES


def generate(
    docs: Sequence[CorpusDoc] | CorpusReader,
    seed: int = 1,
    max_pages: int = 0,
    types: Sequence[str] = TYPES,
    typed: str = "words",
) -> list[Judgment]:
    """Judged known-item queries of ``types`` (``ALL_TYPES``), grouped by type;
    ``max_pages`` > 0 samples that many pages (seeded) for large sites; ``typed``: how
    the typo types are typed in simplified script (``generate_forgiving``)."""
    unknown = set(types) - set(ALL_TYPES)
    if unknown:
        raise ValueError(f"unknown query type(s): {', '.join(sorted(unknown))}; known: {', '.join(ALL_TYPES)}")
    read = sequence_reader(docs) if isinstance(docs, Sequence) else docs
    rng = random.Random(seed)
    titles: Counter[str] = Counter()
    df: dict[str, int] = {}
    listed: list[tuple[str, str]] = []  # (URL, title) of every page, in reading order
    links: Counter[str] = Counter()
    linked: list[tuple[str, str]] = []  # (URL, link text) of every document
    forgiving = [t for t in types if t in FORGIVING_TYPES]
    chars: Counter[str] = Counter()
    for d in read():
        title = _norm_title(d.title)
        titles[title] += 1
        listed.append((d.url, title))
        count_tokens(d, df)
        if d.filetype and d.link_text:
            text = _norm_title(d.link_text)
            links[text] += 1
            linked.append((d.url, text))
        if forgiving:
            chars.update(char_counts([d]))
    documents = {url: text for url, text in linked if links[text] == 1}
    urls = [url for url, title in listed if (title and titles[title] == 1) or url in documents]
    sampled = bool(max_pages) and len(urls) > max_pages
    if sampled:
        urls = rng.sample(urls, max_pages)
    del listed
    pages = list(read(only=set(urls)))
    if sampled:
        pages.sort(key=lambda d: d.url)
    titled = [d for d in pages if d.title and titles[_norm_title(d.title)] == 1]
    out = [Judgment("title", _norm_title(d.title), (d.url,)) for d in titled]
    out.extend(_title_word_queries(titled, df, rng))
    quotes = _body_quotes(read, pages, rng)
    out.extend(quotes)
    out.extend(Judgment("link-text", documents[d.url], (d.url,)) for d in pages if d.url in documents)
    if forgiving:
        spans = {j.relevant[0]: j.query for j in quotes}
        out.extend(forgiving_queries(titled, spans, read, chars, rng, typed))
    return [j for j in out if j.qtype in types]


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


def _body_quotes(read: CorpusReader, pages: Sequence[CorpusDoc], rng: random.Random) -> list[Judgment]:
    candidates: dict[str, list[str]] = {}  # url -> spans to try, in order
    for d in pages:
        spans = [s for s in _spans(d.body) if _indexed(s, d)]
        if spans:
            candidates[d.url] = rng.sample(spans, min(QUOTE_CANDIDATES, len(spans)))
    holders = _holders({s for spans in candidates.values() for s in spans}, read(tokens=False))
    out = []
    for d in pages:
        for span in candidates.get(d.url, ()):
            if holders.get(span) == {d.url}:
                out.append(Judgment("body-quote", span, (d.url,)))
                break
    return out


def _indexed(span: str, doc: CorpusDoc) -> bool:
    """Whether the index holds ``span``'s words in a row for ``doc`` (unknown: yes)."""
    return not doc.indexed or "".join(tokenize(span)) in doc.indexed


def _spans(text: str) -> list[str]:
    """Every distinct 10-character span inside a run of Han characters."""
    spans: dict[str, None] = {}
    for run in _HAN_RUN.findall(text):
        for i in range(len(run) - QUOTE_CHARS + 1):
            spans[run[i : i + QUOTE_CHARS]] = None
    return list(spans)


def _holders(spans: set[str], docs: Iterable[CorpusDoc]) -> dict[str, set[str]]:
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
