"""Every indexed document, read once through the SearchIndex port and tokenised
with the indexer's tokeniser: the common ground of the baselines and the query
generator."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from services.common.ports import SearchIndex
from services.evaluation.tokens import tokenize


@dataclass(frozen=True)
class CorpusDoc:
    url: str
    title: str
    text: str  # title, headings and body as stored: what a page "holds"
    body: str  # headings and body
    title_tokens: tuple[str, ...]
    body_tokens: tuple[str, ...]  # headings and body
    rank: float  # PageRank x N (1.0 = average page), the index's rank feature
    # The words the index holds for the page, run together (one line per field): what a
    # quoted phrase can find. "" when unknown.
    indexed: str = ""
    filetype: str = ""  # a document's format (pdf, docx...); "" for an HTML page
    link_text: str = ""  # the anchor text most links to it agree on


class CorpusReader(Protocol):
    """Reads the corpus again on each call, so that a caller can make several passes
    over a large index without holding it: ``tokens=False`` leaves the token fields
    empty (tokenising is most of the cost), ``only`` reads just those URLs."""

    def __call__(self, tokens: bool = True, only: Container[str] | None = None) -> Iterable[CorpusDoc]: ...


def load_corpus(index: SearchIndex, on_progress: Callable[[int, int], None] | None = None) -> list[CorpusDoc]:
    """Every committed document, in URL order (so runs are reproducible)."""
    return list(iter_corpus(index, on_progress))


def corpus_reader(index: SearchIndex, on_progress: Callable[[int, int], None] | None = None) -> CorpusReader:
    """A reader over ``index`` for ``generate``, which passes over it more than once."""

    def read(tokens: bool = True, only: Container[str] | None = None) -> Iterator[CorpusDoc]:
        return iter_corpus(index, on_progress, tokens, only)

    return read


def sequence_reader(docs: Sequence[CorpusDoc]) -> CorpusReader:
    """A reader over documents already in memory."""

    def read(tokens: bool = True, only: Container[str] | None = None) -> Iterator[CorpusDoc]:
        return (d for d in docs if only is None or d.url in only)

    return read


def iter_corpus(
    index: SearchIndex,
    on_progress: Callable[[int, int], None] | None = None,
    tokens: bool = True,
    only: Container[str] | None = None,
) -> Iterator[CorpusDoc]:
    """The committed documents in URL order, one at a time."""
    urls = sorted(index.urls())
    if only is not None:
        urls = [u for u in urls if u in only]
    for n, url in enumerate(urls, start=1):
        doc = index.get(url)
        if doc is not None:
            # A page of links is indexed by its own text, not its link texts (its body
            # shows them): what it "holds", for the queries and the baselines, is that.
            own = doc.body if doc.own_text is None else doc.own_text
            body = "\n".join(part for part in (doc.headings, own) if part)
            yield CorpusDoc(
                url=doc.url,
                title=doc.title,
                text="\n".join(part for part in (doc.title, body) if part),
                body=body,
                title_tokens=tuple(tokenize(doc.title)) if tokens else (),
                body_tokens=tuple(tokenize(body)) if tokens else (),
                rank=float(doc.rank),
                indexed="\n".join("".join(tokens.split()) for tokens in
                                  (doc.title_tokens, doc.headings_tokens, doc.body_tokens)),  # fmt: skip
                filetype=doc.filetype,
                link_text=doc.anchors.split(" | ", 1)[0].strip(),
            )
        if on_progress is not None and (n % 1000 == 0 or n == len(urls)):
            on_progress(n, len(urls))


def count_tokens(doc: CorpusDoc, df: dict[str, int]) -> None:
    """Add the document's distinct tokens, any field, to the document frequencies."""
    for tok in set(doc.title_tokens).union(doc.body_tokens):
        df[tok] = df.get(tok, 0) + 1
