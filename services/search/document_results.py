"""What a search result shows of a document (PDF, Office, WPS...) besides a page's fields.

Its format, size and page count; for a paged document (PDF) the page its snippet is on,
with a link that opens it there (``#page=N``, which the PDF viewers of browsers
follow); and its title by the rule of issue 35: the document's own title when it is a
real one (the extractor keeps no other: services/extractor/document_title.py), else the
anchor text of the links to it (the one most links agree on, which the ranker writes
first), else its first heading or line.
"""

from __future__ import annotations

from typing import Any

from services.common.domain.search_types import SearchHit
from services.extractor.extracted_text import PAGE_BREAK

# The ranker joins a document's distinct anchor texts with this (services/ranker/anchor_text.py).
_ANCHOR_SEPARATOR = " | "
# Formats whose PAGE_BREAKs are pages a viewer can open at (slides are not linkable).
_LINKED_PAGES = frozenset({"pdf"})


def display_title(hit: SearchHit) -> str:
    """The title a result shows: a page's own; a document's by the rule above."""
    if hit.title or not hit.filetype:
        return hit.title
    anchor = hit.anchors.split(_ANCHOR_SEPARATOR, 1)[0].strip() if hit.anchors else ""
    if anchor:
        return anchor
    return hit.headings.split("\n", 1)[0].strip()


def document_fields(hit: SearchHit, snippet_offset: int) -> dict[str, Any]:
    """The result's document fields: {} for an HTML page."""
    if not hit.filetype:
        return {}
    page = hit.body.count(PAGE_BREAK, 0, max(0, snippet_offset)) + 1
    fields: dict[str, Any] = {"filetype": hit.filetype, "size": hit.doc_size, "pages": hit.doc_pages}
    if hit.filetype in _LINKED_PAGES and hit.doc_pages > 1:
        fields["page"] = page
        fields["page_url"] = f"{hit.url}#page={page}"
    return fields
