"""What a search asks of an index and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass

from services.common.domain.query_tree import Node


@dataclass(frozen=True)
class SearchQuery:
    """A backend-neutral query: what to match and how to score it (a tree built by the
    search service's planner), and which page of the results to return."""

    tree: Node
    offset: int = 0
    limit: int = 10
    # "relevance": by score; "date": newest page first (IndexDoc.modified_at, else
    # fetched_at), equal dates by URL. Both match the same pages.
    sort: str = "relevance"


@dataclass(frozen=True)
class SearchHit:
    url: str
    site: str
    title: str
    headings: str
    body: str
    score: float
    pagerank: float
    content_hash: str = ""
    minhash: tuple[int, ...] = ()  # for folding near-duplicates among the results
    # Equal for hits of the same text, when a backend folds copies by a key of the content
    # hash instead of the hash itself (tantivy's fold_keys); None: compare content_hash.
    copy_key: str | None = None
    fetched_at: float = 0.0
    modified_at: float = 0.0  # 0.0: unknown (indexed before dates were kept)
    # A document's format, size and pages, and the anchor texts of the links to it (its
    # title when its own is not a real one: services/search/document_results.py).
    filetype: str = ""
    doc_size: int = 0
    doc_pages: int = 0
    anchors: str = ""


@dataclass(frozen=True)
class SearchHits:
    total: int
    hits: list[SearchHit]
