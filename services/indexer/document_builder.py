"""Turn a fetched page into the document the search index stores."""

from __future__ import annotations

import dataclasses

from services.common.analysis import analyze_as_text, concat_token_texts, link_page_grams, segment
from services.common.domain.document_url import document_url, site_of
from services.common.domain.documents import IndexDoc, page_date
from services.common.domain.messages import PageEvent
from services.common.domain.minhash import signature


def doc_url(event: PageEvent) -> str:
    """The URL a page is indexed under (services/common/domain/document_url.py)."""
    return document_url(event.url, event.canonical)


def build_document(event: PageEvent) -> IndexDoc:
    """Raw text for display plus the same text analysed for the index: words,
    sub-words and bigrams (``services/common/analysis``).

    Link fields (pagerank, rank, anchors) stay empty: the ranker owns them, and the
    index keeps the old values when this document replaces an earlier version.
    """
    url = doc_url(event)
    headings = "\n".join(h for h in event.headings if h)
    # A page of links is indexed by its own text; its display body keeps the links.
    title, heads = analyze_as_text(event.title), analyze_as_text(headings)
    body = analyze_as_text(event.own_text if event.link_page else event.body)
    return IndexDoc(
        url=url,
        site=site_of(url),
        title=event.title,
        headings=headings,
        body=event.body,
        content_hash=event.content_hash,
        title_tokens=title.words,
        headings_tokens=heads.words,
        body_tokens=body.words,
        subword_tokens=concat_token_texts(title.subwords, heads.subwords, body.subwords),
        title_grams=title.grams,
        body_grams=concat_token_texts(heads.grams, body.grams),
        link_grams=link_page_grams(event.body) if event.link_page else "",
        fetched_at=event.fetched_at,
        minhash=signature(body.words),
        own_text=event.own_text if event.link_page else None,
        modified_at=page_date(event.last_modified, event.fetched_at),
        store_key=event.store_key,
        filetype=event.document,
        doc_size=event.size if event.document else 0,
        doc_pages=event.pages,
    )


def reanalysed(doc: IndexDoc) -> IndexDoc:
    """``doc`` with every token field made again from its text by the analysis in use
    now (after the operator's user words changed), as ``build_document`` and the ranker
    would make them today; text, dates and link values are kept. A page of links is
    analysed by its own text where the index kept it (``own_text``)."""
    title, heads = analyze_as_text(doc.title), analyze_as_text(doc.headings)
    body = analyze_as_text(doc.own_text if doc.own_text is not None else doc.body)
    return dataclasses.replace(
        doc,
        title_tokens=title.words,
        headings_tokens=heads.words,
        body_tokens=body.words,
        subword_tokens=concat_token_texts(title.subwords, heads.subwords, body.subwords),
        title_grams=title.grams,
        body_grams=concat_token_texts(heads.grams, body.grams),
        link_grams=link_page_grams(doc.body) if doc.own_text is not None else "",
        anchors_tokens=" ".join(segment(doc.anchors)) if doc.anchors else "",
        modified_at=doc.modified_at or doc.fetched_at,
    )
