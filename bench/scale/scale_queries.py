"""Queries for the million-page benchmark, drawn from its corpus with a fixed seed.

Drawn from the source texts (``bench.sites.scale_corpus``), not from the index, in the style
of ``bench.serving.search_bench.draw_queries``: a word, two or three words of one paragraph (a
topic), words of two unrelated paragraphs (which usually miss all-words and take the
any-word second pass), questions built around a paragraph's words, headlines and
poem titles, and exact phrases in quotes. Every query is distinct, so no answer comes
from the search service's result cache.
"""

from __future__ import annotations

import random
import re

from bench.serving.search_bench import _HAN_WORD, Query
from bench.sites.scale_corpus import Corpus
from services.common.analysis.stop_words import QUESTION_WORDS, STOP_WORDS
from services.common.analysis.words import segment

SEED = 20_251_126
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{6,}")  # where a quote is cut from

MIX = (  # share of each kind of query
    ("1 word", 0.25),
    ("2 words", 0.20),
    ("3 words", 0.10),
    ("2 words, 2 paragraphs", 0.05),
    ("question", 0.15),
    ("title", 0.15),
    ("quote", 0.10),
)
_QUESTIONS = (
    "{a}是什么", "什么是{a}", "如何{a}", "{a}怎么{b}", "为什么{a}{b}", "{a}的{b}有哪些", "{a}{b}吗",
)  # fmt: skip


def _paragraph(corpus: Corpus, rng: random.Random) -> str:
    if rng.random() < 0.6:
        return rng.choice(rng.choice(corpus.articles).paragraphs)
    poem = corpus.poem(rng.randrange(len(corpus.poem_records)))
    return "".join(poem.lines)


def _words(corpus: Corpus, rng: random.Random, n: int) -> list[str]:
    """``n`` distinct words of one paragraph (another paragraph if it has too few)."""
    while True:
        text = _paragraph(corpus, rng)
        words = sorted({w for w in segment(text) if _HAN_WORD.fullmatch(w) and w not in STOP_WORDS
                        and w not in QUESTION_WORDS})  # fmt: skip
        if len(words) >= n:
            return rng.sample(words, n)


def _one(corpus: Corpus, rng: random.Random, kind: str) -> str:
    if kind == "1 word":
        return _words(corpus, rng, 1)[0]
    if kind in ("2 words", "3 words"):
        return " ".join(_words(corpus, rng, int(kind[0])))
    if kind == "2 words, 2 paragraphs":
        return f"{_words(corpus, rng, 1)[0]} {_words(corpus, rng, 1)[0]}"
    if kind == "question":
        a, b = _words(corpus, rng, 2)
        return rng.choice(_QUESTIONS).format(a=a, b=b)
    if kind == "title":
        if rng.random() < 0.6:
            return rng.choice(rng.choice(corpus.articles).headlines)
        return corpus.poem(rng.randrange(len(corpus.poem_records))).title
    # quote: four to twelve characters of a paragraph, as the user copied them
    while True:
        runs = _HAN_RUN.findall(_paragraph(corpus, rng))
        if runs:
            run = rng.choice(runs)
            length = rng.randint(4, min(12, len(run)))
            start = rng.randrange(len(run) - length + 1)
            return f'"{run[start : start + length]}"'


def draw(corpus: Corpus, n: int, seed: int = SEED) -> list[Query]:
    """``n`` distinct queries in the proportions of ``MIX``, shuffled; the same ones for
    the same corpus and seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    queries: list[Query] = []
    for kind, share in MIX:
        wanted = round(n * share)
        while wanted:
            text = _one(corpus, rng, kind).strip()
            if text and text not in seen:
                seen.add(text)
                queries.append(Query(text, kind))
                wanted -= 1
    rng.shuffle(queries)
    return queries[:n]
