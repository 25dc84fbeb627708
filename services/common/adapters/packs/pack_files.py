"""The pack files of the embedded page store: their records, and getting back the
space of pages fetched again.

A page fetched again is appended again (``page_store_packs``), so a crawl that keeps
recrawling (``--continuous``) leaves older copies behind. Compaction reads the packs
newest first; a record is live when no newer record has its key. A sealed pack
(one no process appends to any more) whose records are at least half dead is copied,
live records only, into a new pack named to sort just before it, which is renamed
into place once written and synced; then the old pack is deleted. Both hold the same
bytes for each live key, so a crash between the two steps leaves a duplicate that the
next compaction drops, and loses nothing. Bitcask merges its data files the same way.
While it runs it holds every key once (some 100 MB at a million pages), and it reads
every record's header, a few seconds at a million pages, on a thread of its own.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

MAGIC = b"TSP1"
SUFFIX = ".pack"
_MAX_HEADER = 256  # a header line is far shorter; longer means not a record
# A pack a writer named and may still append to: <20-digit time>-<pid>-<host>.pack.
# The host name, because processes of two machines (containers) sharing a volume may
# have one pid; another machine's packs are never taken for sealed.
_WRITER_PACK = re.compile(r"\d{20}-(\d+)-([A-Za-z0-9._-]+)\.pack")
GARBAGE_TO_COMPACT = 0.5


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "_"


def writer_pack_name() -> str:
    """A new pack's name for this process: it sorts after every pack made before."""
    return f"{time.time_ns():020d}-{os.getpid()}-{_host()}{SUFFIX}"


@dataclass(frozen=True)
class Record:
    key: str
    start: int  # of its header line
    body_at: int  # of its metadata, just past the header
    meta_len: int
    body_len: int
    crc: int

    @property
    def end(self) -> int:
        return self.body_at + self.meta_len + self.body_len


def encode(key: str, meta: bytes, body: bytes) -> bytes:
    """One record: ``TSP1 <key> <meta bytes> <body bytes> <crc32 of both, hex>\\n<meta><body>``."""
    return encode_header(key, meta, body) + meta + body


def encode_header(key: str, meta: bytes, body: bytes) -> bytes:
    """A record's header line alone, for a record written in parts (a large body is
    not copied into one record in memory)."""
    crc = zlib.crc32(body, zlib.crc32(meta))
    return b"%s %s %d %d %08x\n" % (MAGIC, key.encode("ascii"), len(meta), len(body), crc)


def _parse_header(line: bytes) -> tuple[str, int, int, int] | None:
    parts = line.split()
    if len(parts) != 5 or parts[0] != MAGIC or not line.endswith(b"\n"):
        return None
    try:
        return parts[1].decode("ascii"), int(parts[2]), int(parts[3]), int(parts[4], 16)
    except ValueError:
        return None


def records(f: BinaryIO, offset: int = 0) -> Iterator[Record]:
    """The whole records of an open pack from ``offset`` on. They stop at the first
    short or unreadable one: only a pack's last record can be cut (by a crash), and
    a record still being written is whole on a later read."""
    size = os.fstat(f.fileno()).st_size
    f.seek(offset)
    while offset < size:
        header = _parse_header(f.readline(_MAX_HEADER))
        if header is None:
            return
        key, meta_len, body_len, crc = header
        record = Record(key, offset, f.tell(), meta_len, body_len, crc)
        if record.end > size:
            return
        yield record
        offset = record.end
        f.seek(offset)


def pack_names(root: Path) -> list[str]:
    """Oldest first: the later of two records with one key is the page as it is now."""
    return sorted(name for name in os.listdir(root) if name.endswith(SUFFIX))


def _sealed(name: str, writing: str | None) -> bool:
    """No process appends to this pack any more: it is not ours to write, and the
    process that named it has exited (a pack written by this one is ``writing``)."""
    if name == writing:
        return False
    m = _WRITER_PACK.fullmatch(name)
    if m is None:
        return True  # a compacted pack: never appended to
    pid, host = int(m.group(1)), m.group(2)
    if host != _host():
        return False  # another machine's: whether its writer lives is not known here
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


@dataclass
class PackUse:
    name: str
    size: int
    live: list[Record]

    @property
    def garbage(self) -> float:
        return 1 - sum(r.end - r.start for r in self.live) / self.size if self.size else 0.0


def pack_use(root: Path) -> list[PackUse]:
    """Every pack with its live records, newest first."""
    seen: set[str] = set()
    out: list[PackUse] = []
    for name in reversed(pack_names(root)):
        try:
            with open(root / name, "rb") as f:
                found = list(records(f))
                size = os.fstat(f.fileno()).st_size
        except FileNotFoundError:  # compacted away meanwhile
            continue
        live = []
        for record in reversed(found):
            if record.key not in seen:
                seen.add(record.key)
                live.append(record)
        out.append(PackUse(name, size, live[::-1]))
    return out


def compact(root: Path, writing: str | None = None) -> int:
    """Rewrite every sealed pack at least ``GARBAGE_TO_COMPACT`` dead; the bytes freed."""
    for stale in root.glob("*.compacting"):  # a compaction a crash stopped
        stale.unlink(missing_ok=True)
    freed = 0
    for use in pack_use(root):
        if use.garbage >= GARBAGE_TO_COMPACT and _sealed(use.name, writing):
            freed += _rewrite(root, use)
    if freed:
        log.info("page store: %.1f MB of pages fetched again reclaimed", freed / 1e6)
    return freed


def _rewrite(root: Path, use: PackUse) -> int:
    stem = use.name[: -len(SUFFIX)] + "+"  # "+" sorts before ".": just before the old pack
    while (root / f"{stem}{SUFFIX}").exists():  # a copy a crash left beside its pack
        stem += "+"
    staged = root / f"{stem}.compacting"
    target = root / f"{stem}{SUFFIX}"
    written = 0
    with open(root / use.name, "rb") as src, open(staged, "wb") as out:
        for record in use.live:
            src.seek(record.start)
            out.write(src.read(record.end - record.start))
            written += record.end - record.start
        out.flush()
        os.fsync(out.fileno())
    if written:
        os.replace(staged, target)
    else:
        staged.unlink()
    (root / use.name).unlink()
    return use.size - written
