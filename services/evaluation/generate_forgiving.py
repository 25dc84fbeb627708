"""Query sets of what people type slightly wrong, for any crawled site (issue 36).

Each query has its page as the answer, as the known items of ``generate`` do, and is
made from a page whose title no other page shares:

- ``typo-title``: the title typed in simplified script (``typed``, below) with one Han character
  replaced by another of the same pinyin (tones ignored), the one the site itself uses
  most: what a pinyin input method offers first when the user picks the wrong
  candidate (数据头视表).
- ``typo-line``: a 10-character span of the body found on no other page, typed in
  simplified script with one character replaced that way (a line remembered, one
  character wrong).
- ``pinyin``: a title of 2 to 6 Han characters typed in toneless pinyin, run together
  (shujutoushibiao).
- ``regional``: 2 or 3 title words, one of them replaced by its name in the other
  region (打印 → 列印, 软件 → 软体; OpenCC's phrase tables), typed in simplified
  characters.
- ``quoted``: the body span of ``body-quote`` put in double quotes.
- ``quoted-across``: 10 Han characters copied across a break of the page's text (a
  heading into its paragraph, a comma, a space), found on no other page, in quotes.

Simplified script is typed with the mainland's words (``typed="words"``: 軟體 → 软件,
as pages are folded) or character by character as read (``typed="characters"``:
軟體 → 软体, what a reader of a Taiwan page types on a simplified-script input
method).

Everything random comes from the caller's seeded generator.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from services.common.analysis import fold
from services.common.analysis.fold import fold_chars_in_python
from services.common.analysis.han import HAN
from services.common.analysis.pinyin_keys import char_pinyin, pinyin_of
from services.common.analysis.regional import regional_variants
from services.evaluation.corpus import CorpusDoc, CorpusReader
from services.evaluation.judgments import Judgment

SPAN_CHARS = 10
FORGIVING_TYPES = ("typo-title", "typo-line", "pinyin", "regional", "quoted", "quoted-across")
_HAN_CHAR = re.compile(f"[{HAN}]")
_HAN_RUN = re.compile(f"[{HAN}]+")
# Han characters with at most this much else between them are one copied span: a
# newline between blocks, a comma, a space.
_BREAK = re.compile(rf"[^{HAN}0-9A-Za-z]{{1,3}}")
_PINYIN_TITLE = re.compile(f"[{HAN}]{{2,6}}")


class Homophones:
    """For each Han character, the characters of the same toneless pinyin the site uses,
    most used first."""

    def __init__(self, counts: Counter[str]) -> None:
        self._counts = counts
        by_sound: dict[str, list[str]] = {}
        for ch, _ in counts.most_common():
            sound = char_pinyin(ch)
            if sound:
                by_sound.setdefault(sound, []).append(ch)
        self._by_sound = by_sound

    def replacement(self, ch: str, rng: random.Random) -> str | None:
        """A different character of ``ch``'s sound: the site's most used one, or now and
        then its second (an input method's first candidates); None when there is none."""
        others = [c for c in self._by_sound.get(char_pinyin(ch), ()) if c != ch][:2]
        if not others:
            return None
        return others[0] if len(others) == 1 or rng.random() < 0.7 else others[1]


def char_counts(docs: Iterable[CorpusDoc]) -> Counter[str]:
    """How often the site uses each Han character, in simplified script (as typed)."""
    counts: Counter[str] = Counter()
    for d in docs:
        counts.update(_HAN_CHAR.findall(fold(d.text)))
    return counts


def simplified(text: str, typed: str = "words") -> str:
    """``text`` as a user of a simplified-script input method types it: its Han
    characters folded (軟 → 软), as pages are with Taiwan's words made the mainland's
    (軟體 → 软件), or with ``typed="characters"`` one by one (软体); everything else as
    it is."""
    folded = fold(text) if typed == "words" else fold_chars_in_python(text)[0]
    return "".join(f if _HAN_CHAR.match(c) else c for c, f in zip(text, folded, strict=True))


def with_one_typo(text: str, homophones: Homophones, rng: random.Random) -> str | None:
    """``text`` with one Han character (inside a run of three or more) replaced by a
    homophone; None when no character has one."""
    spots = [m.start() + i for m in _HAN_RUN.finditer(text) if len(m.group()) >= 3 for i in range(len(m.group()))]
    rng.shuffle(spots)
    for at in spots:
        other = homophones.replacement(text[at], rng)
        if other is not None:
            return text[:at] + other + text[at + 1 :]
    return None


def forgiving_queries(
    pages: Sequence[CorpusDoc],
    quotes: dict[str, str],
    read: CorpusReader,
    counts: Counter[str],
    rng: random.Random,
    typed: str = "words",
) -> list[Judgment]:
    """The queries above for ``pages`` (unique titles), given each page's unique body
    span (``quotes``: URL → span) and the site's character counts."""
    homophones = Homophones(counts)
    out: list[Judgment] = []
    for d in pages:
        title = simplified(d.title, typed)
        typo = with_one_typo(title, homophones, rng) if len(_HAN_CHAR.findall(d.title)) >= 4 else None
        if typo is not None and typo != title:
            out.append(Judgment("typo-title", " ".join(typo.split()), (d.url,)))
    for d in pages:
        span = quotes.get(d.url)
        typo = with_one_typo(simplified(span, typed), homophones, rng) if span else None
        if typo is not None:
            out.append(Judgment("typo-line", typo, (d.url,)))
    out.extend(_pinyin_titles(pages))
    out.extend(_regional_words(pages, rng))
    out.extend(Judgment("quoted", f'"{quotes[d.url]}"', (d.url,)) for d in pages if d.url in quotes)
    out.extend(_quotes_across(read, pages, rng))
    return out


def _pinyin_titles(pages: Sequence[CorpusDoc]) -> list[Judgment]:
    """Titles of 2-6 Han characters and nothing else, in pinyin; a spelling two titles
    share names neither page and is left out."""
    spelled = [(d, pinyin_of(d.title.strip())) for d in pages if _PINYIN_TITLE.fullmatch(d.title.strip())]
    uses = Counter(s for _, s in spelled)
    return [Judgment("pinyin", s, (d.url,)) for d, s in spelled if s and uses[s] == 1]


def _regional_words(pages: Sequence[CorpusDoc], rng: random.Random) -> list[Judgment]:
    seen: Counter[str] = Counter()
    chosen: list[tuple[CorpusDoc, str]] = []
    for d in pages:
        words = [w for w in dict.fromkeys(d.title_tokens) if _HAN_CHAR.search(w)]
        swaps = [(i, v) for i, w in enumerate(words) for v in regional_variants(w)[:1]]
        if not swaps or len(words) < 1:
            continue
        i, variant = rng.choice(swaps)
        others = [w for j, w in enumerate(words) if j != i]
        rng.shuffle(others)
        query = " ".join([variant, *others[: rng.choice((1, 2))]])
        chosen.append((d, query))
        seen[query] += 1
    return [Judgment("regional", q, (d.url,)) for d, q in chosen if seen[q] == 1]


def _across_spans(text: str) -> list[str]:
    """10 Han characters that run across a break of ``text`` (as the reader copies
    them: the break left out), each once."""
    spans: dict[str, None] = {}
    lines = _BREAK.split(text)
    for i in range(len(lines) - 1):
        left, right = _HAN_RUN.findall(lines[i])[-1:], _HAN_RUN.findall(lines[i + 1])[:1]
        if not left or not right or not _HAN_RUN.fullmatch(left[0]) or not lines[i].endswith(left[0]):
            continue
        if not lines[i + 1].startswith(right[0]):
            continue
        a, b = left[0], right[0]
        for cut in range(max(1, SPAN_CHARS - len(b)), min(len(a), SPAN_CHARS - 1) + 1):
            span = a[len(a) - cut :] + b[: SPAN_CHARS - cut]
            if len(span) == SPAN_CHARS:
                spans[span] = None
    return list(spans)


def _quotes_across(read: CorpusReader, pages: Sequence[CorpusDoc], rng: random.Random) -> list[Judgment]:
    candidates: dict[str, list[str]] = {}
    for d in pages:
        spans = _across_spans(d.body)
        if spans:
            candidates[d.url] = rng.sample(spans, min(6, len(spans)))
    wanted = {s for spans in candidates.values() for s in spans}
    holders: dict[str, set[str]] = {}
    for doc in read(tokens=False):
        # The page's Han characters with everything between them left out: a span is
        # anywhere a reader could copy it from, across breaks or not.
        joined = "".join(_HAN_CHAR.findall(doc.text))
        for i in range(len(joined) - SPAN_CHARS + 1):
            span = joined[i : i + SPAN_CHARS]
            if span in wanted:
                holders.setdefault(span, set()).add(doc.url)
    out = []
    for d in pages:
        for span in candidates.get(d.url, ()):
            if holders.get(span) == {d.url}:
                out.append(Judgment("quoted-across", f'"{span}"', (d.url,)))
                break
    return out
