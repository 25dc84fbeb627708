"""Near-duplicate detection: MinHash signatures of word-bigram shingles, with LSH bands.

Why not SimHash over words: on the Debian manuals, unigram SimHash put different
chapters of one book 2 bits apart (frequent function words dominate long pages),
while copies that differ by a changing sidebar were up to 8 bits apart. MinHash
estimates the Jaccard similarity of the pages' word-bigram sets directly: copies of
one article score about 0.85 and more, distinct pages below 0.3.

Lookup: 64 values in 16 bands of 4. An index stores one term per band; a page whose
similarity is 0.8 shares at least one band with probability 1-(1-0.8^4)^16 > 0.999,
one at 0.3 with about 0.12, and candidates are then checked by their full signature.
"""

from __future__ import annotations

import hashlib
import operator
import random
import struct
import zlib
from collections.abc import Sequence

import numpy as np

HASHES = 64
BANDS = 16
ROWS = HASHES // BANDS
THRESHOLD = 0.7  # estimated Jaccard at or above which two pages are near-duplicates
MIN_TOKENS = 50  # fewer words make a signature too many unrelated short pages share
_PRIME = 4_294_967_311  # the first prime above 2**32
# Fixed seed: signatures must agree across processes, machines and releases.
_rng = random.Random(0x7A5_0F)
_A = np.array([_rng.randrange(1, 2**31) for _ in range(HASHES)], dtype=np.uint64)
_B = np.array([_rng.randrange(0, 2**31) for _ in range(HASHES)], dtype=np.uint64)


def _shingle_hashes(tokens: Sequence[str]) -> np.ndarray:
    """32-bit hashes of the distinct word bigrams: each distinct word hashed once with
    crc32 (stable across processes, unlike hash()), pairs combined arithmetically."""
    # dict.setdefault would hash every occurrence: its default is computed before the call.
    word_hash = {t: zlib.crc32(t.encode("utf-8")) for t in dict.fromkeys(tokens)}
    ids = np.fromiter(map(word_hash.__getitem__, tokens), dtype=np.uint64, count=len(tokens))
    pairs = (ids[:-1] * np.uint64(0x9E3779B1) + ids[1:]) & np.uint64(0xFFFFFFFF)
    return np.unique(pairs)


def signature(tokens: Sequence[str]) -> tuple[int, ...]:
    """64 MinHash values of the page's word bigrams; () when the page is too short."""
    if len(tokens) < MIN_TOKENS:
        return ()
    x = _shingle_hashes(tokens)
    # (a*x + b) mod p stays below 2**64: a, b < 2**31 and x < 2**32.
    values = (np.outer(_A, x) + _B[:, None]) % np.uint64(_PRIME)
    return tuple(int(v) for v in values.min(axis=1))


def similarity(a: Sequence[int], b: Sequence[int]) -> float:
    """Estimated Jaccard similarity: the share of positions where the minima agree."""
    if not a or not b:
        return 0.0
    return sum(map(operator.eq, a, b)) / len(a)


def band_keys(sig: Sequence[int]) -> list[tuple[int, ...]]:
    """The LSH bands as in-memory keys (band number, then its rows): what ``bands``
    hashes into index terms, without the hashing, for grouping a few hits at a time."""
    return [(band, *sig[band * ROWS : (band + 1) * ROWS]) for band in range(BANDS)] if sig else []


def bands(sig: Sequence[int]) -> list[str]:
    """The LSH band terms an index stores and looks up: "<band>:<hash of its rows>"."""
    return [
        f"{band}:{hashlib.blake2b(','.join(map(str, rows)).encode(), digest_size=6).hexdigest()}"
        for band, *rows in band_keys(sig)
    ]


def pack(sig: Sequence[int]) -> bytes:
    """Signature as bytes for storage (8 bytes a value)."""
    return struct.pack(f">{len(sig)}Q", *sig)


def unpack(raw: bytes) -> tuple[int, ...]:
    return struct.unpack(f">{len(raw) // 8}Q", raw[: len(raw) // 8 * 8])
