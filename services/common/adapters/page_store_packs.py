"""Embedded page store: pages appended to pack files, as crawlers archive them.

Heritrix, Nutch and StormCrawler write what they fetch into WARC files, containers
that only grow, never a file per page. A file per page cost the crawl more than
anything else it does with a page's bytes: creating the file took 0.6–0.9 ms of the
crawl process's CPU on an ext4 disk (docs/benchmarks.md), on the thread that
fetches, while appending the same bytes to an open file takes some 20 µs. Millions
of small files also strain inodes, backups and ``rm``.

Each writing process appends to a pack of its own (``<time>-<pid>.pack``, a new one
past ``ROLL_BYTES``), so processes never interleave. A record is a header line, then
the metadata JSON and the raw bytes::

    TSP1 <key> <meta bytes> <body bytes> <crc32 of meta and body, hex>\\n<meta><body>

A crash can only cut the last record of a pack, and a process never appends to a
pack it did not open, so a reader that finds a record short, or its checksum wrong,
has reached a pack's end: a reader never sees half a page. A page fetched again is
appended again and the latest record wins; the older ones stay in their packs.

``get`` is for tools and tests (the crawl only writes): the first call reads every
pack's headers into a key directory, later calls read only what was appended since.
Pages stored by an earlier Tansuo, a file each under ``<key[:2]>/<key>``, are still
read.
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from services.common.model import StoredPage

MAGIC = b"TSP1"
SUFFIX = ".pack"
ROLL_BYTES = 1 << 30
_MAX_HEADER = 256  # a header line is far shorter; longer means not a record


@dataclass(frozen=True)
class _Where:
    pack: str
    offset: int  # of the metadata, just past the header line
    meta_len: int
    body_len: int
    crc: int


def _record(key: str, page: StoredPage) -> bytes:
    meta = json.dumps(page.meta(), ensure_ascii=False).encode("utf-8")
    crc = zlib.crc32(page.body, zlib.crc32(meta))
    return b"%s %s %d %d %08x\n%s%s" % (MAGIC, key.encode("ascii"), len(meta), len(page.body), crc, meta, page.body)


def _parse_header(line: bytes) -> tuple[str, int, int, int] | None:
    parts = line.split()
    if len(parts) != 5 or parts[0] != MAGIC or not line.endswith(b"\n"):
        return None
    try:
        return parts[1].decode("ascii"), int(parts[2]), int(parts[3]), int(parts[4], 16)
    except ValueError:
        return None


def _valid(key: str) -> bool:
    """Keys are URL fingerprints; anything else could break a header or, read the
    old way, name a path outside the store."""
    return bool(key) and key.isascii() and key.replace("-", "").replace("_", "").isalnum()


class PackPageStore:
    """Pages under ``root`` in append-only packs (module docstring)."""

    def __init__(self, root: Path, roll_bytes: int = ROLL_BYTES) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)
        self._roll_bytes = roll_bytes
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._written = 0
        self._keydir: dict[str, _Where] | None = None  # built by the first ``get``
        self._scanned: dict[str, int] = {}  # pack name → bytes read into the key directory

    def put(self, key: str, page: StoredPage) -> None:
        if not _valid(key):
            raise ValueError(f"page store key must be letters, digits, '-' or '_': {key!r}")
        record = _record(key, page)
        with self._lock:
            fd, start = self._pack_for(len(record))
            try:
                view = memoryview(record)
                while view:  # os.write may write less than it is given
                    view = view[os.write(fd, view) :]
            except OSError:
                self._abandon(fd, start)
                raise
            self._written = start + len(record)

    def _pack_for(self, size: int) -> tuple[int, int]:
        """The open pack and where the next record starts; a new pack when there is
        none yet or this record would take it past ``roll_bytes``."""
        if self._fd is not None and self._written and self._written + size > self._roll_bytes:
            os.close(self._fd)
            self._fd = None
        if self._fd is None:
            name = f"{time.time_ns():020d}-{os.getpid()}{SUFFIX}"
            self._fd = os.open(self._root / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            self._written = 0
        return self._fd, self._written

    def _abandon(self, fd: int, start: int) -> None:
        """After a failed write (a full disk): cut the pack back to its last whole
        record and write the next page to a new pack."""
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass  # the short record stays last in its pack, where readers stop
        os.close(fd)
        self._fd = None

    def get(self, key: str) -> StoredPage | None:
        if not _valid(key):
            return None
        with self._lock:
            where = self._refresh().get(key)
        if where is None:
            return self._get_file(key)
        with open(self._root / where.pack, "rb") as f:
            f.seek(where.offset)
            raw = f.read(where.meta_len + where.body_len)
        if len(raw) != where.meta_len + where.body_len or zlib.crc32(raw) != where.crc:
            return None
        meta = json.loads(raw[: where.meta_len])
        return StoredPage.from_meta(meta, raw[where.meta_len :])

    def _refresh(self) -> dict[str, _Where]:
        """The key directory, with every record appended to any pack since the last call."""
        if self._keydir is None:
            self._keydir = {}
        for name in sorted(p for p in os.listdir(self._root) if p.endswith(SUFFIX)):
            with open(self._root / name, "rb") as f:
                self._scanned[name] = self._scan(f, name, self._scanned.get(name, 0))
        return self._keydir

    def _scan(self, f: BinaryIO, name: str, offset: int) -> int:
        """Add the whole records of pack ``name`` from ``offset`` on; where they end."""
        assert self._keydir is not None
        size = os.fstat(f.fileno()).st_size
        f.seek(offset)
        while offset < size:
            header = _parse_header(f.readline(_MAX_HEADER))
            if header is None:
                break
            key, meta_len, body_len, crc = header
            start = f.tell()
            if start + meta_len + body_len > size:
                break  # still being written, or cut by a crash
            self._keydir[key] = _Where(name, start, meta_len, body_len, crc)
            offset = start + meta_len + body_len
            f.seek(offset)
        return offset

    def _get_file(self, key: str) -> StoredPage | None:
        """A page an earlier Tansuo stored as a file of its own."""
        try:
            with open(self._root / key[:2] / key, "rb") as f:
                raw = f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
        header, _, body = raw.partition(b"\n")
        return StoredPage.from_meta(json.loads(header), body)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def ping(self) -> None:
        if not self._root.is_dir():
            raise OSError(f"page store directory {self._root} is missing")
