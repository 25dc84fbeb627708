"""Every indexed document, read once through the SearchIndex port and tokenised
with the indexer's tokeniser: the common ground of the baselines and the query
generator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.api.evaluation.tokens import tokenize
from services.common.ports import SearchIndex


@dataclass(frozen=True)
class CorpusDoc:
    url: str
    title: str
    text: str  # title, headings and body as stored: what a page "holds"
    body: str  # headings and body
    title_tokens: tuple[str, ...]
    body_tokens: tuple[str, ...]  # headings and body
    rank: float  # PageRank x N (1.0 = average page), the index's rank feature


def load_corpus(index: SearchIndex, on_progress: Callable[[int, int], None] | None = None) -> list[CorpusDoc]:
    """Every committed document, in URL order (so runs are reproducible)."""
    urls = sorted(index.urls())
    docs: list[CorpusDoc] = []
    for n, url in enumerate(urls, start=1):
        doc = index.get(url)
        if doc is not None:
            body = "\n".join(part for part in (doc.headings, doc.body) if part)
            docs.append(
                CorpusDoc(
                    url=doc.url,
                    title=doc.title,
                    text="\n".join(part for part in (doc.title, body) if part),
                    body=body,
                    title_tokens=tuple(tokenize(doc.title)),
                    body_tokens=tuple(tokenize(body)),
                    rank=float(doc.rank),
                )
            )
        if on_progress is not None and (n % 1000 == 0 or n == len(urls)):
            on_progress(n, len(urls))
    return docs


def document_frequency(docs: Sequence[CorpusDoc]) -> dict[str, int]:
    """Number of documents holding each token in any field."""
    df: dict[str, int] = {}
    for d in docs:
        for tok in set(d.title_tokens).union(d.body_tokens):
            df[tok] = df.get(tok, 0) + 1
    return df
