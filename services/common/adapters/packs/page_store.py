"""Embedded page store: pages appended to pack files, as crawlers archive them.

Heritrix, Nutch and StormCrawler write what they fetch into WARC files, containers
that only grow, never a file per page. Creating a file per page costs the crawl more
than anything else it does with a page's bytes, on the thread that fetches, and
appending to an open file a tenth of that (docs/benchmarks.md, 'Sixth round (issue 12):
the page store').
Millions of small files also strain inodes, backups and ``rm``.

Each writing process appends to a pack of its own (``<time>-<pid>-<host>.pack``, a new one
past ``ROLL_BYTES``), so processes never interleave. A record is a header line, then
the metadata JSON and the raw bytes (``page_packs.encode``).

A crash can only cut the last record of a pack, and a process never appends to a
pack it did not open, so a reader that finds a record short has reached a pack's end.
A large body (a document) is the exception: it is written outside the store's lock,
into a place reserved for it after its header, while the pages fetched meanwhile are
appended after it; a crash then leaves it whole in length but with a wrong checksum,
followed by readable records (and until its write ends, a reader gets no page for its
key). A record whose checksum is wrong is never returned: a reader never sees half a
page. A page fetched again is
appended again and the latest record wins. The older copies are reclaimed by
compaction (``page_packs``), which a writer starts in the background when the packs
have grown past ``COMPACT_FROM`` bytes.

``get`` is for tools and tests (the crawl only writes): the first call reads every
pack's headers into a key directory, later calls read only what was appended since.
Pages stored by an earlier Tansuo, a file each under ``<key[:2]>/<key>``, are still
read.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import zlib
from pathlib import Path

from services.common.adapters.packs.pack_files import (
    SUFFIX,
    Record,
    compact,
    encode,
    encode_header,
    pack_names,
    records,
    writer_pack_name,
)
from services.common.domain.documents import StoredPage

ROLL_BYTES = 1 << 30
# Below this the packs are not worth a compaction's read of every header.
COMPACT_FROM = 256 << 20
# A body this large is written outside the store's lock (``_put_large``): writing a
# 180 MB document's record takes about half a second, and every page's store waited.
LARGE_RECORD_BYTES = 1 << 20
_WRITE_PIECE = 1 << 20


def _valid(key: str) -> bool:
    """Keys are URL fingerprints; anything else could break a header or, read the
    old way, name a path outside the store."""
    return bool(key) and key.isascii() and key.replace("-", "").replace("_", "").isalnum()


def _write_at(fd: int, data: bytes | memoryview, offset: int) -> None:
    """``data`` at ``offset``; os.pwrite may write less than it is given."""
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        if done == 0:
            raise OSError(errno.ENOSPC, "nothing written")
        view, offset = view[done:], offset + done


class PackPageStore:
    """Pages under ``root`` in append-only packs (module docstring)."""

    remote = False  # an append, well under the cost of handing it to another thread

    def __init__(
        self,
        root: Path,
        roll_bytes: int = ROLL_BYTES,
        compact_from: int = COMPACT_FROM,
        large_bytes: int = LARGE_RECORD_BYTES,
    ) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)
        self._roll_bytes = roll_bytes
        self._compact_from = compact_from
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pack: str | None = None
        self._written = 0
        self._keydir: dict[str, tuple[str, Record]] = {}  # key → (pack, its latest record); filled by ``get``
        self._scanned: dict[str, int] = {}  # pack name → bytes read into the key directory
        self._large_bytes = large_bytes
        self._in_flight = 0  # large bodies being written outside the lock
        self.compaction: threading.Thread | None = None

    def put(self, key: str, page: StoredPage) -> None:
        if not _valid(key):
            raise ValueError(f"page store key must be letters, digits, '-' or '_': {key!r}")
        meta = json.dumps(page.meta(), ensure_ascii=False).encode("utf-8")
        if len(page.body) >= self._large_bytes:
            self._put_large(key, meta, page.body)
            return
        record = encode(key, meta, page.body)
        with self._lock:
            fd, start = self._pack_for(len(record))
            try:
                _write_at(fd, record, start)
            except OSError:
                self._abandon(fd, start)
                raise
            self._written = start + len(record)

    def _put_large(self, key: str, meta: bytes, body: bytes) -> None:
        """A large body is written outside the lock, so that the pages stored meanwhile
        (the crawl's, on its reactor thread) do not wait for it: its place in the pack
        is reserved and its header written under the lock, then its bytes are written
        into that place while later records go after it. The header first, because a
        reader stops at the first place where no header parses: a crash during the
        write leaves this record with a wrong checksum (never returned) and every
        record after it readable."""
        header = encode_header(key, meta, body)  # the checksum of 100 MB, outside the lock
        size = len(header) + len(meta) + len(body)
        with self._lock:
            fd, start = self._pack_for(size)
            try:
                _write_at(fd, header, start)
            except OSError:
                self._abandon(fd, start)
                raise
            self._written = start + size
            pack, own = self._pack, os.dup(fd)  # the pack may roll and close ``fd`` meanwhile
            self._in_flight += 1
        try:
            self._write_body(own, [meta, body], start + len(header))
        except OSError:
            with self._lock:
                if self._pack == pack and self._fd is not None and self._written == start + size:
                    self._abandon(self._fd, start)  # nothing after it yet: cut it off
            raise
        finally:
            os.close(own)
            with self._lock:
                self._in_flight -= 1

    def _write_body(self, fd: int, parts: list[bytes], offset: int) -> None:
        """A large record's metadata and body, at its reserved place (tests wrap this
        to hold a write in flight). In pieces: the kernel locks a file for the whole of
        one write, and the pages stored meanwhile go to the same file."""
        for part in parts:
            view = memoryview(part)
            for at in range(0, len(view), _WRITE_PIECE):
                _write_at(fd, view[at : at + _WRITE_PIECE], offset + at)
            offset += len(view)

    def _pack_for(self, size: int) -> tuple[int, int]:
        """The open pack and where the next record starts; a new pack when there is
        none yet or this record would take it past ``roll_bytes``."""
        if self._fd is not None and self._written and self._written + size > self._roll_bytes:
            os.close(self._fd)
            self._fd = None
        if self._fd is None:
            self._pack = writer_pack_name()
            # Not O_APPEND: records are written at their reserved offsets (``_put_large``).
            self._fd = os.open(self._root / self._pack, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            self._written = 0
            self._maybe_compact()
        return self._fd, self._written

    def _maybe_compact(self) -> None:
        """Start a compaction beside the crawl when the packs have grown enough to hold
        many older copies; one at a time, at most once a new pack."""
        if self.compaction is not None and self.compaction.is_alive():
            return
        if self._in_flight:  # the pack just closed may be a large body's, still being written
            return
        total = 0
        for pack in self._root.glob(f"*{SUFFIX}"):
            try:
                total += pack.stat().st_size
            except FileNotFoundError:  # compacted away by another process meanwhile
                continue
        if total < self._compact_from:
            return
        self.compaction = threading.Thread(
            target=compact, args=(self._root, self._pack), name="page-store-compaction", daemon=True
        )
        self.compaction.start()

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
        for _ in range(2):
            with self._lock:
                found = self._refresh().get(key)
            if found is None:
                return self._get_file(key)
            pack, record = found
            try:
                with open(self._root / pack, "rb") as f:
                    f.seek(record.body_at)
                    raw = f.read(record.end - record.body_at)
            except FileNotFoundError:  # compacted away since: read the packs again
                with self._lock:
                    self._keydir.clear()
                    self._scanned.clear()
                continue
            if len(raw) != record.end - record.body_at or zlib.crc32(raw) != record.crc:
                return None
            return StoredPage.from_meta(json.loads(raw[: record.meta_len]), raw[record.meta_len :])
        return None

    def _refresh(self) -> dict[str, tuple[str, Record]]:
        """The key directory, with every record appended to any pack since the last call."""
        for name in pack_names(self._root):
            try:
                with open(self._root / name, "rb") as f:
                    offset = self._scanned.get(name, 0)
                    for r in records(f, offset):
                        known = self._keydir.get(r.key)
                        # Packs sort oldest first; a compacted copy, read late, is no newer.
                        if known is None or known[0] <= name:
                            self._keydir[r.key] = (name, r)
                        offset = r.end
            except FileNotFoundError:
                continue
            self._scanned[name] = offset
        return self._keydir

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
