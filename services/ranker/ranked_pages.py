"""The link fields of one ranker run, by page position, kept until the next run.

Flat arrays rather than a dict of fields per URL: the ranker holds them between runs
(to answer ``documents.indexed`` at once), and at millions of pages a dict of
dataclasses would outweigh the link matrix. Fields are built only for the pages a
write needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from services.ranker.rank_writes import feature_precision_array, text_hash


class RankedPages:
    def __init__(self, node_ids: np.ndarray, pagerank: np.ndarray, anchor_field: np.ndarray, anchors: list[str]) -> None:
        self.node_ids = node_ids  # URL id of each page, ascending
        self.pagerank = pagerank  # sums to 1
        self.scaled = pagerank * len(pagerank)  # PageRank x N: 1.0 is the average page
        self.rank = feature_precision_array(self.scaled)  # as the index keeps it
        self.anchor_field = anchor_field  # index into ``anchors``, -1 for none
        self.anchors = anchors  # distinct anchor fields
        hashes = np.fromiter((text_hash(t) for t in anchors), dtype=np.int64, count=len(anchors))
        self.anchor_hashes = np.append(hashes, 0)[anchor_field]  # -1 picks the appended 0: no text

    @classmethod
    def empty(cls) -> RankedPages:
        return cls(np.empty(0, dtype=np.uint32), np.empty(0), np.empty(0, dtype=np.int32), [])

    def __len__(self) -> int:
        return len(self.node_ids)

    def positions(self, url_ids: Sequence[int | None]) -> np.ndarray:
        """Each URL id's page position, -1 where the id is no page of this run."""
        ids = np.array([-1 if i is None else i for i in url_ids], dtype=np.int64)
        if not len(self.node_ids):
            return np.full(len(ids), -1)
        at = np.minimum(np.searchsorted(self.node_ids, ids), len(self.node_ids) - 1)
        return np.where((ids >= 0) & (self.node_ids[at] == ids), at, -1)

    def anchor_text(self, position: int) -> str:
        field = int(self.anchor_field[position])
        return self.anchors[field] if field >= 0 else ""
