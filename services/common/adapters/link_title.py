"""The title fields of a document that has no title of its own: its links' text.

Issue 35's rule names a document by the anchor text of the links to it when its file
holds no real title (services/extractor/document_title.py), and a user searches by
that name: so such a document is indexed with that text in its title fields too, as
if the file had held it. Both index adapters apply this whenever they write a
document's link fields (the ranker gathers anchor texts after indexing). HTML pages
and documents with a title of their own are left as they are.
"""

from __future__ import annotations

import dataclasses

from services.common.analysis import analyze_as_text
from services.common.domain.documents import IndexDoc

ANCHOR_SEPARATOR = " | "  # services/ranker/anchor_text.py joins a page's anchor texts with it


def link_title(filetype: str, title: str, anchors: str) -> tuple[str, str] | None:
    """(title_tokens, title_grams) from the anchor text most links agree on (the
    ranker writes it first), for an untitled document; None for anything else."""
    if not filetype or title:
        return None
    first = anchors.split(ANCHOR_SEPARATOR, 1)[0].strip()
    if not first:
        return "", ""
    analysed = analyze_as_text(first)
    return analysed.words, analysed.grams


def with_link_title(doc: IndexDoc) -> IndexDoc:
    """``doc`` with its title fields from its links' text, when it is an untitled document."""
    fields = link_title(doc.filetype, doc.title, doc.anchors)
    if fields is None or (doc.title_tokens, doc.title_grams) == fields:
        return doc
    return dataclasses.replace(doc, title_tokens=fields[0], title_grams=fields[1])
