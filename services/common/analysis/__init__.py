"""Text analysis, one module for everything that turns text into tokens.

The indexer, the ranker (anchor text), the search service and both index adapters
use it, and must: a query finds a page only when both were analysed alike. Text is
folded (width, case, traditional → simplified, length kept so offsets stay valid in
the original), then yields three token streams: words (jieba precise mode), sub-words
(the parts search mode adds) and character bigrams (exact matching whatever the
segmenter does).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.analysis.fold import fold
from services.common.analysis.grams import grams
from services.common.analysis.streams import joined_streams_of_folded, streams_of_folded
from services.common.analysis.words import (
    MAX_TOKEN_CHARS,
    initialise,
    segment,
    segment_with_subwords,
    subwords,
    tokenize_with_offsets,
)

__all__ = [
    "MAX_TOKEN_CHARS",
    "Analysis",
    "TokenText",
    "analyze",
    "analyze_as_text",
    "concat_token_texts",
    "document_grams",
    "fold",
    "grams",
    "initialise",
    "link_page_grams",
    "segment",
    "segment_with_subwords",
    "subwords",
    "tokenize_with_offsets",
]


@dataclass(frozen=True)
class Analysis:
    """The token streams of one text."""

    words: list[str]
    subwords: list[str]
    grams: list[str]


def document_grams(title: str, headings: str, body: str) -> tuple[list[str], list[str]]:
    """The bigram fields of a document: (title, headings then body). An index that does
    not store them rebuilds them with this, exactly as the indexer built them."""
    return grams(title), grams(headings) + grams(body)


def link_page_grams(body: str) -> str:
    """A page of links' ``IndexDoc.link_grams``: the bigrams of all the text it shows,
    its link texts too (its other fields are made from its own text alone)."""
    return " ".join(grams(body))


def analyze(text: str) -> Analysis:
    """Words, sub-words and bigrams of ``text``, folding it once and finding its runs once."""
    initialise()
    words, extras, bigrams = streams_of_folded(fold(text))
    return Analysis(words, extras, bigrams)


@dataclass(frozen=True)
class TokenText:
    """The token streams of one text, each as its tokens separated by single spaces
    (a token never holds one): the form the index's fields are given."""

    words: str
    subwords: str
    grams: str


def analyze_as_text(text: str) -> TokenText:
    """``analyze`` with each stream as text: the indexer's form, made without a list."""
    initialise()
    return TokenText(*joined_streams_of_folded(fold(text)))


def concat_token_texts(*texts: str) -> str:
    """Several ``TokenText`` fields as one stream, as concatenating their token lists
    and joining would make it: an empty one adds no space."""
    return " ".join(text for text in texts if text)
