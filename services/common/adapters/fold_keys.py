"""What a search folds and spreads its results by, kept in tantivy fast fields.

A search reads its whole result window (some thirty hits for the first page) to fold
near-duplicates and to keep one site from crowding the page, yet shows ten. Reading
a hit from tantivy's document store decompresses a block and converts every stored
field, about 50 µs; a fast field is a column read by document address, about 3 µs
for thirty hits. Elasticsearch's field collapsing reads its key from doc values for
the same reason. So each document also carries:

- ``fold_site``: a 64-bit hash of its site, for the per-site limit;
- ``fold_copy``: a 64-bit hash of its content hash, for exact copies;
- ``fold_sig_00`` … ``fold_sig_31``: its MinHash signature, two 32-bit values to a
  field (rensa's values are 32-bit, so the signature reads back exactly).

A page whose signature is empty (too short) has no ``fold_sig_*`` value, and a column
read gives None for it.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tantivy

from services.common import minhash

SIG_FIELDS = tuple(f"fold_sig_{i:02d}" for i in range(minhash.HASHES // 2))
FIELDS = ("fold_site", "fold_copy", *SIG_FIELDS)
_LOW = 0xFFFF_FFFF
_PACKED = struct.Struct(f">{len(SIG_FIELDS)}Q")
_VALUES = struct.Struct(f">{minhash.HASHES}I")


@dataclass(frozen=True)
class FoldKeys:
    site: int
    copy: str  # "" when the page has no content hash
    signature: tuple[int, ...]


def add_schema_fields(sb: tantivy.SchemaBuilder) -> None:
    for name in FIELDS:
        sb.add_unsigned_field(name, fast=True)


def key(text: str) -> int:
    """A stable 64-bit key of ``text``: the same in every process and release."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def add_to(doc: tantivy.Document, site: str, content_hash: str, signature: Sequence[int]) -> None:
    doc.add_unsigned("fold_site", key(site))
    doc.add_unsigned("fold_copy", key(content_hash) if content_hash else 0)
    if len(signature) == minhash.HASHES and max(signature) <= _LOW:
        for name, i in zip(SIG_FIELDS, range(0, minhash.HASHES, 2)):
            doc.add_unsigned(name, signature[i] << 32 | signature[i + 1])


def read(searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress]) -> list[FoldKeys]:
    """The fold keys of these documents, in their order, from the columns alone."""
    sites = searcher.fast_field_values("fold_site", addresses)
    copies = searcher.fast_field_values("fold_copy", addresses)
    columns = [searcher.fast_field_values(name, addresses) for name in SIG_FIELDS]
    out = []
    for n, (site, copy) in enumerate(zip(sites, copies)):
        packed = [column[n] for column in columns]
        signature: tuple[int, ...] = ()
        if None not in packed:
            signature = _VALUES.unpack(_PACKED.pack(*packed))
        out.append(FoldKeys(site or 0, f"{copy:016x}" if copy else "", signature))
    return out


class SiteNames:
    """Site names by their ``fold_site`` key, for hits read from the columns.

    Keys never change, so names found once stay right. An unknown key asks the index
    for its sites (a terms aggregation, some 15 ms at a million pages), at most once
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
