"""The root streams of an OLE compound file ([MS-CFB]) and the title in its
SummaryInformation, read without olefile when the file is laid out as Office writes it.

Telling an xls from a doc, and reading a spreadsheet's title, needs the header, the
FAT, the directory's sectors and one small stream. olefile builds the whole storage
tree and checks every entry in Python: about 0.1 ms on a small file, half of what
calamine takes to read a small xls (docs/benchmarks.md, "Spreadsheets, measured
again"). This reads only what is needed. What it does not expect (a FAT beyond the
header's 109 sectors, a chain that loops or leaves the file, a property of an unusual
type) raises ``UnexpectedLayout``, and the caller asks olefile, which reads every
layout and tolerates its defects: what is found is then olefile's answer.
"""

from __future__ import annotations

import struct
import sys
from array import array
from codecs import utf_16_le_decode

MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_END_OF_CHAIN = 0xFFFFFFFE
_NO_STREAM = _FREE = 0xFFFFFFFF
_MAX_SECTOR = 0xFFFFFFFA  # and above: markers, not sectors
_STREAM, _ROOT = 2, 5
_HEADER_FAT_SECTORS = 109
_MINI_CUTOFF = 4096
# olefile takes bytes shorter than this for a file name: such data goes to olefile.
_MIN_SIZE = 1536
_VT_I2, _VT_BSTR, _VT_LPSTR = 2, 8, 30
_PID_CODEPAGE, _PID_TITLE = 1, 2
SUMMARY_INFORMATION = "\x05summaryinformation"
# A directory entry from its name's length (offset 64): length, type, left and right
# siblings, then (past child, CLSID, state and times) start sector and size.
_ENTRY = struct.Struct("<HBxII40xIII")


class UnexpectedLayout(Exception):
    """Not a layout this reader handles; olefile is to read the file."""


class CompoundFile:
    """The root storage's streams of one compound file held in memory."""

    def __init__(self, data: bytes) -> None:
        if len(data) < _MIN_SIZE or data[:8] != MAGIC:
            raise UnexpectedLayout("too short or not a compound file")
        major, byte_order, sector_shift, mini_shift = struct.unpack_from("<HHHH", data, 0x1A)
        if byte_order != 0xFFFE or (major, sector_shift) not in ((3, 9), (4, 12)) or mini_shift != 6:
            raise UnexpectedLayout("header")
        _, fat_sectors, first_dir, _, cutoff, first_mini_fat, _, _, difat_sectors = struct.unpack_from(
            "<9I", data, 0x28
        )
        if cutoff != _MINI_CUTOFF or difat_sectors or fat_sectors > _HEADER_FAT_SECTORS:
            raise UnexpectedLayout("a FAT beyond the header's")
        self._data = data
        self._size = 1 << sector_shift
        self._v3 = major == 3
        self._sectors = (len(data) + self._size - 1) // self._size - 1
        header_fat = struct.unpack_from(f"<{_HEADER_FAT_SECTORS}I", data, 0x4C)
        fat_at = header_fat[:fat_sectors]
        # olefile takes the header's list up to its first free entry, not the count.
        if max(fat_at, default=0) >= _MAX_SECTOR or header_fat.count(_FREE) != _HEADER_FAT_SECTORS - fat_sectors:
            raise UnexpectedLayout("the header's list of FAT sectors")
        self._fat = _words(b"".join(self._sector(s) for s in fat_at))
        self._first_mini_fat = first_mini_fat
        directory = b"".join(self._sector(s) for s in self._chain(first_dir))
        if len(directory) < 128 or directory[66] != _ROOT:
            raise UnexpectedLayout("no root entry")
        self._root_start, self._root_size = self._place(directory, 0)
        self.streams: dict[str, tuple[int, int]] = {}  # lower-cased name -> (start sector, size)
        self._read_root_children(directory, struct.unpack_from("<I", directory, 76)[0])

    def _sector(self, sector: int) -> bytes:
        if sector >= self._sectors:
            raise UnexpectedLayout("a sector past the end of the file")
        start = (sector + 1) * self._size
        return self._data[start : start + self._size]

    def _chain(self, start: int) -> list[int]:
        """The sectors of a chain, in order; a loop or a sector outside the FAT is not
        followed."""
        fat, sector = self._fat, start
        chain: list[int] = []
        while sector != _END_OF_CHAIN:
            if sector >= len(fat) or len(chain) >= len(fat):
                raise UnexpectedLayout("a broken chain")
            chain.append(sector)
            sector = fat[sector]
        return chain

    def _place(self, directory: bytes, index: int) -> tuple[int, int]:
        start, low, high = struct.unpack_from("<III", directory, index * 128 + 116)
        return start, low if self._v3 else low | high << 32  # a v3 file's high word is meaningless

    def _read_root_children(self, directory: bytes, child: int) -> None:
        """The root's children: a red-black tree through the entries' left and right ids."""
        entries = len(directory) // 128
        pending, seen = [child], set()
        v3 = self._v3
        while pending:
            index = pending.pop()
            if index == _NO_STREAM:
                continue
            if index >= entries or index in seen:
                raise UnexpectedLayout("a directory tree that loops or leaves the directory")
            seen.add(index)
            at = index * 128
            name_bytes, kind, left, right, start, low, high = _ENTRY.unpack_from(directory, at + 64)
            if not 2 <= name_bytes <= 64 or name_bytes % 2:
                raise UnexpectedLayout("an entry's name")
            if kind == _STREAM:
                name = utf_16_le_decode(directory[at : at + name_bytes - 2], "replace")[0].lower()
                if name in self.streams:
                    raise UnexpectedLayout("two streams of one name")
                self.streams[name] = (start, low if v3 else low | high << 32)
            pending += (left, right)

    def read(self, name: str) -> bytes:
        """A root stream's bytes (``name`` lower-cased); KeyError when there is none."""
        start, size = self.streams[name]
        if size < _MINI_CUTOFF:
            return self._read_mini(start, size)
        chain = self._chain(start)
        data = b"".join(self._sector(s) for s in chain)
        if len(data) < size:  # a last sector cut short by the file's end
            raise UnexpectedLayout("a stream shorter than its size")
        return data[:size]

    def _read_mini(self, start: int, size: int) -> bytes:
        """A small stream, from 64-byte sectors of the mini stream (the root entry's data)."""
        if size == 0:
            return b""
        mini_fat = _words(b"".join(self._sector(s) for s in self._chain(self._first_mini_fat)))
        container = self._chain(self._root_start)
        per_sector = self._size // 64
        out: list[bytes] = []
        sector = start
        while sector != _END_OF_CHAIN and len(out) * 64 < size:
            if sector >= len(mini_fat) or sector // per_sector >= len(container) or len(out) >= len(mini_fat):
                raise UnexpectedLayout("a broken mini chain")
            if (sector + 1) * 64 > self._root_size:
                raise UnexpectedLayout("a mini sector past the mini stream")
            at = (sector % per_sector) * 64
            out.append(self._sector(container[sector // per_sector])[at : at + 64])
            sector = mini_fat[sector]
        data = b"".join(out)
        if len(data) < size:
            raise UnexpectedLayout("a stream shorter than its size")
        return data[:size]


def _words(data: bytes) -> array[int]:
    """Little-endian 32-bit sector numbers."""
    words = array("I")
    words.frombytes(data[: len(data) // 4 * 4])
    if sys.byteorder == "big":
        words.byteswap()
    return words


def summary_title(stream: bytes) -> tuple[bytes | str | None, int | None]:
    """(the Title property, the CodePage property) of a SummaryInformation stream,
    ``None`` for one it lacks, as olefile's ``getproperties`` gives them: a title of
    8-bit characters as bytes with its NULs taken out. A property set that olefile
    would read otherwise (a title of another type, an offset out of its section)
    raises UnexpectedLayout."""
    try:
        (offset,) = struct.unpack_from("<I", stream, 44)
        (size,) = struct.unpack_from("<I", stream, offset)
        if size < 8:  # olefile would read the rest of the stream as the section
            raise UnexpectedLayout("a section's size")
        section = b"****" + stream[offset + 4 : offset + size]
        (count,) = struct.unpack_from("<I", section, 4)
        found: dict[int, bytes | int] = {}
        for i in range(min(count, len(section) // 8)):
            pid, at = struct.unpack_from("<II", section, 8 + i * 8)
            if pid == _PID_TITLE:
                (kind,) = struct.unpack_from("<I", section, at)
                if kind not in (_VT_LPSTR, _VT_BSTR):
                    raise UnexpectedLayout("a title that is not 8-bit text")
                (length,) = struct.unpack_from("<I", section, at + 4)
                found[pid] = section[at + 8 : at + 8 + length - 1].replace(b"\x00", b"")
            elif pid == _PID_CODEPAGE:
                kind, value = struct.unpack_from("<IH", section, at)
                if kind != _VT_I2:
                    raise UnexpectedLayout("a code page that is not a 16-bit integer")
                found[pid] = value - 65536 if value >= 32768 else value
    except struct.error:
        raise UnexpectedLayout("a property set cut short") from None
    title, codepage = found.get(_PID_TITLE), found.get(_PID_CODEPAGE)
    return (title if isinstance(title, bytes) else None), (codepage if isinstance(codepage, int) else None)
