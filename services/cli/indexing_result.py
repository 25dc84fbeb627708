"""What the indexing side of an embedded crawl reports when the crawl ends.

A module of its own so that the crawl process can read the index process's answer
without importing the indexer and ranker (rjieba, OpenCC, scipy) that build it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finished:
    """The pages the final PageRank run ranked, and the documents in the index after
    its last commit (counted by the writer, so the crawl need not open a reader)."""

    nodes: int
    documents: int
