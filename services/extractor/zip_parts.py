"""The parts of an OOXML or ODF package, read within a cap on their inflated size.

A ZIP bomb (a part that inflates to gigabytes) is refused by what the ZIP's directory
declares, before a byte is inflated; a part whose data inflates past its declared size
is cut there by ``zipfile`` itself, which then fails its CRC check: a lying header
makes the file malformed, never large.

The directory is read once per document (``ZipIndex``), by identification, and shared
with the reader: by ``struct`` when the ZIP is laid out plainly (one disk, no ZIP64, no
comment, nothing before or after it), else by ``zipfile``, which reads every layout.
zipfile's directory cost more than calamine's reading of a small spreadsheet's cells
(docs/benchmarks.md); so did opening a small part (the metadata) through it, which
is inflated here in one call when it is stored or deflated plainly.
"""

from __future__ import annotations

import bisect
import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, NamedTuple

from services.extractor.extracted_text import DocumentSkipped

# A deflated part inflates to at most about 1,032 times its size (deflate's limit);
# a directory that claims more is lying, and such a file is not read.
_MAX_RATIO = 1100
_END = struct.Struct("<4s4H2LH")  # end of central directory record
# A central directory entry: signature, flags, method, CRC, sizes, lengths of name,
# extra field and comment, local header's offset (versions, times, attributes skipped).
_CENTRAL = struct.Struct("<4s4xHH4xL2L3H8xL")
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a local file header
_UTF8_NAME, _ENCRYPTED_OR_PATCHED = 0x800, 0x1 | 0x20 | 0x40
_STORED, _DEFLATED = 0, 8


class _Entry(NamedTuple):
    name: str
    raw_name: bytes
    flags: int
    method: int
    crc: int
    compress_size: int
    file_size: int
    offset: int  # of its local header; -1 when zipfile read the directory
    end: int = -1  # where the next part's local header (or the directory) begins


class ZipIndex:
    """A package's ZIP directory: its part names and declared sizes."""

    def __init__(self, data: bytes) -> None:
        """zipfile's errors (BadZipFile, ValueError, OSError) when it is not a ZIP."""
        self._data = data
        entries = _plain_directory(data)
        self._zip: zipfile.ZipFile | None = None
        if entries is None:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            entries = [
                _Entry(i.filename, b"", i.flag_bits, i.compress_type, i.CRC, i.compress_size, i.file_size, -1)
                for i in self._zip.infolist()
            ]
        self.entries = entries
        self.by_name = {e.name: e for e in entries}  # the last of two of one name, as zipfile's getinfo

    @property
    def zip(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(io.BytesIO(self._data))
        return self._zip

    def plain_read(self, entry: _Entry, max_size: int) -> bytes | None:
        """A part's bytes, inflated in one call, when it is plainly stored or deflated,
        declares at most ``max_size`` bytes and checks out (headers agree, size and CRC);
        None sends the caller to zipfile."""
        if (
            entry.offset < 0
            or entry.file_size > max_size
            or entry.flags & _ENCRYPTED_OR_PATCHED
            or entry.method not in (_STORED, _DEFLATED)
        ):
            return None
        data = self._data
        try:
            sig, _, _, flags, _, _, _, _, _, _, name_len, extra_len = _LOCAL.unpack_from(data, entry.offset)
        except struct.error:
            return None
        start = entry.offset + _LOCAL.size
        if (sig != b"PK\x03\x04" or (flags ^ entry.flags) & _UTF8_NAME
                or data[start : start + name_len] != entry.raw_name):  # fmt: skip
            return None
        begin = start + name_len + extra_len
        if begin + entry.compress_size > entry.end:
            return None
        raw = data[begin : begin + entry.compress_size]
        if entry.method == _STORED:
            out = raw
        else:
            inflater = zlib.decompressobj(-15)
            try:
                out = inflater.decompress(raw, entry.file_size + 1)
            except zlib.error:
                return None
            if not inflater.eof:
                return None
        if len(out) != entry.file_size or zlib.crc32(out) != entry.crc:
            return None
        return out


def _plain_directory(data: bytes) -> list[_Entry] | None:
    """The central directory's entries when the ZIP is laid out plainly; None for any
    other layout (zipfile reads those)."""
    end = len(data) - _END.size
    if end < 20 or data[end : end + 4] != b"PK\x05\x06" or data[end - 20 : end - 16] == b"PK\x06\x07":
        return None  # a comment after the record, or ZIP64
    _, disk, cd_disk, on_disk, count, cd_size, cd_offset, comment = _END.unpack_from(data, end)
    if comment or disk or cd_disk or on_disk != count or cd_offset + cd_size != end:
        return None  # a comment, several disks, bytes before the ZIP (zipfile's "concat")
    found: list[tuple[bytes, int, int, int, int, int, int]] = []
    pos = cd_offset
    unpack = _CENTRAL.unpack_from
    try:
        for _ in range(count):
            sig, flags, method, crc, compress_size, file_size, name_len, extra_len, comment_len, offset = unpack(
                data, pos
            )
            start = pos + _CENTRAL.size
            raw_name = data[start : start + name_len]
            if (sig != b"PK\x01\x02" or 0xFFFFFFFF in (compress_size, file_size, offset) or len(raw_name) != name_len
                    or b"\x00" in raw_name
                    or extra_len and not _plain_extra(data[start + name_len : start + name_len + extra_len])):  # fmt: skip
                return None
            found.append((raw_name, flags, method, crc, compress_size, file_size, offset))
            pos = start + name_len + extra_len + comment_len
    except struct.error:
        return None
    if pos != end:
        return None
    # Each part's data must end before the next part begins (newer zipfiles refuse
    # overlapping parts, a way of making ZIP bombs).
    ends = sorted({f[6] for f in found} | {cd_offset})
    try:
        return [
            _Entry(raw.decode("utf-8" if flags & _UTF8_NAME else "cp437"), raw, flags, method, crc, compress_size,
                   file_size, offset, ends[bisect.bisect_right(ends, offset)])
            for raw, flags, method, crc, compress_size, file_size, offset in found
        ]  # fmt: skip
    except UnicodeDecodeError:
        return None


def _plain_extra(extra: bytes) -> bool:
    """Extra fields that zipfile would read without changing an entry or failing: well
    formed, and none of them ZIP64's."""
    pos = 0
    while pos + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, pos)
        if kind == 1 or pos + 4 + size > len(extra):
            return False
        pos += 4 + size
    return pos == len(extra)


class Package:
    """One ZIP package; ``open`` counts each part's declared size against the cap."""

    def __init__(self, data: bytes, max_unzipped_bytes: int, index: ZipIndex | None = None) -> None:
        """``index``: the package's directory as identification read it."""
        try:
            self._index = index or ZipIndex(data)
        except (zipfile.BadZipFile, ValueError, OSError) as exc:
            raise DocumentSkipped("malformed", str(exc)) from None
        self._left = max_unzipped_bytes
        self.names = set(self._index.by_name)

    def check_all(self) -> None:
        """Refuse the whole package when its parts together exceed the cap: for readers
        (calamine) that inflate the parts themselves."""
        total = 0
        for entry in self._index.entries:
            self._plausible(entry)
            total += entry.file_size
        if total > self._left:
            raise DocumentSkipped("zip_bomb", f"{total} bytes inflated")

    @staticmethod
    def _plausible(entry: _Entry) -> None:
        if entry.compress_size and entry.file_size > _MAX_RATIO * entry.compress_size + 1024:
            raise DocumentSkipped("zip_bomb", f"{entry.name}: ratio beyond deflate's")

    def _take(self, name: str) -> _Entry:
        """A part's entry, its declared size counted against the cap."""
        try:
            entry = self._index.by_name[name]
        except KeyError:
            raise DocumentSkipped("malformed", f"no {name}") from None
        self._plausible(entry)
        if entry.file_size > self._left:
            raise DocumentSkipped("zip_bomb", f"{name}: {entry.file_size} bytes inflated")
        self._left -= entry.file_size
        return entry

    @contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        """A part as a stream; DocumentSkipped("zip_bomb") when it would pass the cap."""
        self._take(name)
        try:
            with self._index.zip.open(name) as part:
                yield part
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, RuntimeError) as exc:
            # RuntimeError: a part encrypted with a ZIP password.
            raise DocumentSkipped("malformed", f"{name}: {exc}") from None

    def read(self, name: str) -> bytes:
        entry = self._take(name)
        found = self._index.plain_read(entry, entry.file_size)
        if found is not None:
            return found
        self._left += entry.file_size  # counted again by open
        with self.open(name) as part:
            return part.read()
