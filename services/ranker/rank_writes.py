"""Which pages' link fields a run must write: only those that changed materially.

A recomputation moves almost every rank a little (float noise, a few new pages), and
rewriting every document for that would load the index with updates that change no
search result. A page's fields are written when:

- it was never written by this process, or
- its anchor text changed (any change: it decides which words find the page), or
- its rank (PageRank × N, the ``rank`` feature) moved by more than ``RANK_CHANGE`` of
  the value last written.

``RANK_CHANGE`` is 1%. The index keeps the rank feature to 9 significant bits
(``feature_precision``: steps of 2^-8, 0.39%), so a smaller threshold would write moves
the index cannot represent, and pages sitting on a step boundary would be rewritten
on float noise every run. At 1% (about 2.5 steps) a written rank is never more than
1% + half a step off the exact one; the search score's PageRank term,
``w · rank / (rank + pivot)``, then moves by at most ``w/4 · 1%`` (0.004 at the
default weight 1.5), far below the BM25 differences that order results.
"""

from __future__ import annotations

import numpy as np

RANK_CHANGE = 0.01


def feature_precision_array(values: np.ndarray) -> np.ndarray:
    """``services.common.domain.messages.feature_precision`` of every value at once."""
    clean = np.where(np.isfinite(values) & (values > 0), values, 0.0)
    bits = clean.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF8000)
    return bits.view(np.float32).astype(np.float64)


class WrittenFields:
    """What this process last wrote per URL id: the rank and a hash of the anchor text.

    Two flat arrays indexed by URL id (16 bytes a page) rather than a dict of fields:
    at millions of pages a dict of dataclasses would outweigh the link matrix. A 64-bit
    hash stands for the anchor text; two different texts sharing one would hide one
    anchor change until the next, a chance of 2^-64 a comparison."""

    def __init__(self) -> None:
        self._rank = np.full(0, np.nan)  # NaN: never written
        self._anchors = np.zeros(0, dtype=np.int64)

    def material(self, ids: np.ndarray, rank: np.ndarray, anchors: np.ndarray) -> np.ndarray:
        """Mask of the pages whose fields must be written."""
        self._grow(ids)
        old_rank, old_anchors = self._rank[ids], self._anchors[ids]
        moved = ~(np.abs(rank - old_rank) <= RANK_CHANGE * old_rank)  # NaN (never written) compares False
        return moved | (old_anchors != anchors)

    def remember(self, ids: np.ndarray, rank: np.ndarray, anchors: np.ndarray) -> None:
        """Call once the index has committed the write."""
        self._grow(ids)
        self._rank[ids] = rank
        self._anchors[ids] = anchors

    def _grow(self, ids: np.ndarray) -> None:
        need = 1 + int(ids.max()) if len(ids) else 0
        if need > len(self._rank):
            extra = max(need, 2 * len(self._rank)) - len(self._rank)
            self._rank = np.concatenate([self._rank, np.full(extra, np.nan)])
            self._anchors = np.concatenate([self._anchors, np.zeros(extra, dtype=np.int64)])


def text_hash(text: str) -> int:
    """Stable within a process, which is all ``WrittenFields`` needs; 0 for no text."""
    return hash(text) if text else 0
