"""The packed encodings both link-graph adapters store, and the chunks they stream."""

from __future__ import annotations

import numpy as np

from services.common.adapters.redis.link_graph import _kept
from services.common.domain.link_ids import (
    anchor_chunk,
    edge_chunk,
    from_rows,
    pack_anchors,
    pack_targets,
)


def test_equal_links_pack_to_equal_bytes_whatever_their_order() -> None:
    assert pack_targets([5, 1, 5, 3]) == pack_targets([3, 1, 5]) == np.array([1, 3, 5], dtype="<u4").tobytes()
    assert pack_anchors([(2, 9), (1, 4), (2, 9)]) == pack_anchors([(1, 4), (2, 9)])


def test_a_chunk_pairs_each_target_with_its_page_linkless_pages_included() -> None:
    rows = [(7, pack_targets([1, 2])), (8, b""), (9, pack_targets([7]))]
    chunk = edge_chunk(*from_rows(rows))
    assert chunk.sources.tolist() == [7, 8, 9]
    assert list(zip(chunk.src.tolist(), chunk.dst.tolist(), strict=True)) == [(7, 1), (7, 2), (9, 7)]


def test_an_anchor_chunk_keeps_source_target_and_text_together() -> None:
    chunk = anchor_chunk(*from_rows([(3, pack_anchors([(4, 0), (5, 1)])), (6, pack_anchors([(3, 1)]))]))
    assert list(zip(chunk.src.tolist(), chunk.dst.tolist(), chunk.text.tolist(), strict=True)) == [(3, 4, 0), (3, 5, 1), (6, 3, 1)]


def test_a_page_scanned_twice_is_cut_out_of_the_chunk() -> None:
    sources, sizes, blob = from_rows([(1, pack_targets([2])), (2, pack_targets([3, 4])), (3, pack_targets([1]))])
    kept = _kept(sources, sizes, blob, np.array([True, False, True]))
    assert edge_chunk(*kept).dst.tolist() == [2, 1] and kept[0].tolist() == [1, 3]
