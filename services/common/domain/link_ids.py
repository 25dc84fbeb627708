"""The link graph by integer ids: what both LinkGraph adapters store and stream.

Every URL and every anchor text gets a small integer id once, so a page's outlinks are
a packed array of 4-byte ids (little-endian uint32) rather than a list of URL strings:
about 4 bytes a link instead of the target's whole URL, and a reader turns a chunk of
pages into numpy arrays without building a Python object per link.

- targets of one source: distinct target ids, ascending.
- anchors of one source: distinct (target id, text id) pairs, ascending, only for
  non-empty anchor texts; most links share few texts ("下一页", a menu), so a text is
  stored once however many links carry it.

Both encodings are canonical (sorted, distinct), so equal links give equal bytes and an
adapter can tell "changed?" by comparing the stored value with the new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

ID = np.dtype("<u4")  # 4 billion URLs before ids run out: more than one cluster will crawl


@dataclass(frozen=True)
class EdgeChunk:
    """Some pages and their outlinks. ``sources`` lists every page of the chunk,
    linkless ones included; ``src``/``dst`` are its distinct edges."""

    sources: np.ndarray
    src: np.ndarray
    dst: np.ndarray


@dataclass(frozen=True)
class AnchorChunk:
    """Non-empty anchors of some pages: link ``src`` → ``dst`` carries text ``text``."""

    src: np.ndarray
    dst: np.ndarray
    text: np.ndarray


def pack_targets(target_ids: Iterable[int]) -> bytes:
    return np.unique(np.fromiter(target_ids, dtype=np.int64)).astype(ID).tobytes()


def pack_anchors(pairs: Iterable[tuple[int, int]]) -> bytes:
    """(target id, text id) pairs, flattened after sorting."""
    return np.asarray(sorted(set(pairs)), dtype=ID).reshape(-1).tobytes()


def edge_chunk(sources: np.ndarray, sizes: np.ndarray, blob: bytes) -> EdgeChunk:
    """Pages ``sources`` whose packed targets, ``sizes`` bytes each, follow one another
    in ``blob``: one numpy call for the whole chunk, none per page."""
    return EdgeChunk(sources, np.repeat(sources, sizes // ID.itemsize), np.frombuffer(blob, dtype=ID))


def anchor_chunk(sources: np.ndarray, sizes: np.ndarray, blob: bytes) -> AnchorChunk:
    """As ``edge_chunk``, for packed (target id, text id) pairs."""
    pairs = np.frombuffer(blob, dtype=ID).reshape(-1, 2)
    return AnchorChunk(np.repeat(sources, sizes // (2 * ID.itemsize)), pairs[:, 0], pairs[:, 1])


def from_rows(rows: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray, bytes]:
    """(source id, packed value) rows as the sources, sizes and blob the chunks take."""
    sources = np.fromiter((source for source, _ in rows), dtype=ID, count=len(rows))
    sizes = np.fromiter((len(packed) for _, packed in rows), dtype=np.int64, count=len(rows))
    return sources, sizes, b"".join(packed for _, packed in rows)


def distinct_links(links: Iterable[tuple[str, str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """Distinct targets, and distinct (target, anchor) pairs with non-empty anchors: what
    an adapter stores of a page's links."""
    pairs = {(target, anchor) for target, anchor in links}
    targets = sorted({target for target, _ in pairs})
    return targets, sorted(pair for pair in pairs if pair[1])
