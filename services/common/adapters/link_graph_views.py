"""The link graph by URL, built from its id chunks: for tests, tools and small graphs.

The ranker reads ids in chunks and never needs these; they exist so that a person (or a
test) can ask "which pages link where, with what text?" without knowing the encoding.
Both adapters inherit them, so the answers are the same whichever backend holds the graph.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from services.common.domain.link_ids import AnchorChunk, EdgeChunk


class LinkGraphViews:
    """Mixed into an adapter that has ``edge_chunks``, ``anchor_chunks``, ``urls`` and ``texts``."""

    def edge_chunks(self) -> Iterator[EdgeChunk]:
        raise NotImplementedError

    def anchor_chunks(self) -> Iterator[AnchorChunk]:
        raise NotImplementedError

    def urls(self, ids: Sequence[int]) -> list[str]:
        raise NotImplementedError

    def texts(self, ids: Sequence[int]) -> list[str]:
        raise NotImplementedError

    def nodes(self) -> list[str]:
        """Every source page, in URL order."""
        ids = [int(i) for chunk in self.edge_chunks() for i in chunk.sources]
        return sorted(self.urls(ids))

    def edges(self) -> list[tuple[str, str]]:
        """Every distinct (source, target)."""
        chunks = list(self.edge_chunks())
        src = np.concatenate([c.src for c in chunks]) if chunks else np.empty(0, dtype=np.uint32)
        dst = np.concatenate([c.dst for c in chunks]) if chunks else np.empty(0, dtype=np.uint32)
        return list(zip(self._urls_of(src), self._urls_of(dst), strict=True))

    def anchors(self) -> dict[str, list[str]]:
        """Non-empty anchor texts per target, one entry per linking (source, text)."""
        result: dict[str, list[str]] = {}
        for chunk in self.anchor_chunks():
            texts = self.texts([int(i) for i in chunk.text])
            for target, text in zip(self._urls_of(chunk.dst), texts, strict=True):
                result.setdefault(target, []).append(text)
        return result

    def _urls_of(self, ids: np.ndarray) -> list[str]:
        return self.urls([int(i) for i in ids])
