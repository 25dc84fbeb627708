"""The compound-file reader that identifies an OLE document and reads a spreadsheet's
title without olefile: it answers as olefile does on files laid out as Office writes
them, and leaves every other layout to olefile."""

from __future__ import annotations

import struct

import olefile
import pytest

from services.extractor.compound_file import SUMMARY_INFORMATION, CompoundFile, UnexpectedLayout, summary_title
from services.extractor.document_types import NotADocument, identify_with_title

END, FREE, FAT_SECTOR = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
TITLE = "二〇二六年硕士研究生招生计划"


def _summary(title: bytes, codepage: int) -> bytes:
    """A SummaryInformation property set: CodePage (VT_I2) and Title (VT_LPSTR)."""
    text = title + b"\x00"
    text += b"\x00" * (-len(text) % 4)
    values = struct.pack("<IHH", 2, codepage & 0xFFFF, 0) + struct.pack("<II", 30, len(title) + 1) + text
    section = struct.pack("<II", 8 + 16 + len(values), 2) + struct.pack("<IIII", 1, 24, 2, 32) + values
    fmtid = bytes.fromhex("e0859ff2f94f6810ab9108002b27b3d9")
    return struct.pack("<HHI16sI16sI", 0xFFFE, 0, 0, b"\x00" * 16, 1, fmtid, 48) + section


def _entry(name: str, kind: int, left: int, right: int, child: int, start: int, size: int) -> bytes:
    raw = name.encode("utf-16-le") + b"\x00\x00"
    return (raw.ljust(64, b"\x00") + struct.pack("<HBBIII", len(raw), kind, 1, left, right, child) + b"\x00" * 36
            + struct.pack("<III", start, size, 0))  # fmt: skip


def _compound(streams: dict[str, bytes], loop_directory: bool = False) -> bytes:
    """A version-3 compound file (512-byte sectors) of root streams, as Office lays them
    out: streams under 4,096 bytes in the mini stream, the others in sectors of their own.
    Sectors: 0 the FAT, 1 the directory, 2 the mini FAT, then the mini stream, then the
    large streams."""
    mini, mini_fat, large, places = b"", [], [], []
    for data in streams.values():
        if len(data) < 4096:
            first = len(mini) // 64
            count = max(1, -(-len(data) // 64))
            mini_fat += [first + i + 1 for i in range(count - 1)] + [END]
            mini += data.ljust(count * 64, b"\x00")
            places.append((first, len(data), True))
        else:
            large.append(data)
            places.append((len(large) - 1, len(data), False))
    mini_sectors = max(1, -(-len(mini) // 512))
    fat = [FAT_SECTOR, END if not loop_directory else 1, END]
    fat += [3 + i + 1 for i in range(mini_sectors - 1)] + [END]
    starts, at = [], 3 + mini_sectors
    for data in large:
        count = -(-len(data) // 512)
        starts.append(at)
        fat += [at + i + 1 for i in range(count - 1)] + [END]
        at += count
    names = list(streams)
    entries = [_entry("Root Entry", 5, FREE, FREE, 1, 3, len(mini))]
    for i, (name, (where, size, small)) in enumerate(zip(names, places, strict=True)):
        right = i + 2 if i + 1 < len(names) else FREE  # a chain of right siblings: a valid tree
        entries.append(_entry(name, 2, FREE, right, FREE, where if small else starts[where], size))
    directory = b"".join(entries).ljust(512, b"\x00")
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 16
              + struct.pack("<HHHHH6xIIIIIIIII", 0x3E, 3, 0xFFFE, 9, 6, 0, 1, 1, 0, 4096, 2, 1, END, 0)
              + struct.pack("<I", 0) + struct.pack("<108I", *[FREE] * 108))  # fmt: skip
    body = [
        struct.pack(f"<{len(fat)}I", *fat).ljust(512, b"\xff"),
        directory,
        struct.pack(f"<{len(mini_fat)}I", *mini_fat).ljust(512, b"\xff"),
        mini.ljust(mini_sectors * 512, b"\x00"),
        *(d.ljust(-(-len(d) // 512) * 512, b"\x00") for d in large),
    ]
    return header + b"".join(body)


def _workbook(title: bytes = b"", codepage: int = 936) -> bytes:
    streams = {"Workbook": b"\x09\x08" + b"\x00" * 5000}
    if title:
        streams["\x05SummaryInformation"] = _summary(title, codepage)
    return _compound(streams)


def _olefile_answer(data: bytes) -> tuple[set[str], dict[int, object]]:
    ole = olefile.OleFileIO(data)
    return {"/".join(s).lower() for s in ole.listdir()}, ole.getproperties("\x05SummaryInformation")


@pytest.mark.parametrize("codepage, encoding", [(936, "gbk"), (65001, "utf-8"), (1252, "cp1252")])
def test_a_spreadsheets_title_is_read_in_its_code_page_as_olefile_reads_it(codepage: int, encoding: str) -> None:
    title = TITLE if encoding != "cp1252" else "Admissions 2026"
    data = _workbook(title.encode(encoding), codepage)
    streams, props = _olefile_answer(data)
    ole = CompoundFile(data)
    assert set(ole.streams) == streams == {"workbook", SUMMARY_INFORMATION}
    raw, page = summary_title(ole.read(SUMMARY_INFORMATION))
    assert raw == props[2] and page == props[1]
    assert identify_with_title(data) == ("xls", title)
    assert identify_with_title(data, "application/kset") == ("et", title)


def test_a_large_stream_is_read_through_its_sectors() -> None:
    data = _compound({"Workbook": bytes(range(256)) * 20, "WordDocument": b"\xec\xa5" + b"\x01" * 6000})
    ole = CompoundFile(data)
    assert ole.read("workbook") == bytes(range(256)) * 20
    assert ole.read("worddocument") == olefile.OleFileIO(data).openstream("WordDocument").read()


def test_formats_by_their_root_streams() -> None:
    assert identify_with_title(_workbook()) == ("xls", "")
    assert identify_with_title(_compound({"WordDocument": b"\xec\xa5" + b"\x00" * 5000})) == ("doc", "")
    assert identify_with_title(_compound({"PowerPoint Document": b"\x00" * 5000}), "", "http://x/a.dps") == ("dps", "")
    with pytest.raises(NotADocument, match="encrypted"):
        identify_with_title(_compound({"EncryptedPackage": b"\x00" * 5000}))
    with pytest.raises(NotADocument, match="unknown_format"):
        identify_with_title(_compound({"Contents": b"\x00" * 5000}))


def test_a_layout_it_does_not_expect_is_left_to_olefile() -> None:
    looping = _compound({"Workbook": b"\x00" * 5000}, loop_directory=True)  # the directory's chain loops
    with pytest.raises(UnexpectedLayout):
        CompoundFile(looping)
    assert olefile.OleFileIO(looping).listdir() == [["Workbook"]]  # olefile reads the directory once
    assert identify_with_title(looping) == ("xls", "")
    short = _workbook(TITLE.encode("gbk"))[:1400]  # olefile takes bytes this short for a file name
    with pytest.raises(UnexpectedLayout):
        CompoundFile(short)
    with pytest.raises(NotADocument, match="malformed"):
        identify_with_title(short)


def test_a_title_of_another_type_is_left_to_olefile() -> None:
    stream = bytearray(_summary(TITLE.encode("gbk"), 936))
    struct.pack_into("<I", stream, 48 + 32, 31)  # the title as VT_LPWSTR, which olefile reads its own way
    with pytest.raises(UnexpectedLayout):
        summary_title(bytes(stream))
