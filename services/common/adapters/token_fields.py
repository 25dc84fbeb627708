"""Token fields as both index backends store them: every field of every document
holds at least one token, so that the two backends compute the same BM25.

Lucene (and so Elasticsearch) counts, for a field's idf and average length, only the
documents with at least one token in that field; tantivy counts every document.
Headings, anchors and sub-words are empty on many pages, and there the two backends'
scores parted by several percent, enough to reorder close results between an
embedded and a cluster deployment of the same crawl. A marker token in every token
field makes the counts equal. It is a private-use character, which the analyser never
makes a token of, so no query can match it; it adds one to every field's length in
both backends alike.
"""

from __future__ import annotations

MARKER = "\ue000"
_PREFIX = MARKER + " "


def stored(tokens: str) -> str:
    """The field value to index for ``tokens`` (space-separated, maybe empty)."""
    return _PREFIX + tokens if tokens else MARKER


def read(value: str) -> str:
    """The tokens of a stored field value, marker removed."""
    if value.startswith(_PREFIX):
        return value[len(_PREFIX) :]
    return "" if value == MARKER else value
