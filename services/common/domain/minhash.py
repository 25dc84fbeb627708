"""Near-duplicate detection: MinHash signatures of word-bigram shingles, with LSH bands.

Why not SimHash over words: on the Debian manuals, unigram SimHash put different
chapters of one book 2 bits apart (frequent function words dominate long pages),
while copies that differ by a changing sidebar were up to 8 bits apart. MinHash
estimates the Jaccard similarity of the pages' word-bigram sets directly: copies of
one article score about 0.85 and more, distinct pages below 0.3.

Lookup: 64 values in 16 bands of 4. An index stores one term per band; a page whose
similarity is 0.8 shares at least one band with probability 1-(1-0.8^4)^16 > 0.999,
one at 0.3 with about 0.12, and candidates are then checked by their full signature.

The values come from rensa's ``RMinHash`` (Rust), fed the page's word pairs as strings,
or, where Tansuo's C module was built, the hashes rensa would give those strings
(``_native.c``, ``pair_hashes``), since making a string of each pair costs more than
rensa's own work (docs/benchmarks.md, 'Eighth round (issue 12)'). rensa is several times
faster than NumPy hash functions over crc32 pair hashes (the formula up to commit
c94cda3) at the same accuracy (docs/benchmarks.md, 'Fourth round (issue 12)').
Signatures are stored, so rensa is pinned and tests/unit/test_minhash.py pins values it
computes. Signatures made by the old formula do not match new ones: such pages fold with
their copies again once either is indexed anew (docs/operations.md, "Duplicates").
"""

from __future__ import annotations

import functools
import hashlib
import operator
import struct
from collections.abc import Sequence
from itertools import pairwise

import rensa

from services.common.runtime.native_code import native

HASHES = 64
BANDS = 16
ROWS = HASHES // BANDS
THRESHOLD = 0.7  # estimated Jaccard at or above which two pages are near-duplicates
MIN_TOKENS = 50  # fewer words make a signature too many unrelated short pages share
# Fixed seed: signatures must agree across processes, machines and releases.
SEED = 0x7A5_0F


def signature(tokens: Sequence[str] | str) -> tuple[int, ...]:
    """64 MinHash values of the page's word pairs; () when the page is too short.

    ``tokens``: the words, or their text with single spaces between (an index field's
    form). A token never holds a space (``services/common/analysis``), so "a b" names
    one pair.
    """
    text = tokens if isinstance(tokens, str) else " ".join(tokens)
    if (text.count(" ") + 1 if text else 0) < MIN_TOKENS:
        return ()
    hashes = native.pair_hashes(text) if native is not None else None
    if hashes is not None:
        # The same values as below: these are the hashes rensa gives the pair strings.
        rows = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
            memoryview(hashes).cast("Q"), (0, len(hashes) // 8), HASHES, SEED
        )
        return tuple(rows.to_rows()[0])
    sketch = rensa.RMinHash(HASHES, SEED)
    sketch.update(shingles(text.split(" ")))
    return tuple(sketch.digest())


def shingles(tokens: Sequence[str]) -> list[str]:
    """Each word with the next, space-joined: "a b", "b c", …"""
    return list(map(" ".join, pairwise(tokens)))


def similarity(a: Sequence[int], b: Sequence[int]) -> float:
    """Estimated Jaccard similarity: the share of positions where the minima agree."""
    if not a or not b:
        return 0.0
    return sum(map(operator.eq, a, b)) / len(a)


def band_rows(sig: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Each band's rows, band by band: what ``bands`` hashes into index terms, and,
    unhashed, what a search groups its thirty-odd hits by to fold them."""
    return [sig[i : i + ROWS] for i in range(0, len(sig), ROWS)] if sig else []


def bands(sig: Sequence[int]) -> list[str]:
    """The LSH band terms an index stores and looks up: "<band>:<hash of its rows>"."""
    return list(_bands(tuple(sig)))


@functools.lru_cache(maxsize=4096)
def _bands(sig: tuple[int, ...]) -> tuple[str, ...]:
    """Remembered: a page is written again whenever PageRank moves its rank (tantivy
    adds the whole document anew), and hashing its bands anew each time is a visible share
    of the index process (docs/benchmarks.md, 'Fifth round (issue 12)').
    The key is mostly the document's own signature tuple: some 3.5 KB an entry."""
    return tuple(
        f"{band}:{hashlib.blake2b(','.join(map(str, rows)).encode(), digest_size=6).hexdigest()}"
        for band, rows in enumerate(band_rows(sig))
    )


def pack(sig: Sequence[int]) -> bytes:
    """Signature as bytes for storage (8 bytes a value)."""
    return struct.pack(f">{len(sig)}Q", *sig)


def unpack(raw: bytes) -> tuple[int, ...]:
    return struct.unpack(f">{len(raw) // 8}Q", raw[: len(raw) // 8 * 8])
