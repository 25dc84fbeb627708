"""The one place the evaluation takes its tokeniser from.

Baselines must see exactly the tokens the indexer makes, or a comparison measures
tokenisation instead of ranking; so every module here calls ``tokenize`` and nothing
else imports the indexer's segmenter.
"""

from __future__ import annotations


def tokenize(text: str) -> list[str]:
    """Index-time tokens of ``text``: case-folded words in order, punctuation dropped."""
    from services.indexer.chinese_tokens import segment

    return segment(text)
