"""What a search folds and spreads its results by, kept in tantivy fast fields.

A search reads its whole result window (some thirty hits for the first page) to fold
near-duplicates and to keep one site from crowding the page, yet shows ten. Reading
a hit from tantivy's document store decompresses a block and converts every stored
field (docs/serving.md, "Where a request's time goes"). Elasticsearch's field
collapsing reads its key from doc values for the same reason. So each document also
carries, in fast fields:

- ``fold_site``: a 64-bit hash of its site, for the per-site limit;
- ``fold_copy``: a 64-bit hash of its content hash, for exact copies;
- ``fold_band_0`` … ``fold_band_3``: 16 bits of each of its 16 MinHash band terms
  (``minhash.bands``), four to a field; none when its signature is empty.

Two pages can fold only if they share a band (``result_grouping``). So a hit whose
band hashes no other hit of the window shares cannot fold or lead a fold, and needs
no signature; the few that share one read theirs from the stored document, as they
are mostly shown anyway, as a lead or as its copy. A false share (1 in 65,536 a band)
only costs such a read. Columns, not the whole signature: 34 column reads (the
signature, two values to a column) cost as much as the stored reads they would save
(docs/serving.md, "Where a request's time goes").
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import tantivy

from services.common.domain import minhash

BAND_FIELDS = tuple(f"fold_band_{i}" for i in range(minhash.BANDS // 4))
FIELDS = ("fold_site", "fold_copy", *BAND_FIELDS)
_BAND_BITS = 16
_BAND_MASK = (1 << _BAND_BITS) - 1
_SHIFTS = (48, 32, 16, 0)


@dataclass(frozen=True)
class FoldKeys:
    site: int
    copy: str  # "" when the page has no content hash
    shares_a_band: bool  # with another document of the same read


def add_schema_fields(sb: tantivy.SchemaBuilder) -> None:
    for name in FIELDS:
        sb.add_unsigned_field(name, fast=True)


def key(text: str) -> int:
    """A stable 64-bit key of ``text``: the same in every process and release."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def band_hashes(signature: Sequence[int]) -> tuple[int, ...]:
    """16 bits of each band term the index stores for this signature."""
    return tuple(int(term.partition(":")[2][:4], 16) for term in minhash.bands(signature))


def pack(bands: Sequence[int]) -> list[int]:
    """16 band hashes as the four ``fold_band_*`` values, the first band highest."""
    return [sum(b << shift for b, shift in zip(bands[i : i + 4], _SHIFTS, strict=False)) for i in range(0, len(bands), 4)]


def add_to(doc: tantivy.Document, site: str, content_hash: str, signature: Sequence[int]) -> None:
    doc.add_unsigned("fold_site", key(site))
    doc.add_unsigned("fold_copy", key(content_hash) if content_hash else 0)
    bands = band_hashes(signature)
    if len(bands) == minhash.BANDS:
        for name, value in zip(BAND_FIELDS, pack(bands), strict=True):
            doc.add_unsigned(name, value)


def read(searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress]) -> list[FoldKeys]:
    """The fold keys of these documents, in their order, from the columns alone."""
    # Unsigned fast fields: tantivy gives ints (None where a document has no value).
    sites = cast(list[int | None], searcher.fast_field_values("fold_site", addresses))
    copies = cast(list[int | None], searcher.fast_field_values("fold_copy", addresses))
    bands = [cast(list[int | None], searcher.fast_field_values(name, addresses)) for name in BAND_FIELDS]
    shares = sharing_a_band(bands)
    return [
        FoldKeys(site or 0, f"{copy:016x}" if copy else "", n in shares)
        for n, (site, copy) in enumerate(zip(sites, copies, strict=True))
    ]


def sharing_a_band(columns: Sequence[Sequence[int | None]]) -> set[int]:
    """Positions of the documents whose band hashes, band by band, another one shares
    (the ``fold_band_*`` columns of one read): the only ones that can fold into
    another or have one fold into them. A page without a signature has none."""
    out: set[int] = set()
    for column in columns:
        signed = [(n, packed) for n, packed in enumerate(column) if packed is not None]
        for shift in _SHIFTS:
            values = [packed >> shift & _BAND_MASK for _, packed in signed]
            if len(set(values)) == len(values):
                continue  # the usual case: every hit's band differs
            first: dict[int, int] = {}
            for (n, _), value in zip(signed, values, strict=False):
                seen = first.setdefault(value, n)
                if seen != n:
                    out.update((seen, n))
    return out


class SiteNames:
    """Site names by their ``fold_site`` key, for hits read from the columns.

    Keys never change, so names found once stay right. An unknown key asks the index
    for its sites (a terms aggregation over every document), at most once
    a view; a key still unknown then (beyond the aggregation's size) gives None, and
    the hit reads its site from the document store.
    """

    def __init__(self, all_sites: Callable[[], list[str]]) -> None:
        self._all_sites = all_sites
        self._names: dict[int, str] = {key(""): ""}
        self._asked_in: object = None
        self._lock = threading.Lock()

    def name(self, site_key: int, view: object) -> str | None:
        found = self._names.get(site_key)
        if found is not None:
            return found
        with self._lock:
            if self._asked_in != view:
                self._asked_in = view
                self._names.update((key(site), site) for site in self._all_sites())
        return self._names.get(site_key)
