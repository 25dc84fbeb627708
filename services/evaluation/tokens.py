"""The one place the evaluation takes its tokeniser from.

Baselines must see exactly the tokens the indexer makes, or a comparison measures
tokenisation instead of ranking; so every module here calls ``tokenize`` and nothing
else imports the analysis package's segmenter (words of folded text, as indexed).
"""

from __future__ import annotations

from services.common.analysis import grams, segment


def tokenize(text: str) -> list[str]:
    """Index-time tokens of ``text``: case-folded words in order, punctuation dropped."""
    return segment(text)


def bigrams(text: str) -> list[str]:
    """Index-time character bigrams of ``text`` (folded; Latin words whole): what a
    CJK bigram analyser with a script-conversion filter gives an Elasticsearch set-up."""
    return grams(text)
