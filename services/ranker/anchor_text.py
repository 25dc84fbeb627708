"""Inbound anchor text of each page: which texts it keeps, in which order.

A page's field is its distinct inbound anchor texts, the most common first (ties in
text order, for stable output), joined until ``MAX_ANCHORS_CHARS``: the texts most
pages agree on describe the target best, so they are the ones worth keeping when space
runs out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

ANCHOR_SEPARATOR = " | "
# One anchor is a link's text; longer "anchors" are whole paragraphs wrapped in <a>.
MAX_ANCHOR_CHARS = 200
# Enough for dozens of distinct anchors; a page linked from every page of a site
# (the home page) would otherwise carry the same menu text thousands of times.
MAX_ANCHORS_CHARS = 2000


def clean_anchor(text: str) -> str:
    """Whitespace collapsed and length capped, so one anchor text has one spelling."""
    return " ".join(text.split())[:MAX_ANCHOR_CHARS]


def join_anchors(texts: Sequence[str]) -> str:
    """One page's field from its anchor texts, one entry per linking (source, text)."""
    counts = Counter(t for t in texts if t)
    return _join_ordered(sorted(counts, key=lambda t: (-counts[t], t)))


def _join_ordered(ordered: Iterable[str]) -> str:
    kept: list[str] = []
    size = 0
    for text in ordered:
        extra = len(text) + (len(ANCHOR_SEPARATOR) if kept else 0)
        if size + extra > MAX_ANCHORS_CHARS:
            break
        kept.append(text)
        size += extra
    return ANCHOR_SEPARATOR.join(kept)


def joined_by_node(n: int, node: np.ndarray, text: np.ndarray, texts: Mapping[int, str]) -> tuple[np.ndarray, list[str]]:
    """``join_anchors`` for every node at once, from one (node position, text id) row
    per anchor: an index per node into a list of distinct fields (-1: no anchor text).

    Counting and ordering run in numpy; Python only joins, once per distinct ordering
    of text ids, which on a real site repeats a lot (menus, "下一页")."""
    where = np.full(n, -1, dtype=np.int32)
    if len(node) == 0:
        return where, []
    keys, counts = np.unique((node.astype(np.uint64) << np.uint64(32)) | text.astype(np.uint64), return_counts=True)
    nodes, ids = (keys >> np.uint64(32)).astype(np.int64), (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
    distinct = np.unique(ids)
    alphabetical = np.empty(len(distinct), dtype=np.int64)
    alphabetical[sorted(range(len(distinct)), key=lambda i: texts[int(distinct[i])])] = np.arange(len(distinct))
    order = np.lexsort((alphabetical[np.searchsorted(distinct, ids)], -counts, nodes))
    nodes, ids = nodes[order], ids[order]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
    ends = np.r_[starts[1:], len(nodes)]
    fields: dict[tuple[int, ...], int] = {}
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        ordered = tuple(ids[start:end].tolist())
        if ordered not in fields:
            fields[ordered] = len(fields)
        where[nodes[start]] = fields[ordered]
    joined = [_join_ordered(texts[i] for i in ordered) for ordered in fields]
    return where, joined
